#include "server/oom_score.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/strings.h"
#include "server/config.h"
#include "server/logging.h"

namespace ringkv::server {
namespace {

// What was last written, so that an unchanged setting costs no syscall.
struct Applied {
  bool adjusted = false;  // ringkv changed the score: `base` holds the original
  int base = 0;
  int written = 0;
  bool valid = false;  // `written` reflects the file
  char child_text[16] = {};  // the kBgChild score with its newline, "" when not adjusting
};
Applied g_applied;

std::vector<int> Values(const Config& config) {
  std::vector<int> v;
  for (std::string_view w : Split(config.Str("oom-score-adj-values"), ' ', /*skip_empty=*/true)) {
    v.push_back(std::atoi(std::string(w).c_str()));  // the config parser checked each word
  }
  v.resize(3, 0);
  return v;
}

absl::Status WriteScore(int value) {
  const std::string text = StrCat(value, "\n");
  const int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, text.data(), text.size()) < 0) {
    Log(kWarning, StrCat("Unable to write oom_score_adj: ", std::strerror(errno)));
    if (fd >= 0) close(fd);
    // Not retried until the setting or the role changes: one line, not one per cron tick.
    g_applied.written = value;
    g_applied.valid = true;
    return absl::InternalError("Failed to set current oom_score_adj. Check server logs.");
  }
  close(fd);
  g_applied.written = value;
  g_applied.valid = true;
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyOomScore(const Config& config, OomClass cls) {
  const std::string& mode = config.Str("oom-score-adj");
  if (mode == "no") {
    g_applied.child_text[0] = '\0';
    if (!g_applied.adjusted) return absl::OkStatus();
    g_applied.adjusted = false;
    return WriteScore(g_applied.base);
  }
  if (!g_applied.adjusted) {
    char buf[32] = {};
    const int fd = open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, buf, sizeof(buf) - 1) < 0) {
      Log(kWarning, StrCat("Unable to read oom_score_adj: ", std::strerror(errno)));
      if (fd >= 0) close(fd);
      return absl::InternalError("Failed to set current oom_score_adj. Check server logs.");
    }
    close(fd);
    g_applied.base = std::atoi(buf);
    g_applied.adjusted = true;
    g_applied.valid = false;
  }
  const std::vector<int> values = Values(config);
  auto score = [&](OomClass c) {
    int v = values[static_cast<int>(c)];
    if (mode != "absolute") v += g_applied.base;  // "yes" is "relative"
    return std::clamp(v, -1000, 1000);
  };
  std::snprintf(g_applied.child_text, sizeof(g_applied.child_text), "%d\n", score(OomClass::kBgChild));
  const int value = score(cls);
  if (g_applied.valid && g_applied.written == value) return absl::OkStatus();
  return WriteScore(value);
}

absl::Status ApplyOomScoreAfterConfigSet(const Config& config, OomClass cls, bool values_changed) {
  const std::vector<int> v = Values(config);
  if (values_changed && (v[1] < v[0] || v[2] < v[1])) {
    Log(kWarning,
        "The oom-score-adj-values configuration may not work for non-privileged processes! Please consult the "
        "documentation.");
  }
  g_applied.valid = false;  // write even when unchanged: CONFIG SET reports a failure
  return ApplyOomScore(config, cls);
}

void ApplyOomScoreInChild() {
  if (g_applied.child_text[0] == '\0') return;
  const int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t w = write(fd, g_applied.child_text, std::strlen(g_applied.child_text));
  (void)w;
  close(fd);
}

}  // namespace ringkv::server

#include "server/slowlog.h"


#include <algorithm>

#include "core/strings.h"
#include "server/redaction.h"
#include "server/config.h"

namespace ringkv::server {

SlowLog::SlowLog(Config& config) {
  config.Bind("slowlog-log-slower-than", &threshold_us_);
  config.Bind("slowlog-max-len", [this, &config] {
    max_len_ = static_cast<size_t>(config.Int("slowlog-max-len"));
    while (entries_.size() > max_len_) entries_.pop_back();
  });
}

void SlowLog::Record(Argv argv, int64_t duration_us, int64_t now_ms, std::string peer, std::string name) {
  if (max_len_ == 0) return;
  // As Redis: at most 32 arguments (the last says how many more), each at
  // most 128 bytes (with how many more bytes).
  SlowlogEntry e;
  e.id = next_id_++;
  e.time_s = now_ms / 1000;
  e.duration_us = duration_us;
  size_t n = std::min<size_t>(argv.size(), 32);
  const std::vector<bool> hidden = RedactedArguments(argv);  // passwords (server/redaction.h)
  for (size_t i = 0; i < n; ++i) {
    if (n == 32 && i == 31 && argv.size() > 32) {
      e.argv.push_back(StrCat("... (", argv.size() - 31, " more arguments)"));
    } else if (!hidden.empty() && hidden[i]) {
      e.argv.emplace_back("(redacted)");
    } else if (argv[i].size() > 128) {
      e.argv.push_back(StrCat(argv[i].substr(0, 128), "... (", argv[i].size() - 128, " more bytes)"));
    } else {
      e.argv.emplace_back(argv[i]);
    }
  }
  e.peer = std::move(peer);
  e.name = std::move(name);
  entries_.push_front(std::move(e));
  while (entries_.size() > max_len_) entries_.pop_back();
}

}  // namespace ringkv::server

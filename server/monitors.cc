#include "server/monitors.h"


#include <algorithm>
#include <cstdio>

#include "core/strings.h"
#include "server/redaction.h"

namespace ringkv::server {

void Monitors::Add(Client& c) {
  if (c.monitor) return;
  c.monitor = true;
  ids_.push_back(c.id());
}

void Monitors::Remove(Client& c) {
  if (c.monitor) std::erase(ids_, c.id());
  c.monitor = false;
}

std::string Monitors::Line(const Client& c, std::span<const std::string_view> argv, int64_t now_us) {
  std::string line;
  char stamp[48];
  std::snprintf(stamp, sizeof(stamp), "+%lld.%06lld ", static_cast<long long>(now_us / 1000000),
                static_cast<long long>(now_us % 1000000));
  line = stamp;
  StrAppend(&line, "[", c.db, " ", c.conn != nullptr ? c.conn->peer.ToString() : std::string("lua"), "]");
  // Passwords never reach a monitor (server/redaction.h).
  const std::vector<bool> hidden = RedactedArguments(argv);
  for (size_t i = 0; i < argv.size(); ++i) {
    line.push_back(' ');
    AppendRepr(&line, !hidden.empty() && hidden[i] ? std::string_view("(redacted)") : argv[i]);
  }
  line.append("\r\n");
  return line;
}

}  // namespace ringkv::server

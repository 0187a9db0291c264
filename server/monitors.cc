#include "server/monitors.h"


#include <algorithm>
#include <cctype>
#include <cstdio>

#include "core/strings.h"
#include "server/redaction.h"

namespace ringkv::server {
namespace {

// Redis's sdscatrepr: a double-quoted string with C escapes.
void AppendRepr(std::string* out, std::string_view s) {
  out->push_back('"');
  for (unsigned char ch : s) {
    switch (ch) {
      case '\\': out->append("\\\\"); break;
      case '"': out->append("\\\""); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\a': out->append("\\a"); break;
      case '\b': out->append("\\b"); break;
      default:
        if (std::isprint(ch)) {
          out->push_back(static_cast<char>(ch));
        } else {
          char hex[5];
          std::snprintf(hex, sizeof(hex), "\\x%02x", ch);
          out->append(hex);
        }
    }
  }
  out->push_back('"');
}

}  // namespace

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

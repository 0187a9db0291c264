// ErrorStats: INFO errorstats -- how many error replies of each kind the
// server sent since start-up or CONFIG RESETSTAT, as Redis 7.0 keeps them.
//
// The kind of an error is its code, the first word of the line
// ("WRONGTYPE Operation against ..." -> WRONGTYPE), found only within the
// first 31 characters; a line without a space there counts as ERR (Redis's
// afterErrorReply). Redis 7.0 keeps every distinct code it sees (no cap; the
// 128-code limit and errorstat_ERRORSTATS_OVERFLOW came with 7.2).
//
// Counting happens only when an error is replied: a successful command
// never reaches this class.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace ringkv::server {

class ErrorStats {
 public:
  // The code `msg` (an error line without '-') counts under.
  static std::string_view Code(std::string_view msg) {
    const size_t space = msg.substr(0, 31).find(' ');
    return space == std::string_view::npos ? std::string_view("ERR") : msg.substr(0, space);
  }

  void Count(std::string_view msg) {
    const std::string_view code = Code(msg);
    auto it = counts_.find(code);
    if (it == counts_.end()) it = counts_.emplace(std::string(code), 0).first;
    ++it->second;
  }

  void Reset() { counts_.clear(); }

  // "errorstat_<CODE>:count=<n>" lines, codes in byte order (Redis's rax).
  void AppendInfo(std::string* out) const {
    for (const auto& [code, n] : counts_) absl::StrAppend(out, "errorstat_", code, ":count=", n, "\r\n");
  }

 private:
  std::map<std::string, uint64_t, std::less<>> counts_;
};

}  // namespace ringkv::server

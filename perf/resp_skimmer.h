// RespSkimmer: counts complete RESP2/RESP3 replies in a byte stream without
// building them. A load generator that builds every element (as hiredis
// does for redis-benchmark) spends ~100 ns per element, more than either
// server spends producing it; skimming costs one header parse per element
// and nothing per payload byte, so the server sets the pace.
//
// Contract: Feed() takes the next bytes of the stream in any fragmentation
// and returns how many of them it consumed. It stops only before a header
// line whose "\r\n" has not arrived yet; the caller keeps those bytes and
// passes them again, followed by new data. Payloads of bulk strings are
// skipped by length and never need to be kept. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

class RespSkimmer {
 public:
  struct Counts {
    uint64_t replies = 0;  // complete top-level replies
    uint64_t errors = 0;   // of which errors ('-' or '!'), at any depth
  };

  size_t Feed(const char* data, size_t n) {
    size_t pos = 0;
    while (pos < n) {
      if (skip_ > 0) {
        const size_t take = skip_ < static_cast<int64_t>(n - pos) ? static_cast<size_t>(skip_) : n - pos;
        skip_ -= static_cast<int64_t>(take);
        pos += take;
        if (skip_ == 0) ElementDone();
        continue;
      }
      const char type = data[pos];
      size_t next;  // just past the header's "\r\n"; 0 while it is incomplete
      int64_t len = 0;
      if (IsCounted(type)) {
        next = ParseCount(data, n, pos + 1, &len);
      } else {
        const char* eol = static_cast<const char*>(std::memchr(data + pos, '\n', n - pos));
        next = eol == nullptr ? 0 : static_cast<size_t>(eol - data) + 1;
        if (next != 0 && type == '-' && first_error_.empty()) {
          first_error_.assign(data + pos, next - pos - 2);
        }
      }
      if (next == 0) break;
      pos = next;
      Header(type, len);
    }
    return pos;
  }

  const Counts& counts() const { return counts_; }
  // The first simple error's line without "\r\n" ("-ERR ..."), for reports.
  const std::string& first_error() const { return first_error_; }

 private:
  // Types whose header carries a length or an element count.
  static bool IsCounted(char type) {
    switch (type) {
      case '$': case '=': case '!': case '*': case '~': case '>': case '%':
        return true;
      default:
        return false;
    }
  }

  // Parses "[-]digits\r\n" at data[pos]; returns the offset past it, or 0
  // if the line has not fully arrived. strtoll cost more than the rest of
  // the skimming together.
  static size_t ParseCount(const char* data, size_t n, size_t pos, int64_t* out) {
    bool negative = pos < n && data[pos] == '-';
    if (negative) ++pos;
    int64_t value = 0;
    while (pos < n && data[pos] >= '0' && data[pos] <= '9') value = value * 10 + (data[pos++] - '0');
    if (pos + 1 >= n) return 0;  // "\r\n" not here yet
    *out = negative ? -value : value;
    return pos + 2;
  }

  void Header(char type, int64_t len) {
    switch (type) {
      case '$':  // bulk string; -1 is the RESP2 null
      case '=':  // verbatim string
      case '!':  // blob error
        if (type == '!') ++counts_.errors;
        if (len < 0) {
          ElementDone();
        } else {
          skip_ = len + 2;  // payload and its "\r\n"
        }
        return;
      case '*':  // array; -1 is the RESP2 null
      case '~':  // set
      case '>':  // push
      case '%':  // map: two elements a pair
        if (len <= 0) {
          ElementDone();
        } else {
          open_.push_back(type == '%' ? 2 * len : len);
        }
        return;
      case '-':
        ++counts_.errors;
        ElementDone();
        return;
      default:  // + : , # _ ( and anything else on one line
        ElementDone();
        return;
    }
  }

  // One element (or a whole aggregate) ended: count it against the open
  // aggregates, closing each that it completes; the last close is a reply.
  void ElementDone() {
    while (!open_.empty()) {
      if (--open_.back() > 0) return;
      open_.pop_back();
    }
    ++counts_.replies;
  }

  int64_t skip_ = 0;           // bulk payload bytes still to pass
  std::vector<int64_t> open_;  // elements left in each open aggregate
  Counts counts_;
  std::string first_error_;
};

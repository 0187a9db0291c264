#include "io/resp_parser.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/numbers.h"

namespace ringkv::io {
namespace {

// Redis's PROTO_INLINE_MAX_SIZE: the longest line without a newline that is
// still accepted (inline commands and multibulk/bulk headers).
constexpr size_t kInlineMax = 64 * 1024;
constexpr int64_t kMaxMultibulk = INT32_MAX;  // Redis rejects counts above INT_MAX

// Parses a signed decimal the way Redis's string2ll does for protocol
// headers: no spaces, no '+', no leading zeros beyond "0".
bool ParseHeaderInt(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '-') {
    neg = true;
    i = 1;
    if (s.size() == 1) return false;
  }
  if (s[i] == '0' && (s.size() > i + 1 || neg)) return false;  // no leading zeros, no "-0" (string2ll)
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  if (neg) {
    if (v > static_cast<uint64_t>(INT64_MAX) + 1) return false;
    *out = static_cast<int64_t>(0 - v);
  } else {
    if (v > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(v);
  }
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads the decimal header at data[pos..] up to its '\r' in the same pass:
// only the plain form ParseHeaderInt accepts as a non-negative value of at
// most 18 digits (no overflow possible), with the '\r' and the byte after it
// present. Sets *value and *next (past the two terminator bytes, which the
// incremental parser does not inspect either). False for anything else.
inline bool ReadShortHeader(std::string_view data, size_t pos, int64_t* value, size_t* next) {
  const size_t n = data.size();
  // Nearly every header of a command has one or two digits ("*3", "$16"):
  // read those without the loop. The rest, and input that ends within two
  // bytes of the header, take the loop below (which gives the same answer).
  if (pos + 3 < n) {
    const unsigned d0 = static_cast<unsigned char>(data[pos]) - '0';
    if (d0 <= 9) {
      if (data[pos + 1] == '\r') {
        *value = d0;
        *next = pos + 3;
        return true;
      }
      const unsigned d1 = static_cast<unsigned char>(data[pos + 1]) - '0';
      if (d1 <= 9 && d0 != 0 && data[pos + 2] == '\r') {
        *value = d0 * 10 + d1;
        *next = pos + 4;
        return true;
      }
    }
  }
  const size_t start = pos;
  uint64_t v = 0;  // unsigned: a longer run wraps harmlessly before it is refused
  while (pos < n) {
    const unsigned d = static_cast<unsigned char>(data[pos]) - '0';
    if (d > 9) break;
    v = v * 10 + d;
    ++pos;
  }
  const size_t digits = pos - start;
  if (digits == 0 || digits > 18 || (digits > 1 && data[start] == '0')) return false;
  if (pos + 1 >= n || data[pos] != '\r') return false;
  *value = static_cast<int64_t>(v);
  *next = pos + 2;
  return true;
}

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f'; }

}  // namespace

bool SplitInlineArgs(std::string_view line, std::string* storage, absl::InlinedVector<std::string_view, 8>* argv) {
  // First pass writes unescaped arguments separated by their lengths into
  // storage; views are taken afterwards so storage never reallocates under them.
  storage->clear();
  storage->reserve(line.size());
  absl::InlinedVector<std::pair<size_t, size_t>, 8> spans;
  size_t i = 0;
  const size_t n = line.size();
  while (true) {
    while (i < n && IsSpace(line[i])) ++i;
    if (i >= n) break;
    size_t start = storage->size();
    bool in_dq = false, in_sq = false, done = false;
    while (!done) {
      if (in_dq) {
        if (i >= n) return false;
        if (line[i] == '\\' && i + 3 < n && line[i + 1] == 'x' && HexValue(line[i + 2]) >= 0 &&
            HexValue(line[i + 3]) >= 0) {
          storage->push_back(static_cast<char>(HexValue(line[i + 2]) * 16 + HexValue(line[i + 3])));
          i += 3;
        } else if (line[i] == '\\' && i + 1 < n) {
          char c;
          switch (line[++i]) {
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'b': c = '\b'; break;
            case 'a': c = '\a'; break;
            default: c = line[i]; break;
          }
          storage->push_back(c);
        } else if (line[i] == '"') {
          // The closing quote must be followed by a space or nothing.
          if (i + 1 < n && !IsSpace(line[i + 1])) return false;
          done = true;
        } else {
          storage->push_back(line[i]);
        }
      } else if (in_sq) {
        if (i >= n) return false;
        if (line[i] == '\\' && i + 1 < n && line[i + 1] == '\'') {
          ++i;
          storage->push_back('\'');
        } else if (line[i] == '\'') {
          if (i + 1 < n && !IsSpace(line[i + 1])) return false;
          done = true;
        } else {
          storage->push_back(line[i]);
        }
      } else {
        if (i >= n) {
          done = true;
          break;
        }
        switch (line[i]) {
          case ' ': case '\n': case '\r': case '\t': case '\0':
            done = true;
            break;
          case '"': in_dq = true; break;
          case '\'': in_sq = true; break;
          default: storage->push_back(line[i]); break;
        }
      }
      if (i < n) ++i;
    }
    spans.emplace_back(start, storage->size() - start);
  }
  argv->clear();
  for (auto [off, len] : spans) argv->push_back(std::string_view(storage->data() + off, len));
  return true;
}

void RespParser::Reset() {
  pos_ = 0;
  multibulk_ = -1;
  bulk_len_ = -1;
  expected_size_ = 0;
  if (args_.capacity() > ParsedCommand::kKeptArgs) {
    args_.clear();
    args_.shrink_to_fit();  // as ParsedCommand's: not the largest command's capacity
  } else {
    args_.clear();
  }
}

RespParser::Result RespParser::Fail(std::string msg) {
  error_ = std::move(msg);
  Reset();
  return Result::kError;
}

RespParser::Result RespParser::Parse(std::string_view data, const ParserLimits& limits, ParsedCommand* cmd,
                                     size_t* consumed) {
  if (data.empty()) return Result::kNeedMore;
  if (data[0] == '*') {
    if (multibulk_ < 0 && ParseWholeMultibulk(data, limits, cmd, consumed)) return Result::kCommand;
    return ParseMultibulk(data, limits, cmd, consumed);
  }
  return ParseInline(data, cmd, consumed);
}

RespParser::Result RespParser::ParseInline(std::string_view data, ParsedCommand* cmd, size_t* consumed) {
  size_t nl = data.find('\n');
  if (nl == std::string_view::npos) {
    if (data.size() > kInlineMax) return Fail("Protocol error: too big inline request");
    return Result::kNeedMore;
  }
  std::string_view line = data.substr(0, nl);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  *consumed = nl + 1;
  cmd->clear();
  if (!SplitInlineArgs(line, &cmd->owned, &cmd->argv)) return Fail("Protocol error: unbalanced quotes in request");
  Reset();
  return cmd->argv.empty() ? Result::kEmpty : Result::kCommand;
}

bool RespParser::ParseWholeMultibulk(std::string_view data, const ParserLimits& limits, ParsedCommand* cmd,
                                     size_t* consumed) {
  int64_t n;
  size_t pos;
  if (!ReadShortHeader(data, 1, &n, &pos) || n <= 0 || n > kMaxMultibulk) return false;
  if (n > 10 && !limits.authenticated) return false;
  // Not more arguments than the bytes could hold (4 bytes each at least):
  // a huge count in a short buffer is incomplete, not worth sizing argv for.
  if (static_cast<uint64_t>(n) > (data.size() - pos) / 4) return false;
  // Sized once and filled by index: no per-argument growth check (a batch's
  // commands mostly keep their size: nothing to resize).
  cmd->owned.clear();
  cmd->ResizeArgv(static_cast<size_t>(n));
  std::string_view* argv = cmd->argv.data();
  const int64_t bulk_limit = limits.authenticated ? limits.max_bulk_len : std::min<int64_t>(limits.max_bulk_len, 16384);
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
    int64_t len;
    if (pos >= data.size() || data[pos] != '$' || !ReadShortHeader(data, pos + 1, &len, &pos) || len > bulk_limit ||
        data.size() - pos < static_cast<size_t>(len) + 2) {
      cmd->clear();
      return false;
    }
    argv[i] = std::string_view(data.data() + pos, static_cast<size_t>(len));
    pos += static_cast<size_t>(len) + 2;
  }
  *consumed = pos;
  return true;
}

RespParser::Result RespParser::ParseMultibulk(std::string_view data, const ParserLimits& limits,
                                              ParsedCommand* cmd, size_t* consumed) {
  if (multibulk_ < 0) {
    size_t nl = data.find('\r', 1);
    if (nl == std::string_view::npos || nl + 1 >= data.size()) {
      if (data.size() > kInlineMax) return Fail("Protocol error: too big mbulk count string");
      return Result::kNeedMore;
    }
    int64_t n;
    if (!ParseHeaderInt(data.substr(1, nl - 1), &n) || n > kMaxMultibulk) {
      return Fail("Protocol error: invalid multibulk length");
    }
    if (n > 10 && !limits.authenticated) return Fail("Protocol error: unauthenticated multibulk length");
    pos_ = nl + 2;
    if (n <= 0) {
      *consumed = pos_;
      Reset();
      return Result::kEmpty;
    }
    multibulk_ = n;
    args_.clear();
    if (n <= 1024) args_.reserve(static_cast<size_t>(n));
  }
  while (static_cast<int64_t>(args_.size()) < multibulk_) {
    if (bulk_len_ < 0) {
      if (pos_ >= data.size()) return Result::kNeedMore;
      size_t nl = data.find('\r', pos_);
      if (nl == std::string_view::npos || nl + 1 >= data.size()) {
        if (data.size() - pos_ > kInlineMax) return Fail("Protocol error: too big bulk count string");
        return Result::kNeedMore;
      }
      if (data[pos_] != '$') {
        // Appended rather than `std::string(...) + data[pos_] + "'"`: GCC 12
        // warns on that (a false -Warray-bounds in the inlined string move)
        // when this file is compiled with the others of its unity batch.
        std::string msg = "Protocol error: expected '$', got '";
        msg += data[pos_];
        msg += '\'';
        return Fail(std::move(msg));
      }
      int64_t len;
      if (!ParseHeaderInt(data.substr(pos_ + 1, nl - pos_ - 1), &len) || len < 0 || len > limits.max_bulk_len) {
        return Fail("Protocol error: invalid bulk length");
      }
      if (len > 16384 && !limits.authenticated) return Fail("Protocol error: unauthenticated bulk length");
      bulk_len_ = len;
      pos_ = nl + 2;
      expected_size_ = pos_ + static_cast<size_t>(len) + 2;
    }
    if (data.size() - pos_ < static_cast<size_t>(bulk_len_) + 2) return Result::kNeedMore;
    args_.push_back({pos_, static_cast<size_t>(bulk_len_)});
    pos_ += static_cast<size_t>(bulk_len_) + 2;
    bulk_len_ = -1;
    expected_size_ = 0;
  }
  cmd->clear();
  for (const ArgRef& a : args_) cmd->argv.push_back(data.substr(a.offset, a.length));
  *consumed = pos_;
  Reset();
  return Result::kCommand;
}

}  // namespace ringkv::io

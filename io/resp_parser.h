// RespParser: incremental parser for client requests (RESP multibulk and the
// inline protocol), matching Redis 7.0's acceptance rules and error strings.
//
// Contract: Parse() is always given the bytes of the *current* command from
// its first byte onwards. When it returns kNeedMore, the caller keeps those
// bytes (it may move them into another buffer) and calls Parse() again with
// the same prefix plus whatever arrived since; the parser resumes where it
// stopped instead of rescanning, so a 512 MB argument split over thousands of
// reads costs O(n). After kCommand the parser is reset for the next command.
//
// The common case -- a whole, well-formed multibulk request already in the
// buffer (every pipelined command but perhaps the last) -- takes a one-pass
// fast path (ParseWholeMultibulk) that reads each header's digits once and
// writes argv directly; anything else (an incomplete request, an odd or
// invalid header, a limit) is left to the incremental parser, so results and
// error strings are the same whichever path ran.
//
// Thread-safety: one parser per connection, used by the connection's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/inlined_vector.h"

namespace ringkv::io {

struct ParserLimits {
  int64_t max_bulk_len = 512 * 1024 * 1024;  // proto-max-bulk-len
  bool authenticated = true;                 // unauthenticated: Redis's tighter limits
};

// A complete command: argv views into the caller's bytes (multibulk) or into
// `owned` (inline commands, whose arguments are unescaped copies).
// A reused slot: it keeps the capacity of an ordinary command, not that of
// the largest one it ever held (a 100,000-argument SADD would otherwise
// leave 1.6 MB behind for the thread's life; Redis frees each command's
// argv, and unit/lazyfree checks used_memory comes back down).
struct ParsedCommand {
  static constexpr size_t kKeptArgs = 1024;
  static constexpr size_t kKeptBytes = 64 * 1024;
  absl::InlinedVector<std::string_view, 8> argv;
  std::string owned;
  void clear() {
    if (argv.capacity() > kKeptArgs) {
      decltype(argv)().swap(argv);
    } else {
      argv.clear();
    }
    if (owned.capacity() > kKeptBytes) {
      std::string().swap(owned);
    } else {
      owned.clear();
    }
  }
  // argv resized to n arguments, its excess capacity released as clear's.
  // A batch's commands mostly keep their size: then nothing is tested.
  void ResizeArgv(size_t n) {
    if (argv.size() == n) return;
    if (argv.capacity() > kKeptArgs && n <= kKeptArgs) decltype(argv)().swap(argv);
    argv.resize(n);
  }
};

class RespParser {
 public:
  enum class Result {
    kCommand,   // one command parsed; *consumed bytes belong to it
    kNeedMore,  // incomplete; keep the bytes and call again with more
    kEmpty,     // an empty line or "*0"/"*-1": *consumed bytes are skipped
    kError,     // protocol error; error() is Redis's message (without '-')
  };

  Result Parse(std::string_view data, const ParserLimits& limits, ParsedCommand* cmd, size_t* consumed);

  const std::string& error() const { return error_; }
  // Bytes the current command will need in total when known (a hint for
  // reserving the buffer of a large argument), else 0.
  size_t expected_size() const { return expected_size_; }
  // Where the argument still arriving starts in the command's bytes when it
  // is a big one (at least kBigArgument bytes), else 0. Redis hands the
  // arguments before a big one to argv and keeps the big one alone in its
  // query buffer; CLIENT LIST's qbuf counts from here to show the same.
  static constexpr int64_t kBigArgument = 32 * 1024;  // Redis's PROTO_MBULK_BIG_ARG
  size_t big_argument_offset() const { return bulk_len_ >= kBigArgument ? pos_ : 0; }
  void Reset();

 private:
  Result ParseInline(std::string_view data, ParsedCommand* cmd, size_t* consumed);
  // The fast path: true with *cmd and *consumed set when `data` starts with
  // a complete multibulk request of at least one argument that the
  // incremental parser would accept as it is; false (and *cmd cleared)
  // otherwise, touching no parser state.
  // REQUIRES: no command in progress (multibulk_ < 0), data[0] == '*'.
  static bool ParseWholeMultibulk(std::string_view data, const ParserLimits& limits, ParsedCommand* cmd,
                                  size_t* consumed);
  Result ParseMultibulk(std::string_view data, const ParserLimits& limits, ParsedCommand* cmd,
                        size_t* consumed);
  Result Fail(std::string msg);

  struct ArgRef {
    size_t offset;
    size_t length;
  };
  // Resume state for a multibulk command.
  size_t pos_ = 0;           // next byte to look at
  int64_t multibulk_ = -1;   // argument count, -1 until the header is read
  int64_t bulk_len_ = -1;    // length of the argument being read, -1 before its header
  size_t expected_size_ = 0;
  absl::InlinedVector<ArgRef, 4> args_;
  std::string error_;
};

// Splits an inline command line the way Redis's sdssplitargs does (quotes,
// escapes). Returns false on unbalanced quotes.
bool SplitInlineArgs(std::string_view line, std::string* storage, absl::InlinedVector<std::string_view, 8>* argv);

}  // namespace ringkv::io

// AofManifest: Redis 7.0's multi-part AOF layout. An AOF is a directory
// (appenddirname) holding one base file (an RDB, or an AOF when
// aof-use-rdb-preamble is off), zero or more incremental files of commands,
// and a manifest naming them in order:
//
//   file appendonly.aof.2.base.rdb seq 2 type b
//   file appendonly.aof.1.incr.aof seq 1 type h
//   file appendonly.aof.2.incr.aof seq 2 type i
//
// type b = base, i = incremental, h = history (replaced, to be deleted).
// Loading replays the base, then every incremental file in order. The text
// is Redis's to the byte: the base first, then history (most recent first),
// then the incremental files; a name with spaces, quotes or control
// characters is written quoted and escaped (Redis's sdscatrepr) and read
// back with Redis's argument splitting. New files take the next sequence
// number of their kind, counted from the manifest as read.
//
// Thread-safety: none (a value type).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace ringkv::server {

struct AofFile {
  std::string name;
  int64_t seq = 0;
  char type = 'i';  // 'b', 'i' or 'h'
};

class AofManifest {
 public:
  // Where a manifest was refused (Redis logs the line and its text).
  struct ParseError {
    int line = 0;      // 1-based; 0 when no line is at fault (empty manifest)
    std::string text;  // the line, trimmed
  };
  // Parses a manifest's text with Redis 7.0's rules. Errors carry Redis's
  // wording ("Invalid AOF manifest file format", "Found a non-monotonic
  // sequence number", ...); `where`, when given, says where.
  static absl::StatusOr<AofManifest> Parse(std::string_view text, ParseError* where = nullptr);
  std::string Serialize() const;

  const std::optional<AofFile>& base() const { return base_; }
  const std::vector<AofFile>& incrs() const { return incrs_; }
  const std::vector<AofFile>& history() const { return history_; }
  bool empty() const { return !base_ && incrs_.empty(); }

  // Names the old base file (Redis 6's single AOF, moved into the
  // directory) as base number 1: the upgrade of a Redis 6 AOF.
  void SetUpgradedBase(std::string name);
  // A new base file (prefix.N.base.rdb / .aof); the old base becomes history.
  const AofFile& NewBase(std::string_view prefix, bool rdb);
  // A new incremental file appended to the list.
  const AofFile& NewIncr(std::string_view prefix);
  // After a rewrite: the incremental files become history -- all of them, or
  // all but the last when `keep_last` (the AOF is on: that file is the one
  // written since the fork).
  void RetireIncrs(bool keep_last);
  void ClearHistory() { history_.clear(); }

 private:
  std::optional<AofFile> base_;
  std::vector<AofFile> incrs_;
  std::vector<AofFile> history_;  // most recent first
  int64_t base_seq_ = 0;
  int64_t incr_seq_ = 0;
};

// Redis's sdscatrepr of a file name when it needs quoting (spaces, quotes,
// backslashes, control or non-printable bytes), else the name as it is.
std::string ManifestQuote(std::string_view name);

}  // namespace ringkv::server

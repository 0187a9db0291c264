// AofManifest: Redis 7.0's multi-part AOF layout. An AOF is a directory
// (appenddirname) holding one base file (an RDB, or an AOF when
// aof-use-rdb-preamble is off), zero or more incremental files of commands,
// and a manifest naming them in order:
//
//   file appendonly.aof.2.base.rdb seq 2 type b
//   file appendonly.aof.2.incr.aof seq 2 type i
//
// type b = base, i = incremental, h = history (replaced, to be deleted).
// Loading replays the base, then every incremental file in order.
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
  // Parses a manifest's text. Errors carry Redis's wording.
  static absl::StatusOr<AofManifest> Parse(std::string_view text);
  std::string Serialize() const;

  const std::optional<AofFile>& base() const { return base_; }
  const std::vector<AofFile>& incrs() const { return incrs_; }
  const std::vector<AofFile>& history() const { return history_; }
  bool empty() const { return !base_ && incrs_.empty(); }

  // A new base file (prefix.N.base.rdb / .aof); the old base and every
  // incremental file become history.
  const AofFile& NewBase(std::string_view prefix, bool rdb);
  // A new incremental file appended to the list.
  const AofFile& NewIncr(std::string_view prefix);
  // After a rewrite: every incremental file up to and including `last_name`
  // moves to history (their contents are in the new base).
  void RetireIncrsThrough(std::string_view last_name);
  void ClearHistory() { history_.clear(); }

 private:
  std::optional<AofFile> base_;
  std::vector<AofFile> incrs_;
  std::vector<AofFile> history_;
  int64_t base_seq_ = 0;
  int64_t incr_seq_ = 0;
};

}  // namespace ringkv::server

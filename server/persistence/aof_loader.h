// Replaying an AOF file: an optional RDB preamble, then RESP commands, as
// Redis 7.0's loadSingleAppendOnlyFile reads them.
//
// Each file is replayed as by a client of its own, starting in database 0
// (Redis creates its fake client per file). Commands between MULTI and EXEC
// are applied only when EXEC is read, so a transaction cut off by a crash is
// never half applied; they run then as Redis's loader runs a queued command,
// on a client still in MULTI (a MULTI or WATCH queued inside the block is
// answered with its error). An EXEC with no MULTI before it is applied as a
// command (its error reply is counted; the load goes on), as in Redis. A file that ends in
// the middle of a command (or of a MULTI block) is "truncated": when that is
// allowed (the last file of the AOF, with aof-load-truncated yes) it is cut
// back to the last complete command and loading goes on, as Redis does;
// otherwise loading fails. Anything else malformed fails with the offset.
//
// Thread-safety: main thread, before serving (or while serving is stopped).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/keyspace.h"

namespace ringkv::server {

struct AofReplayResult {
  uint64_t commands = 0;
  uint64_t rdb_keys = 0;   // loaded from an RDB preamble
  bool truncated = false;  // the file was cut back (see truncated_at)
  uint64_t truncated_at = 0;
  uint64_t size = 0;       // bytes of the file after loading
};

// How the replayed commands are applied.
struct AofApply {
  // Called before anything of a file is applied: what follows is a new
  // client's, in database 0.
  std::function<void()> begin_file;
  // Applies one command; `in_transaction`: it was read between MULTI and
  // EXEC and runs now, at the EXEC. An error stops the load (unknown
  // command); an error reply does not.
  std::function<absl::Status(std::span<const std::string_view> argv, bool in_transaction)> command;
};

// Replays `path`. `may_truncate`: this is the last file and aof-load-truncated
// is on, so an unexpected end of file is repaired instead of refused.
absl::StatusOr<AofReplayResult> ReplayAofFile(const std::string& path, bool may_truncate, core::Keyspace& ks,
                                              int64_t now_ms, const AofApply& apply);

}  // namespace ringkv::server

// The keyspace as an RDB file: writing a point-in-time snapshot and loading
// one back. Used by SAVE / BGSAVE (in the forked child), DEBUG RELOAD, the
// AOF base file and start-up.
//
// Thread-safety: none. Writing may run in a forked child (it touches only the
// keyspace and the file); loading runs on the main thread before serving or
// while the server is blocked (DEBUG RELOAD).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/keyspace.h"
#include "core/rdb_reader.h"
#include "core/rdb_writer.h"

namespace ringkv::server {

struct RdbSaveOptions {
  bool compress = true;   // rdbcompression
  bool checksum = true;   // rdbchecksum
  bool aof_base = false;  // written as an AOF base (AUX aof-base 1)
  int64_t used_memory = 0;
  int64_t now_ms = 0;
  // Replication info (AUX repl-stream-db / repl-id / repl-offset), written
  // when repl_id is set: a full sync's RDB, or a save by a server with a
  // backlog, so a restarted server can resume with PSYNC.
  std::string repl_id;
  int64_t repl_offset = 0;
  int repl_stream_db = 0;
  // FUNCTION libraries' code, written after the AUX fields as Redis does.
  std::vector<std::string> function_libraries;
  // No keys (a replica's REPLCONF rdb-filter-only): AUX fields and
  // functions only.
  bool exclude_data = false;
  // rdb-key-save-delay (a test hook): slept after each key, see DebugDelay.
  int key_save_delay_us = 0;
  // Bytes between two fdatasyncs of the file while it is written
  // (rdb-save-incremental-fsync, aof-rewrite-incremental-fsync); 0: only the
  // fsync at the end. Never applies to a pipe or socket.
  uint64_t fsync_every = 0;
};

// Redis's REDIS_AUTOSYNC_BYTES: 4 MB between incremental fsyncs.
inline constexpr uint64_t kIncrementalFsyncBytes = 4 * 1024 * 1024;

// Redis's debugDelay, behind the rdb-key-save-delay and key-load-delay test
// hooks: sleeps `usec` microseconds; a negative -N sleeps 1 microsecond once
// every N calls (a delay shorter than a sleep, on average); 0 does nothing.
void DebugDelay(int usec);

// What a snapshot writer does after each key it wrote (`keys_done` so far):
// the rdb-key-save-delay sleep and, in a forked child, a progress report to
// the parent (ChildReportProgress).
void AfterKeySaved(uint64_t keys_done, int key_save_delay_us);

// key-load-delay (a test hook, process-wide as in Redis): slept after each
// key LoadRdbInto / LoadRdbFile reads, on whichever thread loads. Safe to
// call from any thread.
void SetKeyLoadDelay(int usec);

// Writes the whole keyspace as RDB to fd (not closed, not synced).
absl::Status WriteRdb(core::Keyspace& ks, int fd, const RdbSaveOptions& options);
// Writes to `tmp_path`, fsyncs, renames over `path` and fsyncs the directory:
// a crash leaves either the old file or the complete new one.
absl::Status SaveRdbFile(core::Keyspace& ks, const std::string& path, const std::string& tmp_path,
                         const RdbSaveOptions& options);

struct RdbLoadStats {
  uint64_t loaded = 0;
  uint64_t expired = 0;  // already past their deadline: not loaded
  uint64_t empty_skipped = 0;  // empty collections: not loaded (the first 10 are logged)
  std::string repl_id;   // AUX repl-id / repl-offset, when the file has them
  int64_t repl_offset = -1;
  int repl_stream_db = 0;  // AUX repl-stream-db: the database the stream after the file has selected
  // FUNCTION libraries' code, in file order: the caller loads them (they
  // replace the server's libraries, as a loaded RDB does in Redis).
  std::vector<std::string> function_libraries;
};

// Between keys of a load, at most once per `interval_bytes` of input:
// `serve` is called with the bytes consumed so far (a start-up load serves
// clients there, as Redis's processEventsWhileBlocked). It returns false to
// stop the load, which then fails with Cancelled.
struct LoadProgressHook {
  uint64_t interval_bytes = 2 * 1024 * 1024;
  std::function<bool(uint64_t consumed)> serve;
};

// Loads RDB records from src into ks (which the caller has emptied).
// Duplicated keys and out-of-range databases are errors; on error ks holds a
// prefix of the file and the caller must discard it.
// With `replace`, a key already in ks is overwritten (DEBUG RELOAD MERGE).
absl::StatusOr<RdbLoadStats> LoadRdbInto(core::ByteSource* src, core::Keyspace& ks, int64_t now_ms,
                                         bool replace = false, const LoadProgressHook* progress = nullptr);
// As LoadRdbInto from a file. A missing file is NotFound.
absl::StatusOr<RdbLoadStats> LoadRdbFile(const std::string& path, core::Keyspace& ks, int64_t now_ms,
                                         bool replace = false, const LoadProgressHook* progress = nullptr);

// The keys of every database (what a snapshot of ks writes).
uint64_t TotalKeys(core::Keyspace& ks);

// fsync of a path's directory, so a rename in it is durable.
absl::Status SyncDirectoryOf(const std::string& path);

// "<what> <path>: <strerror(errno)>", as the persistence code reports a
// failed file operation.
absl::Status FileError(std::string_view what, std::string_view path);

}  // namespace ringkv::server

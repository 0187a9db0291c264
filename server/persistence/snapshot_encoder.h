// SnapshotEncoder: how a snapshot's records become bytes -- the RDB file
// (BGSAVE, full syncs, an AOF base with aof-use-rdb-preamble yes) or an AOF
// base of commands (aof-use-rdb-preamble no). One encoder serves both ways
// a snapshot is taken: a forked child walking the whole keyspace at once
// (WriteKeyspace), and the in-process KeyspaceSnapshot that writes keys out
// of order (background_save.h).
//
// Thread-safety: none; one encoder per output.
#pragma once

#include <cstddef>
#include <memory>

#include "absl/status/status.h"
#include "core/keyspace.h"
#include "core/keyspace_snapshot.h"
#include "core/rdb_writer.h"
#include "server/persistence/rdb_snapshot.h"

namespace ringkv::server {

class SnapshotEncoder : public core::SnapshotRecordSink {
 public:
  // What comes before the keys: RDB's header, AUX fields and functions; the
  // commands' FUNCTION LOADs.
  virtual void Begin(const RdbSaveOptions& options) = 0;
  // After the last key (RDB's EOF and checksum); everything reaches the sink.
  virtual void End() = 0;
  // The first error of the output (OK while there is none).
  virtual absl::Status status() const = 0;
  // Bytes held, not yet handed to the output.
  virtual size_t buffered() const = 0;
};

std::unique_ptr<SnapshotEncoder> MakeRdbEncoder(core::ByteSink* out, const RdbSaveOptions& options);
// FUNCTION LOADs, then per run of a database SELECT and each key's commands
// (AppendRewriteCommands) with a PEXPIREAT for a deadline.
std::unique_ptr<SnapshotEncoder> MakeAofCommandEncoder(core::ByteSink* out);

// The whole keyspace through `encoder`, from Begin to End, in table order
// (a forked child's view does not change under it). Keys past their
// deadline are written too, as Redis does: loading drops them, and a
// snapshot must not change what it snapshots. After each key: the
// rdb-key-save-delay sleep and the child's progress report (AfterKeySaved).
absl::Status WriteKeyspace(core::Keyspace& ks, SnapshotEncoder& encoder, const RdbSaveOptions& options);

}  // namespace ringkv::server

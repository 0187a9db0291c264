// PrimarySide as the repl::PrimaryHost of repl::Primary's cron and of
// repl::FullSync: the replica connections' writes, the history, the sync
// counters, and the fork child writing the snapshot for replicas (to the
// RDB file, or into the pipe of a diskless transfer). Persistence owns the
// child; a full sync starts, reaps and kills it through Persistence.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/strings.h"
#include "server/clock.h"
#include "server/logging.h"
#include "server/persistence/background_save.h"
#include "server/persistence/rdb_saver.h"
#include "server/persistence/rdb_snapshot.h"
#include "server/primary_side/primary_side.h"

namespace ringkv::server {
namespace {

// Writes all of s to fd (a blocking pipe, in the child).
bool WriteAllToPipe(int fd, std::string_view s) {
  while (!s.empty()) {
    const ssize_t n = ::write(fd, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    s.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

// ---- the cron ----

std::optional<std::string> PrimarySide::ClientInfoLine(uint64_t client_id, int64_t now_ms) {
  const Client* c = hooks_.ReplicaClient(client_id);
  return c != nullptr ? std::optional<std::string>(hooks_.ReplicaInfoLine(*c, now_ms)) : std::nullopt;
}

void PrimarySide::FreeBacklog(int64_t offset) {
  primary_.reset();
  ids_ = repl::ReplicationIds::Fresh();
  ids_.offset = offset;
}

void PrimarySide::SendKeepAlive(repl::ReplicaLink& link) {
  hooks_.ReplicationIo().PrepareWrite(link.conn).Append("\n");
}

// ---- full syncs ----

int64_t PrimarySide::NowMs() { return UnixMs(); }

repl::FullSyncConfig PrimarySide::ReadFullSyncConfig() {
  repl::FullSyncConfig c;
  c.plan.diskless_sync = config_.Bool("repl-diskless-sync");
  c.plan.delay_s = config_.Int("repl-diskless-sync-delay");
  c.plan.max_replicas = config_.Int("repl-diskless-sync-max-replicas");
  c.disable_tcp_nodelay = config_.Bool("repl-disable-tcp-nodelay");
  c.rdb_path = config_.Str("dbfilename");
  c.has_save_points = persistence_.has_save_points();
  c.remove_sync_rdb = config_.Bool("rdb-del-sync-files") && persistence_.disabled();
  return c;
}

void PrimarySide::CountSync(repl::SyncCount what) {
  switch (what) {
    case repl::SyncCount::kPartialOk:
      ++stats_.sync_partial_ok;
      return;
    case repl::SyncCount::kPartialErr:
      ++stats_.sync_partial_err;
      return;
    case repl::SyncCount::kFull:
      ++stats_.sync_full;
      return;
  }
}

void PrimarySide::SendToReplica(repl::ReplicaLink& link, std::string_view bytes) {
  hooks_.ReplicationIo().PrepareWrite(link.conn).Append(bytes);
}

void PrimarySide::CloseReplicaAfterReply(repl::ReplicaLink& link) { hooks_.ReplicationIo().CloseAfterReply(link.conn); }

void PrimarySide::StartBulk(repl::ReplicaLink& link, std::shared_ptr<repl::SharedSnapshot> snapshot) {
  primary_->StartBulk(link, std::move(snapshot), hooks_.ReplicationIo());
}

void PrimarySide::ReapChild() { persistence_.ReapChild(UnixMs()); }

absl::Status PrimarySide::SaveForReplicas(const repl::SnapshotSpec& spec, int64_t now_ms) {
  RdbSaveOptions info;
  info.repl_id = spec.replid;
  info.repl_offset = static_cast<int64_t>(spec.offset);
  info.repl_stream_db = hooks_.StreamDbAtSnapshot();
  return persistence_.BackgroundSave(now_ms, &info);
}

absl::StatusOr<int> PrimarySide::ForkSnapshotToPipe(const repl::SnapshotSpec& spec, int64_t now_ms, int read_fd,
                                                    int write_fd, std::string prefix, std::string suffix) {
  RdbSaveOptions options = SaveOptionsFromConfig(config_, now_ms);
  if (!spec.exclude_functions) options.function_libraries = hooks_.SnapshotFunctions();
  options.exclude_data = spec.exclude_data;
  options.repl_id = spec.replid;
  options.repl_offset = static_cast<int64_t>(spec.offset);
  options.repl_stream_db = hooks_.StreamDbAtSnapshot();
  core::Keyspace* ks = &keyspace_;
  ChildProcess& child = persistence_.child();
  if (!config_.Bool("snapshot-fork")) {
    // In this process (background_save.h): a thread writes into its own
    // copy of the pipe's write end, which the caller closes.
    const int own_fd = ::fcntl(write_fd, F_DUPFD_CLOEXEC, 0);
    if (own_fd < 0) return absl::InternalError(StrCat("dup: ", std::strerror(errno)));
    absl::StatusOr<std::unique_ptr<SnapshotOutput>> pipe = SnapshotOutput::ToPipe(own_fd);
    if (!pipe.ok()) return pipe.status();
    absl::Status s = child.StartInProcess(
        ChildType::kRdb, BackgroundSnapshot::Start(*ks, std::move(*pipe), options, BackgroundSnapshot::Format::kRdb, prefix,
                                 std::move(suffix)),
        options.exclude_data ? 0 : TotalKeys(*ks));
    if (!s.ok()) return s;
    return static_cast<int>(child.pid());
  }
  absl::Status s = child.Start(ChildType::kRdb, [ks, read_fd, write_fd, options, prefix, suffix]() {
    ::close(read_fd);
    if (!WriteAllToPipe(write_fd, prefix)) return 1;
    if (absl::Status w = WriteRdb(*ks, write_fd, options); !w.ok()) {
      Log(kWarning, StrCat("Failed streaming the RDB to replicas: ", w.message()));
      return 1;
    }
    return WriteAllToPipe(write_fd, suffix) ? 0 : 1;
  });
  if (!s.ok()) return s;
  return static_cast<int>(child.pid());
}

void PrimarySide::WatchPipe(int fd, uint32_t token) { hooks_.ReplicationIo().WatchReadable(fd, token); }

void PrimarySide::WakeSoon() { hooks_.ReplicationIo().WakeTimerIn(1); }

repl::DisklessTransfer::Progress PrimarySide::PumpTransfer(repl::DisklessTransfer& transfer) {
  return transfer.Pump(*primary_, hooks_.ReplicationIo());
}

}  // namespace ringkv::server

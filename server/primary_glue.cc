// Server::PrimaryGlue's full-sync work that needs the server's persistence:
// the configuration a full sync reads, the sync counters, and the fork
// child writing the snapshot for replicas (to the RDB file, or into the
// pipe of a diskless transfer).
#include "server/primary_glue.h"

#include <unistd.h>

#include <cerrno>

#include "core/strings.h"
#include "server/logging.h"
#include "server/persistence/rdb_saver.h"
#include "server/persistence/rdb_snapshot.h"

namespace ringkv::server {
namespace {

// Writes all of s to fd (a blocking pipe, in the child).
bool WriteAll(int fd, std::string_view s) {
  while (!s.empty()) {
    const ssize_t n = ::write(fd, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    s.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

repl::FullSyncConfig Server::PrimaryGlue::ReadFullSyncConfig() {
  const Config& config = *s_.config_;
  repl::FullSyncConfig c;
  c.plan.diskless_sync = config.Bool("repl-diskless-sync");
  c.plan.delay_s = config.Int("repl-diskless-sync-delay");
  c.plan.max_replicas = config.Int("repl-diskless-sync-max-replicas");
  c.disable_tcp_nodelay = config.Bool("repl-disable-tcp-nodelay");
  c.rdb_path = config.Str("dbfilename");
  c.has_save_points = s_.persistence_.has_save_points();
  c.remove_sync_rdb = config.Bool("rdb-del-sync-files") && s_.persistence_.disabled();
  return c;
}

void Server::PrimaryGlue::CountSync(repl::SyncCount what) {
  switch (what) {
    case repl::SyncCount::kPartialOk:
      ++s_.stats_.sync_partial_ok;
      return;
    case repl::SyncCount::kPartialErr:
      ++s_.stats_.sync_partial_err;
      return;
    case repl::SyncCount::kFull:
      ++s_.stats_.sync_full;
      return;
  }
}

absl::Status Server::PrimaryGlue::SaveForReplicas(const repl::SnapshotSpec& spec, int64_t now_ms) {
  RdbSaveOptions info;
  info.repl_id = spec.replid;
  info.repl_offset = static_cast<int64_t>(spec.offset);
  info.repl_stream_db = s_.SnapshotStreamDb();
  return s_.persistence_.BackgroundSave(now_ms, &info);
}

absl::StatusOr<int> Server::PrimaryGlue::ForkSnapshotToPipe(const repl::SnapshotSpec& spec, int64_t now_ms,
                                                            int read_fd, int write_fd, std::string prefix,
                                                            std::string suffix) {
  RdbSaveOptions options = SaveOptionsFromConfig(*s_.config_, now_ms);
  if (!spec.exclude_functions) options.function_libraries = s_.FunctionLibraryCodes();
  options.exclude_data = spec.exclude_data;
  options.repl_id = spec.replid;
  options.repl_offset = static_cast<int64_t>(spec.offset);
  options.repl_stream_db = s_.SnapshotStreamDb();
  core::Keyspace* ks = &s_.keyspace_;
  ChildProcess& child = s_.persistence_.child();
  absl::Status s = child.Start(ChildType::kRdb, [ks, read_fd, write_fd, options, prefix, suffix]() {
    ::close(read_fd);
    if (!WriteAll(write_fd, prefix)) return 1;
    if (absl::Status w = WriteRdb(*ks, write_fd, options); !w.ok()) {
      Log(kWarning, StrCat("Failed streaming the RDB to replicas: ", w.message()));
      return 1;
    }
    return WriteAll(write_fd, suffix) ? 0 : 1;
  });
  if (!s.ok()) return s;
  return static_cast<int>(child.pid());
}

}  // namespace ringkv::server

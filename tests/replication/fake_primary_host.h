// FakePrimaryHost: a repl::PrimaryHost for unit tests of the primary side
// (Primary::Cron, FullSync). It records what was asked of it (replicas
// dropped, bytes sent, snapshots forked, children killed) and plays the
// server's part on a test's own Primary: dropping a replica detaches its
// link, freeing the backlog destroys the Primary, StartBulk moves the link
// to kSendBulk, and a forked diskless child writes its payload into the
// pipe at once. What a pipe pump answers is scripted (pump_results).
//
// Thread-safety: one test thread.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "replication/full_sync.h"
#include "replication/primary.h"
#include "replication/primary_host.h"

namespace ringkv::repl {

class FakePrimaryHost final : public PrimaryHost {
 public:
  explicit FakePrimaryHost(std::unique_ptr<Primary>& primary) : primary_(primary) {
    ids.replid = std::string(40, 'a');
  }

  // ---- the cron ----
  void DropReplica(uint64_t client_id) override {
    dropped.push_back(client_id);
    if (!primary_) return;
    const ReplicaLink* link = primary_->Find(client_id);
    const bool waited = link != nullptr && link->state == ReplicaState::kWaitBgsaveEnd;
    primary_->Detach(client_id);
    if (waited && full_sync != nullptr) full_sync->OnWaitingReplicaGone();
  }
  std::optional<std::string> ClientInfoLine(uint64_t client_id, int64_t /*now_ms*/) override {
    return "id=" + std::to_string(client_id);
  }
  void FreeBacklog(int64_t offset) override {
    freed_at = offset;
    primary_.reset();
  }
  void SendKeepAlive(ReplicaLink& link) override { keep_alive.push_back(link.client_id); }

  // ---- full syncs ----
  int64_t NowMs() override { return now_ms; }
  FullSyncConfig ReadFullSyncConfig() override { return config; }
  const ReplicationIds& History() override { return ids; }
  Primary& EnsurePrimary() override {
    if (!primary_) primary_ = std::make_unique<Primary>(1 << 16, static_cast<uint64_t>(ids.offset));
    return *primary_;
  }
  Primary* CurrentPrimary() override { return primary_.get(); }
  void CountSync(SyncCount what) override { counts.push_back(what); }
  void SendToReplica(ReplicaLink& link, std::string_view bytes) override {
    sent.emplace_back(link.client_id, std::string(bytes));
  }
  void CloseReplicaAfterReply(ReplicaLink& link) override { closed_after_reply.push_back(link.client_id); }
  void StartBulk(ReplicaLink& link, std::shared_ptr<SharedSnapshot> snapshot) override {
    bulk_sizes.push_back(snapshot->size());
    link.snapshot = std::move(snapshot);
    link.state = ReplicaState::kSendBulk;
  }
  bool ChildRunning() override { return child_running; }
  bool RdbChildRunning() override { return child_running; }
  void KillRdbChild(bool remove_temp_file) override {
    child_running = false;
    kills.push_back(remove_temp_file);
  }
  void ReapChild() override {
    ++reaps;
    // A diskless child that exited meanwhile reports from inside the reap.
    if (child_running && child_exit_on_reap.has_value()) {
      child_running = false;
      full_sync->OnTransferChildExited(*child_exit_on_reap);
    }
  }
  absl::Status SaveForReplicas(const SnapshotSpec& spec, int64_t /*now_ms*/) override {
    if (!fork_error.ok()) return fork_error;
    saves.push_back(spec);
    child_running = true;
    return absl::OkStatus();
  }
  absl::StatusOr<int> ForkSnapshotToPipe(const SnapshotSpec& spec, int64_t /*now_ms*/, int /*read_fd*/,
                                         int write_fd, std::string prefix, std::string suffix) override {
    if (!fork_error.ok()) return fork_error;
    forks.push_back(spec);
    prefixes.push_back(prefix);
    suffixes.push_back(suffix);
    const std::string payload = prefix + "RDB" + suffix;  // fits in the pipe's buffer
    if (::write(write_fd, payload.data(), payload.size()) != static_cast<ssize_t>(payload.size())) {
      return absl::InternalError("pipe");
    }
    child_running = true;
    return 4242;
  }
  void WatchPipe(int fd, uint32_t token) override { watched.emplace_back(fd, token); }
  void WakeSoon() override { ++wakes; }
  DisklessTransfer::Progress PumpTransfer(DisklessTransfer& /*transfer*/) override {
    ++pumps;
    if (pump_results.empty()) return DisklessTransfer::Progress::kWaiting;
    const DisklessTransfer::Progress p = pump_results.front();
    pump_results.pop_front();
    return p;
  }

  // What the server would hold, and what the tests script.
  ReplicationIds ids;
  FullSyncConfig config;
  int64_t now_ms = 1'000'000;
  FullSync* full_sync = nullptr;  // told of a detached waiting replica and a reaped child
  bool child_running = false;
  std::optional<bool> child_exit_on_reap;  // set: the child has exited, with this result
  absl::Status fork_error = absl::OkStatus();
  std::deque<DisklessTransfer::Progress> pump_results;

  // What was asked.
  std::vector<uint64_t> dropped;
  std::vector<uint64_t> keep_alive;
  int64_t freed_at = -1;
  std::vector<SyncCount> counts;
  std::vector<std::pair<uint64_t, std::string>> sent;
  std::vector<uint64_t> closed_after_reply;
  std::vector<uint64_t> bulk_sizes;
  std::vector<bool> kills;  // one per kill: whether the temp file was removed
  int reaps = 0;
  std::vector<SnapshotSpec> saves;
  std::vector<SnapshotSpec> forks;
  std::vector<std::string> prefixes, suffixes;
  std::vector<std::pair<int, uint32_t>> watched;
  int wakes = 0;
  int pumps = 0;

 private:
  std::unique_ptr<Primary>& primary_;
};

}  // namespace ringkv::repl

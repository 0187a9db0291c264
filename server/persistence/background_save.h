// Snapshots without fork (snapshot-fork no): an RDB image written from the
// live keyspace by the main thread, a bounded step per event-loop turn, and
// put on the disk -- or into a diskless full sync's pipe -- by a thread of
// its own.
//
//  * BackgroundSnapshot is the InProcessWork a ChildProcess runs in place of
//    a forked child. Its core::KeyspaceSnapshot fixes the instant at Start
//    and writes each key as it was then: the walk writes a few thousand
//    keys a step, and a key about to change is written first (core/
//    keyspace_snapshot.h). So the only copies are of the keys changed
//    during the save, and no fork() stalls the server or doubles its pages.
//  * SnapshotOutput is the RDB writer's sink: it queues the bytes for its
//    thread, so the main thread never waits on the disk or a pipe. To a
//    file (BGSAVE), the thread writes the temp file (an fdatasync every
//    4 MB with rdb-save-incremental-fsync), and at the end fsyncs, renames
//    it over dbfilename and fsyncs the directory -- what the child's
//    SaveRdbFile does. To a pipe (a diskless full sync, whose other end the
//    main thread reads for the replicas' sockets), it writes as the pipe
//    takes, and closes it at the end.
//
// The walk stops while more than kMaxQueuedBytes wait for the disk (a key
// about to change is still written at once: the queue can pass the mark by
// what the clients change meanwhile). rdb-key-save-delay, a test hook that
// sleeps after each key in a child, paces the walk instead: no sooner than
// one key per that many microseconds.
//
// Thread-safety: BackgroundSnapshot is the main thread's; SnapshotOutput is
// called from the main thread and runs its own thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/keyspace.h"
#include "core/keyspace_snapshot.h"
#include "core/rdb_writer.h"
#include "server/persistence/child_process.h"
#include "server/persistence/rdb_snapshot.h"
#include "server/persistence/snapshot_encoder.h"

namespace ringkv::server {

class SnapshotOutput final : public core::ByteSink {
 public:
  // Creates `tmp_path`; renamed over `path` once complete. `sync_every`:
  // bytes between two fdatasyncs (0: only the fsync at the end).
  static absl::StatusOr<std::unique_ptr<SnapshotOutput>> ToFile(std::string path, std::string tmp_path,
                                                                uint64_t sync_every);
  // Creates `tmp_path` (made absolute: name() says where), left in place
  // (fsynced) once complete, for its owner to rename (an AOF rewrite's base).
  static absl::StatusOr<std::unique_ptr<SnapshotOutput>> ToKeptFile(std::string tmp_path, uint64_t sync_every);
  // Writes into `fd` (a pipe's write end, owned from now on), closed once
  // complete or abandoned.
  static absl::StatusOr<std::unique_ptr<SnapshotOutput>> ToPipe(int fd);
  // Stops the thread, even one waiting for a full pipe; a file not
  // complete is removed.
  ~SnapshotOutput() override;
  SnapshotOutput(const SnapshotOutput&) = delete;
  SnapshotOutput& operator=(const SnapshotOutput&) = delete;

  // Queues a copy of `bytes`; never waits. An error the thread met is
  // returned by a later call.
  absl::Status Write(std::string_view bytes) override;
  // Nothing more comes: the thread writes what is queued, then completes
  // the file (fsync, rename) or closes the pipe.
  void Close();
  bool finished() const;
  // After finished(): how it went (the file is in place when OK).
  absl::Status result() const;
  uint64_t queued_bytes() const;
  enum class Kind : uint8_t { kRenamedFile, kKeptFile, kPipe };
  Kind kind() const { return kind_; }
  // The file written (or "the replicas' pipe").
  const std::string& name() const { return tmp_path_; }

 private:
  static absl::StatusOr<std::unique_ptr<SnapshotOutput>> OpenFile(Kind kind, std::string path, std::string tmp_path,
                                                                  uint64_t sync_every);
  SnapshotOutput(Kind kind, std::string path, std::string tmp_path, int fd, uint64_t sync_every, int wake_fd);
  void Run();
  absl::Status WriteAll(const std::string& chunk);
  absl::Status Complete();

  const Kind kind_;
  const std::string path_;      // kRenamedFile: where the file goes
  const std::string tmp_path_;  // the file written, or "the replicas' pipe"
  int fd_;
  const uint64_t sync_every_;
  const int wake_fd_;      // kPipe: an eventfd, the destructor wakes a thread waiting for the pipe; else -1
  uint64_t unsynced_ = 0;  // the thread's
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::string> queue_;  // guarded by mu_
  uint64_t queued_bytes_ = 0;      // guarded by mu_
  bool closing_ = false;           // guarded by mu_
  std::atomic<bool> stopping_{false};  // abandon the output
  bool finished_ = false;          // guarded by mu_
  absl::Status status_;            // guarded by mu_
  std::thread thread_;
};

class BackgroundSnapshot final : public InProcessWork {
 public:
  enum class Format : uint8_t { kRdb, kAofCommands };
  static constexpr uint64_t kMaxQueuedBytes = 64u << 20;

  // Starts the snapshot of `ks` now, into `output`: `prefix`, the records
  // in `format`, `suffix` (a diskless sync's EOF marks, an AOF base's
  // timestamp; empty for a file). The keyspace must outlive this object.
  static std::unique_ptr<BackgroundSnapshot> Start(core::Keyspace& ks, std::unique_ptr<SnapshotOutput> output,
                                                   const RdbSaveOptions& options, Format format = Format::kRdb,
                                                   std::string_view prefix = {}, std::string suffix = {});
  ~BackgroundSnapshot() override;

  int64_t Step() override;
  bool ok() const override { return ok_; }
  uint64_t keys_processed() const override { return snapshot_ ? snapshot_->keys_written() : keys_written_; }
  uint64_t copied_bytes() const override { return snapshot_ ? snapshot_->bytes_captured() : bytes_captured_; }
  // Its output waiting for the disk, and the tables it took from emptied
  // databases (core::KeyspaceSnapshot::taken_bytes) until walked.
  uint64_t buffered_bytes() const override {
    return file_->queued_bytes() + encoder_->buffered() + (snapshot_ != nullptr ? snapshot_->taken_bytes() : 0);
  }

 private:
  BackgroundSnapshot(std::unique_ptr<SnapshotOutput> output, const RdbSaveOptions& options, Format format,
                     std::string suffix);
  // Keys the rdb-key-save-delay pacing allows the walk now (or unlimited).
  uint64_t KeysAllowed() const;
  // Every key is in the encoder: the end, then the output is closed.
  void EndWalk();
  void Finish(absl::Status status);

  std::unique_ptr<SnapshotOutput> file_;
  const std::string suffix_;
  std::unique_ptr<SnapshotEncoder> encoder_;
  std::unique_ptr<core::KeyspaceSnapshot> snapshot_;  // until the walk is done
  const int key_save_delay_us_;
  const int64_t start_us_;
  bool walk_done_ = false;
  bool finished_ = false;
  bool ok_ = false;
  uint64_t keys_written_ = 0;    // the snapshot's counters, kept once it is gone
  uint64_t bytes_captured_ = 0;
};

}  // namespace ringkv::server

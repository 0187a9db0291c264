#include "server/persistence/background_save.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "core/strings.h"
#include "io/fork_gate.h"
#include "server/clock.h"
#include "server/logging.h"

namespace ringkv::server {

// ---- SnapshotOutput ---------------------------------------------------------

absl::StatusOr<std::unique_ptr<SnapshotOutput>> SnapshotOutput::ToFile(std::string path, std::string tmp_path,
                                                                     uint64_t sync_every) {
  // Absolute: a CONFIG SET dir while the thread works must not move the
  // rename (a forked child keeps its own working directory).
  std::error_code ec;
  const std::filesystem::path abs_path = std::filesystem::absolute(path, ec);
  const std::filesystem::path abs_tmp = std::filesystem::absolute(tmp_path, ec);
  if (ec) return absl::InternalError(StrCat("Failed resolving ", path, ": ", ec.message()));
  return OpenFile(Kind::kRenamedFile, abs_path.string(), abs_tmp.string(), sync_every);
}

absl::StatusOr<std::unique_ptr<SnapshotOutput>> SnapshotOutput::ToKeptFile(std::string tmp_path, uint64_t sync_every) {
  std::error_code ec;
  const std::filesystem::path abs_tmp = std::filesystem::absolute(tmp_path, ec);
  if (ec) return absl::InternalError(StrCat("Failed resolving ", tmp_path, ": ", ec.message()));
  return OpenFile(Kind::kKeptFile, "", abs_tmp.string(), sync_every);
}

absl::StatusOr<std::unique_ptr<SnapshotOutput>> SnapshotOutput::OpenFile(Kind kind, std::string path,
                                                                       std::string tmp_path, uint64_t sync_every) {
  const int fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return FileError("Failed opening the temp file", tmp_path);
  // A file's writes never wait to be woken: no eventfd.
  return std::unique_ptr<SnapshotOutput>(
      new SnapshotOutput(kind, std::move(path), std::move(tmp_path), fd, sync_every, /*wake_fd=*/-1));
}

absl::StatusOr<std::unique_ptr<SnapshotOutput>> SnapshotOutput::ToPipe(int fd) {
  const int wake_fd = ::eventfd(0, EFD_CLOEXEC);
  if (wake_fd < 0) {
    const absl::Status s = FileError("Failed creating an eventfd for", "the replicas' pipe");
    ::close(fd);
    return s;
  }
  // Never blocked in write(): a full pipe is waited for in poll(), which
  // the destructor can end.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return std::unique_ptr<SnapshotOutput>(new SnapshotOutput(Kind::kPipe, "", "the replicas' pipe", fd, 0, wake_fd));
}

SnapshotOutput::SnapshotOutput(Kind kind, std::string path, std::string tmp_path, int fd, uint64_t sync_every,
                               int wake_fd)
    : kind_(kind),
      path_(std::move(path)), tmp_path_(std::move(tmp_path)), fd_(fd), sync_every_(sync_every), wake_fd_(wake_fd) {
  thread_ = io::ForkGate::StartHelperThread([this] { Run(); });  // io/fork_gate.h
}

SnapshotOutput::~SnapshotOutput() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_.store(true);
  }
  wake_.notify_one();
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof(one));
  }
  thread_.join();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

absl::Status SnapshotOutput::Write(std::string_view bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!status_.ok()) return status_;
    queue_.emplace_back(bytes);
    queued_bytes_ += bytes.size();
  }
  wake_.notify_one();
  return absl::OkStatus();
}

void SnapshotOutput::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  wake_.notify_one();
}

bool SnapshotOutput::finished() const {
  std::lock_guard<std::mutex> lock(mu_);
  return finished_;
}

absl::Status SnapshotOutput::result() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

uint64_t SnapshotOutput::queued_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queued_bytes_;
}

void SnapshotOutput::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  bool failed = false;  // this thread's copy of !status_.ok()
  while (true) {
    wake_.wait(lock, [&] { return stopping_.load() || closing_ || !queue_.empty(); });
    if (stopping_.load()) break;
    if (!queue_.empty()) {
      std::string chunk = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      absl::Status s = failed ? absl::OkStatus() : WriteAll(chunk);
      lock.lock();
      queued_bytes_ -= chunk.size();
      if (!s.ok() && !failed) {
        failed = true;
        status_ = std::move(s);
      }
      continue;
    }
    // closing_ with nothing queued: the output is complete.
    lock.unlock();
    absl::Status s = failed ? absl::OkStatus() : Complete();
    lock.lock();
    if (!s.ok() && !failed) {
      failed = true;
      status_ = std::move(s);
    }
    finished_ = true;
    break;
  }
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  // Abandoned or failed: no half file stays behind.
  if (kind_ != Kind::kPipe && (!finished_ || failed)) ::unlink(tmp_path_.c_str());
}

absl::Status SnapshotOutput::WriteAll(const std::string& chunk) {
  const char* p = chunk.data();
  size_t left = chunk.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {  // a full pipe: wait for room, or for the destructor
        pollfd fds[2] = {{fd_, POLLOUT, 0}, {wake_fd_, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0 && errno != EINTR) return FileError("Failed waiting for", tmp_path_);
        if (fds[1].revents != 0 || stopping_.load()) return absl::CancelledError("abandoned");
        continue;
      }
      return FileError("Failed writing", tmp_path_);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  unsynced_ += chunk.size();
  if (sync_every_ > 0 && unsynced_ >= sync_every_ && !stopping_.load()) {
    if (::fdatasync(fd_) != 0) return FileError("Failed syncing", tmp_path_);
    unsynced_ = 0;
  }
  return absl::OkStatus();
}

absl::Status SnapshotOutput::Complete() {
  if (kind_ == Kind::kPipe) return absl::OkStatus();  // Run closes it: the reader sees the end
  // Abandoned meanwhile: no final fsync for the one waiting to join.
  if (stopping_.load()) return absl::CancelledError("abandoned");
  if (::fsync(fd_) != 0) return FileError("Failed syncing", tmp_path_);
  ::close(fd_);
  fd_ = -1;
  if (kind_ == Kind::kKeptFile) return absl::OkStatus();
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) return FileError("Failed renaming the temp RDB file to", path_);
  return SyncDirectoryOf(path_);
}

// ---- BackgroundSnapshot ------------------------------------------------------

std::unique_ptr<BackgroundSnapshot> BackgroundSnapshot::Start(core::Keyspace& ks,
                                                              std::unique_ptr<SnapshotOutput> output,
                                                              const RdbSaveOptions& options, Format format,
                                                              std::string_view prefix, std::string suffix) {
  if (!prefix.empty()) (void)output->Write(prefix);  // outside the RDB image and its checksum
  std::unique_ptr<BackgroundSnapshot> save(
      new BackgroundSnapshot(std::move(output), options, format, std::move(suffix)));
  save->encoder_->Begin(options);
  if (options.exclude_data) {
    save->EndWalk();
  } else {
    save->snapshot_ = std::make_unique<core::KeyspaceSnapshot>(ks, save->encoder_.get(), options.now_ms);
  }
  return save;
}

BackgroundSnapshot::BackgroundSnapshot(std::unique_ptr<SnapshotOutput> output, const RdbSaveOptions& options,
                                       Format format, std::string suffix)
    : file_(std::move(output)),
      suffix_(std::move(suffix)),
      encoder_(format == Format::kRdb ? MakeRdbEncoder(file_.get(), options) : MakeAofCommandEncoder(file_.get())),
      key_save_delay_us_(options.key_save_delay_us),
      start_us_(SteadyUs()) {}

// Members go in reverse order: the snapshot lets go of the keyspace, then
// the output's thread stops and removes an unfinished file.
BackgroundSnapshot::~BackgroundSnapshot() = default;

uint64_t BackgroundSnapshot::KeysAllowed() const {
  if (key_save_delay_us_ == 0) return UINT64_MAX;
  const auto elapsed = static_cast<uint64_t>(SteadyUs() - start_us_);
  // A negative delay -N is one microsecond per N keys (DebugDelay).
  const uint64_t allowed = key_save_delay_us_ > 0 ? elapsed / static_cast<uint64_t>(key_save_delay_us_)
                                                  : elapsed * static_cast<uint64_t>(-int64_t{key_save_delay_us_});
  const uint64_t done = keys_processed();
  return allowed > done ? allowed - done : 0;
}

int64_t BackgroundSnapshot::Step() {
  if (finished_) return kFinished;
  if (walk_done_) {
    if (!file_->finished()) return 10'000;  // the disk's turn (the cron reaps the end anyway)
    Finish(file_->result());
    return kFinished;
  }
  if (!encoder_->status().ok()) {
    Finish(encoder_->status());
    return kFinished;
  }
  if (file_->queued_bytes() > kMaxQueuedBytes) return 1000;
  // A share of the walk: batches of keys for up to a millisecond and 4 MB,
  // so a turn spent here delays other clients about as much as a slow
  // command.
  constexpr size_t kBatch = 64;
  constexpr int64_t kTurnBudgetUs = 1000;
  constexpr uint64_t kTurnBudgetBytes = 4u << 20;
  const int64_t turn_start = SteadyUs();
  const uint64_t bytes_start = encoder_->bytes();
  snapshot_->set_now(UnixMs());  // LRU/LFU meta against the time of writing
  do {
    const uint64_t allowed = KeysAllowed();
    if (allowed == 0) return key_save_delay_us_ > 0 ? key_save_delay_us_ : 1;
    if (snapshot_->Step(std::min<uint64_t>(kBatch, allowed))) break;
  } while (SteadyUs() - turn_start < kTurnBudgetUs && encoder_->bytes() - bytes_start < kTurnBudgetBytes);
  if (!snapshot_->done()) return 0;
  keys_written_ = snapshot_->keys_written();
  bytes_captured_ = snapshot_->bytes_captured();
  snapshot_.reset();
  EndWalk();
  return 1000;
}

void BackgroundSnapshot::EndWalk() {
  walk_done_ = true;
  encoder_->End();
  if (!suffix_.empty()) (void)file_->Write(suffix_);
  file_->Close();
}

void BackgroundSnapshot::Finish(absl::Status status) {
  finished_ = true;
  if (snapshot_) {  // failed mid-walk: let go of the keyspace now, not when reaped
    keys_written_ = snapshot_->keys_written();
    bytes_captured_ = snapshot_->bytes_captured();
    snapshot_.reset();
  }
  ok_ = status.ok() && encoder_->status().ok();
  const std::string error((status.ok() ? encoder_->status() : status).message());
  // The fork child's lines for the same work.
  switch (file_->kind()) {
    case SnapshotOutput::Kind::kPipe:
      if (!ok_) Log(kWarning, StrCat("Failed streaming the RDB to replicas: ", error));
      break;
    case SnapshotOutput::Kind::kKeptFile:
      if (ok_) Log(kNotice, StrCat("Successfully created the temporary AOF base file ", file_->name()));
      if (!ok_) Log(kWarning, StrCat("Failed writing the AOF base ", file_->name(), ": ", error));
      break;
    case SnapshotOutput::Kind::kRenamedFile:
      if (ok_) Log(kNotice, "DB saved on disk");
      if (!ok_) Log(kWarning, StrCat("Failed saving the DB: ", error));
      break;
  }
}

}  // namespace ringkv::server

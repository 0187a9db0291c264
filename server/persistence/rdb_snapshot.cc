#include "server/persistence/rdb_snapshot.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/access_policy.h"
#include "core/rdb_writer.h"
#include "core/strings.h"
#include "server/logging.h"
#include "server/persistence/child_process.h"
#include "server/persistence/snapshot_encoder.h"
#include "server/version.h"

namespace ringkv::server {
namespace {

std::atomic<int> g_key_load_delay_us{0};

class KeyspaceLoader : public core::RdbVisitor {
 public:
  KeyspaceLoader(core::Keyspace& ks, int64_t now_ms, bool replace, core::ByteSource* src,
                 const LoadProgressHook* progress)
      : ks_(ks), now_ms_(now_ms), replace_(replace), src_(src), progress_(progress) {
    if (progress_ != nullptr) next_report_ = progress_->interval_bytes;
  }

  absl::Status OnEntry(int db, std::string key, core::Value value, int64_t expire_ms,
                       core::KeyMeta meta) override {
    DebugDelay(g_key_load_delay_us.load(std::memory_order_relaxed));
    if (progress_ != nullptr && src_->offset() >= next_report_) {
      next_report_ = src_->offset() + progress_->interval_bytes;
      if (!progress_->serve(src_->offset())) return absl::CancelledError("loading stopped by a shutdown");
    }
    // A primary drops keys already expired; a replica keeps them until its
    // primary's DEL (the keyspace's expiry mode says which it is).
    if (expire_ms >= 0 && expire_ms <= now_ms_ && ks_.expiry_mode() == core::ExpiryMode::kDelete) {
      ++stats_.expired;
      return absl::OkStatus();
    }
    core::Database& d = ks_.db(db);
    bool created;
    core::Entry* e = d.FindOrInsert(key, now_ms_, &created, value.slot_bytes_wanted());
    if (!created) {
      if (!replace_) return absl::DataLossError(StrCat("RDB has duplicated key '", key, "' in DB ", db));
      d.SetExpire(key, e, -1);
    }
    e->value = std::move(value);
    e->set_lru(core::RestoredAccess(ks_.access_policy(), meta.idle_s, meta.freq, now_ms_, e->lru()));
    if (expire_ms >= 0) d.SetExpire(key, e, expire_ms);
    ++stats_.loaded;
    return absl::OkStatus();
  }

  absl::Status OnAux(std::string_view key, std::string_view value) override {
    if (key == "repl-id" && value.size() == 40) stats_.repl_id = std::string(value);
    if (key == "repl-offset") core::StringToInt64(value, &stats_.repl_offset);
    if (int64_t db; key == "repl-stream-db" && core::StringToInt64(value, &db) && db >= 0 && db < ks_.count()) {
      stats_.repl_stream_db = static_cast<int>(db);
    }
    return absl::OkStatus();
  }

  absl::Status OnFunctionLibrary(std::string code) override {
    stats_.function_libraries.push_back(std::move(code));
    return absl::OkStatus();
  }

  void OnEmptyKeySkipped(int db, std::string_view key) override {
    (void)db;
    if (stats_.empty_skipped++ < 10) Log(kNotice, StrCat("rdbLoadObject skipping empty key: ", key));  // as Redis
  }

  void OnResizeDb(int db, uint64_t keys, uint64_t expires) override {
    (void)expires;
    ks_.db(db).Reserve(static_cast<size_t>(keys));
  }

  const RdbLoadStats& stats() const { return stats_; }

 private:
  core::Keyspace& ks_;
  int64_t now_ms_;
  bool replace_;
  core::ByteSource* src_;
  const LoadProgressHook* progress_;  // null: nothing served during the load
  uint64_t next_report_ = 0;          // input offset of the next call to progress_
  RdbLoadStats stats_;
};

}  // namespace

void DebugDelay(int usec) {
  if (usec < 0) {
    thread_local uint64_t calls = 0;
    if (++calls % static_cast<uint64_t>(-static_cast<int64_t>(usec)) != 0) return;
    usec = 1;
  }
  if (usec > 0) std::this_thread::sleep_for(std::chrono::microseconds(usec));
}

void AfterKeySaved(uint64_t keys_done, int key_save_delay_us) {
  DebugDelay(key_save_delay_us);
  ChildReportProgress(keys_done);
}

void SetKeyLoadDelay(int usec) { g_key_load_delay_us.store(usec, std::memory_order_relaxed); }

uint64_t TotalKeys(core::Keyspace& ks) {
  uint64_t keys = 0;
  for (int i = 0; i < ks.count(); ++i) keys += ks.db(i).size();
  return keys;
}

absl::Status WriteRdb(core::Keyspace& ks, int fd, const RdbSaveOptions& options) {
  core::FdSink sink(fd, options.fsync_every);
  return WriteKeyspace(ks, *MakeRdbEncoder(&sink, options), options);
}

absl::Status FileError(std::string_view what, std::string_view path) {
  return absl::InternalError(StrCat(what, " ", path, ": ", std::strerror(errno)));
}

absl::Status SyncDirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return FileError("Opening directory", dir);
  int r = ::fsync(fd);
  ::close(fd);
  if (r != 0) return FileError("Syncing directory", dir);
  return absl::OkStatus();
}

absl::Status SaveRdbFile(core::Keyspace& ks, const std::string& path, const std::string& tmp_path,
                         const RdbSaveOptions& options) {
  int fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return FileError("Failed opening the temp RDB file", tmp_path);
  absl::Status s = WriteRdb(ks, fd, options);
  if (s.ok() && ::fsync(fd) != 0) s = FileError("Failed syncing", tmp_path);
  ::close(fd);
  if (s.ok() && ::rename(tmp_path.c_str(), path.c_str()) != 0) s = FileError("Failed renaming the temp RDB file to", path);
  if (s.ok()) s = SyncDirectoryOf(path);
  if (!s.ok()) ::unlink(tmp_path.c_str());
  return s;
}

absl::StatusOr<RdbLoadStats> LoadRdbInto(core::ByteSource* src, core::Keyspace& ks, int64_t now_ms, bool replace,
                                         const LoadProgressHook* progress) {
  KeyspaceLoader loader(ks, now_ms, replace, src, progress);
  core::RdbLoadOptions options;
  options.databases = ks.count();
  options.limits = ks.limits();
  if (absl::Status s = core::LoadRdb(src, &loader, options); !s.ok()) return s;
  return loader.stats();
}

absl::StatusOr<RdbLoadStats> LoadRdbFile(const std::string& path, core::Keyspace& ks, int64_t now_ms, bool replace,
                                         const LoadProgressHook* progress) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(StrCat(path, " does not exist"));
    return FileError("Opening", path);
  }
  core::FdSource src(fd);
  absl::StatusOr<RdbLoadStats> r = LoadRdbInto(&src, ks, now_ms, replace, progress);
  ::close(fd);
  return r;
}

}  // namespace ringkv::server

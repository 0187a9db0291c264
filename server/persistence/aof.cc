#include "server/persistence/aof.h"
#include "server/persistence/aof_rewrite_value.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/rdb_writer.h"
#include "core/strings.h"
#include "server/logging.h"
#include "server/memory_stats.h"
#include "server/persistence/rdb_saver.h"
#include "server/persistence/rdb_snapshot.h"
#include "core/resp_command.h"

namespace ringkv::server {
namespace {

constexpr std::string_view kManifestSuffix = ".manifest";

absl::Status Errno(std::string_view what, const std::string& path) {
  return absl::InternalError(StrCat(what, " ", path, ": ", std::strerror(errno)));
}

int OpenAppend(const std::string& path) { return ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644); }

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// The whole (small) file, or an error naming it.
absl::StatusOr<std::string> ReadSmallFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("Can't open", path);
  std::string text;
  char chunk[4096];
  ssize_t n;
  while ((n = ::read(fd, chunk, sizeof(chunk))) > 0) text.append(chunk, static_cast<size_t>(n));
  ::close(fd);
  if (n < 0) return Errno("Can't read", path);
  return text;
}

absl::Status WriteAll(int fd, std::string_view data) {
  core::FdSink sink(fd);
  return sink.Write(data);
}

}  // namespace

absl::Status WriteAofCommands(core::Keyspace& ks, int fd, int key_save_delay_us,
                              const std::vector<std::string>& function_libraries) {
  core::FdSink sink(fd);
  std::string buf;
  absl::Status status;
  // Functions first, as Redis's rewrite writes them: keys may need them
  // no more than a replica does, but a replay must end with every library.
  for (const std::string& code : function_libraries) {
    std::string_view load[] = {"FUNCTION", "LOAD", code};
    core::AppendRespCommand(load, &buf);
  }
  auto flush = [&](bool force) {
    if (status.ok() && (force || buf.size() >= 64 * 1024)) {
      status = sink.Write(buf);
      buf.clear();
    }
  };
  uint64_t keys_done = 0;
  for (int i = 0; i < ks.count() && status.ok(); ++i) {
    core::Database& db = ks.db(i);
    if (db.size() == 0) continue;
    std::string index = StrCat(i);
    std::string_view select[] = {"SELECT", index};
    core::AppendRespCommand(select, &buf);
    db.ForEachIncludingExpired([&](std::string_view key, const core::Entry& e) {
      AppendRewriteCommands(key, e.value, &buf);
      if (int64_t when = db.GetExpire(&e); when >= 0) {
        std::string ms = StrCat(when);
        std::string_view expire[] = {"PEXPIREAT", key, ms};
        core::AppendRespCommand(expire, &buf);
      }
      flush(false);
      AfterKeySaved(++keys_done, key_save_delay_us);
    });
  }
  flush(true);
  return status;
}

absl::Status WriteBase(core::Keyspace& ks, int fd, bool rdb_preamble, const RdbSaveOptions& options) {
  return rdb_preamble ? WriteRdb(ks, fd, options) : WriteAofCommands(ks, fd, options.key_save_delay_us, options.function_libraries);
}

RdbSaveOptions Aof::BaseOptions(int64_t now_ms) const {
  RdbSaveOptions o = SaveOptionsFromConfig(*config_, now_ms);
  o.aof_base = true;
  if (functions_) o.function_libraries = functions_();
  return o;
}

Aof::Aof(Config* config, core::Keyspace* keyspace, ChildProcess* child, AofSyncer::Submit submit_fsync)
    : config_(config), keyspace_(keyspace), child_(child), submit_fsync_(std::move(submit_fsync)) {
  ReloadPolicy();
}

Aof::~Aof() {
  syncer_.reset();  // closes retired files
  if (fd_ >= 0) ::close(fd_);
}

void Aof::ReloadPolicy() {
  const std::string& p = config_->Str("appendfsync");
  policy_ = p == "always" ? FsyncPolicy::kAlways : p == "no" ? FsyncPolicy::kNo : FsyncPolicy::kEverysec;
}

std::string Aof::DirPath() const { return config_->Str("appenddirname"); }
std::string Aof::PathOf(const std::string& file_name) const { return StrCat(DirPath(), "/", file_name); }

uint64_t Aof::FileSize(const std::string& name) const {
  struct stat st;
  return ::stat(PathOf(name).c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

uint64_t Aof::synced_offset() const {
  return syncer_ ? std::max(syncer_->synced(), synced_when_off_) : synced_when_off_;
}

absl::Status Aof::PersistManifest() {
  const std::string name = StrCat(prefix(), kManifestSuffix);
  const std::string tmp = PathOf(StrCat("temp-", name));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("Can't open the AOF manifest file", tmp);
  absl::Status s = WriteAll(fd, manifest_.Serialize());
  if (s.ok() && ::fsync(fd) != 0) s = Errno("Can't sync", tmp);
  ::close(fd);
  if (s.ok() && ::rename(tmp.c_str(), PathOf(name).c_str()) != 0) s = Errno("Can't rename the AOF manifest", tmp);
  if (s.ok()) s = SyncDirectoryOf(PathOf(name));
  return s;
}

void Aof::SwitchFd(int fd) {
  if (fd_ >= 0) {
    if (syncer_) {
      syncer_->Request(fd_, written_, /*close_after=*/true);
      sync_requested_ = written_;
    } else {
      ::close(fd_);
    }
  }
  fd_ = fd;
  incr_size_ = 0;
  selected_db_ = -1;
}

absl::Status Aof::OpenNewIncr() {
  const AofFile& f = manifest_.NewIncr(prefix());
  int fd = OpenAppend(PathOf(f.name));
  if (fd < 0) return Errno("Can't open the append-only file", f.name);
  SwitchFd(fd);
  return absl::OkStatus();
}

absl::Status Aof::CreateBaseNow(int64_t now_ms) {
  const bool rdb = config_->Bool("aof-use-rdb-preamble");
  const AofFile& base = manifest_.NewBase(prefix(), rdb);
  const std::string path = PathOf(base.name);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("Can't create the AOF base file", path);
  absl::Status s = WriteBase(*keyspace_, fd, rdb, BaseOptions(now_ms));
  if (s.ok() && ::fsync(fd) != 0) s = Errno("Can't sync", path);
  ::close(fd);
  if (!s.ok()) return s;
  base_size_ = FileSize(base.name);
  return absl::OkStatus();
}

absl::Status Aof::ReplayFiles(int64_t now_ms, const AofApply& apply, uint64_t* keys_loaded) {
  *keys_loaded = 0;
  // The base, then each incremental file; only the last file may be
  // repaired when it ends mid-command.
  std::vector<AofFile> files;
  if (manifest_.base()) files.push_back(*manifest_.base());
  for (const AofFile& f : manifest_.incrs()) files.push_back(f);
  const bool load_truncated = config_->Bool("aof-load-truncated");
  current_size_ = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string path = PathOf(files[i].name);
    if (!Exists(path)) {
      // Redis tolerates a missing last incremental file (crash right after
      // the manifest named it); anything else is an inconsistent AOF.
      if (i + 1 == files.size() && files[i].type == 'i') continue;
      return absl::DataLossError(StrCat("The AOF file ", files[i].name, " doesn't exist"));
    }
    absl::StatusOr<AofReplayResult> r =
        ReplayAofFile(path, load_truncated && i + 1 == files.size(), *keyspace_, now_ms, apply);
    if (!r.ok()) return r.status();
    if (r->truncated) {
      Log(kWarning, StrCat("!!! Warning: short read while loading the AOF file ", files[i].name, "!!!"));
      Log(kWarning, StrCat("!!! Truncating the AOF ", files[i].name, " at offset ", r->truncated_at, " !!!"));
      Log(kWarning, StrCat("AOF ", files[i].name, " loaded anyway because aof-load-truncated is enabled"));
    }
    *keys_loaded += r->rdb_keys;
    current_size_ += r->size;
    if (files[i].type == 'b') base_size_ = r->size;
    Log(kNotice, StrCat("DB loaded from ", files[i].type == 'b' ? "base" : "incr", " file ", files[i].name,
                        ": ", r->commands, " commands", r->rdb_keys ? StrCat(", ", r->rdb_keys, " keys") : ""));
  }

  return absl::OkStatus();
}

absl::Status Aof::OpenAndLoad(int64_t now_ms, const AofApply& apply, uint64_t* keys_loaded) {
  *keys_loaded = 0;
  ReloadPolicy();
  if (::mkdir(DirPath().c_str(), 0755) != 0 && errno != EEXIST) {
    return Errno("Can't create the AOF directory", DirPath());
  }
  const std::string manifest_path = PathOf(StrCat(prefix(), kManifestSuffix));
  if (Exists(manifest_path)) {
    absl::StatusOr<std::string> text = ReadSmallFile(manifest_path);
    if (!text.ok()) return text.status();
    absl::StatusOr<AofManifest> m = AofManifest::Parse(*text);
    if (!m.ok()) return absl::DataLossError(StrCat(m.status().message(), " (", manifest_path, ")"));
    manifest_ = std::move(*m);
  } else if (Exists(prefix())) {
    // A Redis 6 style single file in `dir`: becomes the base, as Redis 7.0
    // upgrades it (same name, moved into the AOF directory).
    Log(kNotice, StrCat("Upgrading the single-file AOF ", prefix(), " to the multi-part layout in ", DirPath()));
    if (::rename(prefix().c_str(), PathOf(prefix()).c_str()) != 0) return Errno("Can't move", prefix());
    manifest_ = *AofManifest::Parse(StrCat("file ", prefix(), " seq 1 type b\n"));
    if (absl::Status s = PersistManifest(); !s.ok()) return s;
  }

  if (absl::Status s = ReplayFiles(now_ms, apply, keys_loaded); !s.ok()) return s;

  if (manifest_.empty()) {
    if (absl::Status s = CreateBaseNow(now_ms); !s.ok()) return s;
    Log(kNotice, StrCat("Creating AOF base file ", manifest_.base()->name, " on server start"));
    current_size_ = base_size_;
  }
  syncer_ = std::make_unique<AofSyncer>(submit_fsync_);
  if (manifest_.incrs().empty()) {
    if (absl::Status s = OpenNewIncr(); !s.ok()) return s;
    Log(kNotice, StrCat("Creating AOF incr file ", manifest_.incrs().back().name, " on server start"));
  } else {
    int fd = OpenAppend(PathOf(manifest_.incrs().back().name));
    if (fd < 0) return Errno("Can't open the append-only file", manifest_.incrs().back().name);
    SwitchFd(fd);
    incr_size_ = FileSize(manifest_.incrs().back().name);
  }
  if (absl::Status s = PersistManifest(); !s.ok()) return s;
  DeleteHistory();
  state_ = AofState::kOn;
  return absl::OkStatus();
}

void Aof::Feed(int db, std::span<const std::string_view> argv) {
  if (state_ == AofState::kOff) return;
  if (state_ == AofState::kWaitRewrite && child_->type() != ChildType::kAof) return;
  if (db >= 0 && db != selected_db_) {  // db -1: no SELECT (EXEC)
    std::string index = StrCat(db);
    std::string_view select[] = {"SELECT", index};
    core::AppendRespCommand(select, &buf_);
    selected_db_ = db;
  }
  core::AppendRespCommand(argv, &buf_);
}

void Aof::WriteBuffer() {
  if (buf_.empty() || fd_ < 0) return;
  size_t done = 0;
  while (done < buf_.size()) {
    ssize_t n = ::write(fd_, buf_.data() + done, buf_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (stats_.last_write_ok) {
        Log(kWarning, StrCat("Error writing to the AOF file: ", std::strerror(errno)));
      }
      stats_.last_write_ok = false;
      stats_.last_write_errno = errno;
      break;
    }
    done += static_cast<size_t>(n);
  }
  written_ += done;
  incr_size_ += done;
  current_size_ += done;
  buf_.erase(0, done);
  if (buf_.empty() && !stats_.last_write_ok) {
    Log(kWarning, "AOF write error looks solved, Redis can write again.");
    stats_.last_write_ok = true;
    stats_.last_write_errno = 0;
  }
}

void Aof::BeforeSleep() {
  if (state_ == AofState::kOff || buf_.empty()) return;
  WriteBuffer();
  if (policy_ == FsyncPolicy::kAlways && syncer_ && written_ > sync_requested_) {
    syncer_->Request(fd_, written_);
    sync_requested_ = written_;
  }
}

void Aof::Cron(int64_t now_ms) {
  if (state_ != AofState::kOff) {
    if (!stats_.last_write_ok) WriteBuffer();  // retry after ENOSPC & co.
    if (policy_ == FsyncPolicy::kEverysec && syncer_ && written_ > sync_requested_ && now_ms - last_sync_ms_ >= 1000) {
      if (syncer_->pending() > 0) ++stats_.delayed_fsync;  // the disk is behind
      syncer_->Request(fd_, written_);
      sync_requested_ = written_;
      last_sync_ms_ = now_ms;
    }
  }
  if (child_->running()) return;
  if ((rewrite_scheduled_ && state_ != AofState::kOff) ||
      (state_ == AofState::kWaitRewrite && retry_rewrite_at_ms_ > 0 && now_ms >= retry_rewrite_at_ms_)) {
    rewrite_scheduled_ = false;
    retry_rewrite_at_ms_ = 0;
    if (absl::Status s = StartRewrite(now_ms); !s.ok()) Log(kWarning, std::string(s.message()));
    return;
  }
  const int64_t pct = config_->Int("auto-aof-rewrite-percentage");
  const uint64_t min_size = static_cast<uint64_t>(config_->Int("auto-aof-rewrite-min-size"));
  if (state_ == AofState::kOn && pct > 0 && current_size_ > min_size) {
    const uint64_t base = base_size_ ? base_size_ : 1;
    const uint64_t growth = (current_size_ - std::min(current_size_, base)) * 100 / base;
    if (growth >= static_cast<uint64_t>(pct)) {
      Log(kNotice, StrCat("Starting automatic rewriting of AOF on ", growth, "% growth"));
      if (absl::Status s = StartRewrite(now_ms); !s.ok()) Log(kWarning, std::string(s.message()));
    }
  }
}

absl::Status Aof::StartRewrite(int64_t now_ms) {
  if (child_->running()) return absl::FailedPreconditionError("another child process is running");
  WriteBuffer();
  // From the fork on, writes go to a new incremental file; the child's base
  // replaces everything before it. With the AOF off (BGREWRITEAOF anyway, as
  // Redis allows) there are no new writes: the base alone is the result.
  retire_through_ = manifest_.incrs().empty() ? "" : manifest_.incrs().back().name;
  if (state_ == AofState::kOff) {
    if (::mkdir(DirPath().c_str(), 0755) != 0 && errno != EEXIST) {
      return Errno("Can't create the AOF directory", DirPath());
    }
  } else {
    if (absl::Status s = OpenNewIncr(); !s.ok()) return s;
    if (state_ == AofState::kOn) {
      if (absl::Status s = PersistManifest(); !s.ok()) return s;
    }
    Log(kNotice, StrCat("Creating AOF incr file ", manifest_.incrs().back().name, " on background rewrite"));
  }
  const bool rdb = config_->Bool("aof-use-rdb-preamble");
  const RdbSaveOptions o = BaseOptions(now_ms);
  core::Keyspace* ks = keyspace_;
  absl::Status started = child_->Start(ChildType::kAof, [ks, rdb, o]() {
    std::string tmp = absl::StrFormat("temp-rewriteaof-bg-%d.aof", static_cast<int>(getpid()));
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return 1;
    absl::Status s = WriteBase(*ks, fd, rdb, o);
    if (s.ok() && ::fsync(fd) != 0) s = absl::InternalError("fsync");
    ::close(fd);
    if (!s.ok()) {
      ::unlink(tmp.c_str());
      return 1;
    }
    Log(kNotice, StrCat("Successfully created the temporary AOF base file ", tmp));
    return 0;
  }, TotalKeys(*ks));
  if (!started.ok()) {
    ++stats_.consecutive_failures;
    stats_.last_rewrite_ok = false;
    return absl::InternalError(StrCat("Can't rewrite append only file in background: ", started.message()));
  }
  rewrite_tmp_ = absl::StrFormat("temp-rewriteaof-bg-%d.aof", static_cast<int>(child_->pid()));
  Log(kNotice, StrCat("Background append only file rewriting started by pid ", child_->pid()));
  return absl::OkStatus();
}

void Aof::OnRewriteDone(const ChildResult& result) {
  const std::string tmp = rewrite_tmp_;
  rewrite_tmp_.clear();
  stats_.last_cow_bytes = result.cow_bytes;
  stats_.last_rewrite_ms = result.duration_ms;
  if (result.killed_by_us) {
    ::unlink(tmp.c_str());
    Log(kWarning, "Background append only file rewriting terminated by signal");
    return;
  }
  if (!result.ok) {
    ::unlink(tmp.c_str());
    stats_.last_rewrite_ok = false;
    ++stats_.consecutive_failures;
    Log(kWarning, "Background append only file rewriting error");
    if (state_ == AofState::kWaitRewrite) {  // turning the AOF on: try again shortly
      retry_rewrite_at_ms_ =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
              .count() + 1000;
    }
    return;
  }
  const bool rdb = config_->Bool("aof-use-rdb-preamble");
  const AofFile base = manifest_.NewBase(prefix(), rdb);
  if (::rename(tmp.c_str(), PathOf(base.name).c_str()) != 0) {
    Log(kWarning, StrCat("Error trying to rename the temporary AOF base file ", tmp, " into ", base.name, ": ",
                         std::strerror(errno)));
    ::unlink(tmp.c_str());
    stats_.last_rewrite_ok = false;
    ++stats_.consecutive_failures;
    return;
  }
  Log(kNotice, StrCat("Successfully renamed the temporary AOF base file ", tmp, " into ", base.name));
  manifest_.RetireIncrsThrough(retire_through_);
  if (absl::Status s = PersistManifest(); !s.ok()) {
    Log(kWarning, StrCat("Error persisting the AOF manifest after rewrite: ", s.message()));
    stats_.last_rewrite_ok = false;
    ++stats_.consecutive_failures;
    return;
  }
  DeleteHistory();
  base_size_ = FileSize(base.name);
  current_size_ = base_size_;
  for (const AofFile& f : manifest_.incrs()) current_size_ += FileSize(f.name);
  if (state_ == AofState::kWaitRewrite) {
    state_ = AofState::kOn;
    Log(kNotice, "Background AOF rewrite finished successfully: the AOF is on");
  } else {
    Log(kNotice, "Background AOF rewrite finished successfully");
  }
  ++stats_.rewrites;
  stats_.consecutive_failures = 0;
  stats_.last_rewrite_ok = true;
}

void Aof::DeleteHistory() {
  std::vector<std::string> paths;
  for (const AofFile& f : manifest_.history()) {
    Log(kNotice, StrCat("Removing the history file ", f.name, " in the background"));
    paths.push_back(PathOf(f.name));
  }
  if (paths.empty()) return;
  manifest_.ClearHistory();
  if (absl::Status s = PersistManifest(); !s.ok()) Log(kWarning, std::string(s.message()));
  // Unlinking a large file can take long: not on the main thread.
  std::thread([paths = std::move(paths)] {
    for (const std::string& p : paths) ::unlink(p.c_str());
  }).detach();
}

absl::Status Aof::Enable(int64_t now_ms) {
  if (state_ != AofState::kOff) return absl::OkStatus();
  ReloadPolicy();
  if (::mkdir(DirPath().c_str(), 0755) != 0 && errno != EEXIST) {
    return Errno("Can't create the AOF directory", DirPath());
  }
  // Keep the sequence numbers of an AOF left by an earlier run, if any.
  const std::string manifest_path = PathOf(StrCat(prefix(), kManifestSuffix));
  if (manifest_.empty() && Exists(manifest_path)) {
    if (absl::StatusOr<std::string> text = ReadSmallFile(manifest_path); text.ok()) {
      if (absl::StatusOr<AofManifest> m = AofManifest::Parse(*text); m.ok()) manifest_ = std::move(*m);
    }
  }
  if (!syncer_) syncer_ = std::make_unique<AofSyncer>(submit_fsync_);
  state_ = AofState::kWaitRewrite;
  if (child_->running()) {
    rewrite_scheduled_ = true;  // after the running child, as Redis does
    return absl::OkStatus();
  }
  absl::Status s = StartRewrite(now_ms);
  if (!s.ok()) {
    state_ = AofState::kOff;
    return s;
  }
  return absl::OkStatus();
}

void Aof::Disable() {
  if (state_ == AofState::kOff) return;
  WriteBuffer();
  buf_.clear();
  if (fd_ >= 0) SwitchFd(-1);  // synced, then closed, by the syncer
  if (child_->type() == ChildType::kAof) {
    ChildResult r;
    child_->Kill(&r);
    ::unlink(rewrite_tmp_.c_str());
    rewrite_tmp_.clear();
  }
  // Whatever was fed is considered settled: nothing waits for an AOF that
  // is off (the last sync above still runs).
  synced_when_off_ = fed_offset();
  rewrite_scheduled_ = false;
  state_ = AofState::kOff;
}

absl::Status Aof::FlushAndSync() {
  if (state_ == AofState::kOff) return absl::OkStatus();
  WriteBuffer();
  if (!buf_.empty()) return absl::InternalError(StrCat("Error writing to the AOF file: ", std::strerror(stats_.last_write_errno)));
  if (syncer_) syncer_->SyncAllNow();
  if (fd_ >= 0 && ::fsync(fd_) != 0) return absl::InternalError(StrCat("Error syncing the AOF file: ", std::strerror(errno)));
  synced_when_off_ = written_;
  return absl::OkStatus();
}

void Aof::AppendInfo(std::string* out) const {
  auto field = [out](std::string_view name, auto value) { StrAppend(out, name, ":", value, "\r\n"); };
  field("aof_current_size", current_size_);
  field("aof_base_size", base_size_);
  field("aof_pending_rewrite", rewrite_scheduled_ ? 1 : 0);
  field("aof_buffer_length", buf_.size());
  field("aof_pending_bio_fsync", syncer_ ? syncer_->pending() : 0);
  field("aof_delayed_fsync", stats_.delayed_fsync);
}

}  // namespace ringkv::server

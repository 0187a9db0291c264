#include "server/persistence/aof.h"
#include "server/persistence/aof_rewrite_value.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/rdb_writer.h"
#include "core/strings.h"
#include "io/thread_check.h"
#include "server/logging.h"
#include "server/memory_stats.h"
#include "server/persistence/background_save.h"
#include "server/persistence/rdb_saver.h"
#include "server/persistence/rdb_snapshot.h"
#include "server/persistence/snapshot_encoder.h"
#include "core/resp_command.h"

namespace ringkv::server {
namespace {

constexpr std::string_view kManifestSuffix = ".manifest";

int OpenAppend(const std::string& path) { return ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644); }

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The message of a fatal AOF error whose reason is already logged, as Redis
// logs it (the server exits with this line).
constexpr char kFatalAofError[] = "Exiting on a fatal error loading the append-only file.";

// The whole (small) file, or an error naming it.
absl::StatusOr<std::string> ReadSmallFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FileError("Can't open", path);
  std::string text;
  char chunk[4096];
  ssize_t n;
  while ((n = ::read(fd, chunk, sizeof(chunk))) > 0) text.append(chunk, static_cast<size_t>(n));
  ::close(fd);
  if (n < 0) return FileError("Can't read", path);
  return text;
}

absl::Status WriteAll(int fd, std::string_view data) {
  core::FdSink sink(fd);
  return sink.Write(data);
}

// The base a rewrite writes before it is renamed in (Redis's name).
std::string RewriteTempName(pid_t pid) { return absl::StrFormat("temp-rewriteaof-bg-%d.aof", static_cast<int>(pid)); }

// Redis's AOF annotation line: "#TS:<unix seconds>".
std::string TimestampAnnotation(int64_t unix_s) { return StrCat("#TS:", unix_s, "\r\n"); }

}  // namespace

absl::Status WriteBase(core::Keyspace& ks, int fd, bool rdb_preamble, const RdbSaveOptions& options) {
  core::FdSink sink(fd, options.fsync_every);
  const std::unique_ptr<SnapshotEncoder> encoder =
      rdb_preamble ? MakeRdbEncoder(&sink, options) : MakeAofCommandEncoder(&sink);
  return WriteKeyspace(ks, *encoder, options);
}

RdbSaveOptions Aof::BaseOptions(int64_t now_ms) const {
  RdbSaveOptions o = SaveOptionsFromConfig(*config_, now_ms);
  o.aof_base = true;
  o.fsync_every = config_->Bool("aof-rewrite-incremental-fsync") ? kIncrementalFsyncBytes : 0;
  if (functions_) o.function_libraries = functions_();
  return o;
}

Aof::Aof(Config* config, core::Keyspace* keyspace, ChildProcess* child, AofSyncer::Submit submit_fsync,
         UnlinkInBackground unlink)
    : config_(config),
      keyspace_(keyspace),
      child_(child),
      submit_fsync_(std::move(submit_fsync)),
      unlink_in_background_(std::move(unlink)) {
  ReloadPolicy();
  config_->Bind("no-appendfsync-on-rewrite", &no_fsync_on_rewrite_);
}

// no-appendfsync-on-rewrite: while a child saves or rewrites (and so loads
// the disk), the AOF is written but not fsynced, as Redis's
// flushAppendOnlyFile -- with appendfsync always too.
bool Aof::SkipFsync() const { return no_fsync_on_rewrite_ && child_->running(); }

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
  const LatencyTimer timer(latency_);
  const bool ok = ::stat(PathOf(name).c_str(), &st) == 0;
  timer.End("aof-fstat");
  return ok ? static_cast<uint64_t>(st.st_size) : 0;
}

uint64_t Aof::synced_offset() const {
  return syncer_ ? std::max(syncer_->synced(), synced_when_off_) : synced_when_off_;
}

absl::Status Aof::PersistManifest(const AofManifest& manifest) {
  const std::string name = StrCat(prefix(), kManifestSuffix);
  const std::string tmp = PathOf(StrCat("temp-", name));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return FileError("Can't open the AOF manifest file", tmp);
  absl::Status s = WriteAll(fd, manifest.Serialize());
  if (s.ok() && ::fsync(fd) != 0) s = FileError("Can't sync", tmp);
  ::close(fd);
  if (s.ok() && ::rename(tmp.c_str(), PathOf(name).c_str()) != 0) s = FileError("Can't rename the AOF manifest", tmp);
  if (s.ok()) s = SyncDirectoryOf(PathOf(name));
  return s;
}

absl::Status Aof::LoadManifestFromDisk(AofManifest* out) const {
  *out = AofManifest();
  const std::string path = PathOf(StrCat(prefix(), kManifestSuffix));
  if (!IsDirectory(DirPath()) || !Exists(path)) return absl::OkStatus();  // no AOF yet (or Redis 6's)
  absl::StatusOr<std::string> text = ReadSmallFile(path);
  if (!text.ok()) {
    Log(kWarning, StrCat("Fatal error: can't open the AOF manifest file ", path, " for reading: ",
                         text.status().message()));
    return absl::AbortedError(kFatalAofError);
  }
  AofManifest::ParseError where;
  absl::StatusOr<AofManifest> m = AofManifest::Parse(*text, &where);
  if (!m.ok()) {
    // Logged as Redis logs it; the reason appears once.
    Log(kWarning, "*** FATAL AOF MANIFEST FILE ERROR ***");
    if (where.line > 0) {
      Log(kWarning, StrCat("Reading the manifest file, at line ", where.line));
      Log(kWarning, StrCat(">>> '", where.text, "'"));
    }
    Log(kWarning, std::string(m.status().message()));
    return absl::AbortedError(kFatalAofError);
  }
  *out = std::move(*m);
  return absl::OkStatus();
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

absl::Status Aof::OpenNewIncr(bool persist) {
  AofManifest next = manifest_;
  const AofFile& f = next.NewIncr(prefix());
  int fd = ::open(PathOf(f.name).c_str(), O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return FileError("Can't open the append-only file", f.name);
  if (persist) {
    if (absl::Status s = PersistManifest(next); !s.ok()) {
      ::close(fd);
      return s;
    }
  }
  manifest_ = std::move(next);
  SwitchFd(fd);
  return absl::OkStatus();
}

absl::Status Aof::CreateBaseNow(int64_t now_ms) {
  const bool rdb = config_->Bool("aof-use-rdb-preamble");
  const AofFile& base = manifest_.NewBase(prefix(), rdb);
  const std::string path = PathOf(base.name);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return FileError("Can't create the AOF base file", path);
  absl::Status s = rdb || !timestamps_ ? absl::OkStatus() : WriteAll(fd, TimestampAnnotation(now_ms / 1000));
  if (s.ok()) s = WriteBase(*keyspace_, fd, rdb, BaseOptions(now_ms));
  if (s.ok() && ::fsync(fd) != 0) s = FileError("Can't sync", path);
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
  // Every file the manifest names must be there, as Redis checks (their
  // sizes) before loading any: a missing one is fatal.
  for (const AofFile& f : files) {
    struct stat st;
    if (::stat(PathOf(f.name).c_str(), &st) != 0) {
      Log(kWarning, StrCat("Unable to obtain the AOF file ", f.name, " length. stat: ", std::strerror(errno)));
      return absl::AbortedError(kFatalAofError);
    }
  }
  current_size_ = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string path = PathOf(files[i].name);
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
  if (absl::Status s = LoadManifestFromDisk(&manifest_); !s.ok()) return s;
  // A Redis 6 single AOF in `dir` is moved into the directory as the base,
  // as Redis 7.0 upgrades it: when there is no directory, or no manifest, or
  // the manifest names only that file as its base and it is not in the
  // directory yet (an upgrade cut short before the move).
  if (Exists(prefix())) {
    const bool upgrade = !IsDirectory(DirPath()) || manifest_.empty() ||
                         (manifest_.base() && manifest_.incrs().empty() && manifest_.base()->name == prefix() &&
                          !Exists(PathOf(prefix())));
    if (upgrade) {
      if (absl::Status s = UpgradeSingleFile(); !s.ok()) return s;
    }
  }
  if (!manifest_.empty()) {
    if (absl::Status s = ReplayFiles(now_ms, apply, keys_loaded); !s.ok()) return s;
  }
  if (::mkdir(DirPath().c_str(), 0755) != 0 && errno != EEXIST) {
    return FileError("Can't open or create append-only dir", DirPath());
  }
  if (manifest_.empty()) {
    if (absl::Status s = CreateBaseNow(now_ms); !s.ok()) return s;
    Log(kNotice, StrCat("Creating AOF base file ", manifest_.base()->name, " on server start"));
    current_size_ = base_size_;
  }
  syncer_ = std::make_unique<AofSyncer>(submit_fsync_);
  if (manifest_.incrs().empty()) {
    if (absl::Status s = OpenNewIncr(/*persist=*/false); !s.ok()) return s;
    Log(kNotice, StrCat("Creating AOF incr file ", manifest_.incrs().back().name, " on server start"));
  } else {
    int fd = OpenAppend(PathOf(manifest_.incrs().back().name));
    if (fd < 0) return FileError("Can't open the append-only file", manifest_.incrs().back().name);
    SwitchFd(fd);
    incr_size_ = FileSize(manifest_.incrs().back().name);
    Log(kNotice, StrCat("Opening AOF incr file ", manifest_.incrs().back().name, " on server start"));
  }
  if (absl::Status s = PersistManifest(manifest_); !s.ok()) return s;
  DeleteHistory();
  state_ = AofState::kOn;
  return absl::OkStatus();
}

absl::Status Aof::UpgradeSingleFile() {
  if (::mkdir(DirPath().c_str(), 0755) != 0 && errno != EEXIST) {
    return FileError("Can't open or create append-only dir", DirPath());
  }
  // The manifest first, then the move: a crash in between leaves the state
  // the condition above recognizes, and the next start finishes the job.
  AofManifest next = manifest_;
  next.SetUpgradedBase(prefix());
  if (absl::Status s = PersistManifest(next); !s.ok()) return s;
  manifest_ = std::move(next);
  if (::rename(prefix().c_str(), PathOf(prefix()).c_str()) != 0) {
    return FileError(StrCat("Error trying to move the old AOF file ", prefix(), " into dir"), DirPath());
  }
  Log(kNotice, StrCat("Successfully migrated an old-style AOF file (", prefix(), ") into the AOF directory (",
                      DirPath(), ")."));
  return absl::OkStatus();
}

absl::Status Aof::ReloadFromDisk(int64_t now_ms, const AofApply& apply, uint64_t* keys_loaded) {
  *keys_loaded = 0;
  AofManifest m;
  if (absl::Status s = LoadManifestFromDisk(&m); !s.ok()) return s;
  manifest_ = std::move(m);
  DeleteHistory();
  if (manifest_.empty()) return absl::OkStatus();  // no AOF: an empty dataset
  return ReplayFiles(now_ms, apply, keys_loaded);
}

void Aof::Feed(int db, std::span<const std::string_view> argv) {
  RINGKV_DCHECK_MAIN_THREAD();
  if (state_ == AofState::kOff) return;
  if (state_ == AofState::kWaitRewrite && child_->type() != ChildType::kAof) return;
  if (timestamps_) {  // at most one annotation a second, before the command (and its SELECT)
    const int64_t now_s = ::time(nullptr);
    if (now_s > last_timestamp_s_) {
      last_timestamp_s_ = now_s;
      buf_ += TimestampAnnotation(now_s);
    }
  }
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
  if (flush_sleep_us_ > 0) ::usleep(static_cast<useconds_t>(flush_sleep_us_));  // DEBUG AOF-FLUSH-SLEEP
  const LatencyTimer timer(latency_);
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
  if (timer.active()) {
    // As Redis: what the write waited behind (an fsync in flight, a child
    // writing), and every write as "aof-write".
    const int64_t ms = timer.ElapsedMs();
    latency_->AddIfNeeded(syncer_ && syncer_->pending() > 0 ? "aof-write-pending-fsync"
                          : child_->running()                ? "aof-write-active-child"
                                                             : "aof-write-alone",
                          ms);
    latency_->AddIfNeeded("aof-write", ms);
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
  if (policy_ == FsyncPolicy::kAlways && SkipFsync()) {
    unsynced_released_ = written_;
    return;
  }
  if (policy_ == FsyncPolicy::kAlways && syncer_ && written_ > sync_requested_) {
    syncer_->Request(fd_, written_);
    sync_requested_ = written_;
  }
}

void Aof::Cron(int64_t now_ms) {
  if (state_ != AofState::kOff) {
    if (!stats_.last_write_ok) WriteBuffer();  // retry after ENOSPC & co.
    if (policy_ == FsyncPolicy::kEverysec && syncer_ && written_ > sync_requested_ && now_ms - last_sync_ms_ >= 1000 &&
        !SkipFsync()) {
      if (syncer_->pending() > 0) ++stats_.delayed_fsync;  // the disk is behind
      syncer_->Request(fd_, written_);
      sync_requested_ = written_;
      last_sync_ms_ = now_ms;
    }
  }
  if (child_->running()) return;
  const int64_t now_s = now_ms / 1000;
  // A rewrite asked for while a child ran (BGREWRITEAOF, or turning the AOF
  // on), or one to retry after a failure while turning it on.
  if (rewrite_scheduled_ && !RewriteLimited(now_s)) {
    if (absl::Status s = StartRewrite(now_ms); !s.ok()) Log(kWarning, std::string(s.message()));
    return;
  }
  const int64_t pct = config_->Int("auto-aof-rewrite-percentage");
  const uint64_t min_size = static_cast<uint64_t>(config_->Int("auto-aof-rewrite-min-size"));
  if (state_ == AofState::kOn && pct > 0 && current_size_ > min_size) {
    const uint64_t base = base_size_ ? base_size_ : 1;
    const int64_t growth = static_cast<int64_t>(current_size_ * 100 / base) - 100;
    if (growth >= pct && !RewriteLimited(now_s)) {
      Log(kNotice, StrCat("Starting automatic rewriting of AOF on ", growth, "% growth"));
      if (absl::Status s = StartRewrite(now_ms); !s.ok()) Log(kWarning, std::string(s.message()));
    }
  }
}

bool Aof::RewriteLimited(int64_t now_s) {
  // As Redis: after 3 failures in a row, automatic and scheduled rewrites
  // wait 1 minute, then 2, 4, ... up to an hour (BGREWRITEAOF still runs
  // at once), so a failing rewrite does not leave a trail of tiny
  // incremental files.
  constexpr uint64_t kThreshold = 3;
  constexpr int64_t kMaxMinutes = 60;
  if (stats_.consecutive_failures < kThreshold) {
    limit_delay_minutes_ = 0;
    limit_next_rewrite_s_ = 0;
    return false;
  }
  if (limit_next_rewrite_s_ != 0) {
    if (now_s < limit_next_rewrite_s_) return true;
    limit_next_rewrite_s_ = 0;
    return false;
  }
  limit_delay_minutes_ = limit_delay_minutes_ == 0 ? 1 : std::min(limit_delay_minutes_ * 2, kMaxMinutes);
  limit_next_rewrite_s_ = now_s + limit_delay_minutes_ * 60;
  Log(kWarning, StrCat("Background AOF rewrite has repeatedly failed and triggered the limit, will retry in ",
                       limit_delay_minutes_, " minutes"));
  return true;
}

absl::Status Aof::StartRewrite(int64_t now_ms) {
  if (child_->running()) return absl::FailedPreconditionError("another child process is running");
  if (::mkdir(DirPath().c_str(), 0755) != 0 && errno != EEXIST) {
    stats_.last_rewrite_ok = false;
    return FileError("Can't open or create append-only dir", DirPath());
  }
  WriteBuffer();
  // From the fork on, writes go to a new incremental file; the child's base
  // replaces everything before it. With the AOF off (BGREWRITEAOF anyway, as
  // Redis allows) there are no new writes: the base alone is the result.
  // While the AOF is being turned on, the writes since the fork collect in
  // a temporary file that becomes an incremental file only if the rewrite
  // succeeds: a failed attempt leaves the manifest (and its numbers) as it
  // was.
  if (state_ == AofState::kWaitRewrite) {
    const std::string temp = TempIncrName();
    int fd = ::open(PathOf(temp).c_str(), O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      stats_.last_rewrite_ok = false;
      return FileError("Can't open the append-only file", temp);
    }
    SwitchFd(fd);
    Log(kNotice, StrCat("Creating AOF incr file ", temp, " on background rewrite"));
  } else if (state_ == AofState::kOn) {
    if (absl::Status s = OpenNewIncr(/*persist=*/true); !s.ok()) {
      stats_.last_rewrite_ok = false;
      return s;
    }
    Log(kNotice, StrCat("Creating AOF incr file ", manifest_.incrs().back().name, " on background rewrite"));
  }
  const bool rdb = config_->Bool("aof-use-rdb-preamble");
  const RdbSaveOptions o = BaseOptions(now_ms);
  core::Keyspace* ks = keyspace_;
  const bool timestamps = timestamps_;
  absl::Status started;
  std::string tmp_path;  // the base being written
  if (!config_->Bool("snapshot-fork")) {
    // In this process (background_save.h), in either base format; the path
    // is absolute, as the thread that writes it does not follow a CONFIG
    // SET dir.
    absl::StatusOr<std::unique_ptr<SnapshotOutput>> file = SnapshotOutput::ToKeptFile(
        RewriteTempName(getpid()), o.fsync_every);
    if (file.ok()) tmp_path = (*file)->name();
    // An AOF base starts with its time (aof-timestamp-enabled), as Redis's.
    const std::string stamp = rdb || !timestamps ? std::string() : TimestampAnnotation(::time(nullptr));
    const auto format = rdb ? BackgroundSnapshot::Format::kRdb : BackgroundSnapshot::Format::kAofCommands;
    started = file.ok() ? child_->StartInProcess(ChildType::kAof,
                                                 BackgroundSnapshot::Start(*ks, std::move(*file), o, format, stamp),
                                                 TotalKeys(*ks))
                        : file.status();
  } else {
    started = child_->Start(ChildType::kAof, [ks, rdb, o, timestamps]() {
      std::string tmp = RewriteTempName(getpid());
      int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0) return 1;
      // An AOF base starts with its time (aof-timestamp-enabled), as Redis's.
      absl::Status s = rdb || !timestamps ? absl::OkStatus() : WriteAll(fd, TimestampAnnotation(::time(nullptr)));
      if (s.ok()) s = WriteBase(*ks, fd, rdb, o);
      if (s.ok() && ::fsync(fd) != 0) s = absl::InternalError("fsync");
      ::close(fd);
      if (!s.ok()) {
        ::unlink(tmp.c_str());
        return 1;
      }
      Log(kNotice, StrCat("Successfully created the temporary AOF base file ", tmp));
      return 0;
    }, TotalKeys(*ks));
  }
  if (!started.ok()) {
    ++stats_.consecutive_failures;
    stats_.last_rewrite_ok = false;
    return absl::InternalError(StrCat("Can't rewrite append only file in background: ", started.message()));
  }
  rewrite_tmp_ = child_->in_process()
                     ? tmp_path
                     : RewriteTempName(child_->pid());
  ++stats_.rewrites;
  rewrite_scheduled_ = false;
  Log(kNotice, child_->in_process()
                   ? std::string("Background append only file rewriting started in this process (snapshot-fork no)")
                   : StrCat("Background append only file rewriting started by pid ", child_->pid()));
  return absl::OkStatus();
}

void Aof::OnRewriteDone(const ChildResult& result) {
  const std::string tmp = rewrite_tmp_;
  rewrite_tmp_.clear();
  stats_.last_cow_bytes = result.cow_bytes;
  stats_.last_rewrite_ms = result.duration_ms;
  if (result.ok && FinishRewrite(tmp)) {
    stats_.consecutive_failures = 0;
    stats_.last_rewrite_ok = true;
    Log(kNotice, "Background AOF rewrite finished successfully");
    return;
  }
  ::unlink(tmp.c_str());
  if (result.killed_by_us) {  // not a failure (Redis's SIGUSR1)
    Log(kWarning, "Background AOF rewrite terminated by signal");
  } else {
    stats_.last_rewrite_ok = false;
    ++stats_.consecutive_failures;
    if (!result.ok) Log(kWarning, "Background AOF rewrite terminated with error");
  }
  if (state_ == AofState::kWaitRewrite) {
    // Turning the AOF on: what collected since the fork is dropped with the
    // temporary file, and the next attempt starts from a new fork.
    buf_.clear();
    SwitchFd(-1);
    const std::string temp = TempIncrName();
    Log(kNotice, StrCat("Removing the temp incr aof file ", temp, " in the background"));
    ::unlink(PathOf(temp).c_str());
    rewrite_scheduled_ = true;
  }
}

bool Aof::FinishRewrite(const std::string& tmp) {
  Log(kNotice, "Background AOF rewrite terminated with success");
  AofManifest next = manifest_;
  const AofFile base = next.NewBase(prefix(), config_->Bool("aof-use-rdb-preamble"));
  const LatencyTimer rename_timer(latency_);
  const int renamed = ::rename(tmp.c_str(), PathOf(base.name).c_str());
  rename_timer.End("aof-rename");
  if (renamed != 0) {
    Log(kWarning, StrCat("Error trying to rename the temporary AOF base file ", tmp, " into ", base.name, ": ",
                         std::strerror(errno)));
    return false;
  }
  Log(kNotice, StrCat("Successfully renamed the temporary AOF base file ", tmp, " into ", base.name));
  if (state_ == AofState::kWaitRewrite) {
    // The writes since the fork: the temporary file becomes the next
    // incremental file (the descriptor follows the rename).
    const std::string temp = TempIncrName();
    const AofFile& incr = next.NewIncr(prefix());
    if (::rename(PathOf(temp).c_str(), PathOf(incr.name).c_str()) != 0) {
      Log(kWarning, StrCat("Error trying to rename the temporary AOF incr file ", temp, " into ", incr.name, ": ",
                           std::strerror(errno)));
      ::unlink(PathOf(base.name).c_str());
      return false;
    }
    Log(kNotice, StrCat("Successfully renamed the temporary AOF incr file ", temp, " into ", incr.name));
  }
  // The incremental files the base covers become history; with the AOF on,
  // the last one is the file written since the fork.
  next.RetireIncrs(/*keep_last=*/fd_ >= 0);
  if (absl::Status s = PersistManifest(next); !s.ok()) {
    Log(kWarning, StrCat("Error persisting the AOF manifest after rewrite: ", s.message()));
    ::unlink(PathOf(base.name).c_str());
    return false;
  }
  manifest_ = std::move(next);
  base_size_ = FileSize(base.name);
  current_size_ = base_size_;
  for (const AofFile& f : manifest_.incrs()) current_size_ += FileSize(f.name);
  selected_db_ = -1;
  DeleteHistory();
  if (state_ == AofState::kWaitRewrite) state_ = AofState::kOn;
  return true;
}

void Aof::DeleteHistory() {
  if (config_->Bool("aof-disable-auto-gc")) return;
  std::vector<std::string> paths;
  for (const AofFile& f : manifest_.history()) {
    Log(kNotice, StrCat("Removing the history file ", f.name, " in the background"));
    paths.push_back(PathOf(f.name));
  }
  if (paths.empty()) return;
  manifest_.ClearHistory();
  if (absl::Status s = PersistManifest(manifest_); !s.ok()) Log(kWarning, std::string(s.message()));
  unlink_in_background_(std::move(paths));  // a large file can take long to unlink
}

absl::Status Aof::Enable(int64_t now_ms) {
  if (state_ != AofState::kOff) return absl::OkStatus();
  ReloadPolicy();
  // Keep the sequence numbers of an AOF left by an earlier run, if any.
  if (manifest_.empty()) {
    AofManifest m;
    if (LoadManifestFromDisk(&m).ok()) manifest_ = std::move(m);
  }
  if (!syncer_) syncer_ = std::make_unique<AofSyncer>(submit_fsync_);
  state_ = AofState::kWaitRewrite;
  if (child_->running()) {
    rewrite_scheduled_ = true;  // after the running child, as Redis does
    Log(kWarning, "AOF was enabled but there is already another background operation. An AOF background was "
                  "scheduled to start when possible.");
    return absl::OkStatus();
  }
  absl::Status s = StartRewrite(now_ms);
  if (!s.ok()) {
    state_ = AofState::kOff;
    Log(kWarning, "Redis needs to enable the AOF but can't trigger a background AOF rewrite operation. Check the "
                  "above logs for more info about the error.");
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
    Log(kNotice, child_->in_process() ? std::string("Stopping the running AOF rewrite (in this process)")
                                      : StrCat("Killing running AOF rewrite child: ", child_->pid()));
    ChildResult r;
    child_->Kill(&r);
    ::unlink(rewrite_tmp_.c_str());
    rewrite_tmp_.clear();
    if (state_ == AofState::kWaitRewrite) ::unlink(PathOf(TempIncrName()).c_str());
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

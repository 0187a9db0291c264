#include "server/persistence/rdb_saver.h"

#include <unistd.h>

#include "absl/strings/str_format.h"
#include "core/strings.h"
#include "server/logging.h"
#include "server/memory_stats.h"
#include "server/persistence/background_save.h"

namespace ringkv::server {

std::vector<SavePoint> ParseSavePoints(std::string_view value) {
  std::vector<SavePoint> points;
  std::vector<std::string_view> parts = Split(value, ' ', true);
  for (size_t i = 0; i + 1 < parts.size(); i += 2) {
    int64_t s, c;
    if (core::StringToInt64(parts[i], &s) && core::StringToInt64(parts[i + 1], &c)) points.push_back({s, c});
  }
  return points;
}

RdbSaver::RdbSaver(Config* config, core::Keyspace* keyspace, ChildProcess* child)
    : config_(config), keyspace_(keyspace), child_(child) {}

RdbSaveOptions SaveOptionsFromConfig(const Config& config, int64_t now_ms) {
  RdbSaveOptions o;
  o.compress = config.Bool("rdbcompression");
  o.checksum = config.Bool("rdbchecksum");
  o.used_memory = static_cast<int64_t>(AllocatedBytes());
  o.now_ms = now_ms;
  o.key_save_delay_us = static_cast<int>(config.Int("rdb-key-save-delay"));
  o.fsync_every = config.Bool("rdb-save-incremental-fsync") ? kIncrementalFsyncBytes : 0;
  return o;
}

absl::Status RdbSaver::Save(int64_t now_ms, uint64_t* dirty, bool counted) {
  const std::string& path = config_->Str("dbfilename");
  std::string tmp = absl::StrFormat("temp-%d.rdb", static_cast<int>(getpid()));
  RdbSaveOptions options = SaveOptionsFromConfig(*config_, now_ms);
  if (functions_) options.function_libraries = functions_();
  if (repl_info_) {
    const RdbSaveOptions r = repl_info_();
    options.repl_id = r.repl_id;
    options.repl_offset = r.repl_offset;
    options.repl_stream_db = r.repl_stream_db;
  }
  absl::Status s = SaveRdbFile(*keyspace_, path, tmp, options);
  if (!s.ok()) {
    Log(kWarning, StrCat("Failed saving the DB: ", s.message()));
    return s;
  }
  Log(kNotice, "DB saved on disk");
  *dirty = 0;
  lastsave_s_ = now_ms / 1000;
  last_bgsave_ok_ = true;  // as Redis: a good SAVE clears a failed BGSAVE
  if (counted) ++saves_;
  return absl::OkStatus();
}

absl::Status RdbSaver::BackgroundSave(int64_t now_ms, uint64_t dirty, const RdbSaveOptions* repl) {
  if (child_->running()) return absl::FailedPreconditionError("child running");
  const std::string path = config_->Str("dbfilename");
  RdbSaveOptions options = SaveOptionsFromConfig(*config_, now_ms);
  if (functions_) options.function_libraries = functions_();
  RdbSaveOptions own;
  if (repl == nullptr && repl_info_) {
    own = repl_info_();
    repl = &own;
  }
  if (repl != nullptr) {
    options.repl_id = repl->repl_id;
    options.repl_offset = repl->repl_offset;
    options.repl_stream_db = repl->repl_stream_db;
  }
  core::Keyspace* ks = keyspace_;
  last_try_ms_ = now_ms;
  absl::Status s;
  if (!config_->Bool("snapshot-fork")) {
    // In this process: no child, no copy-on-write (background_save.h).
    absl::StatusOr<std::unique_ptr<SnapshotOutput>> file = SnapshotOutput::ToFile(
        path, absl::StrFormat("temp-bg-%d.rdb", static_cast<int>(getpid())), options.fsync_every);
    s = file.ok() ? child_->StartInProcess(ChildType::kRdb, BackgroundSnapshot::Start(*ks, std::move(*file), options),
                                           TotalKeys(*ks))
                  : file.status();
  } else {
    s = child_->Start(ChildType::kRdb, [ks, path, options]() {
      std::string tmp = absl::StrFormat("temp-%d.rdb", static_cast<int>(getpid()));
      absl::Status r = SaveRdbFile(*ks, path, tmp, options);
      if (!r.ok()) {
        Log(kWarning, StrCat("Failed saving the DB: ", r.message()));
        return 1;
      }
      Log(kNotice, "DB saved on disk");
      return 0;
    }, TotalKeys(*ks));
  }
  if (!s.ok()) {
    last_bgsave_ok_ = false;
    Log(kWarning, StrCat("Can't save in background: ", s.message()));
    return s;
  }
  dirty_at_fork_ = dirty;
  // No pid for the in-process save: a script must not take the server's
  // own for a child to kill.
  Log(kNotice, child_->in_process() ? std::string("Background saving started in this process (snapshot-fork no)")
                                    : StrCat("Background saving started by pid ", child_->pid()));
  return absl::OkStatus();
}

void RdbSaver::OnChildDone(const ChildResult& result, int64_t now_ms, uint64_t* dirty) {
  last_bgsave_time_s_ = result.duration_ms / 1000;
  last_cow_bytes_ = result.cow_bytes;
  if (result.ok) {
    Log(kNotice, "Background saving terminated with success");
    *dirty -= std::min(*dirty, dirty_at_fork_);
    lastsave_s_ = now_ms / 1000;
    last_bgsave_ok_ = true;
    ++saves_;
  } else if (result.killed_by_us) {
    Log(kWarning, "Background saving terminated by signal");
    if (!result.in_process) {  // in-process work removed its own
      const LatencyTimer timer(latency_);
      ::unlink(absl::StrFormat("temp-%d.rdb", static_cast<int>(result.pid)).c_str());
      timer.End("rdb-unlink-temp-file");
    }
  } else {
    Log(kWarning, "Background saving error");
    last_bgsave_ok_ = false;
  }
}

void RdbSaver::Cron(int64_t now_ms, uint64_t dirty) {
  if (child_->running()) return;
  if (scheduled_) {
    scheduled_ = false;
    (void)BackgroundSave(now_ms, dirty);
    return;
  }
  // As Redis: after a failed attempt, retry only after 5 seconds.
  constexpr int64_t kRetryDelayMs = 5000;
  for (const SavePoint& p : ParseSavePoints(config_->Str("save"))) {
    if (dirty >= static_cast<uint64_t>(p.changes) && now_ms / 1000 - lastsave_s_ > p.seconds &&
        (last_bgsave_ok_ || now_ms - last_try_ms_ > kRetryDelayMs)) {
      Log(kNotice, StrCat(p.changes, " changes in ", p.seconds, " seconds. Saving..."));
      (void)BackgroundSave(now_ms, dirty);
      return;
    }
  }
}

void RdbSaver::AppendInfo(std::string* out, int64_t now_ms, uint64_t dirty) const {
  auto field = [out](std::string_view name, auto value) { StrAppend(out, name, ":", value, "\r\n"); };
  const bool rdb_child = child_->type() == ChildType::kRdb;
  field("rdb_changes_since_last_save", dirty);
  field("rdb_bgsave_in_progress", rdb_child ? 1 : 0);
  field("rdb_last_save_time", lastsave_s_);
  field("rdb_last_bgsave_status", last_bgsave_ok_ ? "ok" : "err");
  field("rdb_last_bgsave_time_sec", last_bgsave_time_s_);
  field("rdb_current_bgsave_time_sec", rdb_child ? (now_ms - child_->start_ms()) / 1000 : -1);
  field("rdb_saves", saves_);
  field("rdb_last_cow_size", last_cow_bytes_);
  field("rdb_last_load_keys_expired", load_stats_.expired);
  field("rdb_last_load_keys_loaded", load_stats_.loaded);
}

}  // namespace ringkv::server

// RdbSaver: RDB snapshots on demand and on schedule -- SAVE, BGSAVE
// [SCHEDULE], the `save` points, LASTSAVE -- and the rdb_* fields of INFO
// persistence.
//
// BGSAVE forks (ChildProcess): the child writes temp-<pid>.rdb from its
// copy-on-write view of the keyspace, fsyncs and renames it over dbfilename;
// the parent keeps serving and reaps the child from the cron. SAVE writes in
// the foreground, blocking, as in Redis.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/keyspace.h"
#include "server/config.h"
#include "server/latency_monitor.h"
#include "server/persistence/child_process.h"
#include "server/persistence/rdb_snapshot.h"

namespace ringkv::server {

struct SavePoint {
  int64_t seconds;
  int64_t changes;
};

// RDB writing options from the configuration (rdbcompression, rdbchecksum).
RdbSaveOptions SaveOptionsFromConfig(const Config& config, int64_t now_ms);

// Parses the `save` directive's value ("3600 1 300 100"; "" = none).
std::vector<SavePoint> ParseSavePoints(std::string_view value);

class RdbSaver {
 public:
  RdbSaver(Config* config, core::Keyspace* keyspace, ChildProcess* child);
  // Replication info every save carries (empty repl_id: none).
  void set_repl_info(std::function<RdbSaveOptions()> fn) { repl_info_ = std::move(fn); }
  // The FUNCTION libraries every save carries.
  void set_functions_source(std::function<std::vector<std::string>()> fn) { functions_ = std::move(fn); }
  // LATENCY's rdb-unlink-temp-file event.
  void set_latency_monitor(LatencyMonitor* m) { latency_ = m; }

  // SAVE: writes dbfilename now. On success *dirty is reset. `counted`:
  // shows in rdb_saves (SAVE does; the saves FLUSHALL and DEBUG RELOAD make
  // do not, as in Redis 7.0).
  absl::Status Save(int64_t now_ms, uint64_t* dirty, bool counted = true);
  // BGSAVE: forks the save. Errors carry the client's error text. `repl`
  // (optional) adds replication info to the file (a full sync's RDB).
  absl::Status BackgroundSave(int64_t now_ms, uint64_t dirty, const RdbSaveOptions* repl = nullptr);
  void Schedule() { scheduled_ = true; }
  // The RDB child exited: updates status, LASTSAVE and *dirty.
  void OnChildDone(const ChildResult& result, int64_t now_ms, uint64_t* dirty);
  // Cron: save points, scheduled saves (when no child runs).
  void Cron(int64_t now_ms, uint64_t dirty);

  int64_t lastsave_s() const { return lastsave_s_; }
  bool last_bgsave_ok() const { return last_bgsave_ok_; }
  // Start-up (and DEBUG RELOAD): the time the loaded file counts as saved.
  void set_lastsave(int64_t now_ms) { lastsave_s_ = now_ms / 1000; }
  void set_load_stats(const RdbLoadStats& s) { load_stats_ = s; }
  void AppendInfo(std::string* out, int64_t now_ms, uint64_t dirty) const;

 private:
  Config* config_;
  core::Keyspace* keyspace_;
  ChildProcess* child_;
  int64_t lastsave_s_ = 0;
  int64_t last_try_ms_ = 0;
  bool last_bgsave_ok_ = true;
  int64_t last_bgsave_time_s_ = -1;
  uint64_t saves_ = 0;
  uint64_t last_cow_bytes_ = 0;
  uint64_t dirty_at_fork_ = 0;
  bool scheduled_ = false;
  RdbLoadStats load_stats_;
  std::function<RdbSaveOptions()> repl_info_;
  std::function<std::vector<std::string>()> functions_;
  LatencyMonitor* latency_ = nullptr;
};

}  // namespace ringkv::server

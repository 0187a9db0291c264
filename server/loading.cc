// Loading (server/loading.h): the start-up load, a replica's sync file,
// DEBUG RELOAD and DEBUG LOADAOF.
#include "server/loading.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/access_policy.h"
#include "core/strings.h"
#include "server/clock.h"
#include "server/logging.h"
#include "server/supervision.h"

namespace ringkv::server {

namespace {

// Redis's lines when an RDB file is corrupt (rdbReportCorruptRDB): the
// reason -- "RDB CRC error: ..." for a wrong checksum, what operators and
// Redis's tests grep -- then, as the redis-check-rdb report Redis appends,
// the error again under "--- RDB ERROR DETECTED ---", then the termination.
// Returns the status whose message is the last line, which the caller logs
// before exiting.
absl::Status CorruptRdbError(const std::string& path, const absl::Status& status) {
  Log(kWarning, StrCat("Internal error in RDB reading ", path, ": ", status.message()));
  Log(kWarning, "--- RDB ERROR DETECTED ---");
  Log(kWarning, StrCat("[additional info] ", path, ": ", status.message()));
  return absl::DataLossError("Terminating server after rdb file reading failure.");
}

double SecondsSince(int64_t start_us) { return static_cast<double>(SteadyUs() - start_us) / 1e6; }

}  // namespace

Loading::Loading(Hooks& hooks, const Config& config, core::Keyspace& keyspace, Persistence& persistence,
                 uint64_t& dirty)
    : hooks_(hooks), config_(config), keyspace_(keyspace), persistence_(persistence), dirty_(dirty) {}

AofApply Loading::AofReplayer(bool serve_clients) {
  AofApply apply;
  apply.begin_file = [this] {
    aof_client_ = std::make_unique<Client>();
    aof_client_->authenticated = true;
  };
  apply.command = [this, serve_clients, applied = uint64_t{0}](Argv argv, bool in_transaction) mutable {
    if (serve_clients && ++applied % 1024 == 0 && !ServeAt(0)) {
      return absl::CancelledError("loading stopped by a shutdown");
    }
    return hooks_.ReplayAofCommand(*aof_client_, argv, in_transaction);
  };
  return apply;
}

bool Loading::ServeAt(uint64_t consumed) {
  progress_.set_loaded_bytes(consumed);
  NotifyLoading(consumed);
  return hooks_.ServeWhileLoading();
}

LoadProgressHook Loading::ProgressHook() {
  LoadProgressHook progress;
  progress.interval_bytes = static_cast<uint64_t>(config_.Int("loading-process-events-interval-bytes"));
  progress.serve = [this](uint64_t consumed) { return ServeAt(consumed); };
  return progress;
}

absl::Status Loading::LoadAtStartup() {
  const int64_t now_ms = UnixMs();
  const int64_t start = SteadyUs();
  active_ = true;
  absl::Status status;
  bool rdb_corrupt = false;  // status is CorruptRdbError's, logged as it is
  // Nothing expires while loading: an AOF replays as it was written
  // (Redis's expireIfNeeded does nothing while loading), a replica's own RDB
  // keeps its expired keys for its primary's DELs, and a primary deletes
  // them after the load (DeleteKeysExpiredAtLoad), through its stream when
  // it continues a replication history.
  const bool as_replica = !config_.Str("replicaof").empty();
  const bool aof = config_.Bool("appendonly");
  keyspace_.set_expiry_mode(aof ? core::ExpiryMode::kKeep : core::ExpiryMode::kHide);
  if (aof) {
    uint64_t keys = 0;
    progress_.Start(now_ms, 0);
    status = persistence_.aof().OpenAndLoad(now_ms, AofReplayer(/*serve_clients=*/true), &keys);
    aof_client_.reset();
    if (status.ok()) {
      Log(kNotice, absl::StrFormat("DB loaded from append only file: %.3f seconds", SecondsSince(start)));
      if (const std::string& rdb = config_.Str("dbfilename"); access(rdb.c_str(), F_OK) == 0) {
        Log(kVerbose, StrCat("appendonly is yes: ", rdb, " is not loaded (the AOF is the source of truth)"));
      }
    }
    persistence_.RefreshAlways();
  } else {
    status = LoadRdbAtStartup(now_ms, start, as_replica, &rdb_corrupt);
  }
  // A shutdown during the load: active_ stays set, so nothing half-loaded
  // is ever saved, and the main loop's first turn completes the shutdown.
  if (absl::IsCancelled(status)) return status;
  active_ = false;
  keyspace_.set_expiry_mode(core::ExpiryMode::kDelete);  // REPLICAOF makes it kHide
  persistence_.rdb().set_lastsave(UnixMs());
  dirty_ = 0;
  // A corrupt RDB, or an AOF error already logged as Redis logs it.
  if (rdb_corrupt || absl::IsAborted(status)) return status;
  if (!status.ok()) return absl::DataLossError(StrCat("Fatal error loading the DB: ", status.message(), ". Exiting."));
  return absl::OkStatus();
}

absl::Status Loading::LoadRdbAtStartup(int64_t now_ms, int64_t start_us, bool as_replica,
                                       bool* corrupt) {
  const std::string& file = config_.Str("dbfilename");
  struct stat st {};
  progress_.Start(now_ms, ::stat(file.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0);
  const LoadProgressHook progress = ProgressHook();
  absl::StatusOr<RdbLoadStats> r = LoadRdbFile(file, keyspace_, now_ms, /*replace=*/false, &progress);
  if (r.ok()) {
    if (absl::Status f = hooks_.LoadFunctionLibraries(r->function_libraries, FunctionLoadMode::kReplaceAll);
        !f.ok()) {
      r = f;
    }
  }
  if (!r.ok()) {
    if (absl::IsDataLoss(r.status())) {
      *corrupt = true;
      return CorruptRdbError(file, r.status());
    }
    return absl::IsNotFound(r.status()) ? absl::OkStatus() : r.status();  // no file: an empty dataset
  }
  if (!r->repl_id.empty() && r->repl_offset >= 0) hooks_.RestoreReplicationHistory(*r, as_replica);
  if (!as_replica) {  // loaded counts the keys that stay (INFO rdb_last_load_keys_loaded)
    const uint64_t dropped = DeleteKeysExpiredAtLoad(now_ms);
    r->loaded -= std::min(r->loaded, dropped);
    r->expired += dropped;
  }
  persistence_.rdb().set_load_stats(*r);
  Log(kNotice, StrCat("Done loading RDB, keys loaded: ", r->loaded, ", keys expired: ", r->expired,
                      r->empty_skipped ? StrCat(", empty keys skipped: ", r->empty_skipped) : "", "."));
  Log(kNotice, absl::StrFormat("DB loaded from disk: %.3f seconds", SecondsSince(start_us)));
  return absl::OkStatus();
}

absl::StatusOr<RdbLoadStats> Loading::LoadSyncFile(const std::string& path, int64_t now_ms) {
  Log(kNotice, "MASTER <-> REPLICA sync: Loading DB in memory");
  NotifyStatus("MASTER <-> REPLICA sync: Loading DB in memory");
  active_ = true;
  // Clients and the cluster bus are served every
  // loading-process-events-interval-bytes, as Redis's replica loads
  // (loading-ok commands run, the others get -LOADING).
  struct stat st {};
  progress_.Start(now_ms, ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0);
  const LoadProgressHook progress = ProgressHook();
  absl::StatusOr<RdbLoadStats> loaded = LoadRdbFile(path, keyspace_, now_ms, /*replace=*/false, &progress);
  // Stopped by a shutdown: active_ stays set, so the half-loaded data is
  // never saved, and the main loop's next turn completes the shutdown.
  if (!absl::IsCancelled(loaded.status())) active_ = false;
  return loaded;
}

absl::Status Loading::DebugReload(bool save, bool flush, bool merge) {
  const int64_t now_ms = UnixMs();
  if (save) {
    if (absl::Status s = persistence_.rdb().Save(now_ms, &dirty_, /*counted=*/false); !s.ok()) return s;
  }
  // The file is loaded aside first: a corrupt file leaves the dataset as it
  // was (nothing half-loaded).
  core::Keyspace staging(keyspace_.count());
  staging.limits() = keyspace_.limits();
  staging.access_policy() = keyspace_.access_policy();
  staging.access_policy().frozen = false;
  active_ = true;
  absl::StatusOr<RdbLoadStats> r = LoadRdbFile(config_.Str("dbfilename"), staging, now_ms);
  active_ = false;
  if (!r.ok()) {
    Log(kWarning, StrCat("Error loading the RDB dump: ", r.status().message()));
    return r.status();
  }
  // The file's libraries first: a clash (NOFLUSH without MERGE) refuses the
  // reload before any key changes.
  const FunctionLoadMode mode = flush ? FunctionLoadMode::kReplaceAll
                                     : (merge ? FunctionLoadMode::kReplaceSame : FunctionLoadMode::kAddOnly);
  if (absl::Status f = hooks_.LoadFunctionLibraries(r->function_libraries, mode); !f.ok()) {
    Log(kWarning, StrCat("Error loading the RDB dump: ", f.message()));
    return f;
  }
  if (flush) {
    persistence_.StopInProcessChild("Stopping the background save: DEBUG RELOAD replaces the dataset");
    hooks_.DatasetReplacing();
    for (int i = 0; i < keyspace_.count(); ++i) keyspace_.db(i).Swap(staging.db(i));
  } else {
    // NOFLUSH: a key present on both sides is an error unless MERGE, found
    // before anything changes.
    for (int i = 0; i < keyspace_.count() && !merge; ++i) {
      absl::Status dup;
      staging.db(i).ForEachIncludingExpired([&](std::string_view key, const core::Entry&) {
        if (dup.ok() && keyspace_.db(i).Peek(key) != nullptr) {
          dup = absl::DataLossError(StrCat("RDB has duplicated key '", key, "' in DB ", i));
        }
      });
      if (!dup.ok()) {
        Log(kWarning, StrCat("Error loading the RDB dump: ", dup.message()));
        return dup;
      }
    }
    for (int i = 0; i < keyspace_.count(); ++i) {
      core::Database& live = keyspace_.db(i);
      core::Database& from = staging.db(i);
      from.ForEachIncludingExpired([&](std::string_view key, const core::Entry& e) {
        bool created;
        core::Entry* to = live.FindOrInsert(key, now_ms, &created, e.value.slot_bytes_wanted());
        to->value = e.value.Clone();
        to->set_lru(e.lru());
        live.SetExpire(key, to, from.GetExpire(&e));
      });
    }
  }
  persistence_.rdb().set_load_stats(*r);
  Log(kNotice, "DB reloaded by DEBUG RELOAD");
  return absl::OkStatus();
}

absl::Status Loading::DebugLoadAof() {
  if (active_) return absl::FailedPreconditionError("DEBUG LOADAOF while loading");
  if (persistence_.aof().enabled()) {
    if (absl::Status s = persistence_.aof().FlushAndSync(); !s.ok()) return s;
  }
  // The current data steps aside (O(1) per database) and comes back if the
  // AOF turns out to be unreadable.
  persistence_.StopInProcessChild("Stopping the background save: DEBUG LOADAOF replaces the dataset");
  hooks_.DatasetReplacing();
  core::Keyspace previous(keyspace_.count());
  for (int i = 0; i < keyspace_.count(); ++i) keyspace_.db(i).Swap(previous.db(i));
  active_ = true;
  const core::ExpiryMode mode = keyspace_.expiry_mode();
  keyspace_.set_expiry_mode(core::ExpiryMode::kKeep);  // replayed as written
  uint64_t keys = 0;
  absl::Status s = persistence_.aof().ReloadFromDisk(UnixMs(), AofReplayer(/*serve_clients=*/false), &keys);
  aof_client_.reset();
  keyspace_.set_expiry_mode(mode);
  active_ = false;
  if (!s.ok()) {
    for (int i = 0; i < keyspace_.count(); ++i) {
      keyspace_.db(i).Clear();
      keyspace_.db(i).Swap(previous.db(i));
    }
    Log(kWarning, StrCat("Error loading the AOF: ", s.message()));
    return s;
  }
  dirty_ = 0;  // what was loaded is no change to save or propagate
  Log(kNotice, "Append Only File loaded by DEBUG LOADAOF");
  return absl::OkStatus();
}

uint64_t Loading::DeleteKeysExpiredAtLoad(int64_t now_ms) {
  const char* del = config_.Bool("lazyfree-lazy-expire") ? "UNLINK" : "DEL";
  uint64_t deleted = 0;
  for (int i = 0; i < keyspace_.count(); ++i) {
    core::Database& db = keyspace_.db(i);
    if (db.expires() == 0) continue;
    std::vector<std::string> stale;
    db.ForEachIncludingExpired([&](std::string_view key, const core::Entry& e) {
      const int64_t when = db.GetExpire(&e);
      if (when >= 0 && when <= now_ms) stale.emplace_back(key);
    });
    for (const std::string& key : stale) {
      db.Erase(key);
      ++deleted;
      // With a restored history the replicas hold these keys: they go
      // through the stream, as Redis feeds them to its new backlog.
      const std::string_view argv[] = {del, key};
      hooks_.FeedExpiredAtLoad(i, argv);
    }
  }
  return deleted;
}

}  // namespace ringkv::server

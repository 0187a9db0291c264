// Server: the persistence side of the main thread -- loading at start-up,
// propagation of writes to the AOF, reaping the fork child, releasing replies
// held for fsync, WAITAOF, and the persistence steps of SHUTDOWN, FLUSHALL
// and DEBUG RELOAD / LOADAOF.
#include <sys/stat.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/strings/str_format.h"
#include "core/strings.h"
#include "io/thread_check.h"
#include "server/cluster/cluster_mode.h"
#include "server/logging.h"
#include "server/persistence/rdb_snapshot.h"
#include "server/server.h"
#include "server/supervision.h"

namespace ringkv::server {

// Save points, the AOF's switch and fsync policy, the working directory,
// expired / evicted keys propagated as UNLINK, and the key-load-delay test
// hook (every RDB load from now on, a replica's too, as in Redis).
void Server::BindPersistenceConfig() {
  Config& c = *config_;
  c.Bind("save", [this] { has_save_points_ = !ParseSavePoints(config_->Str("save")).empty(); });
  c.Bind("key-load-delay", [this] { SetKeyLoadDelay(static_cast<int>(config_->Int("key-load-delay"))); });
  c.Bind("lazyfree-lazy-expire", &lazy_expire_);
  c.Bind("aof-timestamp-enabled", [this] { aof_->set_timestamps(config_->Bool("aof-timestamp-enabled")); });
  // Turning the AOF's garbage collection back on deletes the history kept
  // meanwhile, as Redis does.
  c.Bind("aof-disable-auto-gc", [this] {
    if (aof_ && !config_->Bool("aof-disable-auto-gc")) aof_->DeleteHistory();
  });
  c.Bind("lazyfree-lazy-eviction", &lazy_eviction_);
  c.OnChange("appendonly", [this] { return SetAppendOnly(config_->Bool("appendonly")); });
  c.OnChange("appendfsync", [this] {
    aof_->ReloadPolicy();
    aof_always_ = aof_->always();
    return absl::OkStatus();
  });
  c.OnChange("dir", [this]() -> absl::Status {
    if (chdir(config_->Str("dir").c_str()) != 0) return absl::InvalidArgumentError(std::strerror(errno));
    return absl::OkStatus();
  });
}

void Server::Propagate(int db, Argv argv) {
  RINGKV_DCHECK_MAIN_THREAD();
  if (loading_) return;
  if (propagation_depth_ > 0) {  // inside EXEC or a script: one block at its end
    // Nothing would receive it (no AOF, no stream of our own): not copied.
    // Neither can appear inside the block (a replica attaches between
    // commands; an AOF turned on inside EXEC starts from a rewrite that
    // forks after the commands before it ran, so it has them already).
    if (!aof_->enabled() && !(primary_ && !replica_)) return;
    propagation_block_.push_back(
        PropagatedCommand{db, propagate_targets_, std::vector<std::string>(argv.begin(), argv.end())});
    return;
  }
  if (propagate_targets_ & scripting::kReplAof) aof_->Feed(db, argv);
  // Only a top-level primary writes its own stream. A replica's backlog is
  // its primary's stream, verbatim (ExecuteFromMaster), so offsets mean the
  // same bytes on every node of the chain: a writable replica's own writes
  // go to its AOF only, as in Redis.
  if (primary_ && !replica_ && (propagate_targets_ & scripting::kReplReplica)) primary_->Feed(db, argv);
}

void Server::BeginPropagationBlock() { ++propagation_depth_; }

void Server::EndPropagationBlock(bool discard) {
  if (--propagation_depth_ > 0) return;
  std::vector<PropagatedCommand> block;
  block.swap(propagation_block_);
  if (block.empty() || discard) return;
  // Each destination gets its share, wrapped when that is more than one
  // command (a script may send some commands to one side only).
  const std::string_view multi[] = {"MULTI"};
  const std::string_view exec[] = {"EXEC"};
  auto send = [&](int target, auto&& feed) {
    size_t n = 0;
    int first_db = -1;
    for (const PropagatedCommand& p : block) {
      if (!(p.targets & target)) continue;
      if (n++ == 0) first_db = p.db;
    }
    if (n == 0) return;
    // MULTI in the first command's database, so that its SELECT comes
    // before the MULTI, as Redis's propagatePendingCommands.
    if (n > 1) feed(first_db, multi);
    for (const PropagatedCommand& p : block) {
      if (!(p.targets & target)) continue;
      std::vector<std::string_view> views(p.argv.begin(), p.argv.end());
      feed(p.db, Argv(views));
    }
    if (n > 1) feed(-1, exec);
  };
  send(scripting::kReplAof, [&](int db, Argv argv) { aof_->Feed(db, argv); });
  if (primary_ && !replica_) send(scripting::kReplReplica, [&](int db, Argv argv) { primary_->Feed(db, argv); });
}

void Server::OnKeyExpired(int db, std::string_view key) {
  RINGKV_DCHECK_MAIN_THREAD();
  if (replica_) return;  // a replica never propagates deletions of its own
  std::string k(key);  // the key's storage goes away with the entry
  std::string_view del[] = {lazy_expire_ ? "UNLINK" : "DEL", k};
  Propagate(db, del);
  KeyEvent(notify::kExpired, "expired", db, k, /*by_server=*/true);
}

void Server::OnKeyEvicted(int db, std::string_view key) {
  RINGKV_DCHECK_MAIN_THREAD();
  std::string k(key);
  if (!replica_) {
    std::string_view del[] = {lazy_eviction_ ? "UNLINK" : "DEL", k};
    Propagate(db, del);
  }
  KeyEvent(notify::kEvicted, "evicted", db, k, /*by_server=*/true);
}

void Server::OnKeyCreated(int db, std::string_view key) { NotifyKeyspaceEvent(notify::kNew, "new", db, key); }
void Server::OnKeyMiss(int db, std::string_view key) { NotifyKeyspaceEvent(notify::kKeyMiss, "keymiss", db, key); }

absl::Status Server::ApplyFromAof(Argv argv) {
  // A MULTI ... EXEC block is applied at its EXEC, whole; a file that ends
  // inside one loses the incomplete transaction, as with Redis.
  if (EqualsIgnoreCase(argv[0], "multi")) {
    aof_transaction_ = std::make_unique<std::vector<std::vector<std::string>>>();
    return absl::OkStatus();
  }
  if (EqualsIgnoreCase(argv[0], "exec") && aof_transaction_) {
    std::unique_ptr<std::vector<std::vector<std::string>>> queued = std::move(aof_transaction_);
    for (const std::vector<std::string>& args : *queued) {
      std::vector<std::string_view> views(args.begin(), args.end());
      if (absl::Status s = ApplyOne(views); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  if (aof_transaction_) {
    aof_transaction_->emplace_back(argv.begin(), argv.end());
    return absl::OkStatus();
  }
  return ApplyOne(argv);
}

absl::Status Server::ApplyOne(Argv argv) {
  const CommandSpec* spec = commands_.Find(argv[0]);
  if (spec != nullptr && !spec->subcommands.empty() && argv.size() >= 2) spec = CommandTable::FindSub(*spec, argv[1]);
  if (spec == nullptr || spec->handler == nullptr) {
    return absl::DataLossError(StrCat("Unknown command '", argv[0].substr(0, 128), "'"));
  }
  const int argc = static_cast<int>(argv.size());
  if ((spec->arity > 0 && argc != spec->arity) || argc < -spec->arity) {
    return absl::DataLossError(StrCat("Wrong number of arguments for '", spec->name, "'"));
  }
  io::OutBuffer discard;
  // Errors in replies (wrong type & co.) do not stop the load, as in Redis:
  // they are counted and logged, or panic (propagation-error-behavior).
  ClientErrors errors(*this, *aof_client_);
  io::ReplyBuilder rb(&discard, 2, &errors);
  aof_client_->last_command = spec;
  CommandContext ctx{*this, *aof_client_, rb, argv, UnixMs(), keyspace_, keyspace_.db(aof_client_->db)};
  spec->handler(ctx);
  ResetPropagateAs();
  return absl::OkStatus();
}

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

}  // namespace

absl::Status Server::LoadData() {
  const int64_t now_ms = UnixMs();
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  loading_ = true;
  absl::Status status;
  bool rdb_corrupt = false;  // status is CorruptRdbError's, logged as it is
  // Nothing expires while loading: an AOF replays as it was written
  // (Redis's expireIfNeeded does nothing while loading), a replica's own RDB
  // keeps its expired keys for its primary's DELs, and a primary deletes
  // them after the load (DeleteKeysExpiredAtLoad), through its stream when
  // it continues a replication history.
  const bool as_replica = !config_->Str("replicaof").empty();
  keyspace_.set_expiry_mode(config_->Bool("appendonly") ? core::ExpiryMode::kKeep : core::ExpiryMode::kHide);
  if (config_->Bool("appendonly")) {
    aof_client_ = std::make_unique<Client>();
    aof_client_->authenticated = true;
    uint64_t keys = 0;
    // Clients are served every 1024 commands, as Redis's AOF loading does.
    uint64_t applied = 0;
    loading_progress_.Start(now_ms, 0);
    status = aof_->OpenAndLoad(
        now_ms,
        [this, &applied](Argv argv) -> absl::Status {
          if (++applied % 1024 == 0 && !ServeWhileLoading(0)) {
            return absl::CancelledError("loading stopped by a shutdown");
          }
          return ApplyFromAof(argv);
        },
        &keys);
    aof_transaction_.reset();
    aof_client_.reset();
    if (status.ok()) {
      Log(kNotice, absl::StrFormat("DB loaded from append only file: %.3f seconds", seconds()));
      if (std::string rdb = config_->Str("dbfilename"); access(rdb.c_str(), F_OK) == 0) {
        Log(kVerbose, StrCat("appendonly is yes: ", rdb, " is not loaded (the AOF is the source of truth)"));
      }
    }
    aof_always_ = aof_->always();
  } else {
    const std::string& file = config_->Str("dbfilename");
    struct stat st {};
    loading_progress_.Start(now_ms, ::stat(file.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0);
    LoadProgressHook progress;
    progress.interval_bytes = static_cast<uint64_t>(config_->Int("loading-process-events-interval-bytes"));
    progress.serve = [this](uint64_t consumed) { return ServeWhileLoading(consumed); };
    absl::StatusOr<RdbLoadStats> r = LoadRdbFile(file, keyspace_, now_ms, /*replace=*/false, &progress);
    if (r.ok()) {
      if (absl::Status f = LoadFunctionLibraries(r->function_libraries); !f.ok()) r = f;
    }
    if (r.ok()) {
      const bool has_history = !r->repl_id.empty() && r->repl_offset >= 0;
      if (has_history && as_replica) {
        // A replica restarting from its own save continues where it was: the
        // file's replication id and offset become ours, so PSYNC can resume.
        repl_ids_.replid = r->repl_id;
        repl_ids_.offset = r->repl_offset;
        primary_ = std::make_unique<repl::Primary>(static_cast<size_t>(config_->Int("repl-backlog-size")),
                                                   static_cast<uint64_t>(r->repl_offset));
        restored_stream_db_ = r->repl_stream_db;
      } else if (has_history) {
        RestoreHistoryAsPrimary(r->repl_id, r->repl_offset);
      }
      if (!as_replica) {  // loaded counts the keys that stay (INFO rdb_last_load_keys_loaded)
        const uint64_t dropped = DeleteKeysExpiredAtLoad(now_ms);
        r->loaded -= std::min(r->loaded, dropped);
        r->expired += dropped;
      }
      rdb_->set_load_stats(*r);
      Log(kNotice, StrCat("Done loading RDB, keys loaded: ", r->loaded, ", keys expired: ", r->expired,
                          r->empty_skipped ? StrCat(", empty keys skipped: ", r->empty_skipped) : "", "."));
      Log(kNotice, absl::StrFormat("DB loaded from disk: %.3f seconds", seconds()));
    } else if (absl::IsDataLoss(r.status())) {
      status = CorruptRdbError(config_->Str("dbfilename"), r.status());
      rdb_corrupt = true;
    } else if (!absl::IsNotFound(r.status())) {
      status = r.status();
    }
  }
  // A shutdown during the load: loading_ stays set, so nothing half-loaded
  // is ever saved, and the main loop's first turn completes the shutdown.
  if (absl::IsCancelled(status)) return status;
  loading_ = false;
  keyspace_.set_expiry_mode(core::ExpiryMode::kDelete);  // ReplicaOf makes it kHide
  rdb_->set_lastsave(UnixMs());
  stats_.dirty = 0;
  // A corrupt RDB, or an AOF error already logged as Redis logs it.
  if (rdb_corrupt || absl::IsAborted(status)) return status;
  if (!status.ok()) return absl::DataLossError(StrCat("Fatal error loading the DB: ", status.message(), ". Exiting."));
  return absl::OkStatus();
}

bool Server::ServeWhileLoading(uint64_t consumed) {
  loading_progress_.set_loaded_bytes(consumed);
  NotifyLoading(consumed);
  io_->ProcessEventsWhileBusy(nullptr);
  // The cluster bus too, as Redis's processEventsWhileBlocked: PINGs are
  // answered (a replica's PONGs announce offset 0 during its full sync),
  // so the load is not taken for a failure. Its cron waits for the end.
  if (cluster_) cluster_->OnBusEvents();
  return !shutdown_.stopping();
}

void Server::ReapChild(int64_t now_ms) {
  ChildResult r;
  if (!child_.Poll(&r)) return;
  if (r.type == ChildType::kRdb && full_sync_ && full_sync_->transfer_running()) {
    full_sync_->OnTransferChildExited(r.ok);  // streamed to replicas: no file, no save stats
  } else if (r.type == ChildType::kRdb) {
    rdb_->OnChildDone(r, now_ms, &stats_.dirty);
    if (full_sync_) full_sync_->OnSaveDone(r.ok);
  } else if (r.type == ChildType::kAof) {
    aof_->OnRewriteDone(r);
    aof_always_ = aof_->always();
  }
}

void Server::ReleaseDurableReplies() {
  if (durable_.clients() == 0) return;
  durable_.Release(
      aof_->reply_release_offset(),
      [this](uint64_t id, io::OutBuffer& out) {
        Client* c = FindClient(id);
        if (c != nullptr && !c->closing) io_->PrepareWrite(c->conn).Splice(out);
      },
      [this](uint64_t id) {
        if (Client* c = FindClient(id)) c->held_replies = false;
      });
}

void Server::OnFsyncDone(uint32_t token, int result) {
  if (aof_->OnFsyncDone(token, result) || result < 0) AfterAofSync();
}

void Server::AfterAofSync() {
  if (aof_always_ && aof_->sync_error() != 0) {
    // As Redis: with appendfsync always a failed fsync cannot be recovered
    // from (the page cache state is unknown), so stop rather than lie.
    Log(kWarning, StrCat("Can't persist the AOF (fsync: ", std::strerror(aof_->sync_error()),
                         ") and the AOF fsync policy is 'always'. Exiting..."));
    _exit(1);
  }
  ReleaseDurableReplies();
  if (!blocking_.waits().empty()) UnblockWaiters(UnixMs());
  // A replica tells its primary at once how far its AOF is durable (WAITAOF).
  if (replica_) replica_->OnAofSynced(aof_->synced_offset());
}

std::string Server::PersistenceError() const {
  if (!rdb_->last_bgsave_ok() && has_save_points_ && config_->Bool("stop-writes-on-bgsave-error")) {
    return "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. "
           "Commands that may modify the data set are disabled, because this instance is configured to report "
           "errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the "
           "Redis logs for details about the RDB error.";
  }
  if (aof_->enabled() && aof_->write_failed()) {
    return StrCat("MISCONF Errors writing to the AOF file: ", std::strerror(aof_->write_errno()));
  }
  return {};
}

absl::Status Server::SetAppendOnly(bool on) {
  if (on) {
    if (absl::Status s = aof_->Enable(UnixMs()); !s.ok()) return s;
  } else {
    aof_->Disable();
    ReleaseDurableReplies();
  }
  aof_always_ = aof_->always();
  return absl::OkStatus();
}

absl::Status Server::PrepareForShutdown(ShutdownSave save, bool force) {
  if (aof_->state() == AofState::kWaitRewrite && !force) {
    Log(kWarning, "Writing initial AOF, can't exit.");
    NotifyStatus("Writing initial AOF, can't exit.");
    return absl::FailedPreconditionError("Writing initial AOF, can't exit.");
  }
  if (child_.running()) {
    Log(kWarning, child_.type() == ChildType::kRdb ? "There is a child saving an .rdb. Killing it!"
                                                   : "There is a child rewriting the AOF. Killing it!");
    ChildResult r;
    child_.Kill(&r);
    ::unlink(absl::StrFormat("temp-%d.rdb", static_cast<int>(r.pid)).c_str());
    ::unlink(absl::StrFormat("temp-rewriteaof-bg-%d.aof", static_cast<int>(r.pid)).c_str());
  }
  if (aof_->enabled()) {
    Log(kNotice, "Calling fsync() on the AOF file.");
    if (absl::Status s = aof_->FlushAndSync(); !s.ok()) {
      Log(kWarning, std::string(s.message()));
      if (!force) return s;
    }
    ReleaseDurableReplies();
  }
  const bool do_save = save == ShutdownSave::kSave || (save == ShutdownSave::kDefault && has_save_points_);
  if (do_save) {
    Log(kNotice, "Saving the final RDB snapshot before exiting.");
    NotifyStatus("Saving the final RDB snapshot");
    if (absl::Status s = rdb_->Save(UnixMs(), &stats_.dirty); !s.ok()) {
      Log(kWarning, "Error trying to save the DB, can't exit.");
      NotifyStatus("Error trying to save the DB, can't exit.");
      if (!force) return s;
    }
  }
  return absl::OkStatus();
}

void Server::OnFlushAll(int64_t now_ms) {
  RINGKV_DCHECK_MAIN_THREAD();
  // As Redis, FLUSHALL stops a running RDB child: its snapshot is obsolete.
  // Replicas it was for start over with a full sync of the new dataset.
  if (full_sync_ && full_sync_->transfer_running()) {
    full_sync_->AbortTransfer("FLUSHALL: stopping the diskless transfer to replicas");
  } else if (child_.type() == ChildType::kRdb) {
    ChildResult r;
    child_.Kill(&r);
    ::unlink(absl::StrFormat("temp-%d.rdb", static_cast<int>(r.pid)).c_str());
    if (full_sync_) full_sync_->OnSaveDone(false);  // its replicas (if any) are dropped
  }
  if (has_save_points_) (void)rdb_->Save(now_ms, &stats_.dirty, /*counted=*/false);
}

absl::Status Server::DebugReload(bool save, bool flush, bool merge) {
  const int64_t now_ms = UnixMs();
  if (save) {
    if (absl::Status s = rdb_->Save(now_ms, &stats_.dirty, /*counted=*/false); !s.ok()) return s;
  }
  // The file is loaded aside first: a corrupt file leaves the dataset as it
  // was (nothing half-loaded).
  core::Keyspace staging(keyspace_.count());
  staging.limits() = keyspace_.limits();
  staging.access_policy() = keyspace_.access_policy();
  staging.access_policy().frozen = false;
  loading_ = true;
  absl::StatusOr<RdbLoadStats> r = LoadRdbFile(config_->Str("dbfilename"), staging, now_ms);
  loading_ = false;
  if (!r.ok()) {
    Log(kWarning, StrCat("Error loading the RDB dump: ", r.status().message()));
    return r.status();
  }
  // The file's libraries first: a clash (NOFLUSH without MERGE) refuses the
  // reload before any key changes.
  const FunctionLoadMode mode =
      flush ? FunctionLoadMode::kReplaceAll : (merge ? FunctionLoadMode::kReplaceSame : FunctionLoadMode::kAddOnly);
  if (absl::Status f = LoadFunctionLibraries(r->function_libraries, mode); !f.ok()) {
    Log(kWarning, StrCat("Error loading the RDB dump: ", f.message()));
    return f;
  }
  if (flush) {
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
        core::Entry* to = live.FindOrInsert(key, now_ms, &created);
        to->value = e.value.Clone();
        to->lru = e.lru;
        live.SetExpire(key, to, from.GetExpire(&e));
      });
    }
  }
  rdb_->set_load_stats(*r);
  Log(kNotice, "DB reloaded by DEBUG RELOAD");
  return absl::OkStatus();
}

absl::Status Server::DebugLoadAof() {
  if (loading_) return absl::FailedPreconditionError("DEBUG LOADAOF while loading");
  if (aof_->enabled()) {
    if (absl::Status s = aof_->FlushAndSync(); !s.ok()) return s;
  }
  // The current data steps aside (O(1) per database) and comes back if the
  // AOF turns out to be unreadable.
  core::Keyspace previous(keyspace_.count());
  for (int i = 0; i < keyspace_.count(); ++i) keyspace_.db(i).Swap(previous.db(i));
  loading_ = true;
  const core::ExpiryMode mode = keyspace_.expiry_mode();
  keyspace_.set_expiry_mode(core::ExpiryMode::kKeep);  // replayed as written
  aof_client_ = std::make_unique<Client>();
  aof_client_->authenticated = true;
  uint64_t keys = 0;
  absl::Status s = aof_->ReloadFromDisk(UnixMs(), [this](Argv argv) { return ApplyFromAof(argv); }, &keys);
  aof_transaction_.reset();
  aof_client_.reset();
  keyspace_.set_expiry_mode(mode);
  loading_ = false;
  if (!s.ok()) {
    for (int i = 0; i < keyspace_.count(); ++i) {
      keyspace_.db(i).Clear();
      keyspace_.db(i).Swap(previous.db(i));
    }
    Log(kWarning, StrCat("Error loading the AOF: ", s.message()));
    return s;
  }
  stats_.dirty = 0;  // what was loaded is no change to save or propagate
  Log(kNotice, "Append Only File loaded by DEBUG LOADAOF");
  return absl::OkStatus();
}

}  // namespace ringkv::server

// Loading: the dataset's loads and the `loading` state they put the server
// in -- the start-up load (the AOF when appendonly is on, else the RDB
// file, serving clients between keys), a replica's full-sync file, DEBUG
// RELOAD and DEBUG LOADAOF -- and INFO's loading_* progress.
//
// While `active()`, the command gate answers -LOADING to what is not flagged
// `loading`, nothing is propagated, and nothing half-loaded is saved: a load
// stopped by a shutdown leaves the state set for good, so the shutdown that
// follows does not save.
//
// The AOF is replayed through the command gate's entrance for the loader,
// each file on a fresh fake client (owned here while its file replays) in
// database 0, as Redis's loadSingleAppendOnlyFile; MULTI blocks are applied
// whole at their EXEC by the reader (ReplayAofFile).
//
// What it cannot do itself it asks through Hooks: run an AOF command, serve
// the other clients and the cluster bus during a long load, restore the
// replication history an RDB carries, feed the keys a primary found expired
// at load to its replicas, and replace the FUNCTION libraries. The config,
// the keyspace, Persistence (the AOF's files, the RDB's save and load
// statistics) and the dirty counter are borrowed and outlive it.
//
// Cost: nothing per command beyond the gate's inline `active()` load;
// nothing is allocated between loads.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/keyspace.h"
#include "server/client.h"
#include "server/config.h"
#include "server/loading_progress.h"
#include "server/persistence/aof_loader.h"
#include "server/persistence/persistence.h"
#include "server/persistence/rdb_snapshot.h"
#include "server/scripting/scripting_side.h"

namespace ringkv::server {

class Loading {
 public:
  using Argv = std::span<const std::string_view>;
  using FunctionLoadMode = scripting::ScriptingSide::FunctionLoadMode;

  class Hooks {
   public:
    // One command of an AOF file on `fake_client`, through the command
    // gate's entrance for the loader. An error status stops the load (an
    // unknown command); an error reply does not.
    virtual absl::Status ReplayAofCommand(Client& fake_client, Argv argv, bool in_transaction) = 0;
    // One non-blocking turn of the main loop (Redis's
    // processEventsWhileBlocked): the clients -- the gate answers -LOADING
    // to most -- and the cluster bus. False when a shutdown was asked for
    // meanwhile: the load then stops (Cancelled).
    virtual bool ServeWhileLoading() = 0;
    // The start-up RDB carried a replication history (id and offset, AUX
    // repl-stream-db): continue it, as the replica it was (a restart resumes
    // with PSYNC) or as a primary (its replicas may resume).
    virtual void RestoreReplicationHistory(const RdbLoadStats& loaded, bool as_replica) = 0;
    // A key a primary's start-up load found past its deadline was deleted:
    // `argv` is the DEL / UNLINK its replicas' stream gets, if it has one.
    virtual void FeedExpiredAtLoad(int db, Argv argv) = 0;
    // The FUNCTION libraries a snapshot carries (all or nothing).
    virtual absl::Status LoadFunctionLibraries(const std::vector<std::string>& codes, FunctionLoadMode mode) = 0;
    // DEBUG RELOAD / DEBUG LOADAOF are about to replace every database (still
    // holding the old data): WATCH, blocked clients and client-side caching
    // are told, as Redis's emptyData tells them (signalFlushedDb).
    virtual void DatasetReplacing() = 0;

   protected:
    ~Hooks() = default;
  };

  Loading(Hooks& hooks, const Config& config, core::Keyspace& keyspace, Persistence& persistence,
          uint64_t& dirty);
  Loading(const Loading&) = delete;
  Loading& operator=(const Loading&) = delete;

  // A load is running (the gate's -LOADING, INFO loading:1); stays set
  // after a load a shutdown stopped.
  bool active() const { return active_; }
  // INFO's loading_* fields of the running load.
  const LoadingProgress& progress() const { return progress_; }
  // `c` is the fake client replaying an AOF file (its error replies are
  // unexpected ones).
  bool IsAofClient(const Client& c) const { return aof_client_ != nullptr && &c == aof_client_.get(); }
  // An AOF file is being replayed (its fake client exists).
  bool has_aof_client() const { return aof_client_ != nullptr; }

  // The start-up load: the AOF when appendonly is on, else dbfilename (a
  // missing file is an empty dataset). Nothing expires while it runs; a
  // primary then deletes the keys past their deadline (through its stream
  // when it continues a replication history). Cancelled when a shutdown
  // stopped it; DataLoss / Aborted, already logged as Redis logs them,
  // for a file that cannot be loaded.
  absl::Status LoadAtStartup();
  // A replica's full-sync file, loaded into the (emptied) keyspace, serving
  // clients and the bus every loading-process-events-interval-bytes.
  absl::StatusOr<RdbLoadStats> LoadSyncFile(const std::string& path, int64_t now_ms);
  // DEBUG RELOAD: save (unless !save), then load dbfilename -- aside first,
  // so that a corrupt file leaves the dataset as it was -- replacing the
  // dataset (flush), or adding to it (a key on both sides is an error
  // unless merge, where the file's wins).
  absl::Status DebugReload(bool save, bool flush, bool merge);
  // DEBUG LOADAOF: flush the AOF, then replay it into an empty keyspace; an
  // unreadable AOF puts the previous dataset back.
  absl::Status DebugLoadAof();

 private:
  // The AOF reader's callbacks: each file on a new fake client, its
  // commands through the ReplayAofCommand hook; with `serve_clients`, the
  // others are served every 1024 commands (Cancelled by a shutdown).
  AofApply AofReplayer(bool serve_clients);
  // Records the bytes read so far, tells the supervisor, serves a turn.
  bool ServeAt(uint64_t consumed);
  // The RDB at start-up (dbfilename; the load began at `start`). `corrupt`:
  // the status is CorruptRdbError's, already logged.
  absl::Status LoadRdbAtStartup(int64_t now_ms, int64_t start_us, bool as_replica,
                                bool* corrupt);
  // After a primary loaded an RDB: deletes the keys past their deadline
  // (FeedExpiredAtLoad each). Returns how many.
  uint64_t DeleteKeysExpiredAtLoad(int64_t now_ms);
  LoadProgressHook ProgressHook();

  Hooks& hooks_;
  const Config& config_;
  core::Keyspace& keyspace_;
  Persistence& persistence_;
  uint64_t& dirty_;
  bool active_ = false;
  LoadingProgress progress_;
  std::unique_ptr<Client> aof_client_;  // the fake client of the AOF file replaying
};

}  // namespace ringkv::server

// Blocking: clients blocked by a command -- BLPOP & co. on keys, WAIT and
// WAITAOF on acknowledgements, SHUTDOWN on lagging replicas -- share one mechanism: a BlockState component
// (created when the client blocks, destroyed when it unblocks), one deadline
// index, one unblock path (served, timed out, CLIENT UNBLOCK, closed).
//
// KeyWaiters is the key side: for every (db, key) the clients blocked on it,
// first blocked first. A client's places in those lists are kept in its
// BlockState, so unblocking is O(1) per key. A write to a key somebody waits
// on marks it ready; the server serves ready keys after the command that
// made them ready, all of them in one pass.
//
// BlockedClients is the component that owns all of it: the blocked clients'
// states, the deadline index, the key waiters and WAIT's conditions. What it
// needs from the server (finding a client, reading a key, writing a reply,
// running the blocked command again, the timer) comes through its Hooks,
// which the Server implements; so this header does not know the Server and
// the component is tested with a fake (tests/server/blocking_test.cc).
//
//   BlockedClients blocking(hooks);
//   blocking.BlockOnKeys(c, BlockKind::kList, argv, {"queue"}, 0);
//   blocking.SignalWrite(0, "queue");   // a write (LPUSH) touched it
//   blocking.ServeReadyKeys();          // after that command: c's BLPOP runs again
//
// Hot path: SignalWrite, has_ready and has_deadlines are inline and make no
// virtual call; hooks are called only when a client blocks, is served, times
// out or is unblocked.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/latency_histogram.h"
#include "core/mostly_ascending_map.h"
#include "core/stream_value.h"
#include "core/string_hash.h"
#include "server/block_kind.h"
#include "server/client.h"
#include "server/wait_registry.h"

namespace ringkv::core {
class Value;
}  // namespace ringkv::core

namespace ringkv::server {

// A blocked client's blocking component.
struct BlockState {
  BlockKind kind = BlockKind::kWait;
  int db = 0;
  // The deadline on the wall clock (UnixUs), to the microsecond; 0: none.
  int64_t deadline_us = 0;
  uint64_t deadline_seq = 0;  // the deadline's tie-break in BlockedClients' index
  int64_t first_call_us = 0;  // how long the call that blocked ran (its latency if it times out)
  // Key blocks: the command, re-run for the client when a key is ready.
  std::vector<std::string> argv;
  // Its place in each key's waiting list.
  std::vector<std::pair<std::string, std::list<uint64_t>::iterator>> places;
  // XREAD: per key, the ID its entries must follow (the first given for a
  // key named twice, `$` resolved when it blocked). A stream serves the
  // reader only when Redis readies its key (KeyWaiters::ReadyKey::readied).
  std::vector<std::pair<std::string, core::StreamId>> read_after;
  WaitRegistry::Waiter wait;  // kWait: what WAIT / WAITAOF asked for, registered in waits()
  // An unblocking error other than CLIENT UNBLOCK's (XREADGROUP's stream gone).
  std::string error;
};

class KeyWaiters {
 public:
  // Appends `client` to the waiting lists of `keys` (distinct) in `db`,
  // recording its places in *state.
  void Add(uint64_t client, int db, const std::vector<std::string>& keys, BlockState* state);
  // Removes the client from every list it is in (O(1) per key).
  void Remove(const BlockState& state);
  // The clients waiting on (db, key), first blocked first; nullptr if none.
  const std::list<uint64_t>* Waiting(int db, std::string_view key) const;
  bool empty() const { return keys_ == 0; }

  // A write touched (db, key): remembered for serving when somebody waits
  // on it. Cheap when nobody waits on anything.
  void SignalWrite(int db, std::string_view key) {
    if (keys_ != 0 && Waiting(db, key) != nullptr) MarkReady(db, key);
  }
  bool has_ready() const { return !ready_.empty(); }
  struct ReadyKey {
    int db;
    std::string key;
    // Readied as Redis readies a key for its stream readers (created, XADD,
    // XGROUP DESTROY, SWAPDB, FLUSHDB), not only written: only then are
    // they looked at (not on XTRIM, XDEL, XSETID, XGROUP SETID).
    bool readied = false;
  };
  // The keys made ready since the last call, in the order they became ready.
  std::vector<ReadyKey> TakeReady();
  // Every key of `db` with waiters (SWAPDB: a swapped-in key may serve them).
  std::vector<std::string> KeysOf(int db) const;
  void MarkReady(int db, std::string_view key, bool readied = false);
  // The first client waiting on (db, key) goes to the back of its list
  // (Redis's serving loop passes a client of another kind so). Places stay valid.
  void RotateToTail(int db, std::string_view key);

 private:
  absl::flat_hash_map<int, core::StringMap<std::list<uint64_t>>> by_db_;
  size_t keys_ = 0;  // keys with waiters, over all databases
  std::vector<ReadyKey> ready_;
  absl::flat_hash_map<int, core::StringMap<size_t>> ready_set_;  // -> its place in ready_
};

// Why a blocked client stops being blocked.
enum class UnblockReason : uint8_t {
  kServed,   // its key is ready (the command runs again) or its condition holds
  kTimeout,  // its deadline passed, or CLIENT UNBLOCK TIMEOUT
  kError,    // CLIENT UNBLOCK ERROR, or BlockState::error (XREADGROUP's stream gone)
  kClosed,   // the client is closing (or RESET): nothing is answered
};

class BlockedClients {
 public:
  // What blocking asks of the server. Called only when a client blocks, is
  // served, times out or is unblocked -- never once per command.
  class Hooks {
   public:
    // The client with this id; nullptr when it is gone.
    virtual Client* BlockedClient(uint64_t id) = 0;
    // The live value at (db, key) now (an expired key is none), without
    // touching its LRU.
    virtual const core::Value* PeekValue(int db, std::string_view key) = 0;
    // The timer fires again within `us` microseconds (a deadline was set).
    virtual void WakeTimerInUs(int64_t us) = 0;
    // Replies to `c`: an error; a key block's timeout (a null array);
    // WAIT / WAITAOF's answer from the acknowledgements now.
    virtual void ReplyUnblockError(Client& c, std::string_view msg) = 0;
    virtual void ReplyBlockTimeout(Client& c) = 0;
    virtual void ReplyToWaiter(Client& c, const WaitSpec& spec) = 0;
    // Runs `argv` for `c` again through the server's Call, on `served_key`
    // alone (ready, and of the kind it waits for: the command serves it
    // and none of its other keys, as Redis's serving code does). The
    // command was counted when it blocked, its first run taking
    // `first_call_us`: this run adds its time (commandstats usec, the
    // latency histogram), not a call.
    virtual void RerunBlocked(Client& c, std::span<const std::string_view> argv, int64_t first_call_us,
                              std::string_view served_key) = 0;
    // A blocked command that ended without running again (CLIENT UNBLOCK,
    // an error) took `latency_us`, for its latency histogram.
    virtual void RecordUnblockedLatency(const CommandSpec& spec, int64_t latency_us) = 0;
    // `c` may run its deferred commands again.
    virtual void ResumeClient(Client& c) = 0;
    // Closes `c` after its queued replies.
    virtual void CloseClient(Client& c) = 0;
    // Whether clients wait on keys now: true when the first one blocks on
    // keys, false when the last one leaves. While true the server tells
    // SignalReady of every key it creates.
    virtual void KeyWaitersPresent(bool present) = 0;

   protected:
    ~Hooks() = default;
  };

  explicit BlockedClients(Hooks& hooks) : hooks_(hooks) {}
  BlockedClients(const BlockedClients&) = delete;
  BlockedClients& operator=(const BlockedClients&) = delete;

  // Blocks `c` with `state`. Its later commands wait in c.deferred, which
  // Clients::Defer allocates when the first one comes (most never do).
  // REQUIRES: `c` is not blocked; a kWait `state` comes through BlockOnWait,
  // which registers its waiter first.
  void Block(Client& c, std::unique_ptr<BlockState> state);
  // Blocks `c` in WAIT / WAITAOF until `spec` holds (waits().Take hands it
  // out) or `deadline_us` (UnixUs; 0: none) passes. REQUIRES: `c` is not
  // blocked.
  void BlockOnWait(Client& c, const WaitSpec& spec, int64_t deadline_us, const WaitRegistry::Progress& now);
  // Blocks `c` on `keys` (duplicates allowed) in its database until a write
  // makes one of them hold what it waits for -- `argv` then runs again, on
  // that key -- or `deadline_us` (UnixUs; 0: none) passes. XREAD gives
  // `read_after` (BlockState::read_after).
  void BlockOnKeys(Client& c, BlockKind kind, std::span<const std::string_view> argv, std::vector<std::string> keys,
                   int64_t deadline_us, std::vector<std::pair<std::string, core::StreamId>> read_after = {});
  // Ends `c`'s block, answering as `reason` says (nothing when not blocked);
  // a key block is served (kServed) on `served_key`.
  void Unblock(Client& c, UnblockReason reason, std::string_view served_key = {});
  // CLIENT UNBLOCK: true when the client was blocked (not by SHUTDOWN); it
  // answers as on timeout, or with -UNBLOCKED when `error`.
  bool UnblockByRequest(uint64_t id, bool error);
  // Every blocked client gets -`error` and is closed (this server turns replica).
  void DisconnectAll(std::string_view error);
  // The ids of the clients blocked with this kind, in no particular order.
  std::vector<uint64_t> BlockedWith(BlockKind kind) const;
  // Cluster mode (Redis's clusterRedirectBlockedClientIfNeeded): every
  // client blocked on keys (list, zset, stream) for which `error_for` gives
  // an error (its keys' slot moved away, the cluster is down) is unblocked
  // with -that error, a failed call; it is given the client's id and
  // state. "" keeps it blocked.
  void UnblockKeyBlocksWith(const std::function<std::string(uint64_t, const BlockState&)>& error_for);

  // ---- keys: writes mark them ready, ServeReadyKeys serves their waiters --------
  void SignalWrite(int db, std::string_view key) { key_waiters_.SignalWrite(db, key); }
  // Readied as Redis readies a key for its stream readers, not only
  // written (ReadyKey::readied): created (Redis's dbAdd; the server tells
  // it while Hooks::KeyWaitersPresent(true) holds), an XADD, XGROUP DESTROY.
  // Cheap when nobody waits on anything (every XADD calls it).
  void SignalReady(int db, std::string_view key) {
    if (!key_waiters_.empty() && key_waiters_.Waiting(db, key) != nullptr) {
      key_waiters_.MarkReady(db, key, /*readied=*/true);
    }
  }
  // BlockedClients' bit in core::KeyspaceObserver::created_key_watchers
  // (KeyspaceNotifications has 1), for the server's KeyWaitersPresent.
  static constexpr uint8_t kWatchCreatedKeys = 2;
  // Every key of `db` somebody waits on is looked at (FLUSHDB, SWAPDB).
  void SignalDbChanged(int db);
  // Ready keys wait to be served (and no serving is on the stack).
  bool has_ready() const { return key_waiters_.has_ready() && !serving_ready_; }
  // Serves the clients blocked on ready keys as Redis 7.0 does: a list or a
  // sorted set serves its waiters of that kind first blocked first while
  // it lasts (one of another kind goes to the back of the key's list); a
  // readied stream serves every XREAD / XREADGROUP it has entries past the
  // reader's ID for, in blocking order. XREADGROUP waiting on a key that holds no
  // stream any more, or whose group is gone, is answered with an error.
  void ServeReadyKeys();

  // ---- deadlines --------------------------------------------------------------
  bool has_deadlines() const { return !deadlines_.empty(); }
  // The earliest deadline (UnixUs). REQUIRES: has_deadlines().
  int64_t next_deadline_us() const { return deadlines_.min_key().first; }
  // Times out every client whose deadline is at or before `now_us` (the
  // wall clock in microseconds: never before its time), and records how
  // late each one fired.
  void ExpireDue(int64_t now_us);
  // How late deadlines fired: per timed-out client, the microseconds between
  // its deadline and the ExpireDue that timed it out (what issue 24 holds to
  // within 1 ms at p99). DEBUG DEADLINE-LATENESS reads and resets it. Null
  // until a deadline fires: the histogram is 14 KiB, and a server whose
  // clients never time out does not allocate it.
  const core::LatencyHistogram* deadline_lateness() const { return lateness_.get(); }
  void ResetDeadlineLateness() { lateness_.reset(); }

  // The blocked command of `id` ran `us` microseconds before it blocked (its
  // latency if it times out). False when `id` is not blocked.
  bool NoteFirstCall(uint64_t id, int64_t us);
  bool IsBlocked(uint64_t id) const { return blocked_.contains(id); }
  // True when `id` is blocked in the WAIT / WAITAOF numbered `seq`
  // (WaitRegistry::Waiter::seq).
  bool WaitsOn(uint64_t id, uint64_t seq) const {
    auto it = blocked_.find(id);
    return it != blocked_.end() && it->second->kind == BlockKind::kWait && it->second->wait.seq() == seq;
  }
  size_t size() const { return blocked_.size(); }
  // Blocked clients with a deadline (INFO clients_in_timeout_table).
  size_t with_deadline() const { return deadlines_.size(); }
  // WAIT / WAITAOF's conditions, per blocked client.
  WaitRegistry& waits() { return waits_; }
  const WaitRegistry& waits() const { return waits_; }

 private:
  // Removes a blocked client's state from every index and returns it
  // (nullptr when it is not blocked).
  std::unique_ptr<BlockState> Take(uint64_t id);
  // ServeReadyKeys' parts, for one ready key holding a list or a sorted
  // set (`kind`), holding a stream, or holding no stream.
  void ServeInTurn(int db, const std::string& key, BlockKind kind);
  void ServeStreamReaders(int db, const std::string& key);
  void FailGroupReaders(int db, const std::string& key);
  // The clients waiting on (db, key) now, first blocked first.
  std::vector<uint64_t> WaitingOn(int db, const std::string& key) const;

  Hooks& hooks_;
  absl::flat_hash_map<uint64_t, std::unique_ptr<BlockState>> blocked_;
  // (deadline_us, arrival) -> the client. A WAIT-heavy load inserts and
  // removes one per request; clients that block with the same timeout come
  // in the order of their deadlines, and leave from the front, which
  // core::MostlyAscendingMap keeps in a ring without a node or a rebalance
  // (docs/performance.md 39.1; other orders go to its B-tree, 30.2). The
  // client is there so that ExpireDue reaches it, and the next ones,
  // without a registry lookup (three dependent misses with thousands of
  // clients): a blocked client is unblocked, and so leaves this index,
  // before it is freed (Server::ResetClientState).
  core::MostlyAscendingMap<std::pair<int64_t, uint64_t>, Client*> deadlines_;
  uint64_t next_deadline_seq_ = 0;
  KeyWaiters key_waiters_;
  WaitRegistry waits_;
  std::unique_ptr<core::LatencyHistogram> lateness_;
  bool serving_ready_ = false;  // ServeReadyKeys is on the stack
};

}  // namespace ringkv::server

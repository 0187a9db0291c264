// Transactions: MULTI's queues and WATCH's keys -- the state of every
// client's transaction, and the rules on it that do not need the gate.
//
// What it owns: each client's MultiState (created by MULTI, gone at EXEC,
// DISCARD, RESET or close) and the WatchedKeys index. It keeps Client's
// `in_multi` and `watching` flags equal to "has a queue" / "watches keys";
// the gate reads those flags on every command without a lookup here.
//
// What stays with the gate (Server): refusing a command inside MULTI (which
// calls Abort), queueing what is not a transaction command (Queue), judging
// EXEC by what it will run (ExecFlags, QueueRunsWhileLoading), and running
// EXEC's queue through Server::Call (server_transactions.cc: TakeForExec
// gives it the queue).
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "server/client.h"
#include "server/multi_state.h"
#include "server/watched_keys.h"

namespace ringkv::core {
class Database;
}  // namespace ringkv::core

namespace ringkv::server {

struct CommandSpec;

class Transactions {
 public:
  Transactions() = default;
  Transactions(const Transactions&) = delete;
  Transactions& operator=(const Transactions&) = delete;

  // MULTI. REQUIRES: !c.in_multi.
  void Start(Client& c);
  // DISCARD, a refused EXEC: drops the queue and the watched keys.
  void Discard(Client& c);
  // Closing, RESET: Discard, when there is anything to drop.
  void Forget(Client& c);
  // The client's queue; nullptr outside MULTI.
  const MultiState* Find(const Client& c) const {
    auto it = multi_.find(c.id());
    return it == multi_.end() ? nullptr : it->second.get();
  }
  // A command refused inside MULTI: EXEC will answer EXECABORT.
  // REQUIRES: c.in_multi.
  void Abort(const Client& c) { multi_.at(c.id())->aborted = true; }
  // Queues a command; `flags` are the command's as the gate judged it (a
  // script's as it declares itself, as Redis's queueMultiCommand).
  // REQUIRES: c.in_multi.
  void Queue(const Client& c, const CommandSpec& spec, std::span<const std::string_view> argv, uint32_t flags);
  // EXEC as the gate judges it: `exec_flags` plus what the queue may do
  // (write, grow memory, replicate), less `stale` when one queued command is
  // not allowed on a stale replica. REQUIRES: c.in_multi.
  uint32_t ExecFlags(const Client& c, uint32_t exec_flags) const;
  // Whether every queued command may run while loading. REQUIRES: c.in_multi.
  bool QueueRunsWhileLoading(const Client& c) const;

  // WATCH `keys` of `db` (the client's database, numbered `db_index`).
  void Watch(Client& c, int db_index, core::Database& db, std::span<const std::string_view> keys, int64_t now_ms);
  // UNWATCH, and EXEC / DISCARD.
  void Unwatch(Client& c);
  // CLIENT LIST's `d` flag: a watched key was written.
  bool WatchDirty(const Client& c) const;
  // The watched keys, for the writes that touch them (signalModifiedKey,
  // FLUSHDB, SWAPDB).
  WatchedKeys& watched() { return watched_; }
  const WatchedKeys& watched() const { return watched_; }
  bool Watching(const Client& c) const { return watched_.Watching(c.id()); }

  // EXEC's first half: ends MULTI and the watches and hands over the queue;
  // `*dirty` tells whether a watched key changed (`expired_now(db, key)`:
  // a key not watched as expired has expired since). REQUIRES: c.in_multi.
  std::unique_ptr<MultiState> TakeForExec(Client& c, absl::FunctionRef<bool(int, std::string_view)> expired_now,
                                          bool* dirty);
  // EXEC's queue is running (no command may block inside it).
  bool in_exec() const { return exec_client_ != nullptr; }
  // EXEC's second half: `c`'s `queue` runs between these. While it does,
  // `c` is still shown in MULTI with that queue (CLIENT LIST, ACL LOG:
  // flags=x, multi=<count>, cmd=exec), as Redis shows it.
  void BeginExec(const Client& c, const MultiState& queue) {
    exec_client_ = &c;
    exec_queue_ = &queue;
  }
  void EndExec() {
    exec_client_ = nullptr;
    exec_queue_ = nullptr;
  }
  // The queue `c`'s EXEC is running, or null.
  const MultiState* RunningQueue(const Client& c) const { return exec_client_ == &c ? exec_queue_ : nullptr; }

 private:
  absl::flat_hash_map<uint64_t, std::unique_ptr<MultiState>> multi_;
  WatchedKeys watched_;
  const Client* exec_client_ = nullptr;  // BeginExec .. EndExec
  const MultiState* exec_queue_ = nullptr;
};

}  // namespace ringkv::server

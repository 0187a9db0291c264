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
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/string_hash.h"
#include "server/wait_registry.h"

namespace ringkv::server {

// What a blocked client waits for.
enum class BlockKind : uint8_t {
  kWait,  // WAIT / WAITAOF: acknowledgements (WaitRegistry holds the conditions)
  kList,  // BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP: a list at one of its keys
  kZSet,  // BZPOPMIN BZPOPMAX BZMPOP: a sorted set at one of its keys
  kStream,  // XREAD XREADGROUP: new entries in a stream at one of its keys
  kShutdown,  // SHUTDOWN waiting for lagging replicas: answered only if it fails
};

// A blocked client's blocking component.
struct BlockState {
  BlockKind kind = BlockKind::kWait;
  int db = 0;
  int64_t deadline_ms = 0;  // 0: none
  int64_t blocked_at_us = 0;
  int64_t first_call_us = 0;  // how long the call that blocked ran (its latency if it times out)
  // Key blocks: the command, re-run for the client when a key is ready.
  std::vector<std::string> argv;
  // Its place in each key's waiting list.
  std::vector<std::pair<std::string, std::list<uint64_t>::iterator>> places;
  WaitSpec wait;  // kWait: what WAIT / WAITAOF asked for
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
  // The keys made ready since the last call, in the order they became ready.
  std::vector<std::pair<int, std::string>> TakeReady();
  // Every key of `db` with waiters (SWAPDB: a swapped-in key may serve them).
  std::vector<std::string> KeysOf(int db) const;
  void MarkReady(int db, std::string_view key);

 private:
  absl::flat_hash_map<int, core::StringMap<std::list<uint64_t>>> by_db_;
  size_t keys_ = 0;  // keys with waiters, over all databases
  std::vector<std::pair<int, std::string>> ready_;
  absl::flat_hash_map<int, core::StringMap<bool>> ready_set_;
};

}  // namespace ringkv::server

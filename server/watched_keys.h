// WatchedKeys: the keys clients WATCH, and which of those clients a write
// has made "dirty" (their next EXEC fails).
//
// A client's watched keys are its watch component, created by its first
// WATCH and erased by EXEC, DISCARD, UNWATCH, RESET or its closing. The
// index from (db, key) to watchers makes a write touch only its own key's
// watchers; with nothing watched, Touch is one emptiness test.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "core/string_hash.h"

namespace ringkv::server {

class WatchedKeys {
 public:
  // WATCH: `expired` tells whether the key was logically expired (but not yet
  // deleted) when watched -- Redis 7.0 fails EXEC for a watched key that
  // expires afterwards, and not for one already expired.
  void Watch(uint64_t client, int db, std::string_view key, bool expired);
  // Forgets every key the client watches and its dirty mark.
  void UnwatchAll(uint64_t client);
  bool Watching(uint64_t client) const { return clients_.contains(client); }
  size_t CountOf(uint64_t client) const;
  // What the client's watches hold, for CLIENT LIST's tot-mem and client
  // eviction (maxmemory-clients): its list of keys and, per key, its place
  // in the key's list of watchers. O(1).
  size_t MemoryOf(uint64_t client) const;

  // A write to (db, key): every client watching it becomes dirty -- except
  // one that watched it already expired, when the write is its deletion
  // (`exists()` false: no logical change; it is then watched as absent).
  void Touch(int db, std::string_view key, absl::FunctionRef<bool()> exists) {
    if (!by_key_.empty()) TouchSlow(db, key, exists);
  }
  // FLUSHDB / FLUSHALL / SWAPDB, as Redis's touchAllWatchedKeysInDb: the
  // contents of `db` go away (`in_emptied`: the keys they held) and, for
  // SWAPDB, another database's take their place (`in_replacement`, and
  // `expired_in_replacement` for a key found there; FLUSH: none). A watched
  // key that logically stays absent -- missing or expired before and
  // after -- does not make its watchers dirty.
  void TouchDb(int db, absl::FunctionRef<bool(std::string_view)> in_emptied,
               absl::FunctionRef<bool(std::string_view)> in_replacement,
               absl::FunctionRef<bool(std::string_view)> expired_in_replacement);
  // EXEC's check: dirty, or a key not watched as expired that is expired
  // now (`expired_now(db, key)`).
  bool Dirty(uint64_t client, const std::function<bool(int, std::string_view)>& expired_now) const;
  bool empty() const { return clients_.empty(); }

 private:
  struct Watched {
    int db;
    std::string key;
    bool expired;  // logically expired when watched (until it is deleted)
  };
  struct ClientWatches {  // a client's watch component
    std::vector<Watched> keys;
    size_t key_bytes = 0;  // the keys' heap bytes (longer than the inline capacity)
    bool dirty = false;
  };
  void TouchSlow(int db, std::string_view key, absl::FunctionRef<bool()> exists);
  Watched* Find(uint64_t client, int db, std::string_view key);

  absl::flat_hash_map<uint64_t, ClientWatches> clients_;
  // db -> key -> watching clients
  absl::flat_hash_map<int, core::StringMap<std::vector<uint64_t>>> by_key_;
};

}  // namespace ringkv::server

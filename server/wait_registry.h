// WaitRegistry: clients blocked in WAIT or WAITAOF, indexed so that an event
// touches only the waiters it can release.
//
// A waiter needs up to two things, checked in this order: enough replicas
// acknowledging its replication offset (WAIT; WAITAOF with numreplicas, on
// the replicas' fsynced offsets), then the local AOF fsync (WAITAOF
// numlocal 1). It sits in exactly one index, that of its next unmet part:
// per required replica count, ordered by target offset (released when the
// n-th highest acknowledgement passes the target: one ordered walk, no
// scan), or ordered by AOF target offset. Deadlines have an ordered index of
// their own. Adding, removing and releasing one waiter are O(log n).
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"

namespace ringkv::server {

struct WaitSpec {
  bool aof = false;          // WAITAOF (else WAIT)
  uint64_t repl_target = 0;  // the client's replication offset after its last write
  uint64_t aof_target = 0;   // the client's AOF offset after its last write
  int64_t numlocal = 0;
  int64_t numreplicas = 0;
};

class WaitRegistry {
 public:
  // The current progress the conditions are checked against.
  struct Progress {
    // n-th highest replica acknowledgement (fsynced: the AOF-fsynced one);
    // -1 when fewer than n replicas are online.
    std::function<int64_t(int64_t n, bool fsynced)> nth_ack;
    uint64_t aof_synced = 0;
    bool aof_on = false;
  };

  void Add(uint64_t id, const WaitSpec& spec, const Progress& now);
  void Remove(uint64_t id);
  bool empty() const { return waiters_.empty(); }

  // True when `spec` needs no waiting at all.
  static bool Satisfied(const WaitSpec& spec, const Progress& now) {
    return NextPart(spec, Part::kReplicas, now) == Part::kDone;
  }
  // Appends to *out the waiters whose conditions now hold (each once), and
  // forgets them.
  void Take(const Progress& now, std::vector<std::pair<uint64_t, WaitSpec>>* out);

 private:
  enum class Part : uint8_t { kReplicas, kLocal, kNever, kDone };
  struct Entry {
    WaitSpec spec;
    Part part;
  };
  // The first unmet part of `spec`, given progress.
  static Part NextPart(const WaitSpec& spec, Part from, const Progress& now);
  void Index(uint64_t id, Entry& e);
  void Unindex(uint64_t id, const Entry& e);

  absl::flat_hash_map<uint64_t, Entry> waiters_;
  // (numreplicas, fsynced) -> (target, id). B-trees: a WAIT-heavy load adds
  // and removes a waiter per request, and a node holds dozens of them where
  // a red-black tree allocates one node each.
  absl::btree_map<std::pair<int64_t, bool>, absl::btree_set<std::pair<uint64_t, uint64_t>>> by_replicas_;
  absl::btree_set<std::pair<uint64_t, uint64_t>> by_aof_;  // (aof target, id)
};

}  // namespace ringkv::server

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
// Ties between equal targets go by arrival (a sequence number), so that
// waiters whose targets do not decrease -- the common case: a client's
// target is the offset of its last write, and writes only move the offset
// up; without writes every target is the same -- append to the index's
// ordered run instead of a tree (core::MostlyAscendingMap).
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "core/mostly_ascending_map.h"

namespace ringkv::server {

struct WaitSpec {
  bool aof = false;          // WAITAOF (else WAIT)
  uint64_t repl_target = 0;  // the client's replication offset after its last write
  uint64_t aof_target = 0;   // the client's AOF offset after its last write
  int64_t numlocal = 0;
  int64_t numreplicas = 0;
};

class WaitRegistry {
  enum class Part : uint8_t { kReplicas, kLocal, kNever, kDone };

 public:
  // The current progress the conditions are checked against.
  struct Progress {
    // n-th highest replica acknowledgement (fsynced: the AOF-fsynced one);
    // -1 when fewer than n replicas are online.
    std::function<int64_t(int64_t n, bool fsynced)> nth_ack;
    uint64_t aof_synced = 0;
    bool aof_on = false;
  };

  // One blocked client's wait. The blocked client's state owns it (no map
  // of waiters: BlockState::wait); the registry indexes it by address from
  // Add until Remove or until Take hands it out.
  class Waiter {
   public:
    uint64_t id = 0;  // the client's
    WaitSpec spec;

    // This wait's number, unique per registry (0 before it is added).
    uint64_t seq() const { return seq_; }

   private:
    friend class WaitRegistry;
    uint64_t seq_ = 0;  // arrival order: the tie-break of equal targets
    Part part_ = Part::kDone;
  };

  // A waiter Take handed out: its client, its number, what it asked.
  struct Taken {
    uint64_t id;
    uint64_t seq;
    WaitSpec spec;
  };

  // Registers `w` (its id and spec set). REQUIRES: `w` is not registered,
  // stays where it is until it is removed or taken, and its spec is not
  // Satisfied now.
  void Add(Waiter& w, const Progress& now);
  // Unregisters `w` (nothing when it is not registered).
  void Remove(Waiter& w);
  bool empty() const { return size_ == 0; }

  // True when `spec` needs no waiting at all.
  static bool Satisfied(const WaitSpec& spec, const Progress& now) {
    return NextPart(spec, Part::kReplicas, now) == Part::kDone;
  }
  // Appends to *out the waiters whose conditions now hold (each once, in
  // the order of their indexes: by target, then by arrival), and
  // unregisters them.
  void Take(const Progress& now, std::vector<Taken>* out);

 private:
  // (target offset, arrival) -> the waiter.
  using TargetIndex = core::MostlyAscendingMap<std::pair<uint64_t, uint64_t>, Waiter*>;

  // The first unmet part of `spec`, given progress.
  static Part NextPart(const WaitSpec& spec, Part from, const Progress& now);
  void Index(Waiter& w);
  void Unindex(const Waiter& w);

  size_t size_ = 0;  // registered waiters
  uint64_t next_seq_ = 0;
  // (numreplicas, fsynced) -> the waiters for that many replicas. A
  // WAIT-heavy load adds and removes a waiter per request: in arrival order
  // that is an append and, at its deadline, a removal from the front
  // (docs/performance.md 39.1). An index that empties is kept while there
  // are at most kKeptIndexes (a client waiting alone does not allocate one
  // per WAIT); beyond, it goes (a client cannot make the map grow for good
  // by asking for many different counts).
  static constexpr size_t kKeptIndexes = 4;
  absl::btree_map<std::pair<int64_t, bool>, TargetIndex> by_replicas_;
  TargetIndex by_aof_;  // by AOF target
};

}  // namespace ringkv::server

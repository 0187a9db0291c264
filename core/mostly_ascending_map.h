// MostlyAscendingMap: an ordered map with unique keys, for keys that mostly
// come in ascending order and mostly leave from the front -- the deadlines of
// clients that block with the same timeout, WAIT's waiters in the order they
// came (docs/performance.md 39.1).
//
// A key above every key of the run goes to the back of the run, a ring kept
// in ascending order: an append, no node to allocate and no rebalancing. A
// key below at most 4 of the run's last keys moves those to a B-tree and is
// appended (one long deadline among short ones does not send all the short
// ones to the tree); any other key goes to the B-tree. The least key is the lesser of the two fronts,
// and an in-order walk merges the two. Erase finds a key of the run by binary
// search and leaves a hole (the ring stays sorted, holes keep their keys);
// holes at either end are trimmed at once, and the run is compacted when its
// holes pass 64 and outnumber its entries, so it holds at most about twice
// its entries (plus 64). The ring doubles when full (or is compacted, when
// half of it is holes) and halves when an eighth full, so that a count of
// waiters that swings by 2x does not copy them back and forth (16 slots at
// least, kept once allocated).
//
// Costs: Insert O(1) amortized in order, O(log n) out of order; Erase and a
// lookup O(log n) without allocating; min_key / PopMin O(1) amortized.
// The run is only as good as the order: keys that come in no order at all
// go to the tree, which is where all of them went before this map existed.
//
// Key needs operator< (a strict total order) and, with Value, a default
// constructor and copy assignment: make keys unique with an arrival number,
// e.g. (deadline, sequence).
//
// Thread-safety: none.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"

namespace ringkv::core {

template <typename Key, typename Value>
class MostlyAscendingMap {
 public:
  bool empty() const { return live_ == 0 && tree_.empty(); }
  size_t size() const { return live_ + tree_.size(); }

  // The least key and its value. REQUIRES: !empty().
  const Key& min_key() const { return RunHoldsMin() ? At(0).key : tree_.begin()->first; }
  const Value& min_value() const { return RunHoldsMin() ? At(0).value : tree_.begin()->second; }

  // REQUIRES: `key` is not in the map.
  void Insert(const Key& key, Value value) {
    // A few larger keys at the run's back (a long deadline among short
    // ones) move to the tree, so that the run goes on with the common order.
    for (int moved = 0; used_ > 0 && key < At(used_ - 1).key && moved < kMaxMovedBack; ++moved) {
      Slot& back = Mut(used_ - 1);
      tree_.emplace(back.key, std::move(back.value));
      back.live = false;
      --live_;
      while (used_ > 0 && !At(used_ - 1).live) --used_;
    }
    if (used_ == 0 || At(used_ - 1).key < key) {
      if (used_ == ring_.size()) {
        // Full: compacted in place when at least half of it is holes.
        Resize(live_ * 2 > ring_.size() ? ring_.size() * 2 : std::max(kMinRing, ring_.size()));
      }
      Slot& s = Mut(used_);
      s.key = key;
      s.value = std::move(value);
      s.live = true;
      ++used_;
      ++live_;
      return;
    }
    [[maybe_unused]] const bool inserted = tree_.emplace(key, std::move(value)).second;
    assert(inserted);
  }

  // Removes `key`; false when it is not there.
  bool Erase(const Key& key) {
    if (used_ > 0 && !(key < At(0).key) && !(At(used_ - 1).key < key)) {
      if (!(At(0).key < key)) {  // the front, most often: no search
        PopRunFront();
        return true;
      }
      size_t lo = 1, hi = used_;
      while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (At(mid).key < key) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      // A hole with this key was erased before; the key came back to the tree.
      if (lo < used_ && At(lo).live && !(key < At(lo).key)) {
        Mut(lo).live = false;
        --live_;
        Trim();
        return true;
      }
    }
    return tree_.erase(key) > 0;
  }

  // Removes the least key. REQUIRES: !empty().
  void PopMin() {
    if (RunHoldsMin()) {
      PopRunFront();
    } else {
      tree_.erase(tree_.begin());
    }
  }

  // Calls f(key, value) in ascending order of key while f returns true.
  // f must not change the map.
  template <typename F>
  void ForEachWhile(F&& f) const {
    size_t i = 0;
    auto t = tree_.begin();
    for (;;) {
      while (i < used_ && !At(i).live) ++i;
      const bool in_run = i < used_;
      const bool in_tree = t != tree_.end();
      if (in_run && (!in_tree || At(i).key < t->first)) {
        if (!f(At(i).key, At(i).value)) return;
        ++i;
      } else if (in_tree) {
        if (!f(t->first, t->second)) return;
        ++t;
      } else {
        return;
      }
    }
  }

  // For tests: the ring's slots (allocated) and the keys out of order.
  size_t run_capacity() const { return ring_.size(); }
  size_t out_of_order() const { return tree_.size(); }

 private:
  static constexpr size_t kMinRing = 16;
  static constexpr size_t kMaxHoles = 64;
  static constexpr int kMaxMovedBack = 4;

  struct Slot {
    Key key{};
    Value value{};
    bool live = false;
  };

  const Slot& At(size_t i) const { return ring_[(head_ + i) & (ring_.size() - 1)]; }
  Slot& Mut(size_t i) { return ring_[(head_ + i) & (ring_.size() - 1)]; }
  bool RunHoldsMin() const { return live_ > 0 && (tree_.empty() || At(0).key < tree_.begin()->first); }

  // REQUIRES: used_ > 0 (the front is live: holes at the ends are trimmed).
  void PopRunFront() {
    Mut(0).live = false;
    --live_;
    Trim();
  }

  // Drops the holes at both ends; compacts or shrinks the ring when it is
  // mostly holes or mostly empty.
  void Trim() {
    while (used_ > 0 && !At(0).live) {
      head_ = (head_ + 1) & (ring_.size() - 1);
      --used_;
    }
    while (used_ > 0 && !At(used_ - 1).live) --used_;
    if (used_ == 0) head_ = 0;
    const size_t holes = used_ - live_;
    if (ring_.size() > kMinRing && live_ * 8 <= ring_.size()) {
      Resize(ring_.size() / 2);
    } else if (holes > kMaxHoles && holes > live_) {
      Resize(ring_.size());
    }
  }

  // Moves the live slots, in order, to a ring of `capacity` (a power of two
  // of at least live_ slots) starting at 0.
  void Resize(size_t capacity) {
    std::vector<Slot> next(capacity);
    size_t n = 0;
    for (size_t i = 0; i < used_; ++i) {
      if (At(i).live) next[n++] = std::move(Mut(i));
    }
    ring_.swap(next);
    head_ = 0;
    used_ = n;
  }

  std::vector<Slot> ring_;  // a power of two slots, or none
  size_t head_ = 0;         // the run's first slot
  size_t used_ = 0;         // slots from head_ to the last live one, holes included
  size_t live_ = 0;         // live slots in the run
  absl::btree_map<Key, Value> tree_;  // the keys that came out of order
};

}  // namespace ringkv::core

// ExpireIndex: the deadlines of a database's keys that have one.
//
// A dense array of records (entry, deadline: 16 bytes), to sample from in
// O(1) (active expiry, volatile-* eviction), and a map from each entry to
// its record. (A map holding the deadline itself would save a lookup of a
// key with a deadline one access to the array, but its 24-byte slots cost
// 10 bytes more per such key at 1,000,000 of them: performance.md 36.1.) An entry
// without a deadline pays nothing here, and one bit (Entry::has_expire) in
// the keyspace, which is all a lookup tests on the common path. The key is
// not copied: a record's key is its node's.
//
// Entries are held by address: an entry stays where it is until its key is
// erased, and the database removes the record first.
// REQUIRES: every entry given is a KeyspaceNode's.
//
// Thread-safety: none; owned by a Database (or, detached, by whoever frees
// its table).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/hash_table_stats.h"
#include "core/keyspace_node.h"

namespace ringkv::core {

// A key with a deadline.
struct ExpireRecord {
  const Entry* entry;
  int64_t when_ms;
  std::string_view key() const { return KeyspaceNode::Of(*entry).key().view(); }
};

class ExpireIndex {
  using PositionMap = absl::flat_hash_map<const Entry*, uint32_t>;
  // A slot of the map and its control byte.
  static constexpr size_t kMapSlotBytes = sizeof(PositionMap::value_type) + 1;

 public:
  size_t size() const { return records_.size(); }
  bool empty() const { return records_.empty(); }
  // The i-th record, for sampling. REQUIRES: i < size().
  const ExpireRecord& operator[](size_t i) const { return records_[i]; }

  // e's deadline in unix ms. REQUIRES: e.has_expire().
  int64_t When(const Entry& e) const { return records_[pos_.find(&e)->second].when_ms; }
  // Sets e's deadline, adding its record (and e's bit) when it had none.
  void Set(Entry& e, int64_t when_ms) {
    if (e.has_expire()) {
      records_[pos_.find(&e)->second].when_ms = when_ms;
      return;
    }
    pos_.emplace(&e, static_cast<uint32_t>(records_.size()));
    records_.push_back({&e, when_ms});
    e.set_has_expire(true);
  }
  // Drops e's deadline. REQUIRES: e.has_expire().
  void Remove(Entry& e) {
    auto it = pos_.find(&e);
    const uint32_t index = it->second;
    pos_.erase(it);
    const uint32_t last = static_cast<uint32_t>(records_.size()) - 1;
    if (index != last) {
      records_[index] = std::move(records_[last]);
      pos_[records_[index].entry] = index;
    }
    records_.pop_back();
    e.set_has_expire(false);
  }

  void clear() {
    records_.clear();
    pos_.clear();
  }
  void swap(ExpireIndex& o) noexcept {
    records_.swap(o.records_);
    pos_.swap(o.pos_);
  }
  // Heap bytes of the index (snapshot and memory overhead estimates).
  // The map's slots as buckets of one (DEBUG HTSTATS's "[Expires HT]").
  HashTableStats TableStats() const { return HashTableStats::OfSlots(pos_.capacity(), pos_.size()); }
  size_t bytes() const { return records_.capacity() * sizeof(ExpireRecord) + pos_.capacity() * kMapSlotBytes; }
  // Bytes a deadline adds, the containers' slack aside (MEMORY USAGE).
  static constexpr size_t kBytesPerRecord = sizeof(ExpireRecord) + kMapSlotBytes;

 private:
  std::vector<ExpireRecord> records_;
  PositionMap pos_;
};

}  // namespace ringkv::core

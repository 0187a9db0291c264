// SlotIndex: a database's keys by cluster hash slot, so CLUSTER
// COUNTKEYSINSLOT is O(1) and GETKEYSINSLOT reads only the slot's keys (as
// Redis's slotToKeys lists). Kept by Database only in cluster mode; a
// standalone server has none and pays a pointer test per insert and erase.
//
// The index holds views of the database's own key bytes (a Dict node's key,
// which never moves): no key is copied. REQUIRES: a key is removed here
// before its node is freed.
//
// Thread-safety: none; the keyspace's thread.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"

namespace ringkv::core {

class SlotIndex {
 public:
  SlotIndex();
  // `stored_key` views bytes that outlive its entry here.
  void Add(std::string_view stored_key);
  void Remove(std::string_view key);
  void Clear();
  void Swap(SlotIndex& other) { slots_.swap(other.slots_); }
  size_t Count(int slot) const { return slots_[slot].size(); }
  // Up to `limit` keys of `slot`, in no particular order; valid until the
  // next change of the database.
  std::vector<std::string_view> Keys(int slot, size_t limit) const;

 private:
  std::vector<absl::flat_hash_set<std::string_view>> slots_;  // kClusterSlots sets
};

}  // namespace ringkv::core

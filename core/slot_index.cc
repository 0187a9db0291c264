#include "core/slot_index.h"

#include "core/key_slot.h"

namespace ringkv::core {

SlotIndex::SlotIndex() : slots_(kClusterSlots) {}

void SlotIndex::Add(std::string_view stored_key) { slots_[KeyHashSlot(stored_key)].insert(stored_key); }

void SlotIndex::Remove(std::string_view key) { slots_[KeyHashSlot(key)].erase(key); }

void SlotIndex::Clear() {
  for (auto& s : slots_) {
    if (!s.empty()) absl::flat_hash_set<std::string_view>().swap(s);
  }
}

std::vector<std::string_view> SlotIndex::Keys(int slot, size_t limit) const {
  std::vector<std::string_view> out;
  const auto& keys = slots_[slot];
  out.reserve(std::min(limit, keys.size()));
  for (std::string_view k : keys) {
    if (out.size() >= limit) break;
    out.push_back(k);
  }
  return out;
}

}  // namespace ringkv::core

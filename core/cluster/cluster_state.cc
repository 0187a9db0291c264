#include "core/cluster/cluster_state.h"

#include <algorithm>

#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "core/strings.h"

namespace ringkv::cluster {

bool IsValidNodeName(std::string_view name) {
  if (name.size() != kNodeNameLen) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return absl::ascii_isxdigit(c); });
}

std::string RandomNodeName() {
  static constexpr char kHex[] = "0123456789abcdef";
  absl::BitGen gen;
  std::string name(kNodeNameLen, '0');
  for (char& c : name) c = kHex[absl::Uniform(gen, 0, 16)];
  return name;
}

ClusterState::ClusterState(std::string my_name) {
  Node me;
  me.name = std::move(my_name);
  me.flags = kFlagMyself | kFlagMaster;
  me.linked = true;
  Add(std::move(me));
}

Node* ClusterState::Find(std::string_view name) {
  auto it = by_name_.find(ToAbsl(name));
  return it == by_name_.end() ? nullptr : it->second;
}

const Node* ClusterState::Find(std::string_view name) const {
  auto it = by_name_.find(ToAbsl(name));
  return it == by_name_.end() ? nullptr : it->second;
}

Node* ClusterState::Add(Node node) {
  auto owned = std::make_unique<Node>(std::move(node));
  Node* n = owned.get();
  if (n->is_myself()) {
    // The loader names myself from the file: the placeholder made by the
    // constructor goes (it owns nothing yet).
    if (myself_ != nullptr && myself_ != n) {
      Node* old = myself_;
      myself_ = nullptr;
      by_name_.erase(old->name);
      std::erase_if(nodes_, [old](const std::unique_ptr<Node>& p) { return p.get() == old; });
    }
    myself_ = n;
    n->linked = true;
  }
  by_name_[n->name] = n;
  nodes_.push_back(std::move(owned));
  return n;
}

void ClusterState::Remove(std::string_view name) {
  Node* n = Find(name);
  if (n == nullptr || n == myself_) return;
  for (int s = 0; s < kClusterSlots; ++s) {
    if (slots_[s] == n) UnassignSlot(s);
    if (migrating_to_[s] == n) migrating_to_[s] = nullptr;
    if (importing_from_[s] == n) importing_from_[s] = nullptr;
  }
  for (const auto& other : nodes_) {
    if (other->master == n->name) other->master.clear();
  }
  absl::erase_if(imported_from_, [n](const auto& entry) { return entry.second == n; });
  by_name_.erase(n->name);
  std::erase_if(nodes_, [n](const std::unique_ptr<Node>& p) { return p.get() == n; });
}

bool ClusterState::AssignSlot(int slot, Node* node) {
  if (slots_[slot] != nullptr) return false;
  slots_[slot] = node;
  // redis/redis#3043: a new master with slots is a valid migration target
  // when the rest of the cluster is not replica-less.
  if (++node->num_slots == 1 && MastersHaveReplicas()) node->flags |= kFlagMigrateTo;
  return true;
}

bool ClusterState::MastersHaveReplicas() const {
  for (const auto& n : nodes_) {
    if (!n->is_replica()) continue;
    if (const Node* m = MasterOf(*n); m != nullptr && m->is_master()) return true;
  }
  return false;
}

bool ClusterState::UnassignSlot(int slot) {
  Node* n = slots_[slot];
  if (n == nullptr) return false;
  if (on_slot_unassigned_) on_slot_unassigned_(slot, *n);
  --n->num_slots;
  slots_[slot] = nullptr;
  if (!imported_from_.empty()) imported_from_.erase(slot);
  return true;
}

Node* ClusterState::imported_from(int slot) const {
  if (imported_from_.empty()) return nullptr;
  const auto it = imported_from_.find(slot);
  return it == imported_from_.end() ? nullptr : it->second;
}

bool ClusterState::SharesShardWithMyself(const Node& n) const {
  const std::string& shard = n.is_replica() && !n.master.empty() ? n.master : n.name;
  return myself_->name == shard || (myself_->is_replica() && myself_->master == shard);
}

std::vector<std::pair<int, int>> ClusterState::SlotRanges(const Node& node) const {
  std::vector<std::pair<int, int>> ranges;
  int start = -1;
  for (int s = 0; s <= kClusterSlots; ++s) {
    const bool mine = s < kClusterSlots && slots_[s] == &node;
    if (mine && start < 0) start = s;
    if (!mine && start >= 0) {
      ranges.emplace_back(start, s - 1);
      start = -1;
    }
  }
  return ranges;
}

uint64_t ClusterState::MaxEpoch() const {
  uint64_t max = current_epoch;
  for (const auto& n : nodes_) max = std::max(max, n->config_epoch);
  return max;
}

bool ClusterState::UpdateState(bool require_full_coverage, int64_t now_ms, int64_t node_timeout_ms) {
  if (first_update_ms_ < 0) first_update_ms_ = now_ms;
  if (myself_->is_master() && !ok_ && now_ms - first_update_ms_ < kWritableDelayMs) return false;
  bool ok = true;
  if (require_full_coverage) {
    for (const Node* n : slots_) {
      if (n == nullptr || n->failed()) {
        ok = false;
        break;
      }
    }
  }
  // A minority partition is down (Redis's needed_quorum of reachable masters).
  int size = 0, reachable = 0;
  for (const auto& n : nodes_) {
    if (!n->is_master() || n->num_slots == 0) continue;
    ++size;
    if ((n->flags & (kFlagPfail | kFlagFail)) == 0) ++reachable;
  }
  if (reachable < size / 2 + 1) {
    ok = false;
    in_minority_ms_ = now_ms;
  }
  if (ok == ok_) return false;
  const int64_t rejoin_delay_ms = std::clamp<int64_t>(node_timeout_ms, 500, 5000);
  if (ok && myself_->is_master() && in_minority_ms_ >= 0 && now_ms - in_minority_ms_ < rejoin_delay_ms) return false;
  ok_ = ok;
  return true;
}

void ClusterState::Rename(Node* node, std::string_view new_name) {
  by_name_.erase(node->name);
  node->name = std::string(new_name);
  by_name_[node->name] = node;
}

int ClusterState::size() const {
  int size = 0;
  for (const auto& n : nodes_) size += (n->is_master() && n->num_slots > 0) ? 1 : 0;
  return size;
}

int ClusterState::slots_assigned() const {
  return static_cast<int>(std::count_if(slots_.begin(), slots_.end(), [](const Node* n) { return n != nullptr; }));
}

int ClusterState::slots_pfail() const {
  return static_cast<int>(std::count_if(slots_.begin(), slots_.end(),
                                        [](const Node* n) { return n != nullptr && (n->flags & kFlagPfail); }));
}

int ClusterState::slots_fail() const {
  return static_cast<int>(std::count_if(slots_.begin(), slots_.end(),
                                        [](const Node* n) { return n != nullptr && (n->flags & kFlagFail); }));
}

std::vector<Node*> ClusterState::ReplicasOf(const Node& master) const {
  std::vector<Node*> out;
  for (const auto& n : nodes_) {
    if (n->is_replica() && n->master == master.name) out.push_back(n.get());
  }
  return out;
}

uint64_t ClusterState::ShownEpoch(const Node& node) const {
  if (node.is_replica() && !node.master.empty()) {
    if (const Node* m = Find(node.master)) return m->config_epoch;
  }
  return node.config_epoch;
}

}  // namespace ringkv::cluster

#include "core/cluster/replica_rules.h"

#include <vector>

namespace ringkv::cluster {

bool ReplicaDataTooOld(int64_t data_age_ms, int64_t node_timeout_ms, int64_t factor, int64_t ping_period_s) {
  if (factor == 0) return false;
  if (data_age_ms > node_timeout_ms) data_age_ms -= node_timeout_ms;
  return data_age_ms > ping_period_s * 1000 + node_timeout_ms * factor;
}

int CountNonFailingReplicas(const ClusterState& st, const Node& master) {
  int ok = 0;
  for (const Node* r : st.ReplicasOf(master)) ok += !r->failed();
  return ok;
}

Node* ReplicaMigrationTarget(ClusterState& st, bool cluster_ok, int64_t barrier, int64_t now_ms,
                             absl::flat_hash_map<std::string, int64_t>* orphaned_since) {
  Node& me = st.myself();
  if (!me.is_replica()) return nullptr;
  Node* mymaster = st.MasterOf(me);
  // clusterCron's count, over the working masters.
  int orphaned_masters = 0;
  int max_replicas = 0;
  int my_master_replicas = 0;
  for (const auto& n : st.nodes()) {
    if (!n->is_master() || n->failed()) continue;
    const int ok = CountNonFailingReplicas(st, *n);
    if (ok == 0 && n->num_slots > 0 && (n->flags & kFlagMigrateTo)) ++orphaned_masters;
    if (ok > max_replicas) max_replicas = ok;
    if (mymaster == n.get()) my_master_replicas = ok;
  }
  if (orphaned_masters == 0 || max_replicas < 2 || my_master_replicas != max_replicas) return nullptr;
  // clusterHandleSlaveMigration.
  if (!cluster_ok || mymaster == nullptr) return nullptr;
  int my_ok = 0;
  for (const Node* r : st.ReplicasOf(*mymaster)) my_ok += !(r->flags & (kFlagFail | kFlagPfail));
  if (my_ok <= barrier) return nullptr;
  Node* target = nullptr;
  const Node* candidate = &me;
  for (const auto& n : st.nodes()) {
    int ok = 0;
    bool orphaned = !n->is_replica() && !n->failed() && (n->flags & kFlagMigrateTo);
    if (n->is_master()) ok = CountNonFailingReplicas(st, *n);
    if (ok > 0) orphaned = false;
    if (orphaned) {
      if (target == nullptr && n->num_slots > 0) target = n.get();
      orphaned_since->try_emplace(n->name, now_ms);
    } else {
      orphaned_since->erase(n->name);
    }
    if (ok == max_replicas) {
      for (const Node* r : st.ReplicasOf(*n)) {
        if (r->name < candidate->name) candidate = r;
      }
    }
  }
  absl::erase_if(*orphaned_since, [&](const auto& kv) { return st.Find(kv.first) == nullptr; });
  if (target == nullptr || candidate != &me) return nullptr;
  auto it = orphaned_since->find(target->name);
  if (it == orphaned_since->end() || now_ms - it->second <= kReplicaMigrationDelayMs) return nullptr;
  return target;
}

}  // namespace ringkv::cluster

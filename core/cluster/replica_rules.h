// Replica rules of Redis 7.0's cluster.c, pure: the replica validity check
// of an election (cluster-replica-validity-factor) and replica migration to
// an orphaned master (clusterCron's orphan count and
// clusterHandleSlaveMigration, with cluster-migration-barrier). The bus
// (server/cluster/) calls them from its cron and acts on the answer.
//
// Example:
//   if (ReplicaDataTooOld(age_ms, node_timeout, factor, ping_period_s)) ...;
//   if (Node* to = ReplicaMigrationTarget(st, barrier, now, &orphaned)) SetMaster(*to);
//
// Thread-safety: none; the ClusterState's thread.
#pragma once

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "core/cluster/cluster_state.h"

namespace ringkv::cluster {

// Redis's CLUSTER_SLAVE_MIGRATION_DELAY: a master must stay orphaned this
// long before a replica moves to it (its own replicas may be switching).
inline constexpr int64_t kReplicaMigrationDelayMs = 5000;

// Whether a replica whose link to its master has been idle or down for
// `data_age_ms` is too stale to be elected (clusterHandleSlaveFailover):
// the node timeout is taken off first (the master was down at least that
// long to be failed), then the age is compared with
// repl-ping-replica-period + node-timeout x factor. A factor of 0 accepts
// any age.
bool ReplicaDataTooOld(int64_t data_age_ms, int64_t node_timeout_ms, int64_t factor, int64_t ping_period_s);

// Redis's clusterCountNonFailingSlaves: replicas of `master` not FAIL.
int CountNonFailingReplicas(const ClusterState& st, const Node& master);

// The master myself (a replica) should migrate to now, or null: some
// master with slots has no working replica though it was meant to have one
// (kFlagMigrateTo), it has been so for kReplicaMigrationDelayMs, myself's
// master keeps more than `barrier` working replicas, myself's master has
// the most working replicas (at least two), and myself has the smallest
// name among the replicas of the masters with that many. `orphaned_since`
// keeps, by master name, when each orphaned master was first seen so
// (updated here). REQUIRES: `cluster_ok` is the cluster's state.
Node* ReplicaMigrationTarget(ClusterState& st, bool cluster_ok, int64_t barrier, int64_t now_ms,
                             absl::flat_hash_map<std::string, int64_t>* orphaned_since);

}  // namespace ringkv::cluster

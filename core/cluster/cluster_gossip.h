// The cluster bus's pure rules, as Redis 7.0's cluster.c applies them:
// which nodes a PING gossips about, failure reports and their aging, the
// quorum that turns PFAIL into FAIL, config epoch collisions, and slot
// ownership learnt from a node's claim (its header's bitmap and epoch).
// No sockets, no clocks: times are passed in (ms).
//
// Thread-safety: none; the state's thread (the main command thread).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/cluster/bus_message.h"
#include "core/cluster/cluster_state.h"

namespace ringkv::cluster {

// Redis's CLUSTER_FAIL_REPORT_VALIDITY_MULT and CLUSTER_FAIL_UNDO_TIME_MULT.
inline constexpr int kFailReportValidityMult = 2;
inline constexpr int kFailUndoTimeMult = 2;

// Redis's clusterSendPing gossip choice: wanted = max(3, nodes/10), at most
// nodes - 2; random nodes (`rand(n)` gives 0..n-1), never myself, PFAIL
// ones, handshake or no-address ones, or unlinked ones without slots, each
// once per ping (`ping_round` marks it); then every PFAIL node (up to
// `pfail_wanted`) at the end.
std::vector<Node*> PickGossip(ClusterState& st, uint64_t ping_round, int pfail_wanted,
                              const std::function<size_t(size_t)>& rand);

// A gossip entry about `n` (Redis's clusterSetGossipEntry: times in seconds).
GossipEntry GossipAbout(const Node& n);

// Redis's clusterNodeAddFailureReport: true when `reporter` is new.
bool AddFailureReport(Node& n, const std::string& reporter, int64_t now_ms);
// clusterNodeDelFailureReport: true when there was one.
bool DelFailureReport(Node& n, const std::string& reporter, int64_t now_ms, int64_t node_timeout_ms);
// Drops the reports older than node_timeout * 2 (clusterNodeCleanupFailureReports).
void CleanupFailureReports(Node& n, int64_t now_ms, int64_t node_timeout_ms);
// The live reports (after the cleanup).
int CountFailureReports(Node& n, int64_t now_ms, int64_t node_timeout_ms);

// Redis's markNodeAsFailingIfNeeded's test: `n` is PFAIL, not yet FAIL, and
// the live reports (plus myself when a master) reach size / 2 + 1. When true
// the caller flags it FAIL and broadcasts FAIL.
bool ReachedFailQuorum(ClusterState& st, Node& n, int64_t now_ms, int64_t node_timeout_ms);

// Redis's clusterHandleConfigEpochCollision: two masters with the same
// config epoch; the one with the smaller name takes currentEpoch + 1
// (Redis: "don't act if the colliding node has a smaller Node ID"). True
// when myself's epoch changed.
bool HandleEpochCollision(ClusterState& st, const Node& sender);

// Redis's clusterBumpConfigEpochWithoutConsensus: myself takes a new epoch,
// greater than every epoch known, unless its epoch is nonzero and already
// the greatest. True when it changed. With `unless_shared`, a greatest
// epoch that another master also holds (a collision not resolved yet) is
// bumped too -- ringkv's rule when an import ends or a takeover starts:
// left tied, the collision's resolution could give the other master the
// greater epoch, and its older claim would then win the slots back (and
// their keys would be deleted here). Redis 7.0 keeps the tie.
bool BumpEpochWithoutConsensus(ClusterState& st, bool unless_shared);

struct ClaimOutcome {
  std::vector<int> lost;  // the slots taken from myself (the caller's keys there are stale)
  bool changed = false;   // some slot moved
  // A slot of myself that `sender` would have taken was kept: the claim is
  // stale, `sender` being the source of an import that ended here and that
  // it has not acknowledged (ClusterState::SetImportedFrom). The caller
  // takes an epoch above `sender`'s and tells the cluster at once, so that
  // the nodes the stale claim reached give the slot back to myself.
  bool refused_stale_claim = false;
};

// Redis's clusterUpdateSlotsConfigWith, the part on the slot table: every
// slot `sender` claims that is unassigned or served by a node with a lower
// config epoch (and not being imported) moves to `sender` -- except a slot
// of myself imported from `sender` and not yet acknowledged by it (ringkv's
// rule, see ClaimOutcome::refused_stale_claim).
ClaimOutcome TakeClaimedSlots(ClusterState& st, Node& sender, uint64_t sender_epoch, const SlotBitmap& slots);

// `source` (a master) claims `claimed`, in a PING or PONG: every import from
// it that ended here and that the claim leaves out is acknowledged
// (ClusterState::SetImportedFrom).
void AcknowledgeImports(ClusterState& st, const Node& source, const SlotBitmap& claimed);

// The slot bitmap of `n` (a master's slots).
SlotBitmap SlotsOf(const ClusterState& st, const Node& n);

}  // namespace ringkv::cluster

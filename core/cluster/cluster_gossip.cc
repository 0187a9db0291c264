#include "core/cluster/cluster_gossip.h"

#include <algorithm>

namespace ringkv::cluster {

std::vector<Node*> PickGossip(ClusterState& st, uint64_t ping_round, int pfail_wanted,
                              const std::function<size_t(size_t)>& rand) {
  std::vector<Node*> out;
  const auto& nodes = st.nodes();
  const int total = static_cast<int>(nodes.size());
  int freshnodes = total - 2;
  int wanted = std::max(3, total / 10);
  wanted = std::min(wanted, freshnodes);
  int maxiterations = wanted * 3;
  while (freshnodes > 0 && static_cast<int>(out.size()) < wanted && maxiterations-- > 0) {
    Node* n = nodes[rand(nodes.size())].get();
    if (n->is_myself()) continue;
    if (n->flags & kFlagPfail) continue;  // added at the end
    if ((n->flags & (kFlagHandshake | kFlagNoAddr)) || (n->link == 0 && n->num_slots == 0)) {
      --freshnodes;  // "technically not correct, but saves CPU", as Redis
      continue;
    }
    if (n->last_in_ping_gossip == ping_round) continue;
    n->last_in_ping_gossip = ping_round;
    out.push_back(n);
    --freshnodes;
  }
  for (const auto& p : nodes) {
    if (pfail_wanted <= 0) break;
    Node* n = p.get();
    if (n->flags & (kFlagHandshake | kFlagNoAddr)) continue;
    if (!(n->flags & kFlagPfail)) continue;
    out.push_back(n);
    --pfail_wanted;
  }
  return out;
}

GossipEntry GossipAbout(const Node& n) {
  GossipEntry g;
  g.name = n.name;
  g.ping_sent = static_cast<uint32_t>(n.ping_sent_ms / 1000);
  g.pong_received = static_cast<uint32_t>(n.pong_received_ms / 1000);
  g.ip = n.ip;
  g.port = static_cast<uint16_t>(n.port);
  g.cport = static_cast<uint16_t>(n.cport);
  g.flags = n.flags;
  g.pport = static_cast<uint16_t>(n.pport);
  return g;
}

bool AddFailureReport(Node& n, const std::string& reporter, int64_t now_ms) {
  for (Node::FailReport& r : n.fail_reports) {
    if (r.reporter == reporter) {
      r.time_ms = now_ms;
      return false;
    }
  }
  n.fail_reports.push_back({reporter, now_ms});
  return true;
}

void CleanupFailureReports(Node& n, int64_t now_ms, int64_t node_timeout_ms) {
  const int64_t max_age = node_timeout_ms * kFailReportValidityMult;
  std::erase_if(n.fail_reports, [&](const Node::FailReport& r) { return now_ms - r.time_ms > max_age; });
}

bool DelFailureReport(Node& n, const std::string& reporter, int64_t now_ms, int64_t node_timeout_ms) {
  CleanupFailureReports(n, now_ms, node_timeout_ms);
  return std::erase_if(n.fail_reports, [&](const Node::FailReport& r) { return r.reporter == reporter; }) > 0;
}

int CountFailureReports(Node& n, int64_t now_ms, int64_t node_timeout_ms) {
  CleanupFailureReports(n, now_ms, node_timeout_ms);
  return static_cast<int>(n.fail_reports.size());
}

bool ReachedFailQuorum(ClusterState& st, Node& n, int64_t now_ms, int64_t node_timeout_ms) {
  if (!(n.flags & kFlagPfail)) return false;  // we can reach it
  if (n.failed()) return false;               // already FAIL
  const int needed_quorum = st.size() / 2 + 1;
  int failures = CountFailureReports(n, now_ms, node_timeout_ms);
  if (st.myself().is_master()) ++failures;
  return failures >= needed_quorum;
}

bool HandleEpochCollision(ClusterState& st, const Node& sender) {
  Node& me = st.myself();
  if (sender.config_epoch != me.config_epoch || !sender.is_master() || !me.is_master()) return false;
  // Redis: don't act if the colliding node has a smaller name.
  if (sender.name <= me.name) return false;
  ++st.current_epoch;
  me.config_epoch = st.current_epoch;
  return true;
}

bool BumpEpochWithoutConsensus(ClusterState& st, bool unless_shared) {
  Node& me = st.myself();
  const uint64_t max = st.MaxEpoch();
  bool shared = false;
  if (unless_shared) {
    for (const auto& n : st.nodes()) {
      shared = shared || (n.get() != &me && n->is_master() && n->config_epoch == me.config_epoch);
    }
  }
  if (me.config_epoch != 0 && me.config_epoch == max && !shared) return false;
  st.current_epoch = max + 1;
  me.config_epoch = st.current_epoch;
  return true;
}

ClaimOutcome TakeClaimedSlots(ClusterState& st, Node& sender, uint64_t sender_epoch, const SlotBitmap& slots) {
  ClaimOutcome out;
  if (&sender == &st.myself()) return out;
  for (int s = 0; s < kClusterSlots; ++s) {
    if (!SlotBit(slots, s)) continue;
    Node* owner = st.owner(s);
    if (owner == &sender) continue;
    if (st.importing_from(s) != nullptr) continue;  // closed by hand (redis-cli), as Redis
    if (owner == nullptr || owner->config_epoch < sender_epoch) {
      if (owner == &st.myself() && st.imported_from(s) == &sender) {
        out.refused_stale_claim = true;
        continue;
      }
      if (owner == &st.myself()) out.lost.push_back(s);
      st.UnassignSlot(s);
      st.AssignSlot(s, &sender);
      out.changed = true;
    }
  }
  return out;
}

void AcknowledgeImports(ClusterState& st, const Node& source, const SlotBitmap& claimed) {
  if (st.imports_not_acknowledged().empty()) return;
  std::vector<int> acknowledged;
  for (const auto& [slot, from] : st.imports_not_acknowledged()) {
    if (from == &source && !SlotBit(claimed, slot)) acknowledged.push_back(slot);
  }
  for (int slot : acknowledged) st.ClearImportedFrom(slot);
}

SlotBitmap SlotsOf(const ClusterState& st, const Node& n) {
  SlotBitmap b{};
  for (int s = 0; s < kClusterSlots; ++s) {
    if (st.owner(s) == &n) SetSlotBit(b, s);
  }
  return b;
}

}  // namespace ringkv::cluster

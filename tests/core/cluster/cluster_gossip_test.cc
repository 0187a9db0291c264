#include "core/cluster/cluster_gossip.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ringkv::cluster::cluster_gossip_test {
namespace {

std::string Name(char c) { return std::string(kNodeNameLen, c); }

Node* AddMaster(ClusterState& st, char c, uint64_t epoch = 0, uint64_t link = 1) {
  Node n;
  n.name = Name(c);
  n.flags = kFlagMaster;
  n.ip = "127.0.0.1";
  n.port = 7000;
  n.cport = 17000;
  n.config_epoch = epoch;
  n.link = link;
  return st.Add(std::move(n));
}

size_t Cycle(size_t n) {
  static size_t next = 0;
  return next++ % n;
}

TEST(ClusterGossip, PickGossipWantsAtLeastThreeAtMostNodesMinusTwo) {
  ClusterState st(Name('0'));
  AddMaster(st, 'a');
  // Two nodes: nothing to tell the other about.
  EXPECT_TRUE(PickGossip(st, 1, 0, Cycle).empty());
  AddMaster(st, 'b');
  // Three nodes: one entry, never myself.
  std::vector<Node*> g = PickGossip(st, 2, 0, Cycle);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_FALSE(g[0]->is_myself());
  for (char c = 'c'; c <= 'h'; ++c) AddMaster(st, c);
  // Nine nodes: three distinct entries.
  g = PickGossip(st, 3, 0, Cycle);
  ASSERT_EQ(g.size(), 3u);
  std::set<Node*> distinct(g.begin(), g.end());
  EXPECT_EQ(distinct.size(), 3u);
  for (Node* n : g) EXPECT_FALSE(n->is_myself());
}

TEST(ClusterGossip, PickGossipSkipsHandshakeAndUnlinkedAndAddsPfailAtTheEnd) {
  ClusterState st(Name('0'));
  Node* hs = AddMaster(st, 'a');
  hs->flags |= kFlagHandshake;
  Node* unlinked = AddMaster(st, 'b', 0, 0);  // no link, no slots
  Node* pfail = AddMaster(st, 'c');
  pfail->flags |= kFlagPfail;
  Node* good = AddMaster(st, 'd');
  for (int round = 10; round < 30; ++round) {
    std::vector<Node*> g = PickGossip(st, round, 1, Cycle);
    for (size_t i = 0; i < g.size(); ++i) {
      EXPECT_NE(g[i], hs);
      EXPECT_NE(g[i], unlinked);
      if (g[i] == pfail) {
        EXPECT_EQ(i, g.size() - 1);  // PFAIL nodes come last
      }
    }
    ASSERT_FALSE(g.empty());
    EXPECT_EQ(g.back(), pfail);
  }
  // An unlinked node that serves slots is gossiped.
  st.AssignSlot(5, unlinked);
  bool seen = false;
  for (int round = 40; round < 80 && !seen; ++round) {
    for (Node* n : PickGossip(st, round, 0, Cycle)) seen |= n == unlinked;
  }
  EXPECT_TRUE(seen);
  (void)good;
}

TEST(ClusterGossip, GossipEntryCarriesSecondsAndAddress) {
  Node n;
  n.name = Name('a');
  n.ip = "10.0.0.1";
  n.port = 6379;
  n.cport = 16379;
  n.flags = kFlagMaster | kFlagPfail;
  n.ping_sent_ms = 5'500;
  n.pong_received_ms = 9'999;
  GossipEntry g = GossipAbout(n);
  EXPECT_EQ(g.name, n.name);
  EXPECT_EQ(g.ping_sent, 5u);
  EXPECT_EQ(g.pong_received, 9u);
  EXPECT_EQ(g.ip, "10.0.0.1");
  EXPECT_EQ(g.port, 6379);
  EXPECT_EQ(g.cport, 16379);
  EXPECT_EQ(g.flags, kFlagMaster | kFlagPfail);
}

TEST(ClusterGossip, FailureReportsAgeOutAfterTwiceTheNodeTimeout) {
  Node n;
  EXPECT_TRUE(AddFailureReport(n, Name('a'), 1000));
  EXPECT_FALSE(AddFailureReport(n, Name('a'), 1500));  // refreshed, not new
  EXPECT_TRUE(AddFailureReport(n, Name('b'), 2000));
  EXPECT_EQ(CountFailureReports(n, 2000, 1000), 2);
  // a's report (refreshed at 1500) is older than 2 * 1000 at 3501.
  EXPECT_EQ(CountFailureReports(n, 3501, 1000), 1);
  EXPECT_EQ(CountFailureReports(n, 4001, 1000), 0);
  EXPECT_TRUE(AddFailureReport(n, Name('c'), 5000));
  EXPECT_FALSE(DelFailureReport(n, Name('a'), 5000, 1000));
  EXPECT_TRUE(DelFailureReport(n, Name('c'), 5000, 1000));
  EXPECT_EQ(CountFailureReports(n, 5000, 1000), 0);
}

TEST(ClusterGossip, FailQuorumIsAMajorityOfMastersServingSlots) {
  ClusterState st(Name('0'));
  Node* a = AddMaster(st, 'a');
  Node* b = AddMaster(st, 'b');
  Node* c = AddMaster(st, 'c');
  Node* d = AddMaster(st, 'd');
  int s = 0;
  for (Node* n : {&st.myself(), a, b, c, d}) st.AssignSlot(s++, n);  // size 5: quorum 3
  EXPECT_FALSE(ReachedFailQuorum(st, *d, 0, 1000));  // not PFAIL: reachable
  d->flags |= kFlagPfail;
  EXPECT_FALSE(ReachedFailQuorum(st, *d, 0, 1000));  // myself alone
  AddFailureReport(*d, a->name, 0);
  EXPECT_FALSE(ReachedFailQuorum(st, *d, 0, 1000));  // 2 of 3
  AddFailureReport(*d, b->name, 0);
  EXPECT_TRUE(ReachedFailQuorum(st, *d, 0, 1000));   // 3 of 3
  EXPECT_FALSE(ReachedFailQuorum(st, *d, 2001, 1000));  // the reports aged out
  d->flags |= kFlagFail;
  AddFailureReport(*d, a->name, 3000);
  AddFailureReport(*d, b->name, 3000);
  EXPECT_FALSE(ReachedFailQuorum(st, *d, 3000, 1000));  // already FAIL
}

TEST(ClusterGossip, EpochCollisionBumpsTheNodeWithTheSmallerName) {
  ClusterState st(Name('5'));
  Node* lower = AddMaster(st, '1', 0);
  Node* higher = AddMaster(st, '9', 0);
  st.current_epoch = 4;
  // The sender's name is smaller than mine: it moves, I keep my epoch.
  EXPECT_FALSE(HandleEpochCollision(st, *lower));
  EXPECT_EQ(st.myself().config_epoch, 0u);
  // The sender's name is greater: I take currentEpoch + 1.
  EXPECT_TRUE(HandleEpochCollision(st, *higher));
  EXPECT_EQ(st.myself().config_epoch, 5u);
  EXPECT_EQ(st.current_epoch, 5u);
  // No collision any more.
  EXPECT_FALSE(HandleEpochCollision(st, *higher));
  // Replicas do not collide.
  higher->config_epoch = 5;
  higher->flags = kFlagReplica;
  EXPECT_FALSE(HandleEpochCollision(st, *higher));
}

TEST(ClusterGossip, BumpWithoutConsensusTakesAGreatestEpochOfItsOwn) {
  ClusterState st(Name('5'));
  Node* other = AddMaster(st, '1', 3);
  st.current_epoch = 3;
  // Epoch 0 always moves; then the greatest, alone, stays.
  EXPECT_TRUE(BumpEpochWithoutConsensus(st, false));
  EXPECT_EQ(st.myself().config_epoch, 4u);
  EXPECT_EQ(st.current_epoch, 4u);
  EXPECT_FALSE(BumpEpochWithoutConsensus(st, true));
  EXPECT_FALSE(BumpEpochWithoutConsensus(st, false));
  // Below another's epoch: moves above it.
  other->config_epoch = 6;
  st.current_epoch = 6;
  EXPECT_TRUE(BumpEpochWithoutConsensus(st, false));
  EXPECT_EQ(st.myself().config_epoch, 7u);
  // Tied at the greatest with another master: Redis's rule keeps the tie,
  // ringkv's moves on.
  other->config_epoch = 7;
  EXPECT_FALSE(BumpEpochWithoutConsensus(st, false));
  EXPECT_TRUE(BumpEpochWithoutConsensus(st, true));
  EXPECT_EQ(st.myself().config_epoch, 8u);
  EXPECT_EQ(st.current_epoch, 8u);
  // A replica carries its master's epoch: no tie.
  Node* replica = AddMaster(st, '2', 8);
  replica->flags = kFlagReplica;
  EXPECT_FALSE(BumpEpochWithoutConsensus(st, true));
}

TEST(ClusterGossip, ClaimedSlotsMoveOnlyToAGreaterEpoch) {
  ClusterState st(Name('0'));
  st.myself().config_epoch = 3;
  Node* a = AddMaster(st, 'a', 2);
  Node* b = AddMaster(st, 'b', 5);
  st.AssignSlot(0, &st.myself());
  st.AssignSlot(1, b);
  st.AssignSlot(2, b);
  st.SetImporting(3, b);
  SlotBitmap claim{};
  for (int s : {0, 1, 3, 4}) SetSlotBit(claim, s);
  // a (epoch 2) claims: only the free slot 4 moves (3 is being imported).
  ClaimOutcome claimed = TakeClaimedSlots(st, *a, 2, claim);
  EXPECT_TRUE(claimed.changed);
  EXPECT_TRUE(claimed.lost.empty());
  EXPECT_FALSE(claimed.refused_stale_claim);
  EXPECT_EQ(st.owner(0), &st.myself());
  EXPECT_EQ(st.owner(1), b);
  EXPECT_EQ(st.owner(3), nullptr);
  EXPECT_EQ(st.owner(4), a);
  // With epoch 6 it takes mine (reported) and b's.
  a->config_epoch = 6;
  claimed = TakeClaimedSlots(st, *a, 6, claim);
  EXPECT_TRUE(claimed.changed);
  EXPECT_EQ(claimed.lost, std::vector<int>{0});
  EXPECT_EQ(st.owner(0), a);
  EXPECT_EQ(st.owner(1), a);
  EXPECT_EQ(st.owner(2), b);
  EXPECT_EQ(a->num_slots, 3);
  EXPECT_EQ(b->num_slots, 1);
  // A claim it already has changes nothing; myself's claim is ignored.
  EXPECT_FALSE(TakeClaimedSlots(st, *a, 6, claim).changed);
  EXPECT_FALSE(TakeClaimedSlots(st, st.myself(), 9, claim).changed);
  SlotBitmap has{};
  for (int s : {0, 1, 4}) SetSlotBit(has, s);
  EXPECT_EQ(SlotsOf(st, *a), has);
}

// A slot imported here from b (SETSLOT NODE myself ended the import) stays
// mine against b's claims, whatever their epoch, until a claim of b leaves
// it out; a claim of another node is not refused; the slot leaving myself
// or b being forgotten ends the protection.
TEST(ClusterGossip, AStaleClaimOfTheImportSourceIsRefusedUntilAcknowledged) {
  ClusterState st(Name('0'));
  st.myself().config_epoch = 3;
  Node* b = AddMaster(st, 'b', 2);
  Node* c = AddMaster(st, 'c', 1);
  st.AssignSlot(10, &st.myself());
  st.AssignSlot(11, &st.myself());
  st.AssignSlot(12, b);
  st.SetImportedFrom(10, b);
  st.SetImportedFrom(11, b);
  EXPECT_EQ(st.imported_from(10), b);
  EXPECT_EQ(st.imported_from(12), nullptr);
  SlotBitmap stale{};  // b's view before it was told: 10, 11, 12
  for (int s : {10, 11, 12}) SetSlotBit(stale, s);
  // b's epoch rose meanwhile (a collision's resolution): 7 > mine.
  ClaimOutcome claimed = TakeClaimedSlots(st, *b, 7, stale);
  EXPECT_TRUE(claimed.refused_stale_claim);
  EXPECT_FALSE(claimed.changed);
  EXPECT_TRUE(claimed.lost.empty());
  EXPECT_EQ(st.owner(10), &st.myself());
  EXPECT_EQ(st.owner(11), &st.myself());
  // A claim of b below my epoch is no threat: nothing is refused.
  EXPECT_FALSE(TakeClaimedSlots(st, *b, 2, stale).refused_stale_claim);
  // Another node's claim with a greater epoch wins, as Redis.
  SlotBitmap by_c{};
  SetSlotBit(by_c, 11);
  claimed = TakeClaimedSlots(st, *c, 8, by_c);
  EXPECT_FALSE(claimed.refused_stale_claim);
  EXPECT_EQ(claimed.lost, std::vector<int>{11});
  EXPECT_EQ(st.owner(11), c);
  EXPECT_EQ(st.imported_from(11), nullptr);  // left myself
  // b claims 12 only: it knows now. Its later claim of 10 wins again.
  SlotBitmap told{};
  SetSlotBit(told, 12);
  AcknowledgeImports(st, *c, told);  // not c's import: no change
  EXPECT_EQ(st.imported_from(10), b);
  AcknowledgeImports(st, *b, told);
  EXPECT_EQ(st.imported_from(10), nullptr);
  claimed = TakeClaimedSlots(st, *b, 9, stale);
  EXPECT_FALSE(claimed.refused_stale_claim);
  EXPECT_EQ(claimed.lost, std::vector<int>{10});
  EXPECT_EQ(st.owner(10), b);
  // Forgetting the source drops its imports.
  st.UnassignSlot(10);
  st.AssignSlot(10, &st.myself());
  st.SetImportedFrom(10, b);
  st.Remove(b->name);
  EXPECT_TRUE(st.imports_not_acknowledged().empty());
}

// Masters a and b beside myself, serving slots 0 (myself), 1 and 2.
std::pair<Node*, Node*> ThreeMastersOfASlotEach(ClusterState& st) {
  Node* a = AddMaster(st, 'a');
  Node* b = AddMaster(st, 'b');
  st.AssignSlot(0, &st.myself());
  st.AssignSlot(1, a);
  st.AssignSlot(2, b);
  return {a, b};
}

TEST(ClusterGossip, StateFailsInAMinorityPartition) {
  ClusterState st(Name('0'));
  auto [a, b] = ThreeMastersOfASlotEach(st);
  const int64_t t0 = ClusterState::kWritableDelayMs;  // the first call at 0
  EXPECT_FALSE(st.UpdateState(false, 0, 1000));
  EXPECT_TRUE(st.UpdateState(false, t0, 1000));
  EXPECT_TRUE(st.ok());
  a->flags |= kFlagPfail;  // 2 of 3 reachable: still ok
  EXPECT_FALSE(st.UpdateState(false, t0 + 1, 1000));
  EXPECT_TRUE(st.ok());
  b->flags |= kFlagPfail;  // 1 of 3: down
  EXPECT_TRUE(st.UpdateState(false, t0 + 2, 1000));
  EXPECT_FALSE(st.ok());
}

// Redis's two delays before a master turns ok: 2 s from the first timed
// update (a restarted master waits to hear it was failed over), and the
// rejoin delay (node timeout clamped to 500..5000 ms) after it last found
// itself in a minority partition. A replica waits for neither.
TEST(ClusterGossip, AMasterTurnsOkOnlyAfterTheWritableAndRejoinDelays) {
  ClusterState st(Name('0'));
  auto [a, b] = ThreeMastersOfASlotEach(st);
  const int64_t t0 = 1'000'000;
  EXPECT_FALSE(st.UpdateState(false, t0, 15000));  // the first call
  EXPECT_FALSE(st.UpdateState(false, t0 + 1999, 15000));
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(st.UpdateState(false, t0 + 2000, 15000));
  EXPECT_TRUE(st.ok());
  // In a minority at `at`, healed at once: down at once, then ok only once
  // the rejoin delay has passed since the minority was last seen.
  auto minority_then_healed = [&](int64_t at, int64_t node_timeout_ms, int64_t rejoin_delay_ms) {
    a->flags |= kFlagPfail;
    b->flags |= kFlagPfail;
    EXPECT_TRUE(st.UpdateState(false, at, node_timeout_ms));
    EXPECT_FALSE(st.ok());
    a->flags &= ~kFlagPfail;
    b->flags &= ~kFlagPfail;
    EXPECT_FALSE(st.UpdateState(false, at + rejoin_delay_ms - 1, node_timeout_ms));
    EXPECT_FALSE(st.ok());
    EXPECT_TRUE(st.UpdateState(false, at + rejoin_delay_ms, node_timeout_ms));
    EXPECT_TRUE(st.ok());
  };
  minority_then_healed(t0 + 10'000, 15000, 5000);  // the node timeout clamped to 5 s
  minority_then_healed(t0 + 20'000, 100, 500);     // and to 500 ms
  minority_then_healed(t0 + 30'000, 1200, 1200);   // within the bounds: the node timeout

  // A replica turns ok at the first call.
  ClusterState replica_view(Name('1'));
  Node* m = AddMaster(replica_view, 'm');
  replica_view.myself().flags = kFlagMyself | kFlagReplica;
  replica_view.myself().master = m->name;
  replica_view.AssignSlot(0, m);
  EXPECT_TRUE(replica_view.UpdateState(false, t0, 15000));
  EXPECT_TRUE(replica_view.ok());
}

}  // namespace
}  // namespace ringkv::cluster::cluster_gossip_test

#include "core/cluster/replica_rules.h"

#include <gtest/gtest.h>

#include <string>

namespace ringkv::cluster::replica_rules_test {
namespace {

std::string Name(char c) { return std::string(kNodeNameLen, c); }

Node* Add(ClusterState& st, char c, const std::string& master = "") {
  Node n;
  n.name = Name(c);
  n.flags = master.empty() ? kFlagMaster : kFlagReplica;
  n.master = master;
  n.ip = "127.0.0.1";
  return st.Add(std::move(n));
}

TEST(ReplicaRules, DataAgeAgainstTheValidityFactor) {
  // node-timeout 1000, factor 10, ping period 10 s: the limit is 20 s past
  // the node timeout.
  EXPECT_FALSE(ReplicaDataTooOld(21000, 1000, 10, 10));
  EXPECT_TRUE(ReplicaDataTooOld(21001, 1000, 10, 10));
  EXPECT_FALSE(ReplicaDataTooOld(500, 1000, 10, 10));  // under the node timeout: nothing taken off
  EXPECT_FALSE(ReplicaDataTooOld(int64_t{1} << 50, 1000, 0, 10));  // factor 0: always valid
}

// Masters a (slots, two replicas: '1' and '2') and b (slots, MIGRATE_TO,
// its replica failed); myself is '1' or '2'.
struct Layout {
  explicit Layout(char me) : st(Name(me)) {
    a = Add(st, 'a');
    b = Add(st, 'b');
    st.AssignSlot(0, a);
    st.AssignSlot(1, b);
    b->flags |= kFlagMigrateTo;
    Node& self = st.myself();
    self.flags = kFlagMyself | kFlagReplica;
    self.master = a->name;
    Add(st, me == '1' ? '2' : '1', a->name);
    dead = Add(st, '9', b->name);
    dead->flags |= kFlagFail;
  }
  ClusterState st;
  Node* a;
  Node* b;
  Node* dead;
  absl::flat_hash_map<std::string, int64_t> since;
};

TEST(ReplicaRules, TheSmallestReplicaMigratesAfterTheDelay) {
  Layout l('1');
  EXPECT_EQ(CountNonFailingReplicas(l.st, *l.b), 0);
  EXPECT_EQ(CountNonFailingReplicas(l.st, *l.a), 2);
  EXPECT_EQ(ReplicaMigrationTarget(l.st, true, 1, 1000, &l.since), nullptr);  // orphaned just now
  EXPECT_EQ(l.since.at(l.b->name), 1000);
  EXPECT_EQ(ReplicaMigrationTarget(l.st, true, 1, 1000 + kReplicaMigrationDelayMs, &l.since), nullptr);
  EXPECT_EQ(ReplicaMigrationTarget(l.st, true, 1, 1001 + kReplicaMigrationDelayMs, &l.since), l.b);
  // Not while the cluster is down.
  EXPECT_EQ(ReplicaMigrationTarget(l.st, false, 1, 99999, &l.since), nullptr);
}

TEST(ReplicaRules, NoMigrationForTheOtherReplicaOrUnderTheBarrier) {
  Layout other('2');  // '1' is the candidate, not myself
  EXPECT_EQ(ReplicaMigrationTarget(other.st, true, 1, 0, &other.since), nullptr);
  EXPECT_EQ(ReplicaMigrationTarget(other.st, true, 1, 99999, &other.since), nullptr);
  Layout barrier('1');  // a keeps two replicas: a barrier of 2 forbids leaving
  EXPECT_EQ(ReplicaMigrationTarget(barrier.st, true, 2, 0, &barrier.since), nullptr);
  EXPECT_EQ(ReplicaMigrationTarget(barrier.st, true, 2, 99999, &barrier.since), nullptr);
}

TEST(ReplicaRules, OnlyMastersMeantToHaveReplicasAreOrphaned) {
  Layout l('1');
  l.b->flags &= ~kFlagMigrateTo;  // never had a replica
  EXPECT_EQ(ReplicaMigrationTarget(l.st, true, 1, 0, &l.since), nullptr);
  EXPECT_EQ(ReplicaMigrationTarget(l.st, true, 1, 99999, &l.since), nullptr);
  EXPECT_TRUE(l.since.empty());
  // b's replica back: not orphaned any more, no migration.
  Layout back('1');
  EXPECT_EQ(ReplicaMigrationTarget(back.st, true, 1, 0, &back.since), nullptr);
  back.dead->flags &= ~kFlagFail;
  EXPECT_EQ(ReplicaMigrationTarget(back.st, true, 1, 99999, &back.since), nullptr);
}

// Redis's clusterNodeSetSlotBit (redis/redis#3043): a master given its first
// slot while another master has a replica is a migration target though it
// never had a replica; before any replica exists, or for a master that had
// slots already, nothing changes.
TEST(ReplicaRules, AMasterGivenItsFirstSlotWhileOthersHaveReplicasIsMeantToHaveOne) {
  ClusterState st(Name('m'));
  Node* early = Add(st, 'e');
  st.AssignSlot(10, early);  // no replica anywhere yet
  EXPECT_FALSE(early->flags & kFlagMigrateTo);
  Node* a = Add(st, 'a');
  st.AssignSlot(0, a);
  Add(st, 'r', a->name);  // a's replica
  EXPECT_TRUE(st.MastersHaveReplicas());
  st.AssignSlot(11, early);  // not its first slot
  EXPECT_FALSE(early->flags & kFlagMigrateTo);
  Node* late = Add(st, 'l');
  st.AssignSlot(20, late);
  EXPECT_TRUE(late->flags & kFlagMigrateTo);
  // So an orphan that never had a replica draws a migration, as in Redis.
  Node& self = st.myself();
  self.flags = kFlagMyself | kFlagReplica;
  self.master = a->name;
  absl::flat_hash_map<std::string, int64_t> since;
  EXPECT_EQ(ReplicaMigrationTarget(st, true, 1, 0, &since), nullptr);  // the delay starts
  const Node* target = ReplicaMigrationTarget(st, true, 1, 99999, &since);
  ASSERT_NE(target, nullptr);
  EXPECT_EQ(target->name, late->name);
}

}  // namespace
}  // namespace ringkv::cluster::replica_rules_test

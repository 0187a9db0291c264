#include "core/cluster/nodes_conf.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace ringkv::cluster::nodes_conf_test {
namespace {

const std::string kA = "925d8573fab92425ea0315551e9313e1bfd793f2";
const std::string k1 = "1111111111111111111111111111111111111111";
const std::string k2 = "2222222222222222222222222222222222222222";
const std::string k3 = "3333333333333333333333333333333333333333";

TEST(NodesConf, FreshNodeAsRedisWritesIt) {
  // redis-server 7.0 --cluster-enabled yes --port 17001, then
  // CLUSTER ADDSLOTSRANGE 0 16383 (its ip is unknown until a MEET).
  ClusterState s(kA);
  s.myself().port = 17001;
  s.myself().cport = 27001;
  EXPECT_EQ(FormatNodesConf(s), kA + " :17001@27001 myself,master - 0 0 0 connected\nvars currentEpoch 0 lastVoteEpoch 0\n");
  for (int i = 0; i < kClusterSlots; ++i) ASSERT_TRUE(s.AssignSlot(i, &s.myself()));
  EXPECT_EQ(FormatNodesConf(s),
            kA + " :17001@27001 myself,master - 0 0 0 connected 0-16383\nvars currentEpoch 0 lastVoteEpoch 0\n");
  ASSERT_TRUE(s.UnassignSlot(5));
  s.SetImporting(5, &s.myself());
  EXPECT_EQ(NodeLine(s, s.myself(), false),
            kA + " :17001@27001 myself,master - 0 0 0 connected 0-4 6-16383 [5-<-" + kA + "]");
  s.SetImporting(5, nullptr);
  s.SetMigrating(7, &s.myself());
  EXPECT_EQ(NodeLine(s, s.myself(), false),
            kA + " :17001@27001 myself,master - 0 0 0 connected 0-4 6-16383 [7->-" + kA + "]");
}

TEST(NodesConf, LoadsThreeNodesAndWritesThemBack) {
  const std::string text = k1 + " 127.0.0.1:17002@27002 myself,master - 0 0 1 connected 0-8191\n" + k2 +
                           " 127.0.0.1:17099@27099,host-b master - 0 0 2 connected 8192-16382 16383\n" + k3 +
                           " 127.0.0.1:17098@27098 slave " + k2 + " 0 0 2 connected\n" +
                           "vars currentEpoch 2 lastVoteEpoch 0\n";
  auto s = ParseNodesConf(text);
  ASSERT_TRUE(s.ok()) << s.status();
  ClusterState& st = **s;
  EXPECT_EQ(st.myself().name, k1);
  EXPECT_EQ(st.nodes().size(), 3u);
  EXPECT_EQ(st.owner(0), &st.myself());
  EXPECT_EQ(st.owner(16383)->name, k2);
  EXPECT_EQ(st.owner(16383)->hostname, "host-b");
  EXPECT_EQ(st.Find(k3)->master, k2);
  EXPECT_TRUE(st.Find(k3)->is_replica());
  EXPECT_EQ(st.current_epoch, 2u);
  EXPECT_EQ(st.size(), 2);
  st.UpdateState(true, 0, 15000);
  st.UpdateState(true, ClusterState::kWritableDelayMs, 15000);  // a master: ok after the writable delay
  EXPECT_TRUE(st.ok());
  // Without a bus the others are shown disconnected, as Redis shows nodes it has no link to.
  EXPECT_EQ(FormatNodesConf(st), k1 + " 127.0.0.1:17002@27002 myself,master - 0 0 1 connected 0-8191\n" + k2 +
                                     " 127.0.0.1:17099@27099,host-b master - 0 0 2 disconnected 8192-16383\n" + k3 +
                                     " 127.0.0.1:17098@27098 slave " + k2 + " 0 0 2 disconnected\n" +
                                     "vars currentEpoch 2 lastVoteEpoch 0\n");
  // What it writes, it reads back the same.
  auto again = ParseNodesConf(FormatNodesConf(st));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(FormatNodesConf(**again), FormatNodesConf(st));
}

TEST(NodesConf, OpenSlotsAndOldAddressesLoad) {
  const std::string text = k1 + " 10.0.0.1:7000 myself,master - 0 0 3 connected 0-10 [11-<-" + k2 + "] [3->-" + k2 +
                           "]\n" + k2 + " 10.0.0.2:7000@17000 master - 0 0 2 connected 11-20\n";
  auto s = ParseNodesConf(text);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->myself().cport, 17000);
  EXPECT_EQ((*s)->importing_from(11)->name, k2);
  EXPECT_EQ((*s)->migrating_to(3)->name, k2);
  EXPECT_EQ((*s)->current_epoch, 3u);  // raised to the greatest config epoch
}

TEST(NodesConf, RefusesCorruptFiles) {
  const std::string me = k1 + " 127.0.0.1:1@2 myself,master - 0 0 1 connected";
  for (const std::string& bad : {
           std::string("vars currentEpoch 0 lastVoteEpoch 0\n"),                // no myself
           k1 + " 127.0.0.1:1@2 myself,master - 0 0 1\n",                        // short line
           std::string("xyz 127.0.0.1:1@2 myself,master - 0 0 1 connected\n"),  // bad id
           k1 + " 127.0.0.1 myself,master - 0 0 1 connected\n",                  // no port
           k1 + " 127.0.0.1:1@2 myself,wizard - 0 0 1 connected\n",              // unknown flag
           me + " 16384\n",                                                      // slot out of range
           me + " 9-3\n",                                                        // reversed range
           me + " 1 1\n",                                                        // slot twice
           me + " [5->-abc]\n",                                                  // bad open slot
           me + "\n" + me + "\n",                                                // duplicate id
           me + "\nvars currentEpoch x\n",                                       // bad vars
       }) {
    EXPECT_FALSE(ParseNodesConf(bad).ok()) << bad;
  }
}

TEST(NodesConf, WritesDurablyAndReadsBack) {
  char dir[] = "/tmp/ringkv-nodes-conf-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/nodes.conf";
  ASSERT_TRUE(WriteFileDurably(path, "first\n").ok());
  ASSERT_TRUE(WriteFileDurably(path, "second\n").ok());
  auto read = ReadWholeFile(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, "second\n");
  EXPECT_EQ(ReadWholeFile(path + ".missing").status().code(), absl::StatusCode::kNotFound);
  unlink(path.c_str());
  rmdir(dir);
}

TEST(ClusterState, RemoveForgetsEveryReference) {
  ClusterState s(k1);
  Node n;
  n.name = k2;
  n.flags = kFlagMaster;
  Node* other = s.Add(n);
  Node r;
  r.name = k3;
  r.flags = kFlagReplica;
  r.master = k2;
  s.Add(r);
  ASSERT_TRUE(s.AssignSlot(9, other));
  s.SetMigrating(1, other);
  s.SetImporting(2, other);
  EXPECT_EQ(s.ReplicasOf(*other).size(), 1u);
  s.Remove(k2);
  EXPECT_EQ(s.owner(9), nullptr);
  EXPECT_EQ(s.migrating_to(1), nullptr);
  EXPECT_EQ(s.importing_from(2), nullptr);
  EXPECT_EQ(s.Find(k3)->master, "");
  s.Remove(k1);  // myself stays
  EXPECT_EQ(s.nodes().size(), 2u);
}

TEST(ClusterState, NamesAndFlags) {
  EXPECT_TRUE(IsValidNodeName(RandomNodeName()));
  EXPECT_NE(RandomNodeName(), RandomNodeName());
  EXPECT_FALSE(IsValidNodeName("abc"));
  EXPECT_FALSE(IsValidNodeName(std::string(40, 'g')));
  EXPECT_EQ(FlagsString(kFlagMyself | kFlagMaster), "myself,master");
  EXPECT_EQ(FlagsString(kFlagReplica | kFlagPfail | kFlagNoFailover), "slave,fail?,nofailover");
  EXPECT_EQ(FlagsString(0), "noflags");
}

}  // namespace
}  // namespace ringkv::cluster::nodes_conf_test

// The cluster bus's links as an operator and Redis's tests see them:
// DEBUG CLUSTERLINK KILL (its replies, the link re-created, a shard message
// sent while it is down lost only for that node, as Redis's
// unit/cluster/links), CLUSTER LINKS' send-buffer fields, and
// cluster-link-sendbuf-limit freeing the link to a peer that stopped
// reading (Redis's tests/cluster/tests/24-links.tcl).
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/e2e/cluster_test_util.h"
#include "tests/e2e/persistence_test_util.h"

namespace ringkv::testing::cluster_links_e2e_test {
namespace {

const std::vector<std::string> kDebug = {"--enable-debug-command", "yes"};

// One row of CLUSTER LINKS (RESP2).
struct LinkRow {
  std::string dir, node, events;
  int64_t ctime = 0, allocated = -1, used = -1;
};

// CLUSTER LINKS parsed: every value line of the reply in order, twelve per
// link (name, value pairs).
std::vector<LinkRow> Links(RawConn& c) {
  const std::string reply = Cmd(c, {"CLUSTER", "LINKS"});
  std::vector<std::string> values;
  for (size_t at = 0; at < reply.size();) {
    const size_t nl = reply.find("\r\n", at);
    if (nl == std::string::npos) break;
    const std::string line = reply.substr(at, nl - at);
    at = nl + 2;
    if (line.empty() || line[0] == '*' || line[0] == '$') continue;
    values.push_back(line[0] == ':' ? line.substr(1) : line);
  }
  std::vector<LinkRow> rows;
  for (size_t i = 0; i + 12 <= values.size(); i += 12) {
    LinkRow r;
    EXPECT_EQ(values[i], "direction");
    EXPECT_EQ(values[i + 2], "node");
    EXPECT_EQ(values[i + 4], "create-time");
    EXPECT_EQ(values[i + 6], "events");
    EXPECT_EQ(values[i + 8], "send-buffer-allocated");
    EXPECT_EQ(values[i + 10], "send-buffer-used");
    r.dir = values[i + 1];
    r.node = values[i + 3];
    r.ctime = std::stoll(values[i + 5]);
    r.events = values[i + 7];
    r.allocated = std::stoll(values[i + 9]);
    r.used = std::stoll(values[i + 11]);
    rows.push_back(r);
  }
  return rows;
}

// The link in direction `dir` ("to" / "from") with `node`; ctime 0 if none.
LinkRow LinkWith(RawConn& c, const std::string& node, const std::string& dir) {
  for (const LinkRow& r : Links(c)) {
    if (r.node == node && r.dir == dir) return r;
  }
  return {};
}

std::string InfoField(RawConn& c, const std::string& field) {
  const std::string info = Text(Cmd(c, {"CLUSTER", "INFO"}));
  const size_t at = info.find(field + ":");
  if (at == std::string::npos) return "";
  return info.substr(at + field.size() + 1, info.find("\r\n", at) - at - field.size() - 1);
}

std::string SMessage(const std::string& channel, const std::string& msg) {
  return "*3\r\n$8\r\nsmessage\r\n$" + std::to_string(channel.size()) + "\r\n" + channel + "\r\n$" +
         std::to_string(msg.size()) + "\r\n" + msg + "\r\n";
}

TEST(ClusterLinksE2E, DebugClusterLinkKillFreesLinksThatComeBack) {
  // One master and two replicas, as Redis's unit/cluster/links.
  std::vector<BusNode> nodes = StartCluster({{0, 16383}}, {0, 0}, kDebug);
  ASSERT_EQ(nodes.size(), 3u);
  RawConn& primary = *nodes[0].conn;
  const std::string r1 = nodes[1].id, r2 = nodes[2].id;
  ASSERT_TRUE(WaitFor([&] { return Links(primary).size() == 4; }, 10));
  for (const LinkRow& r : Links(primary)) {
    EXPECT_TRUE(r.dir == "to" || r.dir == "from") << r.dir;
    EXPECT_GT(r.ctime, 0);
    EXPECT_GE(r.allocated, r.used);
    EXPECT_GE(r.used, 0);
  }

  // Replies (Redis's texts; where 7.0.15 crashes or answers twice, one error).
  const std::string unknown(40, 'a');
  EXPECT_EQ(Cmd(primary, {"DEBUG", "CLUSTERLINK", "KILL", "to", unknown}), "-ERR Unknown node " + unknown + "\r\n");
  EXPECT_EQ(Cmd(primary, {"DEBUG", "CLUSTERLINK", "KILL", "sideways", r1}), "-ERR Unknown direction sideways\r\n");
  EXPECT_EQ(Cmd(primary, {"DEBUG", "CLUSTERLINK", "KILL", "to", nodes[0].id}),
            "-ERR Cannot free cluster link(s) to myself\r\n");
  EXPECT_EQ(Cmd(primary, {"DEBUG", "clusterlink", "KILL", "to"}),
            "-ERR unknown subcommand or wrong number of arguments for 'clusterlink'. Try DEBUG HELP.\r\n");
  EXPECT_EQ(Cmd(primary, {"DEBUG", "CLUSTERLINK", "FREE", "to", r1}),
            "-ERR unknown subcommand or wrong number of arguments for 'CLUSTERLINK'. Try DEBUG HELP.\r\n");
  EXPECT_EQ(Cmd(primary, {"DEBUG", "DROP-CLUSTER-PACKET-FILTER", "x"}),
            "-ERR value is not an integer or out of range\r\n");
  EXPECT_EQ(Cmd(primary, {"DEBUG", "DROP-CLUSTER-PACKET-FILTER", "-1"}), "+OK\r\n");
  EXPECT_TRUE(Has(Cmd(primary, {"DEBUG", "HELP"}), "CLUSTERLINK KILL <to|from|all> <node-id>"));

  // SSUBSCRIBE on both replicas; kill the link to replica 1 and SPUBLISH in
  // one transaction: replica 2 gets the message, replica 1 does not.
  RawConn sub1(nodes[1].port()), sub2(nodes[2].port());
  EXPECT_EQ(Cmd(sub1, {"SSUBSCRIBE", "ch3"}), "*3\r\n$10\r\nssubscribe\r\n$3\r\nch3\r\n:1\r\n");
  EXPECT_EQ(Cmd(sub2, {"SSUBSCRIBE", "ch3"}), "*3\r\n$10\r\nssubscribe\r\n$3\r\nch3\r\n:1\r\n");
  const LinkRow to_before = LinkWith(primary, r1, "to"), from_before = LinkWith(primary, r1, "from");
  ASSERT_GT(to_before.ctime, 0);
  ASSERT_GT(from_before.ctime, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // create-time is in ms
  EXPECT_EQ(Cmd(primary, {"MULTI"}), "+OK\r\n");
  EXPECT_EQ(Cmd(primary, {"DEBUG", "CLUSTERLINK", "KILL", "TO", r1}), "+QUEUED\r\n");
  EXPECT_EQ(Cmd(primary, {"SPUBLISH", "ch3", "hello"}), "+QUEUED\r\n");
  EXPECT_EQ(Cmd(primary, {"EXEC"}), "*2\r\n+OK\r\n:0\r\n");
  // The cron connects a new link; the link from replica 1 is untouched.
  ASSERT_TRUE(WaitFor([&] { return LinkWith(primary, r1, "to").ctime > to_before.ctime; }, 5));
  EXPECT_EQ(LinkWith(primary, r1, "from").ctime, from_before.ctime);
  ASSERT_TRUE(WaitFor([&] { return Links(primary).size() == 4; }, 5));
  EXPECT_EQ(Cmd(primary, {"SPUBLISH", "ch3", "world"}), ":0\r\n");
  EXPECT_EQ(sub1.ReadReply(), SMessage("ch3", "world"));
  EXPECT_EQ(sub2.ReadReply(), SMessage("ch3", "hello"));
  EXPECT_EQ(sub2.ReadReply(), SMessage("ch3", "world"));

  // FROM: the inbound link goes; replica 2 reconnects it.
  const LinkRow from2 = LinkWith(primary, r2, "from"), to2 = LinkWith(primary, r2, "to");
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(Cmd(primary, {"DEBUG", "CLUSTERLINK", "KILL", "from", r2}), "+OK\r\n");
  EXPECT_TRUE(WaitFor([&] { return LinkWith(primary, r2, "from").ctime > from2.ctime; }, 10));
  EXPECT_EQ(LinkWith(primary, r2, "to").ctime, to2.ctime);
  // ALL: both come back; a second kill right away (links not there yet) is OK too.
  const LinkRow from2b = LinkWith(primary, r2, "from");
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(Cmd(primary, {"DEBUG", "CLUSTERLINK", "KILL", "all", r2}), "+OK\r\n");
  EXPECT_EQ(Cmd(primary, {"DEBUG", "CLUSTERLINK", "KILL", "all", r2}), "+OK\r\n");
  EXPECT_TRUE(WaitFor(
      [&] {
        return LinkWith(primary, r2, "to").ctime > to2.ctime && LinkWith(primary, r2, "from").ctime > from2b.ctime;
      },
      10));
  EXPECT_TRUE(WaitFor([&] { return Links(primary).size() == 4; }, 10));
  EXPECT_EQ(InfoField(primary, "cluster_state"), "ok");
}

TEST(ClusterLinksE2E, DebugClusterLinkNeedsClusterMode) {
  TestServer standalone(kDebug);
  ASSERT_TRUE(standalone.ready());
  RawConn c(standalone.port());
  EXPECT_EQ(Cmd(c, {"DEBUG", "CLUSTERLINK", "KILL", "to", std::string(40, 'a')}),
            "-ERR Debug option only available for cluster mode enabled setup!\r\n");
  EXPECT_EQ(Cmd(c, {"DEBUG", "DROP-CLUSTER-PACKET-FILTER", "1"}), "+OK\r\n");
}

// Redis's 24-links: a peer that stops reading makes the send buffer grow;
// past cluster-link-sendbuf-limit the link is freed (counted in CLUSTER
// INFO) and a new one made; the link from that peer stays.
TEST(ClusterLinksE2E, SendBufferLimitFreesTheLinkToAStoppedPeer) {
  std::vector<BusNode> nodes = StartCluster({{0, 8191}, {8192, 16383}}, {}, kDebug);
  ASSERT_EQ(nodes.size(), 2u);
  RawConn& p1 = *nodes[0].conn;
  const std::string p2 = nodes[1].id;
  ASSERT_TRUE(WaitFor([&] { return Links(p1).size() == 2; }, 10));
  EXPECT_EQ(Cmd(p1, {"CONFIG", "SET", "cluster-node-timeout", "3600000"}), "+OK\r\n");
  EXPECT_EQ(Cmd(p1, {"CONFIG", "SET", "cluster-link-sendbuf-limit", "262144"}), "+OK\r\n");
  EXPECT_EQ(InfoField(p1, "total_cluster_links_buffer_limit_exceeded"), "0");
  const LinkRow to_before = LinkWith(p1, p2, "to"), from_before = LinkWith(p1, p2, "from");
  ASSERT_GT(to_before.ctime, 0);
  // Idle: nothing waits to be written.
  EXPECT_EQ(to_before.used, 0);
  EXPECT_EQ(to_before.events, "r");

  const int p2_pid = std::stoi(Info(*nodes[1].conn, "process_id", "server"));
  ASSERT_EQ(kill(p2_pid, SIGSTOP), 0);
  const std::string big(128 * 1024, 'x');
  bool saw_backlog = false;
  int sent = 0;
  while (sent < 100 && InfoField(p1, "total_cluster_links_buffer_limit_exceeded") == "0") {
    EXPECT_EQ(Cmd(p1, {"PUBLISH", "channel", big}), ":0\r\n");
    ++sent;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const LinkRow to = LinkWith(p1, p2, "to");
    if (to.used > 0 && to.events == "rw" && to.allocated >= to.used) saw_backlog = true;
  }
  const std::string exceeded = InfoField(p1, "total_cluster_links_buffer_limit_exceeded");
  ASSERT_EQ(kill(p2_pid, SIGCONT), 0);
  EXPECT_EQ(exceeded, "1") << "after " << sent << " messages of 128 KiB";
  EXPECT_TRUE(saw_backlog);
  EXPECT_TRUE(WaitFor([&] { return LinkWith(p1, p2, "to").ctime > to_before.ctime; }, 5));
  EXPECT_EQ(LinkWith(p1, p2, "from").ctime, from_before.ctime);
  EXPECT_TRUE(Has(nodes[0].Log(), "Freeing cluster link(to node " + p2 + ", used memory: "));
  EXPECT_TRUE(Has(nodes[0].Log(), ") due to exceeding send buffer memory limit."));
  // Back to normal: the link drains and the cluster stays ok.
  EXPECT_TRUE(WaitFor([&] { return LinkWith(p1, p2, "to").used == 0; }, 10));
  EXPECT_EQ(InfoField(p1, "cluster_state"), "ok");
}

}  // namespace
}  // namespace ringkv::testing::cluster_links_e2e_test

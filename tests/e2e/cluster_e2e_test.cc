// Cluster mode against the real binary (and, where /usr/bin/redis-server
// exists, against Redis 7.0 with the same inputs): a node of one, routing
// with other nodes loaded from a nodes.conf written here, the slot index,
// nodes.conf across a restart.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/cluster_test_util.h"
#include "tests/e2e/test_server.h"

namespace ringkv::testing::cluster_e2e_test {
namespace {

const std::string kRedis = "/usr/bin/redis-server";
const std::string k1 = "1111111111111111111111111111111111111111";
const std::string k2 = "2222222222222222222222222222222222222222";
const std::string k3 = "3333333333333333333333333333333333333333";

bool HaveRedis() { return access(kRedis.c_str(), X_OK) == 0; }

std::string Bulk(const std::string& s) { return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n"; }

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Waits until the node says cluster_state:ok (Redis holds a new master in
// fail for its first two seconds; ringkv does not).
bool WaitStateOk(RawConn& c) {
  for (int i = 0; i < 200; ++i) {
    if (Cmd(c, {"CLUSTER", "INFO"}).find("cluster_state:ok") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Replies with the node's own id and ports replaced, and bulk lengths
// dropped (a port's digits may differ in number between two servers).
std::string Normalized(std::string reply, const std::string& id, int port, int cport) {
  reply = std::regex_replace(reply, std::regex(id), "<ID>");
  reply = std::regex_replace(reply, std::regex(std::to_string(cport)), "<CPORT>");
  reply = std::regex_replace(reply, std::regex(std::to_string(port)), "<PORT>");
  return std::regex_replace(reply, std::regex("([$=])[0-9]+\r\n"), "$1\r\n");
}

using Node = BusNode;

// A node whose peers never time out: the tests here compare replies, not failures.
Node StartNode(const std::string& binary, std::vector<std::string> extra = {}) {
  return StartBusNode(binary, "3600000", extra);
}

TEST(ClusterE2E, DisabledByDefault) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  EXPECT_EQ(Cmd(c, {"CLUSTER", "INFO"}), "-ERR This instance has cluster support disabled\r\n");
  EXPECT_EQ(Cmd(c, {"READONLY"}), "-ERR This instance has cluster support disabled\r\n");
  EXPECT_NE(Cmd(c, {"INFO", "cluster"}).find("cluster_enabled:0\r\n"), std::string::npos);
  EXPECT_EQ(Cmd(c, {"SELECT", "1"}), "+OK\r\n");
}

// A node of one: what it answers after ADDSLOTSRANGE 0 16383, and the same
// from redis-server 7.0 when it is installed.
// Scripts and functions flagged no-cluster are refused in cluster mode,
// before the _RO check, as Redis 7.0's scriptPrepareForRun; a script without
// a shebang (EVAL's compatible mode) ignores flags.
TEST(ClusterE2E, ScriptsFlaggedNoClusterAreRefused) {
  Node r = StartNode(RINGKV_SERVER_PATH);
  ASSERT_TRUE(r.server->ready());
  RawConn& c = *r.conn;
  EXPECT_EQ(Cmd(c, {"CLUSTER", "ADDSLOTSRANGE", "0", "16383"}), "+OK\r\n");
  ASSERT_TRUE(WaitStateOk(c));
  const std::string refused = "-ERR Can not run script on cluster, 'no-cluster' flag is set.\r\n";
  EXPECT_EQ(Cmd(c, {"EVAL", "#!lua flags=no-cluster\nreturn 1", "0"}), refused);
  EXPECT_EQ(Cmd(c, {"EVAL", "#!lua flags=no-cluster,no-writes\nreturn 1", "0"}), refused);
  EXPECT_EQ(Cmd(c, {"EVAL", "return 1", "0"}), ":1\r\n");
  EXPECT_EQ(Cmd(c, {"FUNCTION", "LOAD",
                    "#!lua name=t\nredis.register_function{function_name='f1', callback=function() return 'hello' "
                    "end, flags={'no-cluster'}}"}),
            "$1\r\nt\r\n");
  EXPECT_EQ(Cmd(c, {"FCALL", "f1", "0"}), refused);
  EXPECT_EQ(Cmd(c, {"FCALL_RO", "f1", "0"}), refused);
}

TEST(ClusterE2E, SingleNodeRepliesAsRedis) {
  Node r = StartNode(RINGKV_SERVER_PATH);
  ASSERT_TRUE(r.server->ready());
  RawConn& c = *r.conn;
  ASSERT_EQ(r.id.size(), 40u);
  EXPECT_EQ(Cmd(c, {"CLUSTER", "ADDSLOTSRANGE", "0", "16383"}), "+OK\r\n");
  ASSERT_TRUE(WaitStateOk(c));
  const std::string port = std::to_string(r.server->port()), cport = std::to_string(r.cport);
  EXPECT_EQ(Text(Cmd(c, {"CLUSTER", "NODES"})),
            r.id + " :" + port + "@" + cport + " myself,master - 0 0 0 connected 0-16383\n");
  EXPECT_EQ(Cmd(c, {"CLUSTER", "SLOTS"}),
            "*1\r\n*3\r\n:0\r\n:16383\r\n*4\r\n$0\r\n\r\n:" + port + "\r\n" + Bulk(r.id) + "*0\r\n");
  EXPECT_EQ(Text(Cmd(c, {"CLUSTER", "INFO"})),
            "cluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_slots_ok:16384\r\ncluster_slots_pfail:0\r\n"
            "cluster_slots_fail:0\r\ncluster_known_nodes:1\r\ncluster_size:1\r\ncluster_current_epoch:0\r\n"
            "cluster_my_epoch:0\r\ncluster_stats_messages_sent:0\r\ncluster_stats_messages_received:0\r\n"
            "total_cluster_links_buffer_limit_exceeded:0\r\n");
  EXPECT_EQ(Cmd(c, {"SET", "foo", "bar"}), "+OK\r\n");
  EXPECT_EQ(Cmd(c, {"CLUSTER", "KEYSLOT", "foo"}), ":12182\r\n");
  EXPECT_EQ(Cmd(c, {"CLUSTER", "COUNTKEYSINSLOT", "12182"}), ":1\r\n");
  EXPECT_EQ(Cmd(c, {"CLUSTER", "GETKEYSINSLOT", "12182", "10"}), "*1\r\n$3\r\nfoo\r\n");
  EXPECT_EQ(Cmd(c, {"MSET", "a", "1", "b", "2"}), "-CROSSSLOT Keys in request don't hash to the same slot\r\n");
  EXPECT_NE(Cmd(c, {"INFO", "cluster"}).find("cluster_enabled:1\r\n"), std::string::npos);
  EXPECT_NE(Cmd(c, {"INFO", "server"}).find("redis_mode:cluster\r\n"), std::string::npos);
  if (!HaveRedis()) GTEST_SKIP() << "no " << kRedis << ": the comparison with Redis is skipped";

  Node o = StartNode(kRedis);
  ASSERT_TRUE(o.server->ready());
  RawConn& rc = *o.conn;
  EXPECT_EQ(Cmd(rc, {"CLUSTER", "ADDSLOTSRANGE", "0", "16383"}), "+OK\r\n");
  ASSERT_TRUE(WaitStateOk(rc));
  Cmd(rc, {"SET", "foo", "bar"});
  // The same commands, in RESP2 and RESP3, byte for byte once the ids and
  // ports are masked.
  const std::vector<std::vector<std::string>> commands = {
      {"CLUSTER", "INFO"}, {"CLUSTER", "NODES"}, {"CLUSTER", "SLOTS"}, {"CLUSTER", "SHARDS"},
      {"CLUSTER", "MYID"}, {"CLUSTER", "LINKS"}, {"CLUSTER", "HELP"}, {"CLUSTER", "KEYSLOT", "{user1000}.x"},
      {"CLUSTER", "COUNTKEYSINSLOT", "12182"}, {"CLUSTER", "GETKEYSINSLOT", "12182", "5"},
      {"CLUSTER", "COUNTKEYSINSLOT", "16384"}, {"CLUSTER", "GETKEYSINSLOT", "1", "-1"},
      {"CLUSTER", "COUNTKEYSINSLOT", "x"}, {"CLUSTER", "COUNT-FAILURE-REPORTS", "abc"},
      {"CLUSTER", "ADDSLOTS", "1"}, {"CLUSTER", "ADDSLOTS", "20000"}, {"CLUSTER", "ADDSLOTSRANGE", "5", "3"},
      {"CLUSTER", "ADDSLOTSRANGE", "1", "2", "3"}, {"CLUSTER", "SETSLOT", "1", "node", "abc"},
      {"CLUSTER", "SETSLOT", "1", "foo"}, {"CLUSTER", "SETSLOT", "1", "migrating", "abc"},
      {"CLUSTER", "SETSLOT", "12182", "node", "<self>"}, {"CLUSTER", "FLUSHSLOTS"},
      {"CLUSTER", "SET-CONFIG-EPOCH", "-1"}, {"CLUSTER", "RESET", "foo"}, {"CLUSTER", "RESET"},
      {"CLUSTER", "FORGET", "<self>"}, {"CLUSTER", "BUMPEPOCH"}, {"CLUSTER", "BUMPEPOCH"},
      {"CLUSTER", "SET-CONFIG-EPOCH", "5"}, {"CLUSTER", "DELSLOTS", "7", "7"}, {"CLUSTER", "DELSLOTS", "7"},
      {"CLUSTER", "DELSLOTS", "7"}, {"CLUSTER", "DELSLOTSRANGE", "100", "200", "300", "400"},
      {"CLUSTER", "SETSLOT", "7", "importing", "<self>"}, {"CLUSTER", "SETSLOT", "8", "migrating", "<self>"},
      {"CLUSTER", "NODES"}, {"CLUSTER", "SLOTS"}, {"CLUSTER", "SHARDS"}, {"CLUSTER", "INFO"},
      {"CLUSTER", "SETSLOT", "8", "stable"}, {"CLUSTER", "ADDSLOTS", "7"}, {"CLUSTER", "NODES"},
      {"GET", "{a}7"}, {"SELECT", "1"}, {"SELECT", "0"}, {"SWAPDB", "0", "1"}, {"MOVE", "foo", "1"},
      {"REPLICAOF", "127.0.0.1", "1"}, {"READONLY"}, {"READWRITE"}, {"ASKING"}, {"CLUSTER", "REPLICAS", "<self>"},
      {"CLUSTER", "NODES"},
  };
  for (const char* resp : {"2", "3"}) {
    Cmd(c, {"HELLO", resp});
    Cmd(rc, {"HELLO", resp});
    for (std::vector<std::string> argv : commands) {
      std::vector<std::string> mine = argv, theirs = argv;
      for (size_t i = 0; i < argv.size(); ++i) {
        if (argv[i] == "<self>") {
          mine[i] = r.id;
          theirs[i] = o.id;
        }
      }
      const std::string got = Normalized(Cmd(c, mine), r.id, r.server->port(), r.cport);
      const std::string want = Normalized(Cmd(rc, theirs), o.id, o.server->port(), o.cport);
      EXPECT_EQ(got, want) << "RESP" << resp << ": " << argv[0] << " " << (argv.size() > 1 ? argv[1] : "") << " "
                           << (argv.size() > 2 ? argv[2] : "");
    }
  }
}

// Redis 7.0 keeps cluster mode to database 0: COPY ... DB n (n != 0),
// SELECT n, MOVE and SWAPDB are refused. The expected replies are
// redis-server 7.0.15's (--cluster-enabled yes, all slots added), and are
// compared with it again when it is installed.
TEST(ClusterE2E, OtherDatabasesAreRefusedAsRedis) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> steps = {
      {{"SET", "{a}1", "1"}, "+OK\r\n"},
      {{"COPY", "{a}1", "{a}2", "DB", "1"}, "-ERR Copying to another database is not allowed in cluster mode\r\n"},
      {{"COPY", "{a}1", "{a}2", "DB", "1", "REPLACE"},
       "-ERR Copying to another database is not allowed in cluster mode\r\n"},
      {{"COPY", "{a}nokey", "{a}2", "DB", "1"}, "-ERR Copying to another database is not allowed in cluster mode\r\n"},
      // Checked before the same-key check, after every option is parsed.
      {{"COPY", "{a}1", "{a}1", "DB", "1"}, "-ERR Copying to another database is not allowed in cluster mode\r\n"},
      {{"COPY", "{a}1", "{a}2", "DB", "0", "DB", "1"},
       "-ERR Copying to another database is not allowed in cluster mode\r\n"},
      {{"COPY", "{a}1", "{a}2", "DB", "1", "FOO"}, "-ERR syntax error\r\n"},
      {{"COPY", "{a}1", "{a}2", "DB", "16"}, "-ERR DB index is out of range\r\n"},
      {{"COPY", "{a}1", "{a}2", "DB", "-1"}, "-ERR DB index is out of range\r\n"},
      {{"COPY", "{a}1", "{a}2", "DB", "x"}, "-ERR value is not an integer or out of range\r\n"},
      {{"COPY", "{a}1", "{a}2", "DB"}, "-ERR syntax error\r\n"},
      // DB 0 is this database: allowed.
      {{"COPY", "{a}1", "{a}2", "DB", "0"}, ":1\r\n"},
      {{"COPY", "{a}1", "{a}2", "DB", "0"}, ":0\r\n"},
      {{"COPY", "{a}1", "{a}2", "REPLACE", "DB", "0"}, ":1\r\n"},
      {{"COPY", "{a}1", "{a}3", "DB", "1", "DB", "0"}, ":1\r\n"},
      {{"COPY", "{a}1", "{a}1", "DB", "0"}, "-ERR source and destination objects are the same\r\n"},
      {{"COPY", "{a}1", "{a}1"}, "-ERR source and destination objects are the same\r\n"},
      {{"COPY", "a", "b", "DB", "1"}, "-CROSSSLOT Keys in request don't hash to the same slot\r\n"},
      {{"SELECT", "0"}, "+OK\r\n"},
      {{"SELECT", "1"}, "-ERR SELECT is not allowed in cluster mode\r\n"},
      {{"SELECT", "-1"}, "-ERR SELECT is not allowed in cluster mode\r\n"},
      {{"SELECT", "16"}, "-ERR SELECT is not allowed in cluster mode\r\n"},
      {{"SELECT", "x"}, "-ERR value is not an integer or out of range\r\n"},
      {{"MOVE", "{a}1", "0"}, "-ERR MOVE is not allowed in cluster mode\r\n"},
      {{"MOVE", "{a}1", "1"}, "-ERR MOVE is not allowed in cluster mode\r\n"},
      {{"MOVE", "{a}1", "x"}, "-ERR MOVE is not allowed in cluster mode\r\n"},
      {{"SWAPDB", "0", "0"}, "-ERR SWAPDB is not allowed in cluster mode\r\n"},
      {{"SWAPDB", "0", "1"}, "-ERR SWAPDB is not allowed in cluster mode\r\n"},
      {{"SWAPDB", "x", "1"}, "-ERR SWAPDB is not allowed in cluster mode\r\n"},
      {{"DBSIZE"}, ":3\r\n"},
  };
  std::vector<std::string> binaries = {RINGKV_SERVER_PATH};
  if (HaveRedis()) binaries.push_back(kRedis);
  for (const std::string& binary : binaries) {
    Node n = StartNode(binary);
    ASSERT_TRUE(n.server->ready()) << binary;
    RawConn& c = *n.conn;
    ASSERT_EQ(Cmd(c, {"CLUSTER", "ADDSLOTSRANGE", "0", "16383"}), "+OK\r\n");
    ASSERT_TRUE(WaitStateOk(c)) << binary;
    for (const auto& [argv, want] : steps) {
      std::string line;
      for (const std::string& a : argv) line += a + " ";
      EXPECT_EQ(Cmd(c, argv), want) << binary << ": " << line;
    }
  }
}

// Other nodes loaded from a nodes.conf, as Redis loads them: MOVED, ASK,
// TRYAGAIN, CROSSSLOT, CLUSTERDOWN, ASKING, MULTI/EXEC and scripts -- every
// reply compared with redis-server's when it is installed.
std::string ThreeNodes(int my_port, bool myself_replica) {
  if (myself_replica) {
    return k1 + " 127.0.0.1:" + std::to_string(my_port) + "@" + std::to_string(my_port + 10000) + " myself,slave " + k2 +
           " 0 0 2 connected\n" + k2 + " 127.0.0.1:17099@27099 master - 0 0 2 connected 0-16383\n" + k3 +
           " 127.0.0.1:17098@27098 master - 0 0 3 connected\nvars currentEpoch 3 lastVoteEpoch 0\n";
  }
  return k1 + " 127.0.0.1:" + std::to_string(my_port) + "@" + std::to_string(my_port + 10000) +
         " myself,master - 0 0 1 connected 0-8191\n" + k2 +
         " 127.0.0.1:17099@27099 master - 0 0 2 connected 8192-16383\n" + k3 + " 127.0.0.1:17098@27098 slave " + k2 +
         " 0 0 2 connected\nvars currentEpoch 2 lastVoteEpoch 0\n";
}

struct Loaded {
  ScopedTempDir dir_owner;  // before the server: removed after it stops
  std::string dir;
  int cport = 0;
  std::unique_ptr<TestServer> server;
  std::unique_ptr<RawConn> conn;
};

// A server of `binary` whose nodes.conf is written before it starts.
Loaded StartLoaded(const std::string& binary, bool myself_replica) {
  Loaded l;
  l.dir = l.dir_owner.path();
  // Myself's ports in the file are replaced by the server's own at start,
  // as Redis does.
  WriteFile(l.dir + "/nodes.conf", ThreeNodes(7000, myself_replica));
  l.cport = FreePort();
  l.server = std::make_unique<TestServer>(
      std::vector<std::string>{"--dir", l.dir, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                               "--cluster-node-timeout", "3600000", "--cluster-port", std::to_string(l.cport)},
      binary);
  if (l.server->ready()) l.conn = std::make_unique<RawConn>(l.server->port());
  return l;
}

// Each step's command and what ringkv must answer ("" = whatever, as long
// as Redis answers the same).
struct Step {
  std::vector<std::string> argv;
  std::string want;
  bool compare = true;  // with redis-server's reply
};

// What may differ from Redis's reply without being a difference: the
// order of node lines (Redis's hash table), the times of its failed pings
// to the fake nodes and the state of the links to them, its counts of bus
// messages queued to them, bulk lengths.
std::string Comparable(const std::string& reply, int port, int cport) {
  std::string s = std::regex_replace(reply, std::regex(":" + std::to_string(port) + "@" + std::to_string(cport)), ":<P>@<CP>");
  s = std::regex_replace(s, std::regex("cluster_stats_messages_[a-z_]*:[0-9]+\r\n"), "");
  s = std::regex_replace(s, std::regex("([0-9a-f]{40} [^ ]+ [^ ]+ [^ ]+) [0-9]+ [0-9]+ "), "$1 T T ");
  // The link to a fake node: nothing listens there, so each server shows it
  // connected while a connect is under way and disconnected between a
  // refusal and the next try (Redis's clusterCron, every 100 ms).
  s = std::regex_replace(s, std::regex("( T T [0-9]+) (dis)?connected"), "$1 <link>");
  s = std::regex_replace(s, std::regex("([$=])[0-9]+\r\n"), "$1\r\n");
  if (std::regex_search(s, std::regex("^[$=]\r\n(txt:)?[0-9a-f]{40} "))) {
    const size_t body = s.find("\r\n") + 2;
    std::vector<std::string> lines;
    std::stringstream ss(s.substr(body));
    for (std::string line; std::getline(ss, line);) lines.push_back(line);
    std::sort(lines.begin(), lines.end());
    std::string sorted = s.substr(0, body);
    for (const std::string& l : lines) sorted += l + "\n";
    s = sorted;
  }
  return s;
}

const std::vector<Step> kRoutingSteps = {
    {{"GET", "foo"}, "-MOVED 12182 127.0.0.1:17099\r\n"},
    {{"GET", "b"}, "$-1\r\n"},
    {{"MSET", "a", "1", "b", "2"}, "-CROSSSLOT Keys in request don't hash to the same slot\r\n"},
    {{"SET", "{b}x", "1"}, "+OK\r\n"},
    {{"CLUSTER", "SETSLOT", "3300", "MIGRATING", k2}, "+OK\r\n"},
    {{"GET", "{b}x"}, "$1\r\n1\r\n"},
    {{"GET", "{b}y"}, "-ASK 3300 127.0.0.1:17099\r\n"},
    {{"MGET", "{b}x", "{b}y"}, "-TRYAGAIN Multiple keys request during rehashing of slot\r\n"},
    {{"MGET", "{b}y", "{b}z"}, "-ASK 3300 127.0.0.1:17099\r\n"},
    {{"CLUSTER", "SETSLOT", "3300", "NODE", k2}, "-ERR Can't assign hashslot 3300 to a different node while I still hold keys for this hash slot.\r\n"},
    {{"CLUSTER", "SETSLOT", "11298", "IMPORTING", k2}, "+OK\r\n"},
    {{"GET", "d"}, "-MOVED 11298 127.0.0.1:17099\r\n"},
    {{"ASKING"}, "+OK\r\n"},
    {{"GET", "d"}, "$-1\r\n"},
    {{"GET", "d"}, "-MOVED 11298 127.0.0.1:17099\r\n"},
    {{"ASKING"}, "+OK\r\n"},
    {{"MGET", "{d}1", "{d}2"}, "-TRYAGAIN Multiple keys request during rehashing of slot\r\n"},
    {{"ASKING"}, "+OK\r\n"},
    {{"SET", "{d}1", "x"}, "+OK\r\n"},
    {{"CLUSTER", "COUNTKEYSINSLOT", "11298"}, ":1\r\n"},
    {{"CLUSTER", "SETSLOT", "11298", "NODE", k1}, "+OK\r\n"},
    {{"GET", "{d}1"}, "$1\r\nx\r\n"},
    {{"CLUSTER", "INFO"}, ""},
    {{"CLUSTER", "NODES"}, ""},
    {{"MULTI"}, "+OK\r\n"},
    {{"GET", "c"}, "+QUEUED\r\n"},
    {{"GET", "a"}, "-MOVED 15495 127.0.0.1:17099\r\n"},
    {{"EXEC"}, "-EXECABORT Transaction discarded because of previous errors.\r\n"},
    {{"MULTI"}, "+OK\r\n"},
    {{"GET", "c"}, "+QUEUED\r\n"},
    {{"GET", "f"}, "+QUEUED\r\n"},
    {{"EXEC"}, "-CROSSSLOT Keys in request don't hash to the same slot\r\n"},
    {{"EXEC"}, "-ERR EXEC without MULTI\r\n"},
    {{"EVAL", "return 1", "2", "c", "f"}, "-CROSSSLOT Keys in request don't hash to the same slot\r\n"},
    {{"EVAL", "return 1", "1", "a"}, "-MOVED 15495 127.0.0.1:17099\r\n"},
    {{"EVAL", "return 1", "1", "c"}, ":1\r\n"},
    {{"EVAL", "return redis.call('get','a')", "0"}, ""},
    {{"EVAL", "return redis.call('mget','c','f')", "0"}, ""},
    {{"EVAL", "redis.call('get','c') return redis.call('get','f')", "0"}, "$-1\r\n"},  // 7.0: no slot check
    {{"EVAL", "return redis.call('get','c')", "1", "f"}, "$-1\r\n"},
    {{"EVAL", "return redis.call('get','c')", "0"}, "$-1\r\n"},
    // A script with a shebang, or a function, keeps to one slot (the
    // declared keys' or its first call's) unless allow-cross-slot-keys.
    {{"EVAL", "#!lua\nredis.call('get','c') return redis.call('get','f')", "0"}, ""},
    {{"EVAL", "#!lua\nreturn redis.call('get','c')", "1", "f"}, ""},
    {{"EVAL", "#!lua flags=allow-cross-slot-keys\nredis.call('get','c') return redis.call('get','f')", "0"},
     "$-1\r\n"},
    {{"EVAL", "#!lua\nredis.call('get','c') return redis.call('get','c')", "0"}, "$-1\r\n"},
    {{"CLUSTER", "SETSLOT", "1", "MIGRATING", k3}, "-ERR Target node is not a master\r\n"},
    {{"CLUSTER", "DELSLOTS", "1584"}, "+OK\r\n"},
    {{"GET", "3"}, "-CLUSTERDOWN Hash slot not served\r\n"},
    {{"GET", "c"}, "-CLUSTERDOWN The cluster is down\r\n"},
    {{"CONFIG", "SET", "cluster-allow-reads-when-down", "yes"}, "+OK\r\n"},
    {{"GET", "c"}, "$-1\r\n"},
    {{"SET", "c", "1"}, "-CLUSTERDOWN The cluster is down and only accepts read commands\r\n"},
    {{"CONFIG", "SET", "cluster-require-full-coverage", "no"}, "+OK\r\n"},
    {{"<sleep>"}, ""},  // Redis's cron (every 100 ms) notices the new coverage rule
    {{"GET", "3"}, "-CLUSTERDOWN Hash slot not served\r\n"},
    {{"SET", "c", "1"}, "+OK\r\n"},
    {{"PING"}, "+PONG\r\n"},
    {{"CLUSTER", "INFO"}, ""},
    {{"CLUSTER", "FORGET", k2}, "+OK\r\n"},
    {{"CLUSTER", "NODES"}, ""},
    {{"CLUSTER", "SHARDS"}, "", false},  // Redis lists shards in its hash table's order
};

const std::vector<Step> kReplicaSteps = {
    {{"GET", "foo"}, "-MOVED 12182 127.0.0.1:17099\r\n"},
    {{"READONLY"}, "+OK\r\n"},
    {{"GET", "foo"}, "$-1\r\n"},
    {{"SET", "foo", "1"}, "-MOVED 12182 127.0.0.1:17099\r\n"},
    {{"READWRITE"}, "+OK\r\n"},
    {{"GET", "foo"}, "-MOVED 12182 127.0.0.1:17099\r\n"},
    {{"CLUSTER", "SETSLOT", "1", "STABLE"}, "-ERR Please use SETSLOT only with masters.\r\n"},
    {{"CLUSTER", "FORGET", k2}, "-ERR Can't forget my master!\r\n"},
    {{"CLUSTER", "REPLICAS", k1}, "-ERR The specified node is not a master\r\n"},
};

void RunSteps(const std::vector<Step>& steps, bool myself_replica) {
  Loaded r = StartLoaded(RINGKV_SERVER_PATH, myself_replica);
  ASSERT_TRUE(r.server->ready());
  std::optional<Loaded> o;  // redis-server's, when installed
  if (HaveRedis()) {
    o.emplace(StartLoaded(kRedis, myself_replica));
    ASSERT_TRUE(o->server->ready());
    ASSERT_TRUE(WaitStateOk(*o->conn));
  }
  ASSERT_TRUE(WaitStateOk(*r.conn));
  for (const Step& step : steps) {
    if (step.argv[0] == "<sleep>") {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      continue;
    }
    const std::string got = Cmd(*r.conn, step.argv);
    if (!step.want.empty()) {
      EXPECT_EQ(got, step.want) << step.argv[0] << " " << (step.argv.size() > 1 ? step.argv[1] : "");
    }
    if (o && o->conn) {
      const std::string want = Cmd(*o->conn, step.argv);
      if (step.compare) {
        EXPECT_EQ(Comparable(got, r.server->port(), r.cport), Comparable(want, o->server->port(), o->cport))
            << "vs redis-server: " << step.argv[0] << " " << (step.argv.size() > 1 ? step.argv[1] : "");
      }
    }
  }
}

TEST(ClusterE2E, RoutingWithNodesLoadedFromTheConfigFile) { RunSteps(kRoutingSteps, false); }

TEST(ClusterE2E, ReplicaServesReadsToReadonlyConnections) { RunSteps(kReplicaSteps, true); }

TEST(ClusterE2E, SlotIndexFollowsTheKeyspace) {
  Node r = StartNode(RINGKV_SERVER_PATH, {"--enable-debug-command", "yes"});
  ASSERT_TRUE(r.server->ready());
  RawConn& c = *r.conn;
  ASSERT_EQ(Cmd(c, {"CLUSTER", "ADDSLOTSRANGE", "0", "16383"}), "+OK\r\n");
  ASSERT_TRUE(WaitStateOk(c));  // a master turns ok 2 s after its start, as Redis
  EXPECT_EQ(Cmd(c, {"CLUSTER", "KEYSLOT", "{t}x"}), Cmd(c, {"CLUSTER", "KEYSLOT", "t"}));
  const std::string t = "15891";  // the slot of "t"
  EXPECT_EQ(Cmd(c, {"CLUSTER", "KEYSLOT", "t"}), ":" + t + "\r\n");
  for (int i = 0; i < 100; ++i) ASSERT_EQ(Cmd(c, {"SET", "{t}" + std::to_string(i), "v"}), "+OK\r\n");
  EXPECT_EQ(Cmd(c, {"CLUSTER", "COUNTKEYSINSLOT", t}), ":100\r\n");
  EXPECT_EQ(Cmd(c, {"DEL", "{t}1", "{t}2"}), ":2\r\n");
  EXPECT_EQ(Cmd(c, {"RENAME", "{t}3", "{t}three"}), "+OK\r\n");
  EXPECT_EQ(Cmd(c, {"CLUSTER", "COUNTKEYSINSLOT", t}), ":98\r\n");
  EXPECT_EQ(Cmd(c, {"PEXPIRE", "{t}4", "1"}), ":1\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(Cmd(c, {"GET", "{t}4"}), "$-1\r\n");
  EXPECT_EQ(Cmd(c, {"CLUSTER", "COUNTKEYSINSLOT", t}), ":97\r\n");
  const std::string keys = Cmd(c, {"CLUSTER", "GETKEYSINSLOT", t, "1000"});
  EXPECT_EQ(keys.substr(0, 5), "*97\r\n");
  EXPECT_NE(keys.find("{t}three"), std::string::npos);
  EXPECT_EQ(Cmd(c, {"CLUSTER", "GETKEYSINSLOT", t, "3"}).substr(0, 4), "*3\r\n");
  EXPECT_EQ(Cmd(c, {"DEBUG", "RELOAD"}), "+OK\r\n");
  EXPECT_EQ(Cmd(c, {"CLUSTER", "COUNTKEYSINSLOT", t}), ":97\r\n");
  EXPECT_EQ(Cmd(c, {"FLUSHALL"}), "+OK\r\n");
  EXPECT_EQ(Cmd(c, {"CLUSTER", "COUNTKEYSINSLOT", t}), ":0\r\n");
  EXPECT_EQ(Cmd(c, {"CLUSTER", "GETKEYSINSLOT", t, "10"}), "*0\r\n");
}

TEST(ClusterE2E, NodesConfSurvivesARestart) {
  const ScopedTempDir scoped_dir;
  const std::string& dir = scoped_dir.path();
  std::string id, nodes;
  const int cport = FreePort();
  const std::vector<std::string> args = {"--dir", dir, "--cluster-enabled", "yes", "--cluster-port",
                                         std::to_string(cport), "--cluster-announce-hostname", "node-a"};
  {
    TestServer s(args);
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    id = Text(Cmd(c, {"CLUSTER", "MYID"}));
    ASSERT_EQ(Cmd(c, {"CLUSTER", "ADDSLOTSRANGE", "0", "100", "200", "300"}), "+OK\r\n");
    ASSERT_EQ(Cmd(c, {"CLUSTER", "SET-CONFIG-EPOCH", "7"}), "+OK\r\n");
    ASSERT_EQ(Cmd(c, {"CLUSTER", "SETSLOT", "50", "MIGRATING", id}), "+OK\r\n");
    nodes = Text(Cmd(c, {"CLUSTER", "NODES"}));
    EXPECT_EQ(nodes, id + " :" + std::to_string(s.port()) + "@" + std::to_string(cport) +
                         ",node-a myself,master - 0 0 7 connected 0-100 200-300 [50->-" + id + "]\n");
    // On disk at once, in Redis's format.
    EXPECT_EQ(ReadFile(dir + "/nodes.conf"), nodes + "vars currentEpoch 7 lastVoteEpoch 0\n");
  }
  // Restarted on another port: same node, same slots.
  TestServer s(args);
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  EXPECT_EQ(Text(Cmd(c, {"CLUSTER", "MYID"})), id);
  EXPECT_EQ(Text(Cmd(c, {"CLUSTER", "NODES"})),
            id + " :" + std::to_string(s.port()) + "@" + std::to_string(cport) +
                ",node-a myself,master - 0 0 7 connected 0-100 200-300 [50->-" + id + "]\n");
  EXPECT_NE(Cmd(c, {"CLUSTER", "INFO"}).find("cluster_current_epoch:7\r\n"), std::string::npos);
  // The process title's {server-mode} says so, as Redis's does.
  const std::string info = Cmd(c, {"INFO", "server"});
  const size_t at = info.find("process_id:");
  ASSERT_NE(at, std::string::npos);
  const std::string pid = info.substr(at + 11, info.find("\r\n", at) - at - 11);
  std::string cmdline = ReadFile("/proc/" + pid + "/cmdline");
  cmdline.erase(cmdline.find_last_not_of('\0') + 1);
  EXPECT_TRUE(cmdline.ends_with(":" + std::to_string(s.port()) + " [cluster]")) << cmdline;
  EXPECT_EQ(Cmd(c, {"CLUSTER", "RESET", "HARD"}), "+OK\r\n");
  const std::string new_id = Text(Cmd(c, {"CLUSTER", "MYID"}));
  EXPECT_NE(new_id, id);
  EXPECT_EQ(ReadFile(dir + "/nodes.conf"), new_id + " :" + std::to_string(s.port()) + "@" + std::to_string(cport) +
                                               ",node-a myself,master - 0 0 0 connected\n"
                                               "vars currentEpoch 0 lastVoteEpoch 0\n");
}

// Every node its own nodes.conf: while one runs, a second server started on
// the same file refuses to start, as Redis's clusterLockConfig makes it; the
// lock follows the file across saves (ringkv replaces it by rename), and
// goes with the node.
TEST(ClusterE2E, NodesConfIsLockedWhileTheNodeRuns) {
  const ScopedTempDir scoped_dir;
  const std::string& dir = scoped_dir.path();
  const std::string refused =
      "# Sorry, the cluster configuration file nodes.conf is already used by a different Redis Cluster node. "
      "Please make sure that different nodes use different cluster configuration files.\n";
  auto args = [&](const std::string& log) {
    // One pidfile for all, as two nodes started from one config file: the
    // refused node must leave it to the node that holds the lock.
    return std::vector<std::string>{"--dir", dir, "--cluster-enabled", "yes", "--cluster-port",
                                    std::to_string(FreePort()), "--logfile", log, "--pidfile", dir + "/node.pid"};
  };
  auto first = std::make_unique<TestServer>(args("first.log"));
  ASSERT_TRUE(first->ready());
  std::string first_pid;
  {
    RawConn c(first->port());
    const std::string info = Cmd(c, {"INFO", "server"});
    const size_t at = info.find("process_id:");
    ASSERT_NE(at, std::string::npos);
    first_pid = info.substr(at + 11, info.find('\r', at) - at - 11);
    EXPECT_EQ(ReadFile(dir + "/node.pid"), first_pid + "\n");
    EXPECT_NE(ReadFile(dir + "/first.log").find("Running mode=cluster, port="), std::string::npos);
    // Saves: the file the lock was taken on is replaced twice.
    ASSERT_EQ(Cmd(c, {"CLUSTER", "ADDSLOTSRANGE", "0", "16383"}), "+OK\r\n");
    ASSERT_EQ(Cmd(c, {"CLUSTER", "SAVECONFIG"}), "+OK\r\n");
    // A fork child (BGSAVE, kept busy) must not hold the lock after the
    // node is gone.
    ASSERT_TRUE(WaitStateOk(c));
    ASSERT_EQ(Cmd(c, {"MSET", "{a}1", "1", "{a}2", "2", "{a}3", "3"}), "+OK\r\n");
    ASSERT_EQ(Cmd(c, {"CONFIG", "SET", "rdb-key-save-delay", "1000000"}), "+OK\r\n");
    ASSERT_EQ(Cmd(c, {"BGSAVE"}), "+Background saving started\r\n");
  }
  const std::string conf = ReadFile(dir + "/nodes.conf");
  {
    TestServer second(args("second.log"));
    EXPECT_FALSE(second.ready());
    const int status = second.Stop();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
    EXPECT_NE(ReadFile(dir + "/second.log").find(refused), std::string::npos) << ReadFile(dir + "/second.log");
  }
  if (HaveRedis()) {  // redis-server honours ringkv's lock, and says the same
    TestServer redis({"--dir", dir, "--cluster-enabled", "yes", "--logfile", "redis.log"}, kRedis);
    EXPECT_FALSE(redis.ready());
    const int status = redis.Stop();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
    EXPECT_NE(ReadFile(dir + "/redis.log").find(refused), std::string::npos) << ReadFile(dir + "/redis.log");
  }
  EXPECT_EQ(ReadFile(dir + "/nodes.conf"), conf);  // the refused starts did not touch it
  EXPECT_EQ(ReadFile(dir + "/node.pid"), first_pid + "\n");  // nor the pidfile
  first->Kill();  // even a kill -9 leaves nothing holding the lock
  first.reset();
  TestServer third(args("third.log"));
  ASSERT_TRUE(third.ready());
  RawConn c(third.port());
  EXPECT_NE(Cmd(c, {"CLUSTER", "INFO"}).find("cluster_slots_assigned:16384\r\n"), std::string::npos);
}

TEST(ClusterE2E, CorruptNodesConfStopsTheStart) {
  const ScopedTempDir scoped_dir;
  const std::string& dir = scoped_dir.path();
  WriteFile(dir + "/nodes.conf", "this is not a nodes.conf\n");
  TestServer s({"--dir", dir, "--cluster-enabled", "yes"});
  EXPECT_FALSE(s.ready());
}

}  // namespace
}  // namespace ringkv::testing::cluster_e2e_test

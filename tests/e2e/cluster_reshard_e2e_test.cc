// Resharding and rebalancing under a write load, with Redis's own tool:
// `redis-cli --cluster reshard ... --cluster-yes` and `redis-cli --cluster
// rebalance` move slots (MIGRATE with RESTORE-ASKING, SETSLOT IMPORTING /
// MIGRATING / NODE) while a client keeps INCRementing counters over many
// keys, following MOVED, ASK (ASKING) and TRYAGAIN as a cluster client does.
// Afterwards every acknowledged INCR is counted in its key, `redis-cli
// --cluster check` is clean and every slot is served by exactly one node,
// the same on every node. Run on a cluster of ringkv masters and on one of
// a ringkv master with two redis-server 7.0 masters (slots moved both ways).
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/key_slot.h"
#include "tests/e2e/cluster_test_util.h"
#include "tests/e2e/test_server.h"

namespace ringkv::testing::cluster_reshard_e2e_test {
namespace {

constexpr int kKeys = 2000;
constexpr int kSlots = 16384;

// Runs a shell command; returns its stdout and stderr.
std::string Shell(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen((cmd + " 2>&1").c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
    pclose(p);
  }
  return out;
}

// A minimal cluster client: a slot -> port map learnt from MOVED, one
// connection per node, ASK followed with ASKING, TRYAGAIN and CLUSTERDOWN
// retried. Used by one thread at a time.
class ClusterClient {
 public:
  explicit ClusterClient(int first_port) { slot_port_.fill(first_port); }

  // Sends `argv` (whose key is argv[1]) until it gets a reply that is not a
  // redirect; returns that reply ("<eof>" on a lost connection).
  std::string Run(const std::vector<std::string>& argv) {
    const int slot = core::KeyHashSlot(argv[1]);
    int port = slot_port_[slot];
    bool asking = false;
    for (int attempt = 0; attempt < 1000; ++attempt) {
      RawConn& c = Conn(port);
      std::string reply;
      if (asking) {
        c.Send(Resp({"ASKING"}) + Resp(argv));
        const std::string ok = c.ReadReply();
        reply = ok == "+OK\r\n" ? c.ReadReply() : ok;
        asking = false;
      } else {
        c.Send(Resp(argv));
        reply = c.ReadReply();
      }
      if (reply.rfind("-MOVED ", 0) == 0) {
        ++moved;
        port = slot_port_[slot] = PortOf(reply);
      } else if (reply.rfind("-ASK ", 0) == 0) {
        ++asked;
        port = PortOf(reply);
        asking = true;
      } else if (reply.rfind("-TRYAGAIN", 0) == 0 || reply.rfind("-CLUSTERDOWN", 0) == 0) {
        ++retried;
        port = slot_port_[slot];
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      } else {
        return reply;
      }
    }
    return "-gave up";
  }

  int moved = 0, asked = 0, retried = 0;

 private:
  static int PortOf(const std::string& redirect) {
    const size_t colon = redirect.rfind(':');
    return std::atoi(redirect.c_str() + colon + 1);
  }
  RawConn& Conn(int port) {
    auto& c = conns_[port];
    if (c == nullptr) c = std::make_unique<RawConn>(port);
    return *c;
  }
  std::array<int, kSlots> slot_port_{};
  std::map<int, std::unique_ptr<RawConn>> conns_;
};

// INCRs key i ("counter:i") round the keys on a thread of its own; counts
// the acknowledged INCRs of each key.
class CounterLoad {
 public:
  explicit CounterLoad(int first_port) : client_(first_port), acked_(kKeys, 0) {
    thread_ = std::thread([this] {
      for (int i = 0; !stop_.load(); i = (i + 1) % kKeys) {
        const std::string reply = client_.Run({"INCR", Key(i)});
        if (reply.size() > 1 && reply[0] == ':') {
          ++acked_[i];
        } else {
          errors_.push_back(reply);
        }
        ++ops_;
      }
    });
  }
  ~CounterLoad() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  static std::string Key(int i) { return "counter:" + std::to_string(i); }
  int ops() const { return ops_.load(); }
  // After Stop():
  const std::vector<int64_t>& acked() const { return acked_; }
  const std::vector<std::string>& errors() const { return errors_; }
  const ClusterClient& client() const { return client_; }

 private:
  ClusterClient client_;
  std::vector<int64_t> acked_;
  std::vector<std::string> errors_;
  std::atomic<bool> stop_{false};
  std::atomic<int> ops_{0};
  std::thread thread_;
};

// Masters of the given binaries, node i serving ranges[i]; node 0 MEETs
// the others. Empty when a start failed or the cluster never became ok.
std::vector<BusNode> StartMasters(const std::vector<std::string>& binaries,
                                  const std::vector<std::pair<int, int>>& ranges) {
  std::vector<BusNode> nodes;
  for (const std::string& binary : binaries) {
    nodes.push_back(StartBusNode(binary, "5000"));
    if (!nodes.back().server->ready()) return {};
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    Cmd(*nodes[i].conn, {"CLUSTER", "ADDSLOTSRANGE", std::to_string(ranges[i].first), std::to_string(ranges[i].second)});
    if (i > 0) {
      Cmd(*nodes[0].conn, {"CLUSTER", "MEET", "127.0.0.1", std::to_string(nodes[i].port()),
                           std::to_string(nodes[i].cport)});
    }
  }
  const std::string known = "cluster_known_nodes:" + std::to_string(nodes.size()) + "\r\n";
  for (BusNode& n : nodes) {
    const bool ok = WaitFor(
        [&] {
          const std::string info = Text(Cmd(*n.conn, {"CLUSTER", "INFO"}));
          return Has(info, "cluster_state:ok\r\n") && Has(info, known);
        },
        30);
    if (!ok) return {};
  }
  return nodes;
}

// The owner of each slot in `conn`'s CLUSTER NODES; a slot listed twice
// makes its owner "twice".
std::vector<std::string> SlotOwners(RawConn& conn) {
  std::vector<std::string> owner(kSlots);
  std::istringstream lines(Text(Cmd(conn, {"CLUSTER", "NODES"})));
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    for (size_t i = 8; i < f.size(); ++i) {
      if (f[i][0] == '[') continue;  // an open slot
      const size_t dash = f[i].find('-');
      const int lo = std::stoi(f[i]);
      const int hi = dash == std::string::npos ? lo : std::stoi(f[i].substr(dash + 1));
      for (int s = lo; s <= hi; ++s) owner[s] = owner[s].empty() ? f[0] : "twice";
    }
  }
  return owner;
}

int SlotCount(RawConn& conn, const std::string& id) {
  int n = 0;
  for (const std::string& o : SlotOwners(conn)) n += o == id;
  return n;
}

std::string Addr(const BusNode& n) { return "127.0.0.1:" + std::to_string(n.port()); }

// `redis-cli --cluster check` has nothing to say.
// The nodes a reshard did not talk to learn the new owners by gossip, so
// agreement is waited for (as Redis's suite waits for propagation) before
// the check's report is asserted on.
void ExpectCheckClean(const BusNode& n) {
  std::string out;
  WaitFor(
      [&] {
        out = Shell("redis-cli --cluster check " + Addr(n));
        return Has(out, "[OK] All nodes agree about slots configuration.");
      },
      10);
  EXPECT_TRUE(Has(out, "[OK] All nodes agree about slots configuration.")) << out;
  EXPECT_TRUE(Has(out, "[OK] All 16384 slots covered.")) << out;
  EXPECT_FALSE(Has(out, "[WARNING]")) << out;
  EXPECT_FALSE(Has(out, "[ERR]")) << out;
}

// Every node's CLUSTER NODES, and the end of each ringkv node's log (the
// epoch and slot decisions it logged), for a failure's message.
std::string AllViews(std::vector<BusNode>& nodes) {
  std::string out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    out += "node " + std::to_string(i) + " (" + nodes[i].id + ") sees:\n" + Text(Cmd(*nodes[i].conn, {"CLUSTER", "NODES"}));
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string log = nodes[i].Log();  // redis-server nodes have none
    if (log.empty()) continue;
    size_t from = log.size();
    for (int lines = 0; lines < 80 && from > 0; ++lines) {
      const size_t newline = log.rfind('\n', from - 1);
      from = newline == std::string::npos ? 0 : newline;
    }
    out += "node " + std::to_string(i) + "'s log, last lines:" + log.substr(from) + "\n";
  }
  return out;
}

// Every node lists the same single owner, one of the masters, for every slot.
void ExpectEverySlotCoveredOnce(std::vector<BusNode>& nodes) {
  const std::vector<std::string> first = SlotOwners(*nodes[0].conn);
  for (int s = 0; s < kSlots; ++s) {
    bool known = false;
    for (const BusNode& n : nodes) known = known || first[s] == n.id;
    ASSERT_TRUE(known) << "slot " << s << " owner '" << first[s] << "'\n" << AllViews(nodes);
  }
  for (size_t i = 1; i < nodes.size(); ++i) {
    ASSERT_TRUE(WaitFor([&] { return SlotOwners(*nodes[i].conn) == first; }, 10))
        << "node " << i << " disagrees\n" << AllViews(nodes);
  }
  // CLUSTER SLOTS lists the ranges in slot order, so every node answers
  // alike (Redis's test suite compares them to see the cluster settled).
  const std::string slots = Cmd(*nodes[0].conn, {"CLUSTER", "SLOTS"});
  for (size_t i = 1; i < nodes.size(); ++i) EXPECT_EQ(Cmd(*nodes[i].conn, {"CLUSTER", "SLOTS"}), slots) << i;
}

// Every key holds its acknowledged INCRs, and the nodes hold no other key.
void ExpectEveryAckedWrite(const CounterLoad& load, std::vector<BusNode>& nodes) {
  ASSERT_TRUE(load.errors().empty()) << load.errors().size() << " errors, first: " << load.errors()[0];
  ClusterClient reader(nodes[0].port());
  int64_t keys = 0;
  for (int i = 0; i < kKeys; ++i) {
    if (load.acked()[i] == 0) continue;
    ++keys;
    ASSERT_EQ(Text(reader.Run({"GET", CounterLoad::Key(i)})), std::to_string(load.acked()[i])) << CounterLoad::Key(i);
  }
  int64_t total = 0;
  for (BusNode& n : nodes) total += std::atoll(Cmd(*n.conn, {"DBSIZE"}).c_str() + 1);
  EXPECT_EQ(total, keys);
}

// Waits until the load has run `ops` more operations.
void LetLoadRun(const CounterLoad& load, int ops) {
  const int until = load.ops() + ops;
  WaitFor([&] { return load.ops() >= until; }, 20);
}

// Reshard `slots` slots from node `from` to node `to`, then rebalance, under
// the load; then the checks.
void ReshardAndRebalance(std::vector<BusNode>& nodes, int from, int to, int slots) {
  CounterLoad load(nodes[0].port());
  LetLoadRun(load, 3000);  // every key written once at least

  const int to_before = SlotCount(*nodes[0].conn, nodes[to].id);
  const std::string reshard = Shell("redis-cli --cluster reshard " + Addr(nodes[0]) + " --cluster-from " +
                                    nodes[from].id + " --cluster-to " + nodes[to].id + " --cluster-slots " +
                                    std::to_string(slots) + " --cluster-yes");
  EXPECT_FALSE(Has(reshard, "ERR")) << reshard;
  EXPECT_TRUE(WaitFor([&] { return SlotCount(*nodes[0].conn, nodes[to].id) == to_before + slots; }, 10))
      << AllViews(nodes);
  ExpectCheckClean(nodes[0]);
  LetLoadRun(load, 1000);

  const std::string rebalance = Shell("redis-cli --cluster rebalance " + Addr(nodes[1]));
  EXPECT_FALSE(Has(rebalance, "ERR")) << rebalance;
  EXPECT_TRUE(Has(rebalance, "Moving")) << rebalance;  // it had something to do
  LetLoadRun(load, 1000);
  load.Stop();

  // Balanced again: within rebalance's default 2% threshold of 16384 / 3.
  for (const BusNode& n : nodes) {
    const int count = SlotCount(*nodes[0].conn, n.id);
    EXPECT_NEAR(count, kSlots / 3, kSlots / 3 * 2 / 100 + 1) << n.id;
  }
  ExpectCheckClean(nodes[2]);
  ExpectEverySlotCoveredOnce(nodes);
  ExpectEveryAckedWrite(load, nodes);
  // The load did see slots move under it.
  EXPECT_GT(load.client().moved, 0);
  std::cout << "ops " << load.ops() << ", MOVED " << load.client().moved << ", ASK " << load.client().asked
            << ", retried " << load.client().retried << "\n";
}

bool HaveRedisCli() { return Shell("command -v redis-cli").find("redis-cli") != std::string::npos; }

// The nodes' folders on a tmpfs when there is one: a ringkv node fsyncs
// nodes.conf on every change (issue 26's rule; Redis fsyncs SETSLOT's save
// only when an epoch moves), five times per slot moved, which on a shared
// disk makes a reshard of a thousand slots take a minute. The test is of
// the protocol under load, not of the disk.
void NodesOnTmpfs() {
  if (std::filesystem::is_directory("/dev/shm")) setenv("TMPDIR", "/dev/shm", 1);
}

// SETSLOT NODE ending an import on the new owner bumps its epoch and
// broadcasts a PONG at once (Redis's clusterBroadcastPong after an
// import), so every node learns the new owner before a ping would carry it
// (node-timeout 60 s: a node pings one other node a second), and before
// another node's later epoch bump can make them answer with an UPDATE that
// takes the slot back (runtest-cluster's 25-pubsubshard-slot-migration).
TEST(ClusterReshard, AnEndedImportIsBroadcastAtOnce) {
  std::vector<BusNode> nodes = StartCluster(kThreeMasters, {}, {}, "60000");
  ASSERT_EQ(nodes.size(), 3u);
  BusNode& a = nodes[0];
  BusNode& c = nodes[2];
  ASSERT_EQ(Cmd(*a.conn, {"CLUSTER", "SETSLOT", "100", "MIGRATING", c.id}), "+OK\r\n");
  ASSERT_EQ(Cmd(*c.conn, {"CLUSTER", "SETSLOT", "100", "IMPORTING", a.id}), "+OK\r\n");
  ASSERT_EQ(Cmd(*a.conn, {"CLUSTER", "SETSLOT", "100", "NODE", c.id}), "+OK\r\n");
  ASSERT_EQ(Cmd(*c.conn, {"CLUSTER", "SETSLOT", "100", "NODE", c.id}), "+OK\r\n");
  const auto start = std::chrono::steady_clock::now();
  // b heard nothing of the migration but the broadcast.
  BusNode& b = nodes[1];
  bool learnt = false;
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500) && !learnt) {
    learnt = Has(NodeLine(*b.conn, c.id), " 100 10923-16383");
    if (!learnt) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(learnt) << NodeLine(*b.conn, c.id);
  // c took the greatest epoch, and b knows it.
  const std::string info = Text(Cmd(*c.conn, {"CLUSTER", "INFO"}));
  const auto field = [&](const std::string& name) {
    const size_t at = info.find(name + ":") + name.size() + 1;
    return info.substr(at, info.find("\r\n", at) - at);
  };
  EXPECT_EQ(field("cluster_my_epoch"), field("cluster_current_epoch")) << info;
  EXPECT_TRUE(Has(NodeLine(*b.conn, c.id), " " + field("cluster_my_epoch") + " connected 100 ")) << NodeLine(*b.conn, c.id);
}

TEST(ClusterReshard, ReshardAndRebalanceUnderLoad) {
  if (!HaveRedisCli()) GTEST_SKIP() << "redis-cli not installed";
  NodesOnTmpfs();
  std::vector<BusNode> nodes = StartMasters({RINGKV_SERVER_PATH, RINGKV_SERVER_PATH, RINGKV_SERVER_PATH}, kThreeMasters);
  ASSERT_EQ(nodes.size(), 3u);
  ReshardAndRebalance(nodes, 0, 1, 1500);
}

// Node 0 is ringkv, nodes 1 and 2 redis-server 7.0: the reshard moves slots
// from redis-server to ringkv (redis-server's MIGRATE into ringkv), the
// rebalance moves them back out of ringkv (ringkv's MIGRATE into
// redis-server).
TEST(ClusterReshard, MixedWithRedisServerUnderLoad) {
  if (!HaveRedisCli()) GTEST_SKIP() << "redis-cli not installed";
  if (!std::filesystem::exists(kRedisSrc)) GTEST_SKIP() << "redis-server not installed";
  NodesOnTmpfs();
  std::vector<BusNode> nodes = StartMasters({RINGKV_SERVER_PATH, kRedisSrc, kRedisSrc}, kThreeMasters);
  ASSERT_EQ(nodes.size(), 3u);
  ReshardAndRebalance(nodes, 1, 0, 1500);
}

// A client blocked on a key whose slot moves to another node is answered
// MOVED and unblocked (Redis's clusterRedirectBlockedClientIfNeeded); one
// blocked on a slot that stays is not.
TEST(ClusterReshard, ABlockedClientIsRedirectedWhenItsSlotMoves) {
  NodesOnTmpfs();
  std::vector<BusNode> nodes = StartMasters({RINGKV_SERVER_PATH, RINGKV_SERVER_PATH, RINGKV_SERVER_PATH}, kThreeMasters);
  ASSERT_EQ(nodes.size(), 3u);
  const std::string key = "key9184688";  // slot 10923, node 2's first
  ASSERT_EQ(core::KeyHashSlot(key), 10923);
  std::string stays;  // a key of a slot node 2 keeps
  for (int i = 0; stays.empty(); ++i) {
    if (core::KeyHashSlot("k" + std::to_string(i)) > 10923) stays = "k" + std::to_string(i);
  }
  RawConn blocked(nodes[2].port()), blocked_stays(nodes[2].port());
  blocked.Send(Resp({"BRPOP", key, "0"}));
  blocked_stays.Send(Resp({"BRPOP", stays, "0"}));
  ASSERT_TRUE(WaitFor([&] { return Has(Cmd(*nodes[2].conn, {"INFO", "clients"}), "blocked_clients:2\r\n"); }, 10));
  // Slot 10923 to node 0, told to both sides.
  ASSERT_EQ(Cmd(*nodes[0].conn, {"CLUSTER", "SETSLOT", "10923", "NODE", nodes[0].id}), "+OK\r\n");
  ASSERT_EQ(Cmd(*nodes[2].conn, {"CLUSTER", "SETSLOT", "10923", "NODE", nodes[0].id}), "+OK\r\n");
  EXPECT_EQ(blocked.ReadReply(), "-MOVED 10923 127.0.0.1:" + std::to_string(nodes[0].port()) + "\r\n");
  EXPECT_TRUE(Has(Cmd(*nodes[2].conn, {"INFO", "clients"}), "blocked_clients:1\r\n"));
  // The other stays blocked until served.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a few cron turns
  EXPECT_EQ(Cmd(*nodes[2].conn, {"RPUSH", stays, "v"}), ":1\r\n");
  EXPECT_EQ(blocked_stays.ReadReply(), Resp({stays, "v"}));
}

// A master whose last slot is given away by SETSLOT NODE becomes a replica
// of the new owner (Redis 7.0 with cluster-allow-replica-migration, what
// `redis-cli --cluster reshard` of a node's last slots relies on).
TEST(ClusterReshard, AMasterWhoseLastSlotMovesBecomesAReplica) {
  NodesOnTmpfs();
  std::vector<BusNode> nodes =
      StartMasters({RINGKV_SERVER_PATH, RINGKV_SERVER_PATH, RINGKV_SERVER_PATH}, {{0, 8191}, {8192, 16382}, {16383, 16383}});
  ASSERT_EQ(nodes.size(), 3u);
  ASSERT_EQ(Cmd(*nodes[0].conn, {"CLUSTER", "SETSLOT", "16383", "NODE", nodes[0].id}), "+OK\r\n");
  ASSERT_EQ(Cmd(*nodes[2].conn, {"CLUSTER", "SETSLOT", "16383", "NODE", nodes[0].id}), "+OK\r\n");
  EXPECT_TRUE(Has(NodeLine(*nodes[2].conn, nodes[2].id), "myself,slave " + nodes[0].id)) << NodeLine(*nodes[2].conn, nodes[2].id);
  EXPECT_TRUE(Has(nodes[2].Log(), "Configuration change detected. Reconfiguring myself as a replica of " + nodes[0].id));
  EXPECT_TRUE(WaitFor([&] { return Has(Cmd(*nodes[2].conn, {"INFO", "replication"}), "master_link_status:up\r\n"); }, 20));
  EXPECT_TRUE(WaitFor([&] { return Has(NodeLine(*nodes[1].conn, nodes[2].id), "slave " + nodes[0].id); }, 20));
}

}  // namespace
}  // namespace ringkv::testing::cluster_reshard_e2e_test

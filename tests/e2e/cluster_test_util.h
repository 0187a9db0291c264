// Helpers for the cluster e2e tests: nodes started with the bus
// (cluster-node-timeout 1000 ms by default, so failures are seen fast on a
// 2-core CI), a cluster of masters and replicas built by MEET and
// REPLICATE (of ringkv nodes, or mixed with copies of redis-server), CLUSTER
// NODES lines, polling, and the replica-migration check the ringkv-only and
// mixed-cluster tests share.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/test_server.h"

namespace ringkv::testing {

inline const std::string kRedisSrc = "/usr/bin/redis-server";

// The slots split between three masters, as redis-cli --cluster create splits them.
inline const std::vector<std::pair<int, int>> kThreeMasters = {{0, 5460}, {5461, 10922}, {10923, 16383}};

// A copy of Debian's redis-server under a path of its own (Redis checks its
// name for sentinel mode), for mixed clusters, removed with its directory
// when the object goes. path() is "" when redis-server is not installed.
class RedisCopy {
 public:
  RedisCopy() {
    if (access(kRedisSrc.c_str(), X_OK) != 0) return;
    const std::string bin = dir_.path() + "/redis-server";
    if (system(("cp " + kRedisSrc + " " + bin).c_str()) == 0) path_ = bin;
  }
  const std::string& path() const { return path_; }

 private:
  ScopedTempDir dir_;
  std::string path_;
};

inline std::string Cmd(RawConn& c, const std::vector<std::string>& argv) {
  c.Send(Resp(argv));
  return c.ReadReply();
}

// The text of a bulk (or verbatim) reply.
inline std::string Text(const std::string& reply) {
  const size_t nl = reply.find("\r\n");
  if (nl == std::string::npos || reply.size() < nl + 4) return reply;
  std::string body = reply.substr(nl + 2, reply.size() - nl - 4);
  if (reply[0] == '=') body = body.substr(4);  // "txt:"
  return body;
}

inline bool Has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// Polls `pred` every 50 ms until it holds or `seconds` pass.
inline bool WaitFor(const std::function<bool()>& pred, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}

struct BusNode {
  std::unique_ptr<TestServer> server;
  std::unique_ptr<RawConn> conn;
  int cport = 0;
  std::string id;
  int port() const { return server->port(); }
  // The node's log (ringkv nodes log to node.log in their folder).
  std::string Log() const {
    std::ifstream in(server->dir() + "/node.log");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
};

// A node with the bus on a free port; `extra` arguments are appended.
// A start that failed because the bus port was taken meanwhile (the server
// exits when it cannot bind it) is tried again on another.
inline BusNode StartBusNode(const std::string& binary = RINGKV_SERVER_PATH, const std::string& timeout = "1000",
                            const std::vector<std::string>& extra = {}) {
  BusNode n;
  for (int attempt = 0; attempt < 5; ++attempt) {
    n.cport = FreePort();
    std::vector<std::string> args = {"--cluster-enabled", "yes", "--cluster-port", std::to_string(n.cport),
                                     "--cluster-node-timeout", timeout, "--cluster-require-full-coverage", "yes",
                                     // A full sync starts at once (not after Redis's 5 s wait for more replicas).
                                     "--repl-diskless-sync-delay", "0"};
    if (binary == RINGKV_SERVER_PATH) args.insert(args.end(), {"--logfile", "node.log"});
    args.insert(args.end(), extra.begin(), extra.end());
    n.server = std::make_unique<TestServer>(args, binary);
    // (Not a server still starting: its own listener holds the bus port.)
    // A port taken may be free again by now (a client's ephemeral port,
    // under ctest -j): the node's log says what it could not bind.
    if (n.server->ready() || !n.server->exited()) break;
    if (!LoopbackPortInUse(n.cport, /*as_server=*/true) && n.Log().find(kBindFailure) == std::string::npos) break;
  }
  if (n.server->ready()) {
    n.conn = std::make_unique<RawConn>(n.server->port());
    n.id = Text(Cmd(*n.conn, {"CLUSTER", "MYID"}));
  }
  return n;
}

// The CLUSTER NODES line of `id`, "" when not listed.
inline std::string NodeLine(RawConn& c, const std::string& id) {
  const std::string nodes = "\n" + Text(Cmd(c, {"CLUSTER", "NODES"}));
  size_t at = nodes.find("\n" + id + " ");  // at a line's start (a replica's line names its master)
  if (at == std::string::npos) return "";
  ++at;
  return nodes.substr(at, nodes.find('\n', at) - at);
}

inline int CountLines(const std::string& s) {
  int n = 0;
  for (char ch : s) n += ch == '\n';
  return n;
}

// `ranges.size()` masters, each given its inclusive slot range, then one
// replica per entry of `replica_of` (the index of its master); node 0 MEETs
// the others. Returns once every node shows cluster_state:ok, knows every
// node, lists each replica under its master, sees every other node's link
// connected (cluster_state:ok does not wait for the full mesh: a node that
// learnt a peer by gossip may still be connecting to it), and each
// replica's link is up.
// ASSERT in the caller that the result has every node (a start failed
// otherwise: the step that timed out and that node's view are printed to
// stderr). `node_timeout` is cluster-node-timeout in ms. `binaries`, when
// given, names each node's server binary in the same order (masters, then
// replicas; "" for ringkv): a mixed cluster (`extra` goes to ringkv nodes
// only).
inline std::vector<BusNode> StartCluster(const std::vector<std::pair<int, int>>& ranges,
                                         const std::vector<int>& replica_of,
                                         const std::vector<std::string>& extra = {},
                                         const std::string& node_timeout = "1000",
                                         const std::vector<std::string>& binaries = {}) {
  std::vector<BusNode> nodes;
  // Says which step did not finish, and what node i saw (and logged).
  auto failed = [&nodes](const char* step, size_t i) {
    std::string what = "StartCluster: " + std::string(step) + " timed out at node " + std::to_string(i);
    if (i < nodes.size() && nodes[i].conn) {
      what += "\n" + Text(Cmd(*nodes[i].conn, {"CLUSTER", "NODES"})) + Text(Cmd(*nodes[i].conn, {"CLUSTER", "INFO"}));
    } else if (i < nodes.size()) {
      what += " (not started: exit status " + std::to_string(nodes[i].server->Stop()) + ")";
    }
    if (i < nodes.size()) {
      const std::string log = nodes[i].Log();
      what += "\nlog (its end):\n" + log.substr(log.size() > 4000 ? log.size() - 4000 : 0);
    }
    fprintf(stderr, "%s\n", what.c_str());
    return std::vector<BusNode>{};
  };
  const size_t total = ranges.size() + replica_of.size();
  for (size_t i = 0; i < total; ++i) {
    const bool other = i < binaries.size() && !binaries[i].empty();
    nodes.push_back(other ? StartBusNode(binaries[i], node_timeout)
                          : StartBusNode(RINGKV_SERVER_PATH, node_timeout, extra));
    if (!nodes.back().server->ready()) return failed("the server's start", i);
  }
  for (size_t i = 0; i < ranges.size(); ++i) {
    Cmd(*nodes[i].conn, {"CLUSTER", "ADDSLOTSRANGE", std::to_string(ranges[i].first), std::to_string(ranges[i].second)});
  }
  auto meet = [&nodes](size_t i) {
    Cmd(*nodes[0].conn,
        {"CLUSTER", "MEET", "127.0.0.1", std::to_string(nodes[i].port()), std::to_string(nodes[i].cport)});
  };
  for (size_t i = 1; i < total; ++i) meet(i);
  // A handshake not done within the handshake timeout (cluster-node-timeout,
  // at least 1 s) is dropped and never tried again, as in Redis: a node
  // stalled that long (a loaded CI machine) would leave the cluster split
  // for good, some nodes knowing a peer that does not know them. So, every
  // 2 s while waiting, node 0 MEETs again each node that it and that node
  // do not both know by its ID (a MEET while a handshake is in progress is
  // a no-op; one to a known node only updates its address).
  auto last_meet = std::chrono::steady_clock::now();
  auto meet_again = [&] {
    if (std::chrono::steady_clock::now() - last_meet < std::chrono::seconds(2)) return;
    last_meet = std::chrono::steady_clock::now();
    for (size_t i = 1; i < total; ++i) {
      if (NodeLine(*nodes[0].conn, nodes[i].id).empty() || NodeLine(*nodes[i].conn, nodes[0].id).empty()) meet(i);
    }
  };
  for (size_t r = 0; r < replica_of.size(); ++r) {
    BusNode& replica = nodes[ranges.size() + r];
    const BusNode& master = nodes[replica_of[r]];
    const size_t at = ranges.size() + r;
    if (!WaitFor(
            [&] {
              meet_again();
              return Has(NodeLine(*replica.conn, master.id), " connected ");
            },
            30)) {
      return failed("seeing its master connected", at);
    }
    if (Cmd(*replica.conn, {"CLUSTER", "REPLICATE", master.id}) != "+OK\r\n") return failed("CLUSTER REPLICATE", at);
  }
  const std::string known = "cluster_known_nodes:" + std::to_string(total) + "\r\n";
  for (size_t i = 0; i < total; ++i) {
    RawConn& c = *nodes[i].conn;
    const bool ok = WaitFor(
        [&] {
          meet_again();
          const std::string info = Text(Cmd(c, {"CLUSTER", "INFO"}));
          if (!Has(info, "cluster_state:ok\r\n") || !Has(info, known)) return false;
          for (size_t r = 0; r < replica_of.size(); ++r) {
            const std::string master = nodes[replica_of[r]].id;
            if (!Has(NodeLine(c, nodes[ranges.size() + r].id), "slave " + master)) return false;
          }
          return true;
        },
        30);
    if (!ok) return failed("cluster_state:ok, every node known, every replica listed", i);
  }
  for (size_t i = 0; i < total; ++i) {
    for (const BusNode& peer : nodes) {
      if (peer.id == nodes[i].id) continue;
      if (!WaitFor([&] { return Has(NodeLine(*nodes[i].conn, peer.id), " connected"); }, 30)) {
        return failed(("the link to " + peer.id).c_str(), i);
      }
    }
  }
  for (size_t r = 0; r < replica_of.size(); ++r) {
    RawConn& c = *nodes[ranges.size() + r].conn;
    if (!WaitFor([&] { return Has(Cmd(c, {"INFO", "replication"}), "master_link_status:up\r\n"); }, 30)) {
      return failed("master_link_status:up", ranges.size() + r);
    }
  }
  return nodes;
}

// Replica migration as Redis 7.0 does it: three masters (slots split in
// three), the first with two replicas, the second with one that is killed,
// the third with one (so that the second is the only orphan: a master given
// slots while others have replicas is a migration target too, Redis's
// clusterNodeSetSlotBit). The smaller-named of the first master's replicas
// moves to the orphan once it has stayed so for 5 s
// (cluster-migration-barrier 1) -- a ringkv mover logs it as Redis does --;
// the other stays; every live node lists it under the orphan, its link is
// up, and a write there is acknowledged by WAIT 1. `binaries` as
// StartCluster's: masters 0-2, replicas 3-4 (of 0), 5 (of 1), 6 (of 2).
inline void ExpectReplicaMigratesToOrphan(const std::vector<std::string>& binaries = {}) {
  std::vector<BusNode> nodes = StartCluster(kThreeMasters, {0, 0, 1, 2}, {}, "1000", binaries);
  ASSERT_EQ(nodes.size(), 7u);
  BusNode& orphan = nodes[1];
  nodes[5].server->Kill();
  BusNode& mover = nodes[3].id < nodes[4].id ? nodes[3] : nodes[4];
  BusNode& stayer = nodes[3].id < nodes[4].id ? nodes[4] : nodes[3];
  EXPECT_TRUE(WaitFor([&] { return Has(NodeLine(*mover.conn, mover.id), "myself,slave " + orphan.id); }, 40))
      << Text(Cmd(*mover.conn, {"CLUSTER", "NODES"}));
  const size_t mover_index = &mover == &nodes[3] ? 3 : 4;
  if (mover_index >= binaries.size() || binaries[mover_index].empty()) {
    EXPECT_TRUE(Has(mover.Log(), "Migrating to orphaned master " + orphan.id)) << mover.Log();
  }
  EXPECT_TRUE(Has(NodeLine(*stayer.conn, stayer.id), "myself,slave " + nodes[0].id));
  // Every live node agrees, and the mover replicates the orphan.
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i == 5) continue;  // killed
    EXPECT_TRUE(WaitFor([&] { return Has(NodeLine(*nodes[i].conn, mover.id), "slave " + orphan.id); }, 20))
        << i << ": " << Text(Cmd(*nodes[i].conn, {"CLUSTER", "NODES"}));
  }
  EXPECT_TRUE(WaitFor(
      [&] {
        const std::string info = Cmd(*mover.conn, {"INFO", "replication"});
        return Has(info, "master_port:" + std::to_string(orphan.port()) + "\r\n") &&
               Has(info, "master_link_status:up\r\n");
      },
      20));
  EXPECT_EQ(Cmd(*orphan.conn, {"SET", "{ch1}k", "v"}), "+OK\r\n");  // slot 9930: the orphan's
  EXPECT_EQ(Cmd(*orphan.conn, {"WAIT", "1", "5000"}), ":1\r\n");
}


}  // namespace ringkv::testing

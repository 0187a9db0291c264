// The cluster over TLS (tls-cluster yes), as Redis 7.0 runs it, with real
// binaries: the bus between ringkv nodes and a redis-server 7.0 node speaks
// TLS (a plain peer is refused), replicas sync from their master's TLS port
// with tls-replication, clients are told the TLS ports on TLS connections
// and the plaintext ports on plain ones (CLUSTER NODES, SLOTS, SHARDS,
// REPLICAS, MOVED), and MIGRATE connects over TLS.
// Skipped without Debian's redis-server (the mixed part).
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/key_slot.h"
#include "tests/e2e/cluster_test_util.h"
#include "tests/e2e/test_server.h"
#include "tests/e2e/tls_test_util.h"

namespace ringkv::testing::cluster_tls_e2e_test {
namespace {

struct TlsNode {
  BusNode bus;
  int tls_port = 0;
  int port() const { return bus.port(); }
};

// A node with a TLS port, tls-cluster and tls-replication; its bus port is
// set explicitly (StartBusNode), so the default tls-port + 10000 is not
// used here but checked in DefaultBusPortCountsFromTheTlsPort.
TlsNode StartTlsNode(const std::string& binary = RINGKV_SERVER_PATH, const std::vector<std::string>& more = {}) {
  TlsNode n;
  n.tls_port = FreePort();
  std::vector<std::string> extra = TlsArgs(n.tls_port);
  extra.insert(extra.end(), {"--tls-cluster", "yes", "--tls-replication", "yes"});
  extra.insert(extra.end(), more.begin(), more.end());
  n.bus = StartBusNode(binary, "1000", extra);
  return n;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Whether 127.0.0.1:port is free to listen on.
bool CanBind(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  const sockaddr_in a = LoopbackAddress(port);
  const bool ok = bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) == 0;
  close(fd);
  return ok;
}

size_t CountOf(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string Ports(int port, int cport) { return "127.0.0.1:" + std::to_string(port) + "@" + std::to_string(cport); }

class ClusterTlsE2E : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(CertDir().empty()) << "tests/tls/gen_test_certs.sh failed"; }
};

TEST_F(ClusterTlsE2E, MixedClusterOverTlsBus) {
  const RedisCopy redis_copy;
  const std::string& redis = redis_copy.path();
  if (redis.empty()) GTEST_SKIP() << "no " << kRedisSrc;
  // Masters: ringkv, ringkv, redis-server; a ringkv replica of the
  // redis-server master.
  std::vector<TlsNode> nodes;
  // The first logs refused bus links; its clients need no certificate,
  // its bus peers still do.
  nodes.push_back(StartTlsNode(RINGKV_SERVER_PATH, {"--loglevel", "verbose", "--tls-auth-clients", "no"}));
  nodes.push_back(StartTlsNode());
  nodes.push_back(StartTlsNode(redis));
  nodes.push_back(StartTlsNode());
  for (const TlsNode& n : nodes) ASSERT_TRUE(n.bus.server->ready());
  for (size_t i = 0; i < kThreeMasters.size(); ++i) {
    EXPECT_EQ(Cmd(*nodes[i].bus.conn, {"CLUSTER", "ADDSLOTSRANGE", std::to_string(kThreeMasters[i].first),
                                       std::to_string(kThreeMasters[i].second)}),
              "+OK\r\n");
  }
  // MEET names the TLS port: it is the port a tls-cluster node announces.
  for (size_t i = 1; i < nodes.size(); ++i) {
    EXPECT_EQ(Cmd(*nodes[0].bus.conn, {"CLUSTER", "MEET", "127.0.0.1", std::to_string(nodes[i].tls_port),
                                       std::to_string(nodes[i].bus.cport)}),
              "+OK\r\n");
  }
  TlsNode& replica = nodes[3];
  ASSERT_TRUE(WaitFor([&] { return Has(NodeLine(*replica.bus.conn, nodes[2].bus.id), " connected"); }, 30));
  EXPECT_EQ(Cmd(*replica.bus.conn, {"CLUSTER", "REPLICATE", nodes[2].bus.id}), "+OK\r\n");
  for (TlsNode& n : nodes) {
    EXPECT_TRUE(WaitFor(
        [&] {
          const std::string info = Text(Cmd(*n.bus.conn, {"CLUSTER", "INFO"}));
          if (!Has(info, "cluster_state:ok\r\n") || !Has(info, "cluster_known_nodes:4\r\n")) return false;
          // Every node seen connected, with its plaintext port learnt from its pings.
          for (const TlsNode& peer : nodes) {
            const std::string line = NodeLine(*n.bus.conn, peer.bus.id);
            if (!Has(line, " connected") || !Has(line, Ports(peer.port(), peer.bus.cport))) return false;
          }
          return true;
        },
        30))
        << Text(Cmd(*n.bus.conn, {"CLUSTER", "NODES"}));
  }

  // The replica syncs from its redis-server master's TLS port.
  RawConn& rc = *replica.bus.conn;
  EXPECT_TRUE(WaitFor([&] { return Has(Cmd(rc, {"INFO", "replication"}), "master_link_status:up\r\n"); }, 30));
  EXPECT_TRUE(Has(Cmd(rc, {"INFO", "replication"}), "master_port:" + std::to_string(nodes[2].tls_port) + "\r\n"));

  // Plain clients get the plaintext ports, TLS clients the TLS ports.
  RawConn& plain = *nodes[0].bus.conn;
  TlsConn tls(nodes[0].tls_port);
  ASSERT_TRUE(tls.handshake_ok());
  for (const TlsNode& peer : nodes) {
    EXPECT_TRUE(Has(NodeLine(plain, peer.bus.id), Ports(peer.port(), peer.bus.cport)));
    EXPECT_TRUE(Has(tls.Command({"CLUSTER", "NODES"}),
                    peer.bus.id + " " + Ports(peer.tls_port, peer.bus.cport)));
  }
  // A key of the second master's slots.
  std::string key;
  for (int i = 0;; ++i) {
    key = "k" + std::to_string(i);
    const int s = core::KeyHashSlot(key);
    if (s >= 5461 && s <= 10922) break;
  }
  const std::string slot_text = std::to_string(core::KeyHashSlot(key));
  const std::string moved = "-MOVED " + slot_text + " 127.0.0.1:";
  EXPECT_EQ(Cmd(plain, {"SET", key, "v"}), moved + std::to_string(nodes[1].port()) + "\r\n");
  EXPECT_EQ(tls.Command({"SET", key, "v"}), moved + std::to_string(nodes[1].tls_port) + "\r\n");
  // The redis-server node answers the same way.
  RawConn& redis_plain = *nodes[2].bus.conn;
  TlsConn redis_tls(nodes[2].tls_port);
  EXPECT_EQ(Cmd(redis_plain, {"SET", key, "v"}), moved + std::to_string(nodes[1].port()) + "\r\n");
  EXPECT_EQ(redis_tls.Command({"SET", key, "v"}), moved + std::to_string(nodes[1].tls_port) + "\r\n");

  // CLUSTER SLOTS: the port by the client's connection; CLUSTER SHARDS:
  // both, whatever the connection.
  const std::string id_entry = "\r\n$40\r\n" + nodes[1].bus.id;
  EXPECT_TRUE(Has(Cmd(plain, {"CLUSTER", "SLOTS"}), ":" + std::to_string(nodes[1].port()) + id_entry));
  EXPECT_TRUE(Has(tls.Command({"CLUSTER", "SLOTS"}), ":" + std::to_string(nodes[1].tls_port) + id_entry));
  // A script is told TLS ports, as Redis's (no connection of its own).
  EXPECT_TRUE(Has(Cmd(plain, {"EVAL", "return redis.call('cluster', 'slots')", "0"}),
                  ":" + std::to_string(nodes[1].tls_port) + id_entry));
  const std::string shard_fields = "$4\r\nport\r\n:" + std::to_string(nodes[1].port()) + "\r\n$8\r\ntls-port\r\n:" +
                                   std::to_string(nodes[1].tls_port) + "\r\n";
  EXPECT_TRUE(Has(Cmd(plain, {"CLUSTER", "SHARDS"}), shard_fields));
  EXPECT_TRUE(Has(Cmd(redis_plain, {"CLUSTER", "SHARDS"}), shard_fields));  // as redis-server shows it
  // CLUSTER REPLICAS of the redis-server master.
  EXPECT_TRUE(Has(Cmd(plain, {"CLUSTER", "REPLICAS", nodes[2].bus.id}), Ports(replica.port(), replica.bus.cport)));
  EXPECT_TRUE(
      Has(tls.Command({"CLUSTER", "REPLICAS", nodes[2].bus.id}), Ports(replica.tls_port, replica.bus.cport)));

  // nodes.conf keeps the TLS ports (Redis's file: pport is learnt again).
  const std::string conf = ReadAll(nodes[0].bus.server->dir() + "/nodes.conf");
  EXPECT_TRUE(Has(conf, nodes[1].bus.id + " " + Ports(nodes[1].tls_port, nodes[1].bus.cport))) << conf;

  // The bus port does not speak plain TCP: the frame is refused, the link
  // dropped, and the node says why.
  {
    RawConn bus(nodes[0].bus.cport);
    bus.Send("RCmb" + std::string(2256, '\0'));
    EXPECT_EQ(bus.ReadReply(), "<eof>");  // closed (or reset) without an answer
  }
  const std::string refused = "Error accepting cluster node connection: ";
  EXPECT_TRUE(WaitFor([&] { return Has(nodes[0].bus.Log(), refused); }, 10)) << nodes[0].bus.Log();
  // Nor TLS without a client certificate, though this node's clients need
  // none (tls-auth-clients no): the bus asks for one whatever that says.
  {
    const size_t before = CountOf(nodes[0].bus.Log(), refused);
    TlsConn anonymous(nodes[0].bus.cport, {.cert = "", .key = ""});
    anonymous.Send("RCmb" + std::string(2256, '\0'));
    EXPECT_EQ(anonymous.ReadReply(), "<eof>");
    EXPECT_TRUE(WaitFor([&] { return CountOf(nodes[0].bus.Log(), refused) > before; }, 10)) << nodes[0].bus.Log();
    EXPECT_TRUE(Has(nodes[0].bus.Log(), "peer did not return a certificate")) << nodes[0].bus.Log();
  }
  EXPECT_TRUE(Has(Text(Cmd(plain, {"CLUSTER", "INFO"})), "cluster_state:ok\r\n"));

  // A node whose bus is plain TCP cannot join: the TLS handshake fails, the
  // handshake node expires, and the cluster is unchanged.
  BusNode plain_node = StartBusNode(RINGKV_SERVER_PATH, "1000", {"--loglevel", "verbose"});
  ASSERT_TRUE(plain_node.server->ready());
  EXPECT_EQ(Cmd(plain, {"CLUSTER", "MEET", "127.0.0.1", std::to_string(plain_node.port()),
                        std::to_string(plain_node.cport)}),
            "+OK\r\n");
  const std::string tried = "at 127.0.0.1:" + std::to_string(plain_node.cport) + " failed: ";
  EXPECT_TRUE(WaitFor([&] { return Has(nodes[0].bus.Log(), tried); }, 10)) << nodes[0].bus.Log();
  // The handshake node expires after the node timeout (1 s).
  EXPECT_TRUE(WaitFor([&] { return Has(Text(Cmd(plain, {"CLUSTER", "INFO"})), "cluster_known_nodes:4\r\n"); }, 10));
  EXPECT_TRUE(Has(Text(Cmd(*plain_node.conn, {"CLUSTER", "INFO"})), "cluster_known_nodes:1\r\n"));
}

// The bus listens on tls-port + 10000 with tls-cluster, and the node
// announces its TLS port; cluster-announce-tls-port and
// cluster-announce-port replace both (Redis's deriveAnnouncedPorts).
TEST_F(ClusterTlsE2E, DefaultBusPortCountsFromTheTlsPort) {
  int tls_port = 0;
  for (int tries = 0; tries < 50; ++tries) {
    const int p = FreePort();
    if (p <= 55535 && CanBind(p + 10000)) {
      tls_port = p;
      break;
    }
  }
  ASSERT_NE(tls_port, 0);
  std::vector<std::string> args = {"--cluster-enabled", "yes", "--tls-cluster", "yes"};
  for (const std::string& a : TlsArgs(tls_port)) args.push_back(a);
  TestServer s(args);
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  const std::string id = Text(Cmd(c, {"CLUSTER", "MYID"}));
  EXPECT_TRUE(Has(NodeLine(c, id), ":" + std::to_string(s.port()) + "@" + std::to_string(tls_port + 10000)))
      << NodeLine(c, id);
  TlsConn t(tls_port);
  EXPECT_TRUE(
      Has(t.Command({"CLUSTER", "NODES"}), ":" + std::to_string(tls_port) + "@" + std::to_string(tls_port + 10000)));
  EXPECT_FALSE(CanBind(tls_port + 10000));  // the bus listens there
  EXPECT_EQ(Cmd(c, {"CONFIG", "SET", "cluster-announce-tls-port", "7443", "cluster-announce-port", "7000"}),
            "+OK\r\n");
  EXPECT_TRUE(Has(NodeLine(c, id), ":7000@"));
  EXPECT_TRUE(Has(t.Command({"CLUSTER", "NODES"}), ":7443@"));
}

// MIGRATE with tls-cluster connects over TLS, to ringkv and to redis-server.
TEST_F(ClusterTlsE2E, MigrateOverTls) {
  const int src_tls = FreePort();
  std::vector<std::string> src_args = TlsArgs(src_tls);
  src_args.insert(src_args.end(), {"--tls-cluster", "yes"});
  TestServer src(src_args);
  const int dst_tls = FreePort();
  TestServer dst(TlsArgs(dst_tls));
  ASSERT_TRUE(src.ready() && dst.ready());
  RawConn c(src.port());
  EXPECT_EQ(Cmd(c, {"SET", "a", "1"}), "+OK\r\n");
  EXPECT_EQ(Cmd(c, {"RPUSH", "b", "x", "y"}), ":2\r\n");
  EXPECT_EQ(Cmd(c, {"MIGRATE", "127.0.0.1", std::to_string(dst_tls), "", "0", "5000", "KEYS", "a", "b"}), "+OK\r\n");
  RawConn d(dst.port());
  EXPECT_EQ(Cmd(d, {"GET", "a"}), "$1\r\n1\r\n");
  EXPECT_EQ(Cmd(d, {"LRANGE", "b", "0", "-1"}), "*2\r\n$1\r\nx\r\n$1\r\ny\r\n");
  EXPECT_EQ(Cmd(c, {"EXISTS", "a", "b"}), ":0\r\n");
  // The cached connection again, with a SELECT.
  EXPECT_EQ(Cmd(c, {"SET", "c", "3"}), "+OK\r\n");
  EXPECT_EQ(Cmd(c, {"MIGRATE", "127.0.0.1", std::to_string(dst_tls), "c", "5", "5000"}), "+OK\r\n");
  EXPECT_EQ(Cmd(d, {"SELECT", "5"}), "+OK\r\n");
  EXPECT_EQ(Cmd(d, {"GET", "c"}), "$1\r\n3\r\n");
  // A target's error, then the same cached connection works on.
  EXPECT_EQ(Cmd(c, {"SET", "c", "4"}), "+OK\r\n");
  EXPECT_EQ(Cmd(c, {"MIGRATE", "127.0.0.1", std::to_string(dst_tls), "c", "5", "5000"}),
            "-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n");
  EXPECT_EQ(Cmd(c, {"MIGRATE", "127.0.0.1", std::to_string(dst_tls), "c", "5", "5000", "REPLACE"}), "+OK\r\n");
  EXPECT_EQ(Cmd(d, {"GET", "c"}), "$1\r\n4\r\n");
  // The plain port does not answer a TLS handshake with TLS.
  EXPECT_EQ(Cmd(c, {"SET", "e", "5"}), "+OK\r\n");
  EXPECT_EQ(Cmd(c, {"MIGRATE", "127.0.0.1", std::to_string(dst.port()), "e", "0", "1000"}).substr(0, 6), "-IOERR");
  EXPECT_EQ(Cmd(c, {"EXISTS", "e"}), ":1\r\n");

  const RedisCopy redis_copy;

  const std::string& redis = redis_copy.path();
  if (redis.empty()) return;
  const int redis_tls = FreePort();
  TestServer r(TlsArgs(redis_tls), redis);
  ASSERT_TRUE(r.ready());
  EXPECT_EQ(Cmd(c, {"MIGRATE", "127.0.0.1", std::to_string(redis_tls), "e", "0", "5000", "COPY"}), "+OK\r\n");
  RawConn rc(r.port());
  EXPECT_EQ(Cmd(rc, {"GET", "e"}), "$1\r\n5\r\n");
}

}  // namespace
}  // namespace ringkv::testing::cluster_tls_e2e_test

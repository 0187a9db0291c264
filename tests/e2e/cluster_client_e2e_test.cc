// A real cluster client against ringkv nodes: Debian's python3-redis
// (redis.cluster.RedisCluster, redis-py 4.3) discovers the slots, writes and
// reads keys across every master, pipelines a batch, and goes on across a
// CLUSTER FAILOVER (the old master answers MOVED, the client refreshes its
// map). Skipped when /usr/bin/python3 or its redis module is missing
// (scripts/deps.sh installs python3-redis).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/e2e/cluster_test_util.h"
#include "tests/e2e/test_server.h"

namespace ringkv::testing {
namespace {

// The standard output of a shell command.
std::string Shell(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
    pclose(p);
  }
  return out;
}

// argv: the first master's port, the replica's port. Prints "ok <n>" at the end.
constexpr const char* kScript = R"PY(
import sys, time
import redis
from redis.cluster import RedisCluster
port, replica_port = int(sys.argv[1]), int(sys.argv[2])
rc = RedisCluster(host="127.0.0.1", port=port, decode_responses=True)
masters = {n.port for n in rc.get_primaries()}
assert len(masters) == 3, masters
for i in range(600):
    rc.set("key:%d" % i, i)
for i in range(600):
    assert rc.get("key:%d" % i) == str(i), i
seen = {rc.get_node_from_key("key:%d" % i).port for i in range(600)}
assert seen == masters, seen
p = rc.pipeline()
for i in range(600):
    p.incr("key:%d" % i)
assert p.execute() == [i + 1 for i in range(600)]
# A manual failover: the replica takes its master's slots.
replica = redis.Redis(host="127.0.0.1", port=replica_port, decode_responses=True)
assert replica.execute_command("CLUSTER", "FAILOVER") == "OK"
deadline = time.time() + 30
while replica.info("replication")["role"] != "master":
    assert time.time() < deadline, "no failover"
    time.sleep(0.05)
for i in range(600):
    assert rc.incr("key:%d" % i) == i + 2, i
assert rc.get_node_from_key(next(("key:%d" % i for i in range(600)
                                  if rc.keyslot("key:%d" % i) <= 5460))).port == replica_port
print("ok", sum(int(rc.get("key:%d" % i)) for i in range(600)))
)PY";

TEST(ClusterClient, RedisPyRedisClusterAcrossSlotsAndAFailover) {
  if (Shell("/usr/bin/python3 -c 'import redis.cluster' 2>/dev/null && echo yes").find("yes") == std::string::npos) {
    GTEST_SKIP() << "python3-redis (redis.cluster) not installed";
  }
  std::vector<BusNode> nodes = StartCluster(kThreeMasters, {0}, {}, "5000");
  ASSERT_EQ(nodes.size(), 4u);
  const std::string script_path = nodes[0].server->dir() + "/client.py";
  FILE* f = fopen(script_path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs(kScript, f);
  fclose(f);
  // redis-py logs each MOVED it followed (after the failover) on stderr.
  const std::string out = Shell("timeout 120 /usr/bin/python3 " + script_path + " " + std::to_string(nodes[0].port()) +
                                " " + std::to_string(nodes[3].port()) + " 2>" + script_path + ".err");
  // Sum of i + 2 over 600 keys.
  EXPECT_EQ(out, "ok " + std::to_string(600 * 599 / 2 + 2 * 600) + "\n");
  // The replica is the master of slots 0-5460 on every node now.
  for (BusNode& n : nodes) {
    EXPECT_TRUE(WaitFor([&] { return Has(NodeLine(*n.conn, nodes[3].id), "master"); }, 10)) << n.port();
  }
}

}  // namespace
}  // namespace ringkv::testing

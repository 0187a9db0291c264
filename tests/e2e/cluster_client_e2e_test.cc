// Real cluster clients against ringkv nodes, each from Debian (scripts/deps.sh
// installs them; a test is skipped when its client is missing):
//  * python3-redis (redis.cluster.RedisCluster, redis-py 4.3) and
//  * node-redis (createCluster, node-redis 4.5, the Node.js client Debian
//    ships; ioredis is not packaged)
// each discover the slots, write and read keys across every master, pipeline
// a batch, follow ASK while a slot migrates (MIGRATE of its keys, a new key
// of the slot written on the importing node) and MOVED once it is assigned,
// and go on across a CLUSTER FAILOVER (the old master answers MOVED, the
// client refreshes its map). The servers' errorstats and commandstats show
// the redirections were taken.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/e2e/cluster_test_util.h"
#include "tests/e2e/test_server.h"

namespace ringkv::testing::cluster_client_e2e_test {
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

// The redirections really happened: ASK twice (the migrated key, the new
// key) each followed by ASKING on the target, and MOVED after the slot was
// assigned and after the failover. Summed over the nodes.
void ExpectRedirectionsTaken(std::vector<BusNode>& nodes) {
  auto total = [&](const std::string& section, const std::string& prefix) {
    long sum = 0;
    for (BusNode& n : nodes) {
      const std::string info = Text(Cmd(*n.conn, {"INFO", section}));
      const size_t at = info.find(prefix);
      if (at != std::string::npos) sum += std::stol(info.substr(at + prefix.size()));
    }
    return sum;
  };
  EXPECT_GE(total("errorstats", "errorstat_ASK:count="), 2);
  EXPECT_GE(total("commandstats", "cmdstat_asking:calls="), 2);
  EXPECT_GE(total("errorstats", "errorstat_MOVED:count="), 2);
}

// Three masters and a replica of the first; `script` (the workload, in the
// client's language) runs under `interpreter` with the first master's and
// the replica's ports, and must print "ok <sum of i + 2 over the 600 keys>".
// Then the replica is the master of the first master's slots on every node,
// and the redirections were taken.
void ExpectClientRunsTheWorkload(const std::string& interpreter, const std::string& file_name, const char* script) {
  std::vector<BusNode> nodes = StartCluster(kThreeMasters, {0}, {}, "5000");
  ASSERT_EQ(nodes.size(), 4u);
  const std::string script_path = nodes[0].server->dir() + "/" + file_name;
  FILE* f = fopen(script_path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs(script, f);
  fclose(f);
  // The clients log the redirections they followed on stderr.
  const std::string out = Shell("timeout 120 " + interpreter + " " + script_path + " " + std::to_string(nodes[0].port()) +
                                " " + std::to_string(nodes[3].port()) + " 2>" + script_path + ".err");
  EXPECT_EQ(out, "ok " + std::to_string(600 * 599 / 2 + 2 * 600) + "\n") << Shell("cat " + script_path + ".err");
  for (BusNode& n : nodes) {
    EXPECT_TRUE(WaitFor([&] { return Has(NodeLine(*n.conn, nodes[3].id), "master"); }, 10)) << n.port();
  }
  ExpectRedirectionsTaken(nodes);
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
# ASK: key:0's slot migrates from its master to another one.
slot = rc.keyslot("key:0")
src_port = rc.get_node_from_key("key:0").port
dst_port = min(p for p in masters if p != src_port)
src = redis.Redis(host="127.0.0.1", port=src_port, decode_responses=True)
dst = redis.Redis(host="127.0.0.1", port=dst_port, decode_responses=True)
src_id, dst_id = src.execute_command("CLUSTER", "MYID"), dst.execute_command("CLUSTER", "MYID")
assert dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id) in (True, "OK")
assert src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id) in (True, "OK")
in_slot = src.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1000)
assert src.execute_command("MIGRATE", "127.0.0.1", dst_port, "", 0, 5000, "KEYS", *in_slot) in (True, "OK")
assert rc.get("key:0") == "1"           # the source answers ASK
rc.set("{key:0}:new", "n")              # ASK again: written on the target
assert dst.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == len(in_slot) + 1
assert src.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
for m in masters:
    assert redis.Redis(host="127.0.0.1", port=m).execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id) in (True, b"OK")
assert rc.get("{key:0}:new") == "n"     # the source answers MOVED
assert rc.get_node_from_key("key:0").port == dst_port
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
                                  if rc.keyslot("key:%d" % i) <= 5460 and rc.keyslot("key:%d" % i) != slot))).port == replica_port
print("ok", sum(int(rc.get("key:%d" % i)) for i in range(600)))
)PY";

TEST(ClusterClient, RedisPyRedisClusterAcrossSlotsAMigrationAndAFailover) {
  if (Shell("/usr/bin/python3 -c 'import redis.cluster' 2>/dev/null && echo yes").find("yes") == std::string::npos) {
    GTEST_SKIP() << "python3-redis (redis.cluster) not installed";
  }
  ExpectClientRunsTheWorkload("/usr/bin/python3", "client.py", kScript);
}

// node-redis: argv ports of the first master and of the replica. Prints
// "ok <sum>" at the end, or "fail <what>".
constexpr const char* kNodeScript = R"JS(
const { createCluster, createClient } = require('redis');
const [port, replicaPort] = process.argv.slice(2).map(Number);
function fail(what) { console.log('fail ' + what); process.exit(1); }
async function node(p) {
  const c = createClient({ socket: { host: '127.0.0.1', port: p } });
  c.on('error', () => {});
  await c.connect();
  return c;
}
(async () => {
  const cluster = createCluster({ rootNodes: [{ socket: { host: '127.0.0.1', port } }] });
  cluster.on('error', (e) => console.error('cluster error', e.message));
  await cluster.connect();
  if (cluster.getMasters().length !== 3) fail('masters ' + cluster.getMasters().length);
  const keys = Array.from({ length: 600 }, (_, i) => 'key:' + i);
  for (const [i, k] of keys.entries()) await cluster.set(k, String(i));
  for (const [i, k] of keys.entries()) if ((await cluster.get(k)) !== String(i)) fail('get ' + k);
  // Concurrent commands: node-redis pipelines them on each node's connection.
  const incrs = await Promise.all(keys.map((k) => cluster.incr(k)));
  incrs.forEach((v, i) => { if (v !== i + 1) fail('incr ' + i + ' gave ' + v); });
  // ASK: key:0's slot migrates from its master to another one.
  const first = await node(port);
  const slot = await first.sendCommand(['CLUSTER', 'KEYSLOT', 'key:0']);
  const ranges = await first.sendCommand(['CLUSTER', 'SLOTS']);
  const owner = ranges.find((r) => r[0] <= slot && slot <= r[1]);
  const other = ranges.find((r) => r[2][1] !== owner[2][1]);
  const [srcPort, srcId] = [owner[2][1], owner[2][2]];
  const [dstPort, dstId] = [other[2][1], other[2][2]];
  const src = await node(srcPort);
  const dst = await node(dstPort);
  if ((await dst.sendCommand(['CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', srcId])) !== 'OK') fail('importing');
  if ((await src.sendCommand(['CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', dstId])) !== 'OK') fail('migrating');
  const inSlot = await src.sendCommand(['CLUSTER', 'GETKEYSINSLOT', String(slot), '1000']);
  const migrated = await src.sendCommand(['MIGRATE', '127.0.0.1', String(dstPort), '', '0', '5000', 'KEYS', ...inSlot]);
  if (migrated !== 'OK') fail('migrate ' + migrated);
  // The source no longer has key:0: it answers ASK, the client asks the target.
  if ((await cluster.get('key:0')) !== '1') fail('get during the migration');
  // A new key of the slot: ASK again, and it is written on the target.
  await cluster.set('{key:0}:new', 'n');
  if ((await dst.sendCommand(['CLUSTER', 'COUNTKEYSINSLOT', String(slot)])) !== inSlot.length + 1) fail('count on target');
  if ((await src.sendCommand(['CLUSTER', 'COUNTKEYSINSLOT', String(slot)])) !== 0) fail('count on source');
  for (const r of ranges) {
    const c = await node(r[2][1]);
    if ((await c.sendCommand(['CLUSTER', 'SETSLOT', String(slot), 'NODE', dstId])) !== 'OK') fail('setslot node');
    await c.quit();
  }
  // The source answers MOVED now; the client refreshes its map.
  if ((await cluster.get('{key:0}:new')) !== 'n') fail('get after the migration');
  if (cluster.getSlotMaster(slot).client.options.socket.port !== dstPort) fail('map after the migration');
  // A manual failover: the replica takes its master's slots.
  const replica = await node(replicaPort);
  if ((await replica.sendCommand(['CLUSTER', 'FAILOVER'])) !== 'OK') fail('failover');
  const deadline = Date.now() + 30000;
  while (!(await replica.sendCommand(['INFO', 'replication'])).includes('role:master')) {
    if (Date.now() > deadline) fail('no failover');
    await new Promise((r) => setTimeout(r, 50));
  }
  for (const [i, k] of keys.entries()) if ((await cluster.incr(k)) !== i + 2) fail('incr after the failover ' + k);
  let sum = 0;
  for (const k of keys) sum += Number(await cluster.get(k));
  for (const c of [first, src, dst, replica]) await c.quit();
  await cluster.quit();
  console.log('ok ' + sum);
})().catch((e) => fail(e.message));
)JS";

TEST(ClusterClient, NodeRedisClusterAcrossSlotsAMigrationAndAFailover) {
  const std::string node = "env NODE_PATH=/usr/share/nodejs node";  // Debian's modules (its own node looks there too)
  if (Shell(node + " -e \"require('redis').createCluster\" 2>/dev/null && echo yes").find("yes") == std::string::npos) {
    GTEST_SKIP() << "node or node-redis not installed";
  }
  ExpectClientRunsTheWorkload(node, "client.js", kNodeScript);
}

}  // namespace
}  // namespace ringkv::testing::cluster_client_e2e_test

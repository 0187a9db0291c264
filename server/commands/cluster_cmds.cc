// The cluster family as a server without cluster mode answers it: CLUSTER
// and its subcommands, ASKING, READONLY and READWRITE exist (COMMAND lists
// them, ACL rules and scripts see their flags -- CLUSTER RESET is refused in
// a script as `noscript`), and each answers Redis 7.0's
// "-ERR This instance has cluster support disabled", as redis-server does
// with `cluster-enabled no`. ringkv refuses `cluster-enabled yes` at start-up
// until cluster mode exists (issue 26), so this is every case it can meet.
#include "server/command_table.h"
#include "server/commands/util.h"

namespace ringkv::server {
namespace {

using namespace cmd;  // NOLINT: flag names in the table below

void CmdClusterDisabled(CommandContext& ctx) { ctx.reply.Error("ERR This instance has cluster support disabled"); }

// One CLUSTER subcommand's row; every one answers "cluster support disabled".
struct ClusterSub {
  const char* name;
  int arity;
  uint32_t flags;
  bool admin;  // @admin @slow @dangerous, else @slow
  const char* summary;
  const char* since;
};

constexpr uint32_t kAdminFlags = kAdmin | kStale | kNoAsyncLoading;
constexpr ClusterSub kClusterSubs[] = {
    {"addslots", -3, kAdminFlags, true, "Assign new hash slots to receiving node", "3.0.0"},
    {"addslotsrange", -4, kAdminFlags, true, "Assign new hash slots to receiving node", "7.0.0"},
    {"bumpepoch", 2, kAdminFlags, true, "Advance the cluster config epoch", "3.0.0"},
    {"count-failure-reports", 3, kAdmin | kStale, true,
     "Return the number of failure reports active for a given node", "3.0.0"},
    {"countkeysinslot", 3, kStale, false, "Return the number of local keys in the specified hash slot", "3.0.0"},
    {"delslots", -3, kAdminFlags, true, "Set hash slots as unbound in receiving node", "3.0.0"},
    {"delslotsrange", -4, kAdminFlags, true, "Set hash slots as unbound in receiving node", "7.0.0"},
    {"failover", -2, kAdminFlags, true, "Forces a replica to perform a manual failover of its master.", "3.0.0"},
    {"flushslots", 2, kAdminFlags, true, "Delete a node's own slots information", "3.0.0"},
    {"forget", 3, kAdminFlags, true, "Remove a node from the nodes table", "3.0.0"},
    {"getkeysinslot", 4, kStale, false, "Return local key names in the specified hash slot", "3.0.0"},
    {"help", 2, kLoading | kStale, false, "Show helpful text about the different subcommands", "5.0.0"},
    {"info", 2, kStale, false, "Provides info about Redis Cluster node state", "3.0.0"},
    {"keyslot", 3, kStale, false, "Returns the hash slot of the specified key", "3.0.0"},
    {"links", 2, kStale, false, "Returns a list of all TCP links to and from peer nodes in cluster", "7.0.0"},
    {"meet", -4, kAdminFlags, true, "Force a node cluster to handshake with another node", "3.0.0"},
    {"myid", 2, kStale, false, "Return the node id", "3.0.0"},
    {"nodes", 2, kStale, false, "Get Cluster config for the node", "3.0.0"},
    {"replicas", 3, kAdmin | kStale, true, "List replica nodes of the specified master node", "5.0.0"},
    {"replicate", 3, kAdminFlags, true, "Reconfigure a node as a replica of the specified master node", "3.0.0"},
    {"reset", -2, kAdmin | kNoscript | kStale, true, "Reset a Redis Cluster node", "3.0.0"},
    {"saveconfig", 2, kAdminFlags, true, "Forces the node to save cluster state on disk", "3.0.0"},
    {"set-config-epoch", 3, kAdminFlags, true, "Set the configuration epoch in a new node", "3.0.0"},
    {"setslot", -4, kAdminFlags, true, "Bind a hash slot to a specific node", "3.0.0"},
    {"shards", 2, kStale, false, "Get array of cluster slots to node mappings", "7.0.0"},
    {"slaves", 3, kAdmin | kStale, true, "List replica nodes of the specified master node", "3.0.0"},
    {"slots", 2, kStale, false, "Get array of Cluster slot to node mappings", "3.0.0"},
};

}  // namespace

void RegisterClusterCommands(CommandTable& t) {
  std::vector<CommandSpec> subs;
  for (const ClusterSub& s : kClusterSubs) {
    subs.push_back(Cmd(StrCat("cluster|", s.name), s.arity, s.flags, 0, 0, 0,
                       s.admin ? "@admin @slow @dangerous" : "@slow", "cluster", s.summary, s.since,
                       CmdClusterDisabled));
  }
  t.Add(Cmd("cluster", -2, 0, 0, 0, 0, "@slow", "cluster", "A container for cluster commands", "3.0.0", nullptr,
            std::move(subs)));
  t.Add(Cmd("asking", 1, kFast, 0, 0, 0, "@fast @connection", "cluster", "Sent by cluster clients after an -ASK redirect",
            "3.0.0", CmdClusterDisabled));
  t.Add(Cmd("readonly", 1, kLoading | kStale | kFast, 0, 0, 0, "@fast @connection", "cluster",
            "Enables read queries for a connection to a cluster replica node", "3.0.0", CmdClusterDisabled));
  t.Add(Cmd("readwrite", 1, kLoading | kStale | kFast, 0, 0, 0, "@fast @connection", "cluster",
            "Disables read queries for a connection to a cluster replica node", "3.0.0", CmdClusterDisabled));
}

}  // namespace ringkv::server

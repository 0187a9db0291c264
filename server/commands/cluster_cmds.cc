// The cluster family: CLUSTER and its subcommands, ASKING, READONLY and
// READWRITE. With cluster-enabled no each answers Redis 7.0's
// "-ERR This instance has cluster support disabled", as redis-server does.
// In cluster mode (server/cluster/) the subcommands that work on the local
// state answer as Redis 7.0 does; MEET, REPLICATE, FAILOVER (FORCE,
// TAKEOVER) and COUNT-FAILURE-REPORTS use the cluster bus
// (server/cluster/cluster_bus.h) (docs/cluster.md).
#include <algorithm>
#include <vector>

#include "core/cluster/cluster_gossip.h"
#include "core/cluster/nodes_conf.h"
#include "core/key_slot.h"
#include "server/cluster/cluster_bus.h"
#include "server/cluster/cluster_mode.h"
#include "server/cluster/cluster_replies.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/logging.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

using namespace cmd;  // NOLINT: flag names in the table below
using cluster::kClusterSlots;
using cluster::Node;

constexpr char kDisabled[] = "ERR This instance has cluster support disabled";

// The cluster component, or null after answering "cluster support disabled".
ClusterMode* Cluster(ServerCommandContext& ctx) {
  ClusterMode* cm = ctx.server.cluster();
  if (cm == nullptr) ctx.reply.Error(kDisabled);
  return cm;
}

// The node named by argv[2], or null after answering "Unknown node".
const Node* NodeOrReply(ServerCommandContext& ctx, ClusterMode& cm) {
  const Node* n = cm.state().Find(ctx.argv[2]);
  if (n == nullptr) ctx.reply.Error(StrCat("ERR Unknown node ", ctx.argv[2]));
  return n;
}

// Redis's getSlotOrReply.
bool ParseSlot(ServerCommandContext& ctx, std::string_view arg, int* slot) {
  int64_t v;
  if (!core::StringToInt64(arg, &v) || v < 0 || v >= kClusterSlots) {
    ctx.reply.Error("ERR Invalid or out of range slot");
    return false;
  }
  *slot = static_cast<int>(v);
  return true;
}

size_t KeysInSlot(ServerCommandContext& ctx, int slot) {
  const core::SlotIndex* index = ctx.server.keyspace().db(0).slot_index();
  return index == nullptr ? 0 : index->Count(slot);
}

// Redis's checkSlotAssignmentsOrReply: each slot free (ADD) or assigned
// (DEL), and named once.
bool CheckAssignments(ServerCommandContext& ctx, const cluster::ClusterState& st, bool del, int start, int end,
                      std::vector<uint8_t>* seen) {
  for (int slot = start; slot <= end; ++slot) {
    if (del && st.owner(slot) == nullptr) {
      ctx.reply.Error(StrCat("ERR Slot ", slot, " is already unassigned"));
      return false;
    }
    if (!del && st.owner(slot) != nullptr) {
      ctx.reply.Error(StrCat("ERR Slot ", slot, " is already busy"));
      return false;
    }
    if ((*seen)[slot]++ == 1) {
      ctx.reply.Error(StrCat("ERR Slot ", slot, " specified multiple times"));
      return false;
    }
  }
  return true;
}

// Redis's clusterUpdateSlots.
void UpdateSlots(ClusterMode& cm, const std::vector<uint8_t>& seen, bool del) {
  cluster::ClusterState& st = cm.state();
  for (int slot = 0; slot < kClusterSlots; ++slot) {
    if (!seen[slot]) continue;
    // Now the real owner (or none): an import of it is over.
    st.SetImporting(slot, nullptr);
    if (del) {
      st.UnassignSlot(slot);
    } else {
      st.AssignSlot(slot, &st.myself());
    }
  }
  cm.Changed();
}

// ADDSLOTS / DELSLOTS <slot>...
void SlotsCommand(ServerCommandContext& ctx, bool del) {
  ClusterMode* cm = Cluster(ctx);
  if (cm == nullptr) return;
  std::vector<int> slots;
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    int slot;
    if (!ParseSlot(ctx, ctx.argv[i], &slot)) return;
    slots.push_back(slot);
  }
  std::vector<uint8_t> seen(kClusterSlots, 0);
  for (int slot : slots) {
    if (!CheckAssignments(ctx, cm->state(), del, slot, slot, &seen)) return;
  }
  UpdateSlots(*cm, seen, del);
  ctx.reply.Ok();
}

// ADDSLOTSRANGE / DELSLOTSRANGE <start> <end>...
void SlotRangesCommand(ServerCommandContext& ctx, bool del) {
  ClusterMode* cm = Cluster(ctx);
  if (cm == nullptr) return;
  if (ctx.argv.size() % 2 == 1) {
    ctx.reply.Error(StrCat("ERR wrong number of arguments for 'cluster|", del ? "delslotsrange" : "addslotsrange",
                           "' command"));
    return;
  }
  std::vector<uint8_t> seen(kClusterSlots, 0);
  for (size_t i = 2; i + 1 < ctx.argv.size(); i += 2) {
    int start, end;
    if (!ParseSlot(ctx, ctx.argv[i], &start) || !ParseSlot(ctx, ctx.argv[i + 1], &end)) return;
    if (start > end) {
      ctx.reply.Error(StrCat("ERR start slot number ", start, " is greater than end slot number ", end));
      return;
    }
    if (!CheckAssignments(ctx, cm->state(), del, start, end, &seen)) return;
  }
  UpdateSlots(*cm, seen, del);
  ctx.reply.Ok();
}

void CmdAddSlots(ServerCommandContext& ctx) { SlotsCommand(ctx, false); }
void CmdDelSlots(ServerCommandContext& ctx) { SlotsCommand(ctx, true); }
void CmdAddSlotsRange(ServerCommandContext& ctx) { SlotRangesCommand(ctx, false); }
void CmdDelSlotsRange(ServerCommandContext& ctx) { SlotRangesCommand(ctx, true); }

// Redis's clusterBumpConfigEpochWithoutConsensus: a new epoch for myself
// unless it already holds the greatest one.
void CmdSetSlot(ServerCommandContext& ctx) {
  ClusterMode* cm = Cluster(ctx);
  if (cm == nullptr) return;
  cluster::ClusterState& st = cm->state();
  if (st.myself().is_replica()) {
    ctx.reply.Error("ERR Please use SETSLOT only with masters.");
    return;
  }
  int slot;
  if (!ParseSlot(ctx, ctx.argv[2], &slot)) return;
  const std::string_view action = ctx.argv[3];
  const size_t argc = ctx.argv.size();
  auto target = [&](const char* unknown) -> Node* {
    Node* n = st.Find(ctx.argv[4]);
    if (n == nullptr) {
      ctx.reply.Error(StrCat("ERR ", unknown, ctx.argv[4]));
    } else if (n->is_replica()) {
      ctx.reply.Error("ERR Target node is not a master");
      return nullptr;
    }
    return n;
  };
  if (Is(action, "migrating") && argc == 5) {
    if (st.owner(slot) != &st.myself()) {
      ctx.reply.Error(StrCat("ERR I'm not the owner of hash slot ", slot));
      return;
    }
    Node* n = target("I don't know about node ");
    if (n == nullptr) return;
    st.SetMigrating(slot, n);
  } else if (Is(action, "importing") && argc == 5) {
    if (st.owner(slot) == &st.myself()) {
      ctx.reply.Error(StrCat("ERR I'm already the owner of hash slot ", slot));
      return;
    }
    Node* n = target("I don't know about node ");
    if (n == nullptr) return;
    st.SetImporting(slot, n);
  } else if (Is(action, "stable") && argc == 4) {
    st.SetImporting(slot, nullptr);
    st.SetMigrating(slot, nullptr);
  } else if (Is(action, "node") && argc == 5) {
    Node* n = target("Unknown node ");
    if (n == nullptr) return;
    const size_t keys = KeysInSlot(ctx, slot);
    if (st.owner(slot) == &st.myself() && n != &st.myself() && keys != 0) {
      ctx.reply.Error(StrCat("ERR Can't assign hashslot ", slot,
                             " to a different node while I still hold keys for this hash slot."));
      return;
    }
    const bool was_mine = st.owner(slot) == &st.myself();
    // A migration with no keys left ends with the assignment.
    if (keys == 0) st.SetMigrating(slot, nullptr);
    st.UnassignSlot(slot);
    st.AssignSlot(slot, n);
    // A master left without slots becomes a replica of the new owner
    // (Redis 7.0, with cluster-allow-replica-migration).
    if (was_mine && n != &st.myself() && st.myself().num_slots == 0 && cm->bus() != nullptr &&
        ctx.server.config().Bool("cluster-allow-replica-migration")) {
      Log(kWarning, StrCat("Configuration change detected. Reconfiguring myself as a replica of ", n->name));
      cm->bus()->SetMaster(*n);
    }
    // Assigning an imported slot to myself ends the import and takes a new
    // epoch, so the cluster's other nodes would let this config win.
    if (n == &st.myself() && st.importing_from(slot) != nullptr) {
      if (cluster::BumpEpochWithoutConsensus(st, /*unless_shared=*/true)) {
        Log(kWarning, StrCat("configEpoch updated after importing slot ", slot));
      }
      // Until the source is seen to know, its claims of the slot are stale
      // (cluster::ClusterState::SetImportedFrom).
      st.SetImportedFrom(slot, st.importing_from(slot));
      st.SetImporting(slot, nullptr);
      // The others learn it at once, as Redis 7.0 does: gossip alone lets
      // a later epoch bump of the old owner (another import) reach them
      // first, and their UPDATE would then take the slot back.
      if (cm->bus() != nullptr) cm->bus()->BroadcastPongToAll();
    }
  } else {
    ctx.reply.Error("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
    return;
  }
  cm->Changed();
  ctx.reply.Ok();
}

void CmdFlushSlots(ServerCommandContext& ctx) {
  ClusterMode* cm = Cluster(ctx);
  if (cm == nullptr) return;
  if (ctx.server.keyspace().db(0).size() != 0) {
    ctx.reply.Error("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.");
    return;
  }
  cluster::ClusterState& st = cm->state();
  for (int slot = 0; slot < kClusterSlots; ++slot) {
    if (st.owner(slot) == &st.myself()) st.UnassignSlot(slot);
  }
  cm->Changed();
  ctx.reply.Ok();
}

void CmdCountKeysInSlot(ServerCommandContext& ctx) {
  if (Cluster(ctx) == nullptr) return;
  int64_t slot;
  if (!ParseInt(ctx, ctx.argv[2], &slot)) return;
  if (slot < 0 || slot >= kClusterSlots) {
    ctx.reply.Error("ERR Invalid slot");
    return;
  }
  ctx.reply.Integer(static_cast<int64_t>(KeysInSlot(ctx, static_cast<int>(slot))));
}

void CmdGetKeysInSlot(ServerCommandContext& ctx) {
  if (Cluster(ctx) == nullptr) return;
  int64_t slot, max_keys;
  if (!ParseInt(ctx, ctx.argv[2], &slot) || !ParseInt(ctx, ctx.argv[3], &max_keys)) return;
  if (slot < 0 || slot >= kClusterSlots || max_keys < 0) {
    ctx.reply.Error("ERR Invalid slot or number of keys");
    return;
  }
  const core::SlotIndex* index = ctx.server.keyspace().db(0).slot_index();
  std::vector<std::string_view> keys;
  if (index != nullptr) keys = index->Keys(static_cast<int>(slot), static_cast<size_t>(max_keys));
  ctx.reply.ArrayHeader(static_cast<int64_t>(keys.size()));
  for (std::string_view k : keys) ctx.reply.Bulk(k);
}

void CmdKeySlot(ServerCommandContext& ctx) {
  if (Cluster(ctx) == nullptr) return;
  ctx.reply.Integer(core::KeyHashSlot(ctx.argv[2]));
}

void CmdMyId(ServerCommandContext& ctx) {
  if (ClusterMode* cm = Cluster(ctx)) ctx.reply.Bulk(cm->state().myself().name);
}

void CmdSaveConfig(ServerCommandContext& ctx) {
  ClusterMode* cm = Cluster(ctx);
  if (cm == nullptr) return;
  if (absl::Status s = cm->Save(); !s.ok()) {
    ctx.reply.Error(StrCat("ERR error saving the cluster node config: ", s.message()));
    return;
  }
  ctx.reply.Ok();
}

void CmdSetConfigEpoch(ServerCommandContext& ctx) {
  ClusterMode* cm = Cluster(ctx);
  if (cm == nullptr) return;
  int64_t epoch;
  if (!ParseInt(ctx, ctx.argv[2], &epoch)) return;
  cluster::ClusterState& st = cm->state();
  if (epoch < 0) {
    ctx.reply.Error(StrCat("ERR Invalid config epoch specified: ", epoch));
  } else if (st.nodes().size() > 1) {
    ctx.reply.Error("ERR The user can assign a config epoch only when the node does not know any other node.");
  } else if (st.myself().config_epoch != 0) {
    ctx.reply.Error("ERR Node config epoch is already non-zero");
  } else {
    st.myself().config_epoch = static_cast<uint64_t>(epoch);
    Log(kWarning, StrCat("configEpoch set to ", epoch, " via CLUSTER SET-CONFIG-EPOCH"));
    st.current_epoch = std::max<uint64_t>(st.current_epoch, static_cast<uint64_t>(epoch));
    cm->Changed();
    ctx.reply.Ok();
  }
}

void CmdBumpEpoch(ServerCommandContext& ctx) {
  ClusterMode* cm = Cluster(ctx);
  if (cm == nullptr) return;
  const bool bumped = cluster::BumpEpochWithoutConsensus(cm->state(), /*unless_shared=*/false);  // as Redis
  if (bumped) cm->Changed();
  ctx.reply.SimpleString(StrCat(bumped ? "BUMPED " : "STILL ", cm->state().myself().config_epoch));
}

void CmdCountFailureReports(ServerCommandContext& ctx) {
  ClusterMode* cm = Cluster(ctx);
  if (cm == nullptr) return;
  Node* n = cm->state().Find(ctx.argv[2]);
  if (n == nullptr) {
    ctx.reply.Error(StrCat("ERR Unknown node ", ctx.argv[2]));
    return;
  }
  ctx.reply.Integer(cm->bus() != nullptr ? cm->bus()->CountFailureReports(*n) : 0);
}

// Redis's CLUSTER REPLICATE <node-id>: myself replicates a master of the
// cluster (the server's REPLICAOF path), and says so in its PINGs.
void CmdReplicate(ServerCommandContext& ctx) {
  ClusterMode* cm = Cluster(ctx);
  if (cm == nullptr) return;
  cluster::ClusterState& st = cm->state();
  Node* n = st.Find(ctx.argv[2]);
  if (n == nullptr) {
    ctx.reply.Error(StrCat("ERR Unknown node ", ctx.argv[2]));
    return;
  }
  if (n == &st.myself()) {
    ctx.reply.Error("ERR Can't replicate myself");
    return;
  }
  if (n->is_replica()) {
    ctx.reply.Error("ERR I can only replicate a master, not a replica.");
    return;
  }
  if (st.myself().is_master() && (st.myself().num_slots != 0 || ctx.server.keyspace().db(0).size() != 0)) {
    ctx.reply.Error("ERR To set a master the node must be empty and without assigned slots.");
    return;
  }
  if (cm->bus() == nullptr) {
    ctx.reply.Error("ERR The cluster bus is not running");
    return;
  }
  cm->bus()->SetMaster(*n);
  ctx.reply.Ok();
}

// Redis's CLUSTER MEET <ip> <port> [<bus-port>]: a handshake starts (the
// node shows as "handshake" until its PONG names it).
void CmdMeet(ServerCommandContext& ctx) {
  ClusterMode* cm = Cluster(ctx);
  if (cm == nullptr) return;
  if (ctx.argv.size() > 5) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  int64_t port = 0, cport = 0;
  if (!core::StringToInt64(ctx.argv[3], &port)) {
    ctx.reply.Error(StrCat("ERR Invalid TCP base port specified: ", ctx.argv[3]));
    return;
  }
  if (ctx.argv.size() == 5) {
    if (!core::StringToInt64(ctx.argv[4], &cport)) {
      ctx.reply.Error(StrCat("ERR Invalid TCP bus port specified: ", ctx.argv[4]));
      return;
    }
  } else {
    cport = port + 10000;
  }
  if (cm->bus() == nullptr || !cm->bus()->Meet(std::string(ctx.argv[2]), port, cport)) {
    ctx.reply.Error(StrCat("ERR Invalid node address specified: ", ctx.argv[2], ":", ctx.argv[3]));
    return;
  }
  ctx.reply.Ok();
}

void CmdForget(ServerCommandContext& ctx) {
  ClusterMode* cm = Cluster(ctx);
  if (cm == nullptr) return;
  cluster::ClusterState& st = cm->state();
  const Node* n = NodeOrReply(ctx, *cm);
  if (n == nullptr) return;
  if (n == &st.myself()) {
    ctx.reply.Error("ERR I tried hard but I can't forget myself...");
    return;
  }
  if (st.myself().is_replica() && st.myself().master == n->name) {
    ctx.reply.Error("ERR Can't forget my master!");
    return;
  }
  const std::string name(ctx.argv[2]);
  if (cm->bus() != nullptr) cm->bus()->Blacklist(name);  // not re-learnt by gossip for 60 s
  for (const auto& other : st.nodes()) {
    std::erase_if(other->fail_reports, [&](const Node::FailReport& r) { return r.reporter == name; });
  }
  st.Remove(name);
  if (cm->bus() != nullptr) cm->bus()->NodeRemoved(name);
  cm->Changed();
  ctx.reply.Ok();
}

// Redis's clusterReset: open slots closed, slots unassigned, every other
// node forgotten; HARD also zeroes the epochs and takes a new name.
void CmdClusterReset(ServerCommandContext& ctx) {
  ClusterMode* cm = Cluster(ctx);
  if (cm == nullptr) return;
  bool hard = false;
  if (ctx.argv.size() == 3) {
    if (Is(ctx.argv[2], "hard")) {
      hard = true;
    } else if (!Is(ctx.argv[2], "soft")) {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  } else if (ctx.argv.size() > 3) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  cluster::ClusterState& st = cm->state();
  if (st.myself().is_master() && ctx.server.keyspace().db(ctx.client.db).size() != 0) {
    ctx.reply.Error("ERR CLUSTER RESET can't be called with master nodes containing keys");
    return;
  }
  Node& me = st.myself();
  if (me.is_replica()) {
    // A replica becomes an empty master (Redis's emptyData).
    me.flags = static_cast<uint16_t>((me.flags & ~cluster::kFlagReplica) | cluster::kFlagMaster);
    me.master.clear();
    ctx.server.replica_side().ReplicaOf("", 0);  // Redis's replicationUnsetMaster: writable again
    for (int i = 0; i < ctx.server.keyspace().count(); ++i) ctx.server.keyspace().db(i).Clear();
  }
  for (int slot = 0; slot < kClusterSlots; ++slot) {
    st.SetMigrating(slot, nullptr);
    st.SetImporting(slot, nullptr);
    st.UnassignSlot(slot);
  }
  std::vector<std::string> others;
  for (const auto& n : st.nodes()) {
    if (!n->is_myself()) others.push_back(n->name);
  }
  for (const std::string& name : others) st.Remove(name);
  if (hard) {
    st.current_epoch = 0;
    st.last_vote_epoch = 0;
    me.config_epoch = 0;
    Log(kWarning, "configEpoch set to 0 via CLUSTER RESET HARD");
    Node renamed = me;
    renamed.name = cluster::RandomNodeName();
    st.Add(std::move(renamed));  // replaces myself (nothing refers to it any more)
    Log(kNotice, StrCat("Node hard reset, now I'm ", st.myself().name));
  }
  cm->Changed();
  ctx.reply.Ok();
}

// Redis's CLUSTER FAILOVER [FORCE|TAKEOVER] on a replica (the default,
// coordinated with the master by MFSTART, is not there yet: its error says so).
void CmdClusterFailover(ServerCommandContext& ctx) {
  ClusterMode* cm = Cluster(ctx);
  if (cm == nullptr) return;
  if (ctx.argv.size() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  bool force = false, takeover = false;
  if (ctx.argv.size() == 3) {
    if (Is(ctx.argv[2], "force")) {
      force = true;
    } else if (Is(ctx.argv[2], "takeover")) {
      force = takeover = true;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  if (cm->bus() == nullptr) {
    ctx.reply.Error("ERR The cluster bus is not running");
    return;
  }
  const std::string error = cm->bus()->ManualFailover(force, takeover);
  if (!error.empty()) {
    ctx.reply.Error(StrCat("ERR ", error));
    return;
  }
  ctx.reply.Ok();
}

void CmdReplicas(ServerCommandContext& ctx) {
  ClusterMode* cm = Cluster(ctx);
  if (cm == nullptr) return;
  cluster::ClusterState& st = cm->state();
  const Node* n = NodeOrReply(ctx, *cm);
  if (n == nullptr) return;
  if (n->is_replica()) {
    ctx.reply.Error("ERR The specified node is not a master");
    return;
  }
  const std::vector<Node*> replicas = st.ReplicasOf(*n);
  ctx.reply.ArrayHeader(static_cast<int64_t>(replicas.size()));
  for (const Node* r : replicas) ctx.reply.Bulk(cluster::NodeLine(st, *r, cm->UsePlaintextPort(ctx.client.on_plain_connection())));
}

template <void (*Fn)(ServerCommandContext&)>
void Reporting(ServerCommandContext& ctx) {
  if (Cluster(ctx) != nullptr) Fn(ctx);
}

void CmdAsking(ServerCommandContext& ctx) {
  if (ClusterMode* cm = Cluster(ctx)) {
    cm->SetAsking(ctx.client.id());
    ctx.reply.Ok();
  }
}

void CmdReadonly(ServerCommandContext& ctx) {
  if (ClusterMode* cm = Cluster(ctx)) {
    cm->SetReadonly(ctx.client.id(), true);
    ctx.reply.Ok();
  }
}

void CmdReadwrite(ServerCommandContext& ctx) {
  if (ClusterMode* cm = Cluster(ctx)) {
    cm->SetReadonly(ctx.client.id(), false);
    ctx.reply.Ok();
  }
}

// One CLUSTER subcommand's row.
struct ClusterSub {
  const char* name;
  int arity;
  uint32_t flags;
  bool admin;  // @admin @slow @dangerous, else @slow
  const char* summary;
  const char* since;
  ServerCommandHandler handler;
};

constexpr uint32_t kAdminFlags = kAdmin | kStale | kNoAsyncLoading;
constexpr ClusterSub kClusterSubs[] = {
    {"addslots", -3, kAdminFlags, true, "Assign new hash slots to receiving node", "3.0.0", CmdAddSlots},
    {"addslotsrange", -4, kAdminFlags, true, "Assign new hash slots to receiving node", "7.0.0", CmdAddSlotsRange},
    {"bumpepoch", 2, kAdminFlags, true, "Advance the cluster config epoch", "3.0.0", CmdBumpEpoch},
    {"count-failure-reports", 3, kAdmin | kStale, true,
     "Return the number of failure reports active for a given node", "3.0.0", CmdCountFailureReports},
    {"countkeysinslot", 3, kStale, false, "Return the number of local keys in the specified hash slot", "3.0.0",
     CmdCountKeysInSlot},
    {"delslots", -3, kAdminFlags, true, "Set hash slots as unbound in receiving node", "3.0.0", CmdDelSlots},
    {"delslotsrange", -4, kAdminFlags, true, "Set hash slots as unbound in receiving node", "7.0.0", CmdDelSlotsRange},
    {"failover", -2, kAdminFlags, true, "Forces a replica to perform a manual failover of its master.", "3.0.0",
     CmdClusterFailover},
    {"flushslots", 2, kAdminFlags, true, "Delete a node's own slots information", "3.0.0", CmdFlushSlots},
    {"forget", 3, kAdminFlags, true, "Remove a node from the nodes table", "3.0.0", CmdForget},
    {"getkeysinslot", 4, kStale, false, "Return local key names in the specified hash slot", "3.0.0",
     CmdGetKeysInSlot},
    {"help", 2, kLoading | kStale, false, "Show helpful text about the different subcommands", "5.0.0",
     Reporting<cluster_replies::Help>},
    {"info", 2, kStale, false, "Provides info about Redis Cluster node state", "3.0.0",
     Reporting<cluster_replies::Info>},
    {"keyslot", 3, kStale, false, "Returns the hash slot of the specified key", "3.0.0", CmdKeySlot},
    {"links", 2, kStale, false, "Returns a list of all TCP links to and from peer nodes in cluster", "7.0.0",
     Reporting<cluster_replies::Links>},
    {"meet", -4, kAdminFlags, true, "Force a node cluster to handshake with another node", "3.0.0", CmdMeet},
    {"myid", 2, kStale, false, "Return the node id", "3.0.0", CmdMyId},
    {"nodes", 2, kStale, false, "Get Cluster config for the node", "3.0.0", Reporting<cluster_replies::Nodes>},
    {"replicas", 3, kAdmin | kStale, true, "List replica nodes of the specified master node", "5.0.0", CmdReplicas},
    {"replicate", 3, kAdminFlags, true, "Reconfigure a node as a replica of the specified master node", "3.0.0",
     CmdReplicate},
    {"reset", -2, kAdmin | kNoscript | kStale, true, "Reset a Redis Cluster node", "3.0.0", CmdClusterReset},
    {"saveconfig", 2, kAdminFlags, true, "Forces the node to save cluster state on disk", "3.0.0", CmdSaveConfig},
    {"set-config-epoch", 3, kAdminFlags, true, "Set the configuration epoch in a new node", "3.0.0",
     CmdSetConfigEpoch},
    {"setslot", -4, kAdminFlags, true, "Bind a hash slot to a specific node", "3.0.0", CmdSetSlot},
    {"shards", 2, kStale, false, "Get array of cluster slots to node mappings", "7.0.0",
     Reporting<cluster_replies::Shards>},
    {"slaves", 3, kAdmin | kStale, true, "List replica nodes of the specified master node", "3.0.0", CmdReplicas},
    {"slots", 2, kStale, false, "Get array of Cluster slot to node mappings", "3.0.0",
     Reporting<cluster_replies::Slots>},
};

}  // namespace

void RegisterClusterCommands(CommandTable& t) {
  std::vector<CommandSpec> subs;
  for (const ClusterSub& s : kClusterSubs) {
    subs.push_back(Cmd(StrCat("cluster|", s.name), s.arity, s.flags, 0, 0, 0,
                       s.admin ? "@admin @slow @dangerous" : "@slow", "cluster", s.summary, s.since, s.handler));
  }
  t.Add(Cmd("cluster", -2, 0, 0, 0, 0, "@slow", "cluster", "A container for cluster commands", "3.0.0", nullptr,
            std::move(subs)));
  t.Add(Cmd("asking", 1, kFast, 0, 0, 0, "@fast @connection", "cluster", "Sent by cluster clients after an -ASK redirect",
            "3.0.0", CmdAsking));
  t.Add(Cmd("readonly", 1, kLoading | kStale | kFast, 0, 0, 0, "@fast @connection", "cluster",
            "Enables read queries for a connection to a cluster replica node", "3.0.0", CmdReadonly));
  t.Add(Cmd("readwrite", 1, kLoading | kStale | kFast, 0, 0, 0, "@fast @connection", "cluster",
            "Disables read queries for a connection to a cluster replica node", "3.0.0", CmdReadwrite));
}

}  // namespace ringkv::server

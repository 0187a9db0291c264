#include "core/cluster/nodes_conf.h"
#include "core/strings.h"
#include "server/cluster/cluster_bus.h"
#include "server/cluster/cluster_mode.h"
#include "server/cluster/cluster_replies.h"
#include "server/commands/util.h"
#include "server/server.h"

namespace ringkv::server::cluster_replies {
namespace {

using cluster::Node;

// A node's offset as CLUSTER SHARDS shows it (myself: this server's).
int64_t Offset(ServerCommandContext& ctx, const Node& n) {
  return n.is_myself() ? static_cast<int64_t>(ctx.server.announced_repl_offset()) : n.repl_offset;
}

// Redis's isReplicaAvailable: a replica is listed in CLUSTER SLOTS once it
// is known to have data and is not failing.
bool ReplicaAvailable(ServerCommandContext& ctx, const Node& n) { return !n.failed() && Offset(ctx, n) != 0; }

// Redis's addNodeToNodeReply: endpoint, port, id, then a map of the
// networking details the endpoint did not give.
void NodeEntry(ServerCommandContext& ctx, const ClusterMode& cm, const Node& n) {
  io::ReplyBuilder& rb = ctx.reply;
  const std::string& pref = cm.preferred_endpoint();
  rb.ArrayHeader(4);
  if (pref == "ip") {
    rb.Bulk(n.ip);
  } else if (pref == "hostname") {
    rb.Bulk(n.hostname.empty() ? "?" : n.hostname);
  } else {
    rb.Null();
  }
  rb.Integer(cm.PortFor(n, ctx.client.on_plain_connection()));
  rb.Bulk(n.name);
  const bool show_ip = pref != "ip";
  const bool show_hostname = pref != "hostname" && !n.hostname.empty();
  rb.MapHeader((show_ip ? 1 : 0) + (show_hostname ? 1 : 0));
  if (show_ip) {
    rb.Bulk("ip");
    rb.Bulk(n.ip);
  }
  if (show_hostname) {
    rb.Bulk("hostname");
    rb.Bulk(n.hostname);
  }
}

// Redis's addNodeDetailsToShardReply: "port" is the plaintext port and
// "tls-port" the TLS one, whatever the client's connection; each only when
// known (with tls-cluster, a node's plaintext port comes with its pings).
void ShardNode(ServerCommandContext& ctx, const ClusterMode& cm, const Node& n) {
  io::ReplyBuilder& rb = ctx.reply;
  const int64_t offset = Offset(ctx, n);
  const int plaintext_port = cm.tls_cluster() ? n.pport : n.port;
  const int tls_port = cm.tls_cluster() ? n.port : 0;
  const bool hostname = !n.hostname.empty();
  rb.MapHeader(6 + (plaintext_port != 0 ? 1 : 0) + (tls_port != 0 ? 1 : 0) + (hostname ? 1 : 0));
  rb.Bulk("id");
  rb.Bulk(n.name);
  if (plaintext_port != 0) {
    rb.Bulk("port");
    rb.Integer(plaintext_port);
  }
  if (tls_port != 0) {
    rb.Bulk("tls-port");
    rb.Integer(tls_port);
  }
  rb.Bulk("ip");
  rb.Bulk(n.ip);
  rb.Bulk("endpoint");
  rb.Bulk(cm.Endpoint(n));
  if (hostname) {
    rb.Bulk("hostname");
    rb.Bulk(n.hostname);
  }
  rb.Bulk("role");
  rb.Bulk(n.is_replica() ? "replica" : "master");
  rb.Bulk("replication-offset");
  rb.Integer(offset);
  rb.Bulk("health");
  rb.Bulk(n.failed() ? "fail" : (n.is_replica() && offset == 0) ? "loading" : "online");
}

constexpr const char* kHelp[] = {
    "ADDSLOTS <slot> [<slot> ...]",
    "    Assign slots to current node.",
    "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Assign slots which are between <start-slot> and <end-slot> to current node.",
    "BUMPEPOCH",
    "    Advance the cluster config epoch.",
    "COUNT-FAILURE-REPORTS <node-id>",
    "    Return number of failure reports for <node-id>.",
    "COUNTKEYSINSLOT <slot>",
    "    Return the number of keys in <slot>.",
    "DELSLOTS <slot> [<slot> ...]",
    "    Delete slots information from current node.",
    "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Delete slots information which are between <start-slot> and <end-slot> from current node.",
    "FAILOVER [FORCE|TAKEOVER]",
    "    Promote current replica node to being a master.",
    "FORGET <node-id>",
    "    Remove a node from the cluster.",
    "GETKEYSINSLOT <slot> <count>",
    "    Return key names stored by current node in a slot.",
    "FLUSHSLOTS",
    "    Delete current node own slots information.",
    "INFO",
    "    Return information about the cluster.",
    "KEYSLOT <key>",
    "    Return the hash slot for <key>.",
    "MEET <ip> <port> [<bus-port>]",
    "    Connect nodes into a working cluster.",
    "MYID",
    "    Return the node id.",
    "NODES",
    "    Return cluster configuration seen by node. Output format:",
    "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
    "REPLICATE <node-id>",
    "    Configure current node as replica to <node-id>.",
    "RESET [HARD|SOFT]",
    "    Reset current node (default: soft).",
    "SET-CONFIG-EPOCH <epoch>",
    "    Set config epoch of current node.",
    "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
    "    Set slot state.",
    "REPLICAS <node-id>",
    "    Return <node-id> replicas.",
    "SAVECONFIG",
    "    Force saving cluster configuration on disk.",
    "SLOTS",
    "    Return information about slots range mappings. Each range is made of:",
    "    start, end, master and replicas IP addresses, ports and ids",
    "SHARDS",
    "    Return information about slot range mappings and the nodes associated with them.",
    "LINKS",
    "    Return information about all network links between this node and its peers.",
    "    Output format is an array where each array element is a map containing attributes of a link",
};

}  // namespace

void Info(ServerCommandContext& ctx) {
  const cluster::ClusterState& st = ctx.server.cluster()->state();
  const int assigned = st.slots_assigned(), pfail = st.slots_pfail(), fail = st.slots_fail();
  // Redis's genClusterInfoString: a line per message type sent / received
  // (those with a count), then the totals.
  std::string stats;
  const ClusterBus* bus = ctx.server.cluster()->bus();
  for (int dir = 0; dir < 2; ++dir) {
    uint64_t total = 0;
    for (uint16_t t = 0; t < cluster::kMsgTypeCount; ++t) {
      const uint64_t n = bus == nullptr ? 0 : (dir == 0 ? bus->sent()[t] : bus->received()[t]);
      if (n == 0) continue;
      total += n;
      StrAppend(&stats, "cluster_stats_messages_", BusMessageTypeName(static_cast<cluster::MsgType>(t)),
                dir == 0 ? "_sent:" : "_received:", n, "\r\n");
    }
    StrAppend(&stats, "cluster_stats_messages_", dir == 0 ? "sent:" : "received:", total, "\r\n");
  }
  ctx.reply.Verbatim(StrCat("cluster_state:", st.ok() ? "ok" : "fail",
                            "\r\ncluster_slots_assigned:", assigned,
                            "\r\ncluster_slots_ok:", assigned - pfail - fail,
                            "\r\ncluster_slots_pfail:", pfail,
                            "\r\ncluster_slots_fail:", fail,
                            "\r\ncluster_known_nodes:", st.nodes().size(),
                            "\r\ncluster_size:", st.size(),
                            "\r\ncluster_current_epoch:", st.current_epoch,
                            "\r\ncluster_my_epoch:", st.ShownEpoch(st.myself()),
                            "\r\n", stats, "total_cluster_links_buffer_limit_exceeded:",
                            bus == nullptr ? 0 : bus->links_buffer_limit_exceeded(), "\r\n"));
}

void Nodes(ServerCommandContext& ctx) {
  ClusterMode& cm = *ctx.server.cluster();
  ctx.reply.Verbatim(cluster::NodeLines(cm.state(), false, cm.UsePlaintextPort(ctx.client.on_plain_connection())));
}

// Redis 7.0's clusterReplyMultiBulkSlots: one entry per run of slots with
// one owner, in slot order (so every node of a cluster answers alike), its
// available replicas after it.
void Slots(ServerCommandContext& ctx) {
  ClusterMode& cm = *ctx.server.cluster();
  const cluster::ClusterState& st = cm.state();
  struct Entry {
    const Node* master;
    int start, end;
  };
  std::vector<Entry> entries;
  for (int slot = 0; slot < cluster::kClusterSlots; ++slot) {
    const Node* n = st.owner(slot);
    if (n == nullptr) continue;
    if (!entries.empty() && entries.back().master == n && entries.back().end == slot - 1) {
      entries.back().end = slot;
    } else {
      entries.push_back({n, slot, slot});
    }
  }
  ctx.reply.ArrayHeader(static_cast<int64_t>(entries.size()));
  for (const Entry& e : entries) {
    std::vector<const Node*> replicas;
    for (const Node* r : st.ReplicasOf(*e.master)) {
      if (ReplicaAvailable(ctx, *r)) replicas.push_back(r);
    }
    ctx.reply.ArrayHeader(3 + static_cast<int64_t>(replicas.size()));
    ctx.reply.Integer(e.start);
    ctx.reply.Integer(e.end);
    NodeEntry(ctx, cm, *e.master);
    for (const Node* r : replicas) NodeEntry(ctx, cm, *r);
  }
}

// Redis 7.0's clusterReplyShards: one shard per master (with or without
// slots): its ranges, then the master and its replicas.
void Shards(ServerCommandContext& ctx) {
  ClusterMode& cm = *ctx.server.cluster();
  const cluster::ClusterState& st = cm.state();
  std::vector<const Node*> masters;
  for (const auto& n : st.nodes()) {
    if (n->is_master()) masters.push_back(n.get());
  }
  ctx.reply.ArrayHeader(static_cast<int64_t>(masters.size()));
  for (const Node* m : masters) {
    ctx.reply.MapHeader(2);
    ctx.reply.Bulk("slots");
    const auto ranges = st.SlotRanges(*m);
    ctx.reply.ArrayHeader(static_cast<int64_t>(ranges.size() * 2));
    for (const auto& [a, b] : ranges) {
      ctx.reply.Integer(a);
      ctx.reply.Integer(b);
    }
    ctx.reply.Bulk("nodes");
    const std::vector<Node*> replicas = st.ReplicasOf(*m);
    ctx.reply.ArrayHeader(1 + static_cast<int64_t>(replicas.size()));
    ShardNode(ctx, cm, *m);
    for (const Node* r : replicas) ShardNode(ctx, cm, *r);
  }
}

// Redis 7.0's clusterReplyLinks: node by node, its outbound link then its
// inbound one. events: "r" once connected, "w" added while bytes wait to be
// written (Redis's write handler), "w" alone while connecting.
void Links(ServerCommandContext& ctx) {
  const ClusterBus* bus = ctx.server.cluster()->bus();
  const std::vector<BusLinkInfo> links = bus == nullptr ? std::vector<BusLinkInfo>{} : bus->Links();
  ctx.reply.ArrayHeader(static_cast<int64_t>(links.size()));
  for (const BusLinkInfo& l : links) {
    ctx.reply.MapHeader(6);
    ctx.reply.Bulk("direction");
    ctx.reply.Bulk(l.inbound ? "from" : "to");
    ctx.reply.Bulk("node");
    ctx.reply.Bulk(l.node);
    ctx.reply.Bulk("create-time");
    ctx.reply.Integer(l.ctime_ms);
    ctx.reply.Bulk("events");
    ctx.reply.Bulk(!l.connected ? "w" : l.buffer_used > 0 ? "rw" : "r");
    ctx.reply.Bulk("send-buffer-allocated");
    ctx.reply.Integer(static_cast<int64_t>(l.buffer_allocated));
    ctx.reply.Bulk("send-buffer-used");
    ctx.reply.Integer(static_cast<int64_t>(l.buffer_used));
  }
}

void Help(ServerCommandContext& ctx) { ReplyHelp(ctx, kHelp); }

}  // namespace ringkv::server::cluster_replies

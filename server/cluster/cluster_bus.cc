#include "server/cluster/cluster_bus.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <tuple>

#include "core/cluster/cluster_gossip.h"
#include "core/strings.h"
#include "server/clock.h"
#include "server/cluster/cluster_mode.h"
#include "server/config.h"
#include "server/logging.h"

namespace ringkv::server {
namespace {

using cluster::BusMessage;
using cluster::MsgType;
using cluster::Node;

constexpr int64_t kCronPeriodMs = 100;
constexpr int64_t kBlacklistTtlMs = 60 * 1000;  // Redis's CLUSTER_BLACKLIST_TTL

const char* TypeName(MsgType t) {
  switch (t) {
    case MsgType::kPing: return "ping";
    case MsgType::kPong: return "pong";
    case MsgType::kMeet: return "meet";
    case MsgType::kFail: return "fail";
    case MsgType::kPublish: return "publish";
    case MsgType::kPublishShard: return "publishshard";
    case MsgType::kFailoverAuthRequest: return "auth-req";
    case MsgType::kFailoverAuthAck: return "auth-ack";
    case MsgType::kUpdate: return "update";
    case MsgType::kMfStart: return "mfstart";
    case MsgType::kModule: return "module";
  }
  return "unknown";
}

// Redis's inet_ntop round trip of an address given to MEET; "" when invalid.
std::string NormalizeIp(const std::string& ip) {
  char buf[INET6_ADDRSTRLEN] = {0};
  unsigned char raw[sizeof(in6_addr)];
  if (inet_pton(AF_INET, ip.c_str(), raw) == 1) {
    inet_ntop(AF_INET, raw, buf, sizeof(buf));
  } else if (inet_pton(AF_INET6, ip.c_str(), raw) == 1) {
    inet_ntop(AF_INET6, raw, buf, sizeof(buf));
  } else {
    return "";
  }
  return buf;
}

}  // namespace

const char* BusMessageTypeName(MsgType t) { return TypeName(t); }

ClusterBus::ClusterBus(ClusterMode& mode, Config& config, ClusterHooks hooks)
    : mode_(mode), config_(config), hooks_(std::move(hooks)), net_(std::make_unique<BusNet>(*hooks_.io, hooks_.notify)) {}

void ClusterBus::SetMaster(Node& master) {
  cluster::ClusterState& st = mode_.state();
  Node& me = st.myself();
  if (me.is_master()) {
    me.flags &= ~(cluster::kFlagMaster | cluster::kFlagMigrateTo);
    me.flags |= cluster::kFlagReplica;
    for (int s = 0; s < cluster::kClusterSlots; ++s) {  // clusterCloseAllSlots
      st.SetMigrating(s, nullptr);
      st.SetImporting(s, nullptr);
    }
  }
  me.master = master.name;
  if (!master.ip.empty()) hooks_.set_master(master.ip, master.port);
  ResetManualFailover();  // a master paused for a manual failover resumes (as a replica now)
  todo_save_ = todo_update_ = true;
  FlushTodo();
  // The new role is told at once rather than at the next pings (up to half
  // a node timeout later): a master that does not know its new replica yet
  // leaves it out of SPUBLISH's shard (Redis 7.0 waits for the pings; its
  // unit/cluster/links starts publishing right after CLUSTER REPLICATE).
  BroadcastPong(false);
}

ClusterBus::~ClusterBus() = default;

absl::Status ClusterBus::Start(const std::vector<std::string>& addresses, int port) {
  SyncTls();  // before the first accept
  return net_->Start(addresses, port);
}

void ClusterBus::SyncTls() {
  const bool enabled = config_.Bool("tls-cluster");
  io::SslCtxPtr server_ctx, client_ctx;
  // The start and CONFIG SET configure TLS before tls-cluster is on, and
  // fail when they cannot; were the contexts missing anyway, BusNet refuses
  // new links rather than make them plain.
  if (enabled && hooks_.tls_contexts) std::tie(server_ctx, client_ctx) = hooks_.tls_contexts();
  if (enabled == tls_enabled_ && server_ctx == tls_server_ && client_ctx == tls_client_) return;
  tls_enabled_ = enabled;
  tls_server_ = server_ctx;
  tls_client_ = client_ctx;
  net_->SetTls(enabled, std::move(server_ctx), std::move(client_ctx));
}

int64_t ClusterBus::NodeTimeout() const { return config_.Int("cluster-node-timeout"); }

Node* ClusterBus::NodeOf(const Link& l) { return l.node.empty() ? nullptr : mode_.state().Find(l.node); }

void ClusterBus::FreeLink(uint64_t id) {
  auto it = links_.find(id);
  if (it == links_.end()) return;
  if (Node* n = NodeOf(it->second)) {
    if (n->link == id) {
      n->link = 0;
      n->linked = false;
    }
    if (n->inbound_link == id) n->inbound_link = 0;
  }
  net_->Close(id);
  links_.erase(it);
}

void ClusterBus::DelNode(Node* n) {
  const std::string name = n->name;
  // Its failure reports in other nodes go too (Redis's clusterDelNode).
  for (const auto& other : mode_.state().nodes()) {
    std::erase_if(other->fail_reports, [&](const Node::FailReport& r) { return r.reporter == name; });
  }
  if (n->link) FreeLink(n->link);
  if (n->inbound_link) FreeLink(n->inbound_link);
  mode_.state().Remove(name);
  todo_save_ = todo_update_ = true;
}

void ClusterBus::NodeRemoved(const std::string& name) {
  std::vector<uint64_t> gone;
  for (const auto& [id, l] : links_) {
    if (l.node == name) gone.push_back(id);
  }
  for (uint64_t id : gone) {
    net_->Close(id);
    links_.erase(id);
  }
}

void ClusterBus::Blacklist(const std::string& name) { blacklist_[name] = UnixMs() + kBlacklistTtlMs; }

int ClusterBus::CountFailureReports(Node& n) {
  return cluster::CountFailureReports(n, UnixMs(), NodeTimeout());
}

std::vector<BusLinkInfo> ClusterBus::Links() const {
  std::vector<BusLinkInfo> out;
  for (const auto& n : mode_.state().nodes()) {
    for (uint64_t id : {n->link, n->inbound_link}) {
      if (id == 0) continue;
      auto it = links_.find(id);
      if (it == links_.end()) continue;
      const Link& l = it->second;
      const BusNet::SendBuffer b = net_->SendBufferOf(id);
      out.push_back({l.inbound, n->name, l.ctime_ms, l.connected, b.allocated, b.used});
    }
  }
  return out;
}

void ClusterBus::KillLinks(Node& n, LinkDirection dir) {
  if (dir != LinkDirection::kFrom && n.link != 0) FreeLink(n.link);
  if (dir != LinkDirection::kTo && n.inbound_link != 0) FreeLink(n.inbound_link);
}

void ClusterBus::FreeLinksOverBufferLimit(Node& n) {
  const int64_t limit = config_.Int("cluster-link-sendbuf-limit");
  if (limit <= 0) return;
  for (uint64_t id : {n.link, n.inbound_link}) {
    auto it = id == 0 ? links_.end() : links_.find(id);
    if (it == links_.end()) continue;
    const uint64_t mem = net_->SendBufferOf(id).allocated;
    if (mem <= static_cast<uint64_t>(limit)) continue;
    Log(kWarning, StrCat("Freeing cluster link(", it->second.inbound ? "from" : "to", " node ", n.name,
                         ", used memory: ", mem, ") due to exceeding send buffer memory limit."));
    FreeLink(id);
    ++links_buffer_limit_exceeded_;
  }
}

bool ClusterBus::Meet(const std::string& ip, int64_t port, int64_t cport) {
  const std::string norm = NormalizeIp(ip);
  if (norm.empty()) return false;
  if (port <= 0 || port > 65535 || cport <= 0 || cport > 65535) return false;
  cluster::ClusterState& st = mode_.state();
  for (const auto& n : st.nodes()) {  // clusterHandshakeInProgress: not an error
    if ((n->flags & cluster::kFlagHandshake) && n->ip == norm && n->port == port && n->cport == cport) return true;
  }
  Node n;
  n.name = cluster::RandomNodeName();
  n.flags = cluster::kFlagHandshake | cluster::kFlagMeet;
  n.ip = norm;
  n.port = static_cast<int>(port);
  n.cport = static_cast<int>(cport);
  n.ctime_ms = UnixMs();
  st.Add(std::move(n));
  return true;
}

// ---- sending ----

BusMessage ClusterBus::Header(MsgType type) {
  cluster::ClusterState& st = mode_.state();
  Node& me = st.myself();
  Node* master = (me.is_replica() && !me.master.empty()) ? st.Find(me.master) : &me;
  if (master == nullptr) master = &me;
  BusMessage m;
  m.type = type;
  m.sender = me.name;
  m.myip = config_.Str("cluster-announce-ip");
  m.myslots = cluster::SlotsOf(st, *master);
  if (me.is_replica()) m.replica_of = me.master;
  m.port = static_cast<uint16_t>(me.port);
  m.pport = static_cast<uint16_t>(me.pport);
  m.cport = static_cast<uint16_t>(me.cport);
  m.flags = me.flags;
  m.state = st.ok() ? 0 : 1;
  m.current_epoch = st.current_epoch;
  m.config_epoch = master->config_epoch;
  m.offset = static_cast<uint64_t>(hooks_.repl_offset());
  // A master paused for a manual failover: this offset is final.
  if (me.is_master() && mf_end_ != 0) m.mflags[0] |= cluster::kMsgFlagPaused;
  return m;
}

void ClusterBus::SendTo(uint64_t link, const BusMessage& m) {
  auto it = links_.find(link);
  if (it == links_.end()) return;
  net_->Send(link, cluster::Encode(m));
  if (static_cast<uint16_t>(m.type) < cluster::kMsgTypeCount) ++sent_[static_cast<uint16_t>(m.type)];
}

void ClusterBus::SendPing(Link& l, MsgType type) {
  cluster::ClusterState& st = mode_.state();
  BusMessage m = Header(type);
  ++pings_sent_;
  std::vector<Node*> picked = cluster::PickGossip(st, pings_sent_, stats_pfail_nodes_, [this](size_t n) {
    return absl::Uniform<size_t>(rng_, 0, n);
  });
  for (Node* n : picked) m.gossip.push_back(cluster::GossipAbout(*n));
  if (!st.myself().hostname.empty()) m.ext.hostname = st.myself().hostname;
  if (type == MsgType::kPing) {
    if (Node* n = NodeOf(l); n != nullptr && !l.inbound) n->ping_sent_ms = UnixMs();
  }
  SendTo(l.id, m);
}

void ClusterBus::Broadcast(const BusMessage& m) {
  for (const auto& n : mode_.state().nodes()) {
    if (n->link == 0 || (n->flags & (cluster::kFlagMyself | cluster::kFlagHandshake))) continue;
    SendTo(n->link, m);
  }
}

void ClusterBus::PropagatePublish(bool shard, std::string_view channel, std::string_view message) {
  BusMessage m = Header(shard ? MsgType::kPublishShard : MsgType::kPublish);
  m.channel = std::string(channel);
  m.message = std::string(message);
  if (!shard) {
    Broadcast(m);
    return;
  }
  // Redis's clusterGetNodesServingMySlots: my master (or myself) and its replicas.
  cluster::ClusterState& st = mode_.state();
  Node& me = st.myself();
  Node* master = me.is_master() ? &me : st.MasterOf(me);
  if (master == nullptr) return;
  std::vector<Node*> shard_nodes = st.ReplicasOf(*master);
  shard_nodes.push_back(master);
  for (Node* n : shard_nodes) {
    if (n != &me && n->link != 0) SendTo(n->link, m);
  }
}

void ClusterBus::SendFail(const std::string& name) {
  BusMessage m = Header(MsgType::kFail);
  m.fail_about = name;
  Broadcast(m);
}

void ClusterBus::SendUpdate(uint64_t link, const Node& about) {
  if (link == 0) return;
  BusMessage m = Header(MsgType::kUpdate);
  m.update_node = about.name;
  m.update_config_epoch = about.config_epoch;
  m.update_slots = cluster::SlotsOf(mode_.state(), about);
  SendTo(link, m);
}

// ---- cron ----

void ClusterBus::Connect(Node& n, int64_t now_ms) {
  const uint64_t id = net_->Connect(n.ip, n.cport);
  Link& l = links_[id];
  l.id = id;
  l.inbound = false;
  l.node = n.name;
  l.ctime_ms = now_ms;
  n.link = id;
  n.linked = false;
}

void ClusterBus::Cron(int64_t now_ms) {
  if (now_ms < next_cron_ms_) return;
  next_cron_ms_ = now_ms + kCronPeriodMs;
  SyncTls();
  cluster::ClusterState& st = mode_.state();
  const int64_t timeout = NodeTimeout();
  const int64_t handshake_timeout = std::max<int64_t>(timeout, 1000);
  ++iteration_;
  for (auto it = blacklist_.begin(); it != blacklist_.end();) {
    if (it->second <= now_ms) {
      blacklist_.erase(it++);
    } else {
      ++it;
    }
  }
  // Links of nodes that are gone (FORGET, RESET) or replaced.
  std::vector<uint64_t> stale;
  for (const auto& [id, l] : links_) {
    if (l.node.empty()) continue;
    const Node* n = st.Find(l.node);
    if (n == nullptr || (n->link != id && n->inbound_link != id)) stale.push_back(id);
  }
  for (uint64_t id : stale) FreeLink(id);

  stats_pfail_nodes_ = 0;
  std::vector<Node*> nodes;
  for (const auto& p : st.nodes()) nodes.push_back(p.get());
  for (Node* n : nodes) {
    if (n->flags & (cluster::kFlagMyself | cluster::kFlagNoAddr)) continue;
    if (n->flags & cluster::kFlagPfail) ++stats_pfail_nodes_;
    if ((n->flags & cluster::kFlagHandshake) && now_ms - n->ctime_ms > handshake_timeout) {
      DelNode(n);
      continue;
    }
    if (n->link == 0 && !n->ip.empty() && n->cport > 0) Connect(*n, now_ms);
    FreeLinksOverBufferLimit(*n);
  }
  nodes.clear();
  for (const auto& p : st.nodes()) nodes.push_back(p.get());

  // Once a second: ping the node of a few random ones with the oldest pong.
  if (iteration_ % 10 == 0 && !nodes.empty()) {
    Node* min_pong_node = nullptr;
    for (int j = 0; j < 5; ++j) {
      Node* n = nodes[absl::Uniform<size_t>(rng_, 0, nodes.size())];
      if (n->link == 0 || n->ping_sent_ms != 0) continue;
      if (n->flags & (cluster::kFlagMyself | cluster::kFlagHandshake)) continue;
      auto lit = links_.find(n->link);
      if (lit == links_.end() || !lit->second.connected) continue;
      if (min_pong_node == nullptr || min_pong_node->pong_received_ms > n->pong_received_ms) min_pong_node = n;
    }
    if (min_pong_node != nullptr) SendPing(links_[min_pong_node->link], MsgType::kPing);
  }

  for (Node* n : nodes) {
    if (n->flags & (cluster::kFlagMyself | cluster::kFlagNoAddr | cluster::kFlagHandshake)) continue;
    // A master paused for a replica's manual failover pings it every turn.
    if (mf_end_ != 0 && st.myself().is_master() && mf_replica_ == n->name && n->link != 0) {
      auto lit = links_.find(n->link);
      if (lit != links_.end() && lit->second.connected) {
        SendPing(lit->second, MsgType::kPing);
        continue;
      }
    }
    const int64_t ping_delay = now_ms - n->ping_sent_ms;
    const int64_t data_delay = now_ms - n->data_received_ms;
    auto lit = n->link ? links_.find(n->link) : links_.end();
    Link* link = lit == links_.end() ? nullptr : &lit->second;
    // No data for half the timeout while a ping waits: reconnect (a link
    // still connecting, or stuck in its TLS handshake, too, as Redis's).
    if (link != nullptr && now_ms - link->ctime_ms > timeout && n->ping_sent_ms != 0 &&
        ping_delay > timeout / 2 && data_delay > timeout / 2) {
      FreeLink(n->link);
      link = nullptr;
    }
    if (link != nullptr && link->connected && n->ping_sent_ms == 0 && now_ms - n->pong_received_ms > timeout / 2) {
      SendPing(*link, MsgType::kPing);
      continue;
    }
    if (n->ping_sent_ms == 0) continue;
    const int64_t node_delay = std::min(ping_delay, data_delay);
    if (node_delay > timeout && !(n->flags & (cluster::kFlagPfail | cluster::kFlagFail))) {
      Log(kDebug, StrCat("*** NODE ", n->name, " possibly failing"));
      n->flags |= cluster::kFlagPfail;
      todo_update_ = true;
    }
  }
  if (mf_end_ != 0 && mf_end_ < now_ms) {  // Redis's manualFailoverCheckTimeout
    Log(kWarning, "Manual failover timed out.");
    ResetManualFailover();
  }
  // Redis's clusterNodeAddSlave: a master that has a replica is meant to
  // keep one (an orphan for replica migration once it has none).
  for (const auto& p : st.nodes()) {
    if (!p->is_replica()) continue;
    if (Node* m = st.MasterOf(*p); m != nullptr && m->is_master()) m->flags |= cluster::kFlagMigrateTo;
  }
  if (st.myself().is_replica()) {
    HandleManualFailover();
    HandleReplicaFailover(now_ms);
    if (st.myself().is_replica()) HandleReplicaMigration(now_ms);
  }
  // A replica (from nodes.conf, or whose master's address was unknown)
  // whose replication is off starts it once its master has an address.
  if (st.myself().is_replica() && !hooks_.replicating()) {
    const Node* master = st.MasterOf(st.myself());
    if (master != nullptr && !master->ip.empty() && master->port > 0) hooks_.set_master(master->ip, master->port);
  }
  if (!st.ok()) todo_update_ = true;
  FlushTodo();
}

void ClusterBus::FlushTodo() {
  if (todo_save_) {
    mode_.Changed();  // state and file
  } else if (todo_update_) {
    mode_.UpdateState();
  }
  todo_save_ = todo_update_ = false;
}

}  // namespace ringkv::server

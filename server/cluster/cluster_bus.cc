#include "server/cluster/cluster_bus.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

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
    : mode_(mode), config_(config), hooks_(std::move(hooks)), net_(std::make_unique<BusNet>(hooks_.notify)) {}

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
  return net_->Start(addresses, port);
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
      out.push_back({l.inbound, n->name, l.ctime_ms, l.connected, l.allocated(), l.used()});
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
    const uint64_t mem = it->second.allocated();
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
  m.pport = 0;
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
  std::string bytes = cluster::Encode(m);
  it->second.queued += bytes.size();
  net_->Send(link, std::move(bytes));
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

// ---- events ----

void ClusterBus::OnEvents() {
  std::vector<BusEvent> events;
  net_->Drain(&events);
  const int64_t now = UnixMs();
  for (BusEvent& e : events) {
    switch (e.kind) {
      case BusEvent::Kind::kAccepted: {
        Link& l = links_[e.link];
        l.id = e.link;
        l.inbound = true;
        l.connected = true;
        l.peer_ip = std::move(e.data);
        l.local_ip = std::move(e.aux);
        l.meter = std::move(e.meter);
        l.ctime_ms = now;
        Log(kVerbose, StrCat("Accepting cluster node connection from ", l.peer_ip));
        break;
      }
      case BusEvent::Kind::kConnected: {
        auto it = links_.find(e.link);
        if (it == links_.end()) break;
        Link& l = it->second;
        l.connected = true;
        l.local_ip = std::move(e.aux);
        Node* n = NodeOf(l);
        if (n == nullptr || n->link != l.id) break;
        n->linked = true;
        // Redis's clusterLinkConnectHandler: a PING (or MEET) at once,
        // keeping the time of a ping still unanswered.
        const int64_t old_ping_sent = n->ping_sent_ms;
        SendPing(l, (n->flags & cluster::kFlagMeet) ? MsgType::kMeet : MsgType::kPing);
        if (old_ping_sent != 0) n->ping_sent_ms = old_ping_sent;
        n->flags &= ~cluster::kFlagMeet;
        Log(kVerbose, StrCat("Connecting with Node ", n->name, " at ", n->ip, ":", n->cport));
        break;
      }
      case BusEvent::Kind::kClosed: {
        auto it = links_.find(e.link);
        if (it == links_.end()) break;
        Node* n = NodeOf(it->second);
        if (!it->second.connected && !it->second.inbound && n != nullptr) {
          // A connect that failed: failure detection needs a ping time.
          if (n->ping_sent_ms == 0) n->ping_sent_ms = now;
          Log(kVerbose, StrCat("Connection with Node ", n->name, " at ", n->ip, ":", n->cport, " failed: ", e.data));
        } else {
          Log(kVerbose, StrCat("Cluster bus link ", n ? n->name : it->second.peer_ip, " closed: ", e.data));
        }
        FreeLink(e.link);
        break;
      }
      case BusEvent::Kind::kFrame: {
        auto it = links_.find(e.link);
        if (it == links_.end()) break;
        OnFrame(it->second, e.data);
        break;
      }
    }
  }
  FlushTodo();
}

void ClusterBus::OnFrame(Link& l, const std::string& bytes) {
  absl::StatusOr<BusMessage> m = cluster::Decode(bytes, BusNet::kMaxFrame);
  if (!m.ok()) {
    if (absl::IsFailedPrecondition(m.status())) return;  // another protocol version: ignored, as Redis
    Log(kWarning, StrCat("Received invalid cluster bus message (", m.status().message(), "), dropped"));
    return;
  }
  ProcessPacket(l, *m);
}

bool ClusterBus::UpdateAddressIfNeeded(Node& n, const Link& l, const BusMessage& m) {
  if (l.id == n.link) return false;
  const std::string ip = !m.myip.empty() ? m.myip : l.peer_ip;
  if (ip.empty()) return false;
  if (n.port == m.port && n.cport == m.cport && n.ip == ip) return false;
  n.ip = ip;
  n.port = m.port;
  n.cport = m.cport;
  if (n.link) FreeLink(n.link);
  n.flags &= ~cluster::kFlagNoAddr;
  Log(kWarning, StrCat("Address updated for node ", n.name, ", now ", n.ip, ":", n.port));
  // Our master moved: replicate from its new address.
  if (mode_.state().myself().is_replica() && mode_.state().myself().master == n.name) hooks_.set_master(n.ip, n.port);
  return true;
}

void ClusterBus::SetNodeAsMaster(Node& n) {
  if (n.is_master()) return;
  n.master.clear();
  n.flags &= ~cluster::kFlagReplica;
  n.flags |= cluster::kFlagMaster;
  if (!n.is_myself()) n.flags |= cluster::kFlagMigrateTo;  // a failed-over master had replicas
  todo_save_ = todo_update_ = true;
}

void ClusterBus::MarkFailingIfNeeded(Node& n) {
  if (!cluster::ReachedFailQuorum(mode_.state(), n, UnixMs(), NodeTimeout())) return;
  Log(kNotice, StrCat("Marking node ", n.name, " as failing (quorum reached)."));
  n.flags &= ~cluster::kFlagPfail;
  n.flags |= cluster::kFlagFail;
  n.fail_time_ms = UnixMs();
  SendFail(n.name);
  todo_save_ = todo_update_ = true;
}

void ClusterBus::ClearFailureIfNeeded(Node& n) {
  const int64_t now = UnixMs();
  if (n.is_replica() || n.num_slots == 0) {
    Log(kNotice, StrCat("Clear FAIL state for node ", n.name, ": ",
                        n.is_replica() ? "replica" : "master without slots", " is reachable again."));
    n.flags &= ~cluster::kFlagFail;
    todo_save_ = todo_update_ = true;
  }
  if (n.is_master() && n.num_slots > 0 && now - n.fail_time_ms > NodeTimeout() * cluster::kFailUndoTimeMult) {
    Log(kNotice, StrCat("Clear FAIL state for node ", n.name,
                        ": is reachable again and nobody is serving its slots after some time."));
    n.flags &= ~cluster::kFlagFail;
    todo_save_ = todo_update_ = true;
  }
}

void ClusterBus::ProcessGossip(const BusMessage& m, Link& l) {
  cluster::ClusterState& st = mode_.state();
  Node* sender = NodeOf(l);
  if (sender == nullptr || l.inbound) sender = st.Find(m.sender);
  const int64_t now = UnixMs();
  for (const cluster::GossipEntry& g : m.gossip) {
    Node* node = st.Find(g.name);
    if (node != nullptr) {
      if (sender != nullptr && sender->is_master() && node != &st.myself()) {
        if (g.flags & (cluster::kFlagFail | cluster::kFlagPfail)) {
          if (cluster::AddFailureReport(*node, sender->name, now)) {
            Log(kVerbose, StrCat("Node ", sender->name, " reported node ", node->name, " as not reachable."));
          }
          MarkFailingIfNeeded(*node);
        } else if (cluster::DelFailureReport(*node, sender->name, now, NodeTimeout())) {
          Log(kVerbose, StrCat("Node ", sender->name, " reported node ", node->name, " is back online."));
        }
      }
      // A pong time seen by another node (not in the future), when we have
      // no ping pending and no failure reports.
      if (!(g.flags & (cluster::kFlagFail | cluster::kFlagPfail)) && node->ping_sent_ms == 0 &&
          cluster::CountFailureReports(*node, now, NodeTimeout()) == 0) {
        const int64_t pong = static_cast<int64_t>(g.pong_received) * 1000;
        if (pong <= now + 500 && pong > node->pong_received_ms) node->pong_received_ms = pong;
      }
      // A node we cannot reach, seen at another address by a node that can.
      if ((node->flags & (cluster::kFlagFail | cluster::kFlagPfail)) && !(g.flags & cluster::kFlagNoAddr) &&
          !(g.flags & (cluster::kFlagFail | cluster::kFlagPfail)) &&
          (node->ip != g.ip || node->port != g.port || node->cport != g.cport)) {
        if (node->link) FreeLink(node->link);
        node->ip = g.ip;
        node->port = g.port;
        node->cport = g.cport;
        node->flags &= ~cluster::kFlagNoAddr;
      }
    } else if (sender != nullptr && !(g.flags & cluster::kFlagNoAddr) && cluster::IsValidNodeName(g.name)) {
      auto bl = blacklist_.find(g.name);
      if (bl != blacklist_.end() && bl->second > now) continue;
      Node n;
      n.name = g.name;
      n.flags = g.flags & ~(cluster::kFlagMyself);
      n.ip = g.ip;
      n.port = g.port;
      n.cport = g.cport;
      n.ctime_ms = now;
      st.Add(std::move(n));
      todo_save_ = true;
    }
  }
}

void ClusterBus::ProcessPacket(Link& l, BusMessage& m) {
  cluster::ClusterState& st = mode_.state();
  const MsgType type = m.type;
  const uint16_t t = static_cast<uint16_t>(type);
  if (t < cluster::kMsgTypeCount) ++received_[t];
  if (drop_packet_filter_ >= 0 && t == drop_packet_filter_) {
    Log(kWarning, "Dropping packet that matches debug drop filter");
    return;
  }
  const int64_t now = UnixMs();
  Node* sender = st.Find(m.sender);
  if (sender == &st.myself()) sender = nullptr;  // a loop to ourselves: not a peer
  if (sender != nullptr) sender->data_received_ms = now;
  if (sender != nullptr && l.inbound && l.node.empty()) {
    l.node = sender->name;
    sender->inbound_link = l.id;
  }
  uint64_t sender_config_epoch = 0;
  if (sender != nullptr && !(sender->flags & cluster::kFlagHandshake)) {
    sender_config_epoch = m.config_epoch;
    if (m.current_epoch > st.current_epoch) {
      st.current_epoch = m.current_epoch;
      todo_save_ = true;
    }
    if (sender_config_epoch > sender->config_epoch) {
      sender->config_epoch = sender_config_epoch;
      todo_save_ = true;
    }
    sender->repl_offset = static_cast<int64_t>(m.offset);
    // My master, paused for my manual failover, announced its final offset.
    if (mf_end_ != 0 && st.myself().is_replica() && st.myself().master == sender->name &&
        (m.mflags[0] & cluster::kMsgFlagPaused) && mf_master_offset_ == -1) {
      mf_master_offset_ = sender->repl_offset;
      Log(kWarning, StrCat("Received replication offset for paused master manual failover: ", mf_master_offset_));
      HandleManualFailover();
    }
  }

  if (type == MsgType::kPing || type == MsgType::kMeet) {
    // Myself's address, learnt from the first MEET (or any PING while unknown).
    if ((type == MsgType::kMeet || st.myself().ip.empty()) && config_.Str("cluster-announce-ip").empty() &&
        !l.local_ip.empty() && l.local_ip != st.myself().ip) {
      st.myself().ip = l.local_ip;
      Log(kWarning, StrCat("IP address for this node updated to ", l.local_ip));
      todo_save_ = true;
    }
    if (sender == nullptr && type == MsgType::kMeet) {
      Node n;
      n.name = cluster::RandomNodeName();
      n.flags = cluster::kFlagHandshake;
      n.ip = !m.myip.empty() ? m.myip : l.peer_ip;
      n.port = m.port;
      n.cport = m.cport;
      n.ctime_ms = now;
      st.Add(std::move(n));
      todo_save_ = true;
      ProcessGossip(m, l);  // trusted because of the MEET, as Redis
    }
    SendPing(l, MsgType::kPong);
  }

  if (cluster::IsPingLike(type)) {
    if (!l.inbound) {
      Node* ln = NodeOf(l);
      if (ln == nullptr) return;
      if (ln->flags & cluster::kFlagHandshake) {
        if (sender != nullptr) {
          Log(kVerbose, StrCat("Handshake: we already know node ", sender->name, ", updating the address if needed."));
          if (UpdateAddressIfNeeded(*sender, l, m)) todo_save_ = todo_update_ = true;
          DelNode(ln);  // frees this link too
          return;
        }
        if (!cluster::IsValidNodeName(m.sender)) return;
        st.Rename(ln, m.sender);
        l.node = m.sender;
        Log(kVerbose, StrCat("Handshake with node ", ln->name, " completed."));
        ln->flags &= ~cluster::kFlagHandshake;
        ln->flags |= m.flags & (cluster::kFlagMaster | cluster::kFlagReplica);
        todo_save_ = true;
        // From now on it is the sender.
        sender = ln;
        sender->data_received_ms = now;
        sender_config_epoch = m.config_epoch;
        if (m.current_epoch > st.current_epoch) st.current_epoch = m.current_epoch;
        if (sender_config_epoch > sender->config_epoch) sender->config_epoch = sender_config_epoch;
        sender->repl_offset = static_cast<int64_t>(m.offset);
      } else if (ln->name != m.sender) {
        Log(kVerbose, StrCat("PONG contains mismatching sender ID. About node ", ln->name, " added ",
                             now - ln->ctime_ms, " ms ago, having flags ", ln->flags));
        ln->flags |= cluster::kFlagNoAddr;
        ln->ip.clear();
        ln->port = 0;
        ln->cport = 0;
        FreeLink(l.id);
        todo_save_ = true;
        return;
      }
    }
    if (sender != nullptr) {
      sender->flags = static_cast<uint16_t>((sender->flags & ~cluster::kFlagNoFailover) |
                                            (m.flags & cluster::kFlagNoFailover));
    }
    if (sender != nullptr && type == MsgType::kPing && !(sender->flags & cluster::kFlagHandshake) &&
        UpdateAddressIfNeeded(*sender, l, m)) {
      todo_save_ = todo_update_ = true;
    }
    if (!l.inbound && type == MsgType::kPong) {
      if (Node* ln = NodeOf(l)) {
        ln->pong_received_ms = now;
        ln->ping_sent_ms = 0;
        if (ln->flags & cluster::kFlagPfail) {
          ln->flags &= ~cluster::kFlagPfail;
          todo_save_ = todo_update_ = true;
        } else if (ln->failed()) {
          ClearFailureIfNeeded(*ln);
        }
      }
    }
    // Role: master, or replica of a named master.
    if (sender != nullptr) {
      if (m.replica_of.empty()) {
        SetNodeAsMaster(*sender);
      } else {
        Node* master = st.Find(m.replica_of);
        if (sender->is_master()) {
          for (int s = 0; s < cluster::kClusterSlots; ++s) {
            if (st.owner(s) == sender) st.UnassignSlot(s);
          }
          sender->flags &= ~(cluster::kFlagMaster | cluster::kFlagMigrateTo);
          sender->flags |= cluster::kFlagReplica;
          todo_save_ = todo_update_ = true;
        }
        if (master != nullptr && sender->master != master->name) {
          sender->master = master->name;
          todo_save_ = true;
        }
      }
    }
    // Slots: the sender's claim against what we know.
    Node* sender_master = nullptr;
    bool dirty_slots = false;
    if (sender != nullptr) {
      sender_master = sender->is_master() ? sender : st.MasterOf(*sender);
      if (sender_master != nullptr) dirty_slots = cluster::SlotsOf(st, *sender_master) != m.myslots;
    }
    if (sender != nullptr && sender->is_master() && dirty_slots) {
      Node* curmaster = st.myself().is_master() ? &st.myself() : st.MasterOf(st.myself());
      const int before = curmaster ? curmaster->num_slots : 0;
      bool changed = false;
      std::vector<int> lost = cluster::TakeClaimedSlots(st, *sender, sender_config_epoch, m.myslots, &changed);
      if (changed) todo_save_ = todo_update_ = true;
      AfterSlotsUpdate(*sender, curmaster, before, lost);
    }
    if (sender != nullptr && dirty_slots) {
      for (int s = 0; s < cluster::kClusterSlots; ++s) {
        if (!cluster::SlotBit(m.myslots, s)) continue;
        Node* owner = st.owner(s);
        if (owner == sender || owner == nullptr) continue;
        if (owner->config_epoch > sender_config_epoch) {
          Log(kVerbose, StrCat("Node ", sender->name, " has old slots configuration, sending an UPDATE message about ",
                               owner->name));
          SendUpdate(sender->link, *owner);
          break;
        }
      }
    }
    if (sender != nullptr && st.myself().is_master() && sender->is_master() &&
        sender_config_epoch == st.myself().config_epoch) {
      if (cluster::HandleEpochCollision(st, *sender)) {
        todo_save_ = true;
        Log(kVerbose, StrCat("WARNING: configEpoch collision with node ", sender->name, ". configEpoch set to ",
                             st.myself().config_epoch));
      }
    }
    if (sender != nullptr) {
      ProcessGossip(m, l);
      // No hostname extension: the sender announces none (Redis's
      // updateAnnouncedHostname with NULL), so a removed one is forgotten.
      const std::string hostname = m.ext.hostname.value_or("");
      if (hostname != sender->hostname) {
        sender->hostname = hostname;
        todo_save_ = true;
      }
    }
  } else if (type == MsgType::kFail) {
    if (sender != nullptr) {
      Node* failing = st.Find(m.fail_about);
      if (failing != nullptr && !(failing->flags & (cluster::kFlagFail | cluster::kFlagMyself))) {
        Log(kNotice, StrCat("FAIL message received from ", m.sender, " about ", m.fail_about));
        failing->flags |= cluster::kFlagFail;
        failing->fail_time_ms = now;
        failing->flags &= ~cluster::kFlagPfail;
        todo_save_ = todo_update_ = true;
      }
    } else {
      Log(kNotice, StrCat("Ignoring FAIL message from unknown node ", m.sender, " about ", m.fail_about));
    }
  } else if (type == MsgType::kUpdate) {
    if (sender == nullptr) return;
    Node* n = st.Find(m.update_node);
    if (n == nullptr || n->config_epoch >= m.update_config_epoch) return;
    if (n->is_replica()) SetNodeAsMaster(*n);
    n->config_epoch = m.update_config_epoch;
    todo_save_ = true;
    if (n == &st.myself()) {
      Log(kNotice, "Discarding UPDATE message about myself.");
      return;
    }
    Node* curmaster = st.myself().is_master() ? &st.myself() : st.MasterOf(st.myself());
    const int before = curmaster ? curmaster->num_slots : 0;
    bool changed = false;
    std::vector<int> lost = cluster::TakeClaimedSlots(st, *n, m.update_config_epoch, m.update_slots, &changed);
    if (changed) todo_update_ = true;
    AfterSlotsUpdate(*n, curmaster, before, lost);
  } else if (type == MsgType::kFailoverAuthRequest) {
    if (sender == nullptr) return;
    MaybeVote(*sender, m);
  } else if (type == MsgType::kFailoverAuthAck) {
    if (sender == nullptr) return;
    // A vote counts from a master serving slots, in this election's epoch.
    if (sender->is_master() && sender->num_slots > 0 && m.current_epoch >= failover_auth_epoch_) {
      ++failover_auth_count_;
      HandleReplicaFailover(now);  // maybe the quorum is here: act at once
      FlushTodo();
    }
  } else if (type == MsgType::kMfStart) {
    if (sender == nullptr) return;
    OnMfStart(*sender, l);
  } else if (type == MsgType::kPublish || type == MsgType::kPublishShard) {
    if (sender == nullptr) return;  // from a node we do not know
    hooks_.publish_local(type == MsgType::kPublishShard, m.channel, m.message);
  } else if (t >= cluster::kMsgTypeCount) {
    Log(kWarning, StrCat("Received unknown packet type: ", t));
  }
  // MODULE: not handled (no modules).
}

// ---- cron ----

void ClusterBus::Connect(Node& n, int64_t now_ms) {
  auto meter = std::make_shared<BusSendMeter>();
  const uint64_t id = net_->Connect(n.ip, n.cport, meter);
  Link& l = links_[id];
  l.id = id;
  l.meter = std::move(meter);
  l.inbound = false;
  l.node = n.name;
  l.ctime_ms = now_ms;
  n.link = id;
  n.linked = false;
}

void ClusterBus::Cron(int64_t now_ms) {
  if (now_ms < next_cron_ms_) return;
  next_cron_ms_ = now_ms + kCronPeriodMs;
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
    // No data for half the timeout while a ping waits: reconnect.
    if (link != nullptr && link->connected && now_ms - link->ctime_ms > timeout && n->ping_sent_ms != 0 &&
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

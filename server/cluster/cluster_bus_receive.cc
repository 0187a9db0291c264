// ClusterBus, receiving: what BusNet's events and frames do to the
// cluster state -- accepted and lost links, a peer's PING / PONG / MEET and
// its gossip, FAIL, UPDATE, PUBLISH, failover auth and MFSTART. The links,
// sending and the cron are in cluster_bus.cc.
#include "server/cluster/cluster_bus.h"

#include <algorithm>
#include <cstring>

#include "core/cluster/cluster_gossip.h"
#include "core/strings.h"
#include "server/clock.h"
#include "server/cluster/cluster_mode.h"
#include "server/config.h"
#include "server/logging.h"

namespace ringkv::server {

using cluster::BusMessage;
using cluster::MsgType;
using cluster::Node;
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
      case BusEvent::Kind::kAcceptFailed:  // Redis's clusterConnAcceptHandler
        Log(kVerbose, StrCat("Error accepting cluster node connection: ", e.data));
        break;
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
  // A new plaintext port alone is a new address too, as Redis's
  // nodeUpdateAddressIfNeeded (a node met by CLUSTER MEET learns it so).
  if (n.port == m.port && n.cport == m.cport && n.pport == m.pport && n.ip == ip) return false;
  n.ip = ip;
  n.port = m.port;
  n.pport = m.pport;
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
        node->pport = g.pport;
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
      n.pport = g.pport;
      n.cport = g.cport;
      n.ctime_ms = now;
      st.Add(std::move(n));
      todo_save_ = true;
    }
  }
}

void ClusterBus::UpdateSlotsFromClaim(Node& claimer, uint64_t epoch, const cluster::SlotBitmap& slots) {
  cluster::ClusterState& st = mode_.state();
  Node* curmaster = st.myself().is_master() ? &st.myself() : st.MasterOf(st.myself());
  const int before = curmaster ? curmaster->num_slots : 0;
  cluster::ClaimOutcome claim = cluster::TakeClaimedSlots(st, claimer, epoch, slots);
  if (claim.changed) todo_save_ = todo_update_ = true;
  if (claim.refused_stale_claim) {
    // The source of an import that ended here claims the slot with an epoch
    // above mine: it was told of the move after sending this. Myself takes
    // the greatest epoch and says so at once, so the nodes the stale claim
    // reached give the slot back (cluster::ClaimOutcome).
    if (cluster::BumpEpochWithoutConsensus(st, /*unless_shared=*/true)) {
      Log(kWarning, StrCat("configEpoch set to ", st.myself().config_epoch, " after a stale claim by node ",
                           claimer.name, " of a slot imported from it"));
      todo_save_ = true;
    }
    BroadcastPongToAll();
  }
  AfterSlotsUpdate(claimer, curmaster, before, claim.lost);
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
      n.pport = m.pport;
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
        ln->pport = 0;
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
    if (sender != nullptr && sender->is_master()) cluster::AcknowledgeImports(st, *sender, m.myslots);
    if (sender != nullptr && sender->is_master() && dirty_slots) {
      UpdateSlotsFromClaim(*sender, sender_config_epoch, m.myslots);
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
    UpdateSlotsFromClaim(*n, m.update_config_epoch, m.update_slots);
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

}  // namespace ringkv::server

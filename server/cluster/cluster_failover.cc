// The failover half of ClusterBus: replica election (Redis's
// clusterHandleSlaveFailover), votes (clusterSendFailoverAuthIfNeeded),
// CLUSTER FAILOVER FORCE / TAKEOVER, and following the new owner of my
// slots. The message handling and the cron are in cluster_bus.cc.
#include <algorithm>

#include "core/cluster/cluster_gossip.h"
#include "core/cluster/replica_rules.h"
#include "core/strings.h"
#include "server/clock.h"
#include "server/cluster/cluster_bus.h"
#include "server/cluster/cluster_mode.h"
#include "server/config.h"
#include "server/logging.h"

namespace ringkv::server {

using cluster::BusMessage;
using cluster::MsgType;
using cluster::Node;

constexpr int64_t kMfTimeoutMs = 5000;  // Redis's CLUSTER_MF_TIMEOUT
constexpr int64_t kMfPauseMult = 2;     // CLUSTER_MF_PAUSE_MULT: the master's pause is twice as long

bool ClusterBus::FollowIfMySlotsMoved(Node& sender, Node* curmaster, int before) {
  cluster::ClusterState& st = mode_.state();
  if (curmaster == nullptr || before == 0 || curmaster->num_slots != 0 || &sender == &st.myself()) return false;
  // Without cluster-allow-replica-migration only a takeover of exactly my
  // (master's) slots is followed -- by a master and by its replicas alike,
  // as Redis's `sender_slots == migrated_our_slots`: a shard whose slots
  // were resharded away keeps its replicas.
  if (!config_.Bool("cluster-allow-replica-migration") && before != sender.num_slots) return false;
  if (st.myself().is_replica() && st.myself().master == sender.name) return false;
  Log(kWarning, StrCat("Configuration change detected. Reconfiguring myself as a replica of ", sender.name));
  SetMaster(sender);
  return true;
}

void ClusterBus::AfterSlotsUpdate(Node& sender, Node* curmaster, int before, const std::vector<int>& lost) {
  if (FollowIfMySlotsMoved(sender, curmaster, before)) return;
  cluster::ClusterState& st = mode_.state();
  Node* master = st.MasterOf(st.myself());
  Node* grand = master != nullptr && master->is_replica() ? st.MasterOf(*master) : nullptr;
  if (grand != nullptr && grand != &st.myself()) {
    // My master turned replica when its last slot went (its PING came
    // before the new owner's claim): no slot moved from it now, so follow
    // its master, as Redis's sub-replica safeguard.
    Log(kWarning, StrCat("I'm a sub-replica! Reconfiguring myself as a replica of grandmaster ", grand->name));
    SetMaster(*grand);
    return;
  }
  // Still a master serving other slots: the keys of the slots it lost go,
  // so keys and slots agree (Redis's delKeysInSlot on its dirty slots).
  for (int s : lost) hooks_.delete_keys_in_slot(s);
}

int ClusterBus::ReplicaRank() {
  cluster::ClusterState& st = mode_.state();
  Node* master = st.MasterOf(st.myself());
  if (master == nullptr) return 0;
  const int64_t my_offset = hooks_.repl_offset();
  int rank = 0;
  for (Node* r : st.ReplicasOf(*master)) {
    if (r == &st.myself() || (r->flags & cluster::kFlagNoFailover)) continue;
    if (r->repl_offset > my_offset) ++rank;
  }
  return rank;
}

void ClusterBus::BroadcastPong(bool local_replicas_only) {
  cluster::ClusterState& st = mode_.state();
  std::vector<uint64_t> targets;
  for (const auto& n : st.nodes()) {
    if (n->link == 0 || (n->flags & (cluster::kFlagMyself | cluster::kFlagHandshake))) continue;
    if (local_replicas_only && !(n->is_replica() && !st.myself().master.empty() && n->master == st.myself().master)) {
      continue;
    }
    targets.push_back(n->link);
  }
  for (uint64_t id : targets) {
    auto it = links_.find(id);
    if (it != links_.end() && it->second.connected) SendPing(it->second, MsgType::kPong);
  }
}

std::string ClusterBus::ManualFailover(bool force, bool takeover) {
  cluster::ClusterState& st = mode_.state();
  Node& me = st.myself();
  if (me.is_master()) return "You should send CLUSTER FAILOVER to a replica";
  Node* master = st.MasterOf(me);
  if (master == nullptr) return "I'm a replica but my master is unknown to me";
  if (!force && (master->failed() || master->link == 0)) {
    return "Master is down or failed, please use CLUSTER FAILOVER FORCE";
  }
  ResetManualFailover();
  mf_end_ = UnixMs() + kMfTimeoutMs;
  if (takeover) {
    // No consensus: a new epoch, the slots, and everyone told.
    Log(kWarning, "Taking over the master (user request).");
    if (cluster::BumpEpochWithoutConsensus(st, /*unless_shared=*/true)) {
      Log(kWarning, StrCat("New configEpoch set to ", me.config_epoch));
    }
    ReplaceMyMaster();
    return "";
  }
  if (force) {
    Log(kWarning, "Forced failover user request accepted.");
    mf_can_start_ = true;
    failover_auth_time_ = 0;  // a new election at once
    HandleReplicaFailover(UnixMs());
    FlushTodo();
    return "";
  }
  // The master pauses its writes and announces its offset (OnMfStart);
  // HandleManualFailover starts the election once we processed it all.
  Log(kWarning, "Manual failover user request accepted.");
  if (master->link != 0) SendTo(master->link, Header(MsgType::kMfStart));
  return "";
}

void ClusterBus::ResetManualFailover() {
  if (!mf_replica_.empty()) hooks_.unpause_writes();  // a master paused for a replica: writes resume
  mf_end_ = 0;
  mf_can_start_ = false;
  mf_replica_.clear();
  mf_master_offset_ = -1;
}

void ClusterBus::OnMfStart(Node& sender, Link& link) {
  cluster::ClusterState& st = mode_.state();
  if (sender.master != st.myself().name || !st.myself().is_master()) return;  // only from one of my replicas
  ResetManualFailover();
  const int64_t now = UnixMs();
  mf_end_ = now + kMfTimeoutMs;
  mf_replica_ = sender.name;
  hooks_.pause_writes(now + kMfTimeoutMs * kMfPauseMult);
  Log(kWarning, StrCat("Manual failover requested by replica ", sender.name, "."));
  // The PING carries the offset at which writes stopped (PAUSED flag), so
  // the replica can start as soon as it processed it.
  SendPing(link, MsgType::kPing);
}

void ClusterBus::HandleManualFailover() {
  if (mf_end_ == 0 || mf_can_start_ || mf_master_offset_ == -1) return;
  if (mf_master_offset_ != hooks_.repl_offset()) return;  // still catching up
  mf_can_start_ = true;
  Log(kWarning, "All master replication stream processed, manual failover can start.");
  failover_auth_time_ = 0;  // a new election at once
  HandleReplicaFailover(UnixMs());
  FlushTodo();
}

void ClusterBus::HandleReplicaFailover(int64_t now) {
  cluster::ClusterState& st = mode_.state();
  Node& me = st.myself();
  Node* master = st.MasterOf(me);
  const bool manual = mf_end_ != 0 && mf_can_start_;
  if (me.is_master() || master == nullptr || (!master->failed() && !manual) ||
      (config_.Bool("cluster-replica-no-failover") && !manual) || master->num_slots == 0) {
    return;
  }
  // Data too old to be trusted (cluster-replica-validity-factor); a manual
  // failover goes on anyway.
  if (!manual && cluster::ReplicaDataTooOld(hooks_.master_data_age_ms(), NodeTimeout(),
                                            config_.Int("cluster-replica-validity-factor"),
                                            config_.Int("repl-ping-replica-period"))) {
    LogCantFailover("Disconnected from master for longer than allowed. Please check the "
                    "'cluster-replica-validity-factor' configuration option.",
                    *master, now);
    return;
  }
  const int64_t auth_timeout = std::max<int64_t>(NodeTimeout() * 2, 2000);
  const int64_t auth_retry_time = auth_timeout * 2;
  int64_t auth_age = now - failover_auth_time_;
  const int needed_quorum = st.size() / 2 + 1;
  if (auth_age > auth_retry_time) {
    failover_auth_time_ = now + 500 + absl::Uniform<int64_t>(rng_, 0, 500);
    failover_auth_count_ = 0;
    failover_auth_sent_ = false;
    failover_auth_rank_ = ReplicaRank();
    failover_auth_time_ += failover_auth_rank_ * 1000;
    if (mf_end_ != 0) {  // a manual failover: no delay
      failover_auth_time_ = now;
      failover_auth_rank_ = 0;
    }
    Log(kWarning, StrCat("Start of election delayed for ", failover_auth_time_ - now, " milliseconds (rank #",
                        failover_auth_rank_, ", offset ", hooks_.repl_offset(), ")."));
    BroadcastPong(true);
    if (mf_end_ == 0) return;
    auth_age = now - failover_auth_time_;  // a manual failover goes on at once
  }
  if (!failover_auth_sent_ && mf_end_ == 0) {
    const int newrank = ReplicaRank();
    if (newrank > failover_auth_rank_) {
      const int64_t added = (newrank - failover_auth_rank_) * 1000;
      failover_auth_time_ += added;
      failover_auth_rank_ = newrank;
      Log(kWarning, StrCat("Replica rank updated to #", newrank, ", added ", added, " milliseconds of delay."));
    }
  }
  if (now < failover_auth_time_) return;  // waiting for the delay
  if (auth_age > auth_timeout) return;     // this election expired: the next one after the retry time
  if (!failover_auth_sent_) {
    ++st.current_epoch;
    failover_auth_epoch_ = st.current_epoch;
    Log(kWarning, StrCat("Starting a failover election for epoch ", st.current_epoch, "."));
    BusMessage req = Header(MsgType::kFailoverAuthRequest);
    if (mf_end_ != 0) req.mflags[0] |= cluster::kMsgFlagForceAck;  // the masters vote although mine is up
    Broadcast(req);
    failover_auth_sent_ = true;
    todo_save_ = todo_update_ = true;
    return;
  }
  if (failover_auth_count_ >= needed_quorum) {
    Log(kWarning, "Failover election won: I'm the new master.");
    if (me.config_epoch < failover_auth_epoch_) {
      me.config_epoch = failover_auth_epoch_;
      Log(kWarning, StrCat("configEpoch set to ", me.config_epoch, " after successful failover"));
    }
    ReplaceMyMaster();
  }
}

// Redis's clusterLogCantFailover (for the reason this file checks): not
// while the master failed recently, not again for the same reason within
// CLUSTER_CANT_FAILOVER_RELOG_PERIOD (10 s).
void ClusterBus::LogCantFailover(const char* why, const Node& master, int64_t now) {
  if (cant_failover_reason_ == why && now - cant_failover_logged_ms_ < 10 * 1000) return;
  cant_failover_reason_ = why;
  if (master.failed() && now - master.fail_time_ms < NodeTimeout() + 5000) return;
  cant_failover_logged_ms_ = now;
  Log(kWarning, StrCat("Currently unable to failover: ", why));
}

void ClusterBus::HandleReplicaMigration(int64_t now) {
  cluster::ClusterState& st = mode_.state();
  if (!config_.Bool("cluster-allow-replica-migration")) return;
  Node* target = cluster::ReplicaMigrationTarget(st, st.ok(), config_.Int("cluster-migration-barrier"), now,
                                                 &orphaned_since_);
  if (target == nullptr) return;
  Log(kWarning, StrCat("Migrating to orphaned master ", target->name));
  SetMaster(*target);
}

// Redis's clusterFailoverReplaceYourMaster.
void ClusterBus::ReplaceMyMaster() {
  cluster::ClusterState& st = mode_.state();
  Node& me = st.myself();
  Node* old = st.MasterOf(me);
  if (me.is_master() || old == nullptr) return;
  me.master.clear();
  me.flags &= ~cluster::kFlagReplica;
  me.flags |= cluster::kFlagMaster;
  hooks_.set_master("", 0);  // REPLICAOF NO ONE
  for (int s = 0; s < cluster::kClusterSlots; ++s) {
    if (st.owner(s) != old) continue;
    st.UnassignSlot(s);
    st.AssignSlot(s, &me);
  }
  todo_save_ = todo_update_ = true;
  FlushTodo();
  BroadcastPong(false);
  ResetManualFailover();
}

// Redis's clusterSendFailoverAuthIfNeeded.
void ClusterBus::MaybeVote(Node& node, const BusMessage& m) {
  cluster::ClusterState& st = mode_.state();
  Node& me = st.myself();
  if (me.is_replica() || me.num_slots == 0) return;  // only masters with slots vote
  if (m.current_epoch < st.current_epoch) {
    Log(kWarning, StrCat("Failover auth denied to ", node.name, ": reqEpoch (", m.current_epoch, ") < curEpoch(",
                         st.current_epoch, ")"));
    return;
  }
  if (st.last_vote_epoch == st.current_epoch) {
    Log(kWarning, StrCat("Failover auth denied to ", node.name, ": already voted for epoch ", st.current_epoch));
    return;
  }
  Node* master = st.MasterOf(node);
  const bool force_ack = m.mflags[0] & cluster::kMsgFlagForceAck;
  if (node.is_master() || master == nullptr || (!master->failed() && !force_ack)) {
    if (node.is_master()) {
      Log(kWarning, StrCat("Failover auth denied to ", node.name, ": it is a master node"));
    } else if (master == nullptr) {
      Log(kWarning, StrCat("Failover auth denied to ", node.name, ": I don't know its master"));
    } else {
      Log(kWarning, StrCat("Failover auth denied to ", node.name, ": its master is up"));
    }
    return;
  }
  const int64_t now = UnixMs();
  if (auto it = voted_time_.find(master->name); it != voted_time_.end() && now - it->second < NodeTimeout() * 2) {
    Log(kWarning, StrCat("Failover auth denied to ", node.name, ": can't vote about this master before ",
                         NodeTimeout() * 2 - (now - it->second), " milliseconds"));
    return;
  }
  for (int s = 0; s < cluster::kClusterSlots; ++s) {
    if (!cluster::SlotBit(m.myslots, s)) continue;
    const Node* owner = st.owner(s);
    if (owner == nullptr || owner->config_epoch <= m.config_epoch) continue;
    Log(kWarning, StrCat("Failover auth denied to ", node.name, ": slot ", s, " epoch (", owner->config_epoch,
                         ") > reqEpoch (", m.config_epoch, ")"));
    return;
  }
  st.last_vote_epoch = st.current_epoch;
  voted_time_[master->name] = now;
  todo_save_ = true;
  if (node.link != 0) SendTo(node.link, Header(MsgType::kFailoverAuthAck));
  Log(kNotice, StrCat("Failover auth granted to ", node.name, " for epoch ", st.current_epoch));
}

}  // namespace ringkv::server

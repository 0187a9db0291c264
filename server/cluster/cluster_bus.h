// ClusterBus: the cluster bus's protocol, on the main thread -- Redis 7.0's
// clusterProcessPacket, clusterCron and clusterSendPing over the sockets of
// BusNet (bus_net.h: framed links of the I/O layer, on the main thread's
// loop). MEET and the handshake, PING / PONG
// with gossip sections, node discovery, slots and epochs learnt from
// headers (UPDATE sent and applied), PFAIL after cluster-node-timeout,
// failure reports, FAIL by a majority of masters and its broadcast.
//
// Replicas: CLUSTER REPLICATE, and the automatic failover of a FAIL master
// (Redis's clusterHandleSlaveFailover: the validity factor, election
// delayed by rank, FAILOVER_AUTH_REQUEST, votes of the masters, the slots
// taken with the election's epoch); a master whose slots all went to
// another follows it as a replica, one that lost some deletes their keys;
// replica migration to orphaned masters.
//
// The default manual failover (CLUSTER FAILOVER: MFSTART, the master's
// write pause and PAUSED pings, the election with FORCEACK once the replica
// reached the master's offset); PUBLISH / SPUBLISH over the bus.
//
// Not here: MODULE messages, TLS (docs/cluster.md).
//
// Thread-safety: none. REQUIRES: the main command thread.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "core/cluster/bus_message.h"
#include "core/cluster/cluster_state.h"
#include "server/cluster/bus_net.h"
#include "server/cluster/cluster_hooks.h"

namespace ringkv::server {

class ClusterMode;
class Config;

// "ping", "pong", "meet", ... as CLUSTER INFO names them.
const char* BusMessageTypeName(cluster::MsgType t);

struct BusLinkInfo {
  bool inbound = false;
  std::string node;
  int64_t ctime_ms = 0;
  bool connected = false;
  // Redis's sdsalloc / sdslen of the link's sndbuf: the link's send buffer
  // and the bytes not written to the socket yet (BusNet::SendBufferOf).
  uint64_t buffer_allocated = 0;
  uint64_t buffer_used = 0;
};

// DEBUG CLUSTERLINK KILL's direction.
enum class LinkDirection : uint8_t { kTo, kFrom, kAll };

class ClusterBus {
 public:
  // `hooks`: what the bus asks of the server (cluster_hooks.h).
  ClusterBus(ClusterMode& mode, Config& config, ClusterHooks hooks);
  ~ClusterBus();

  // Listens on myself's bus port (cluster-port, else port + 10000) on the
  // `bind` addresses.
  absl::Status Start(const std::vector<std::string>& addresses, int port);

  // The main thread's turn after BusNet's notify: every event drained.
  void OnEvents();
  // From the server's cron; runs Redis's clusterCron every 100 ms.
  void Cron(int64_t now_ms);
  // Gives BusNet the TLS contexts new links use: the server's with
  // tls-cluster, none without. Run at start and from the cron, so a CONFIG
  // SET of tls-cluster or a rotated certificate reaches new links within
  // 100 ms (links already up keep theirs, as Redis's).
  void SyncTls();

  // CLUSTER MEET: false when the address or ports are not valid (Redis's
  // clusterStartHandshake EINVAL).
  bool Meet(const std::string& ip, int64_t port, int64_t cport);
  // CLUSTER REPLICATE: myself becomes a replica of `master` (Redis's
  // clusterSetMaster: open slots closed, replication started).
  // REQUIRES: `master` is a master other than myself; myself has no slots.
  void SetMaster(cluster::Node& master);
  // CLUSTER FAILOVER [FORCE | TAKEOVER] on a replica: "" (OK at once) or
  // the error text (Redis's). TAKEOVER takes the slots at once with a new
  // epoch; FORCE runs an election now, the masters voting although its
  // master is up; the default sends MFSTART to the master, which pauses
  // writes and tells its offset, and the election starts once this replica
  // processed that offset (within CLUSTER_MF_TIMEOUT, 5 s).
  std::string ManualFailover(bool force, bool takeover);
  // Whether a manual failover is under way (mf_end): a master paused for one
  // sends its replicas no replication PING.
  bool manual_failover_in_progress() const { return mf_end_ != 0; }
  // Redis's clusterPropagatePublish: PUBLISH to every node, SPUBLISH
  // (`shard`) to the other nodes of myself's shard.
  void PropagatePublish(bool shard, std::string_view channel, std::string_view message);
  // CLUSTER FORGET: the node may not come back by gossip for 60 s.
  void Blacklist(const std::string& name);
  // A node left the table (FORGET, RESET): its links are closed.
  void NodeRemoved(const std::string& name);
  int CountFailureReports(cluster::Node& n);
  // A PONG to every node now (Redis's clusterBroadcastPong(ALL)): after a
  // SETSLOT NODE ends an import, so the new owner's claim and epoch spread
  // before an older claim of a node whose epoch is bumped meanwhile.
  void BroadcastPongToAll() { BroadcastPong(/*local_replicas_only=*/false); }

  // CLUSTER LINKS, node by node (outbound first, then inbound).
  std::vector<BusLinkInfo> Links() const;
  // DEBUG CLUSTERLINK KILL: frees myself's link(s) to / from node `n`
  // (Redis's freeClusterLink); a link that is not there is no error. The
  // cron connects a new outbound link within 100 ms; the peer reconnects an
  // inbound one. REQUIRES: `n` is not myself.
  void KillLinks(cluster::Node& n, LinkDirection dir);
  // DEBUG DROP-CLUSTER-PACKET-FILTER: received messages of this type are
  // dropped after being counted (-1: none), as Redis's test hook.
  void set_drop_packet_filter(int64_t type) { drop_packet_filter_ = type; }
  // CLUSTER INFO's total_cluster_links_buffer_limit_exceeded: links freed
  // because their send buffer passed cluster-link-sendbuf-limit.
  uint64_t links_buffer_limit_exceeded() const { return links_buffer_limit_exceeded_; }
  const std::array<uint64_t, cluster::kMsgTypeCount>& sent() const { return sent_; }
  const std::array<uint64_t, cluster::kMsgTypeCount>& received() const { return received_; }

 private:
  struct Link {
    uint64_t id = 0;
    bool inbound = false;
    bool connected = false;
    std::string node;      // "" for an inbound link not yet tied to a node
    std::string peer_ip;   // inbound: the peer's address
    std::string local_ip;  // our address on this link
    int64_t ctime_ms = 0;
  };

  int64_t NodeTimeout() const;
  cluster::Node* NodeOf(const Link& l);
  void FreeLink(uint64_t id);
  void DelNode(cluster::Node* n);
  void Connect(cluster::Node& n, int64_t now_ms);
  // Redis's clusterNodeCronFreeLinkOnBufferLimitReached: n's links whose
  // send buffer passed cluster-link-sendbuf-limit are freed.
  void FreeLinksOverBufferLimit(cluster::Node& n);

  void OnFrame(Link& l, const std::string& bytes);
  void ProcessPacket(Link& l, cluster::BusMessage& m);
  void ProcessGossip(const cluster::BusMessage& m, Link& l);
  bool UpdateAddressIfNeeded(cluster::Node& n, const Link& l, const cluster::BusMessage& m);
  void SetNodeAsMaster(cluster::Node& n);
  void MarkFailingIfNeeded(cluster::Node& n);
  void ClearFailureIfNeeded(cluster::Node& n);

  cluster::BusMessage Header(cluster::MsgType type);
  void SendTo(uint64_t link, const cluster::BusMessage& m);
  void SendPing(Link& l, cluster::MsgType type);
  void SendFail(const std::string& name);
  void SendUpdate(uint64_t link, const cluster::Node& about);
  void Broadcast(const cluster::BusMessage& m);

  void FlushTodo();

  // ---- failover (Redis's clusterHandleSlaveFailover and the vote) ----
  void HandleReplicaFailover(int64_t now_ms);
  int ReplicaRank();
  void ReplaceMyMaster();
  void BroadcastPong(bool local_replicas_only);
  // Redis's resetManualFailover: a master paused for a replica resumes.
  void ResetManualFailover();
  // Redis's clusterHandleManualFailover: the replica may start its election
  // once its offset reached the one its paused master announced.
  void HandleManualFailover();
  // Redis's clusterLogCantFailover, for the data-age reason.
  void LogCantFailover(const char* why, const cluster::Node& master, int64_t now);
  // Redis's clusterHandleSlaveMigration (core/cluster/replica_rules.h).
  void HandleReplicaMigration(int64_t now);
  // MFSTART from `sender`, one of my replicas, on `link`.
  void OnMfStart(cluster::Node& sender, Link& link);
  void MaybeVote(cluster::Node& requester, const cluster::BusMessage& m);
  // After slots moved to `sender`: follow it if my (master's) slots are gone
  // (Redis's clusterUpdateSlotsConfigWith); true when myself now follows it.
  bool FollowIfMySlotsMoved(cluster::Node& sender, cluster::Node* curmaster, int curmaster_slots_before);
  // The end of Redis's clusterUpdateSlotsConfigWith, after slots moved to
  // `sender`: follow it (FollowIfMySlotsMoved), or, a replica of a replica,
  // follow the grandmaster; else delete the keys of the slots myself lost
  // (a master that keeps serving others).
  void AfterSlotsUpdate(cluster::Node& sender, cluster::Node* curmaster, int curmaster_slots_before,
                        const std::vector<int>& lost);
  // A master's claim of `slots` at `epoch` (its PING/PONG, or an UPDATE
  // about it): the slot table follows (cluster::TakeClaimedSlots), then
  // AfterSlotsUpdate; a stale claim of a slot imported here is answered
  // with a new epoch, broadcast.
  void UpdateSlotsFromClaim(cluster::Node& claimer, uint64_t epoch, const cluster::SlotBitmap& slots);

  ClusterMode& mode_;
  Config& config_;
  ClusterHooks hooks_;
  std::unique_ptr<BusNet> net_;
  bool tls_enabled_ = false;                // what BusNet was last given
  io::SslCtxPtr tls_server_, tls_client_;
  absl::flat_hash_map<uint64_t, Link> links_;
  absl::flat_hash_map<std::string, int64_t> blacklist_;  // name -> expiry (ms)
  absl::BitGen rng_;
  uint64_t iteration_ = 0;
  uint64_t pings_sent_ = 0;
  int64_t next_cron_ms_ = 0;
  int stats_pfail_nodes_ = 0;
  // A manual failover runs until mf_end_ (0: none). On a replica,
  // mf_can_start_ once the election may start, mf_master_offset_ the offset
  // its paused master announced (-1: not yet); on a master, mf_replica_ the
  // replica that asked.
  int64_t mf_end_ = 0;
  bool mf_can_start_ = false;
  int64_t mf_master_offset_ = -1;
  std::string mf_replica_;
  const char* cant_failover_reason_ = nullptr;
  int64_t cant_failover_logged_ms_ = 0;
  absl::flat_hash_map<std::string, int64_t> orphaned_since_;  // master name -> orphaned since (ms)
  int64_t failover_auth_time_ = 0;
  int failover_auth_count_ = 0;
  bool failover_auth_sent_ = false;
  int failover_auth_rank_ = 0;
  uint64_t failover_auth_epoch_ = 0;
  absl::flat_hash_map<std::string, int64_t> voted_time_;  // master name -> when we voted about it
  int64_t drop_packet_filter_ = -1;
  uint64_t links_buffer_limit_exceeded_ = 0;
  bool todo_save_ = false;
  bool todo_update_ = false;
  std::array<uint64_t, cluster::kMsgTypeCount> sent_{};
  std::array<uint64_t, cluster::kMsgTypeCount> received_{};
};

}  // namespace ringkv::server

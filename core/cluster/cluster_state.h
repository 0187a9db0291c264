// ClusterState: what a cluster node knows of its cluster -- itself, the other
// nodes, which node serves each of the 16384 hash slots, the slots it is
// migrating or importing, and the epochs -- as Redis 7.0's clusterState.
// Pure data and the rules on it: no sockets, no threads, no keyspace. The
// server keeps one only when cluster-enabled is yes (server/cluster/).
//
// Nodes are owned here and never move (unique_ptr), so a Node* stays valid
// until that node is removed (FORGET, RESET).
//
// Thread-safety: none. REQUIRES: used by one thread (the server's main
// command thread).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/key_slot.h"

namespace ringkv::cluster {

using core::kClusterSlots;
inline constexpr size_t kNodeNameLen = 40;  // hex characters of a node id

// Node flags, numbered as Redis's CLUSTER_NODE_* (the bus carries them).
enum NodeFlag : uint16_t {
  kFlagMaster = 1,
  kFlagReplica = 2,
  kFlagPfail = 4,
  kFlagFail = 8,
  kFlagMyself = 16,
  kFlagHandshake = 32,
  kFlagNoAddr = 64,
  kFlagMeet = 128,
  kFlagMigrateTo = 256,
  kFlagNoFailover = 512,
};

struct Node {
  std::string name;      // 40 lower-case hex characters
  std::string ip;        // "" until known (a fresh node learns its own from MEET)
  std::string hostname;  // announced hostname, "" when none
  int port = 0;          // clients' port (the TLS port with tls-cluster)
  int pport = 0;         // with tls-cluster, the plaintext port (0: none or not known yet; not in nodes.conf)
  int cport = 0;         // cluster bus port
  // The port a client is told (Redis's getNodeClientPort): the plaintext
  // one where `use_pport` and it is known, else `port`.
  int ClientPort(bool use_pport) const { return use_pport && pport != 0 ? pport : port; }
  uint16_t flags = 0;
  std::string master;    // a replica's master's name ("" when none or unknown)
  uint64_t config_epoch = 0;
  int64_t ping_sent_ms = 0;
  int64_t pong_received_ms = 0;
  int64_t repl_offset = 0;
  bool linked = false;   // a bus link is up (none exists before the bus does)
  int num_slots = 0;
  // ---- the bus's view (Redis's clusterNode fields of the same names) ----
  int64_t ctime_ms = 0;          // created (a handshake node expires after node-timeout)
  int64_t data_received_ms = 0;  // any message from it
  int64_t fail_time_ms = 0;      // when it was flagged FAIL
  uint64_t link = 0;             // outbound bus link id (0: none)
  uint64_t inbound_link = 0;     // inbound bus link id (0: none)
  uint64_t last_in_ping_gossip = 0;
  struct FailReport {
    std::string reporter;  // a master's name
    int64_t time_ms = 0;
  };
  std::vector<FailReport> fail_reports;

  bool is_master() const { return flags & kFlagMaster; }
  bool is_replica() const { return flags & kFlagReplica; }
  bool is_myself() const { return flags & kFlagMyself; }
  bool failed() const { return flags & kFlagFail; }
};

// True for 40 hex characters (Redis's verifyClusterNodeId also takes upper case).
bool IsValidNodeName(std::string_view name);
// A fresh random node name (40 lower-case hex characters).
std::string RandomNodeName();

class ClusterState {
 public:
  // A cluster of one: myself, a master without slots, epochs 0.
  explicit ClusterState(std::string my_name);
  ClusterState(const ClusterState&) = delete;
  ClusterState& operator=(const ClusterState&) = delete;

  Node& myself() { return *myself_; }
  const Node& myself() const { return *myself_; }
  Node* Find(std::string_view name);
  const Node* Find(std::string_view name) const;
  // In the order they were added (myself first when created, file order
  // when loaded).
  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  // Adds a node. REQUIRES: no node of that name yet. Flags kFlagMyself
  // makes it myself (the loader; the previous myself must be unknown).
  Node* Add(Node node);
  // Removes a node that is not myself, with every reference to it (its
  // slots become unassigned, its replicas masterless, its migrations end).
  void Remove(std::string_view name);
  // Gives a node its real name (a handshake node learns it from the PONG),
  // Redis's clusterRenameNode. REQUIRES: no node of that name yet.
  void Rename(Node* node, std::string_view new_name);

  // ---- slots ----
  Node* owner(int slot) const { return slots_[slot]; }
  Node* migrating_to(int slot) const { return migrating_to_[slot]; }
  Node* importing_from(int slot) const { return importing_from_[slot]; }
  // Redis's clusterAddSlot / clusterDelSlot: false when the slot is already
  // assigned / already free. A master given its first slot while some master
  // has a replica becomes a replica-migration target (kFlagMigrateTo), though
  // it never had a replica itself, as Redis's clusterNodeSetSlotBit.
  bool AssignSlot(int slot, Node* node);
  bool UnassignSlot(int slot);
  // Called by UnassignSlot before the slot leaves `owner` (every path: a
  // SETSLOT, DELSLOTS, a claim of a greater epoch, a node forgotten), so the
  // server can drop what it keeps per slot -- Redis's clusterDelSlot
  // removing the slot's shard channels (removeChannelsInSlot).
  void set_on_slot_unassigned(std::function<void(int slot, const Node& owner)> fn) {
    on_slot_unassigned_ = std::move(fn);
  }
  // Whether `n` is in myself's shard: myself, myself's master, or a replica
  // of either (Redis's clusterGetNodesServingMySlots(n) holding myself).
  bool SharesShardWithMyself(const Node& n) const;
  // Some master has a replica (Redis's clusterMastersHaveSlaves).
  bool MastersHaveReplicas() const;
  void SetMigrating(int slot, Node* to) { migrating_to_[slot] = to; }
  void SetImporting(int slot, Node* from) { importing_from_[slot] = from; }
  // An import that ended here (SETSLOT NODE myself on an importing slot)
  // and that its source has not yet been seen to know of. Until a message
  // of the source claims its slots without this one, a claim of the slot by
  // the source is stale -- sent before redis-cli told it of the move -- and
  // it must not take the slot back, whatever epoch it carries (the source's
  // epoch may have risen, by a collision's resolution, after the last
  // message this node had from it: Redis 7.0 then gives the slot back and
  // deletes its keys, redis/redis#3776). Cleared by the acknowledgement
  // (cluster::AcknowledgeImports), by the slot leaving myself (UnassignSlot)
  // and by the source being forgotten (Remove).
  void SetImportedFrom(int slot, Node* source) { imported_from_[slot] = source; }
  void ClearImportedFrom(int slot) { imported_from_.erase(slot); }
  Node* imported_from(int slot) const;
  // slot -> source, every import not yet acknowledged.
  const absl::flat_hash_map<int, Node*>& imports_not_acknowledged() const { return imported_from_; }
  // The [start, end] ranges of the slots `node` serves, ascending.
  std::vector<std::pair<int, int>> SlotRanges(const Node& node) const;

  // ---- epochs ----
  uint64_t current_epoch = 0;
  uint64_t last_vote_epoch = 0;
  // The greatest config epoch of any node (at least current_epoch).
  uint64_t MaxEpoch() const;

  // ---- cluster health (Redis's clusterUpdateState, without the bus's
  // failure detection: a node is failing only when flagged so) ----
  // Recomputes ok() at `now_ms` (the caller's clock): every slot served by
  // a node that is not failing, or (require_full_coverage false) no
  // requirement on coverage; and, as Redis's clusterUpdateState, a majority
  // of the masters serving slots reachable (not PFAIL / FAIL). Returns true
  // when ok() changed. With Redis's two delays: a master does not turn ok
  // within kWritableDelayMs of the first call -- restarted, it gives the
  // cluster a chance to tell it it was failed over before it takes writes --
  // nor within the rejoin delay (the node timeout, clamped to 500..5000 ms)
  // of last finding itself in a minority partition, so that a failover
  // decided meanwhile reaches it before any write does. A replica waits
  // for neither.
  static constexpr int64_t kWritableDelayMs = 2000;
  bool UpdateState(bool require_full_coverage, int64_t now_ms, int64_t node_timeout_ms);
  bool ok() const { return ok_; }
  // Masters serving at least one slot (cluster_size).
  int size() const;
  int slots_assigned() const;
  int slots_pfail() const;
  int slots_fail() const;

  // A replica's master, when known.
  Node* MasterOf(const Node& replica) { return replica.master.empty() ? nullptr : Find(replica.master); }
  const Node* MasterOf(const Node& replica) const { return replica.master.empty() ? nullptr : Find(replica.master); }
  // The replicas of `master`, in node order.
  std::vector<Node*> ReplicasOf(const Node& master) const;
  // A node's config epoch as Redis shows it: a replica shows its master's.
  uint64_t ShownEpoch(const Node& node) const;

 private:
  std::vector<std::unique_ptr<Node>> nodes_;
  absl::flat_hash_map<std::string, Node*> by_name_;
  Node* myself_ = nullptr;
  std::array<Node*, kClusterSlots> slots_{};
  std::array<Node*, kClusterSlots> migrating_to_{};
  std::array<Node*, kClusterSlots> importing_from_{};
  absl::flat_hash_map<int, Node*> imported_from_;  // slot -> source; see SetImportedFrom
  std::function<void(int slot, const Node& owner)> on_slot_unassigned_;
  bool ok_ = false;
  int64_t first_update_ms_ = -1;  // the first UpdateState
  int64_t in_minority_ms_ = -1;   // when UpdateState last found a minority partition
};

}  // namespace ringkv::cluster

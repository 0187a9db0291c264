// ClusterMode: the server's cluster component, created at start-up only when
// cluster-enabled is yes (Server::cluster() is null otherwise: a standalone
// server pays one pointer test in the gate and nothing per key).
//
// It owns the ClusterState (cluster/cluster_state.h), keeps it in
// cluster-config-file (loaded at start, written durably after every change,
// as Redis's clusterSaveConfigOrDie), applies the cluster-* parameters that
// mean something without the bus (announced address and ports, coverage,
// reads when down, preferred endpoint), routes commands (the gate's
// CheckClusterSlot: MOVED, ASK, TRYAGAIN, CROSSSLOT, CLUSTERDOWN, as Redis's
// getNodeByQuery) and holds the per-connection ASKING / READONLY flags.
//
// The bus (gossip, failure detection, failover, PUBLISH) is ClusterBus
// (cluster_bus.h), owned here and started by StartBus.
//
// Thread-safety: none. REQUIRES: the main command thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "core/cluster/cluster_state.h"
#include "core/cluster/nodes_conf_lock.h"
#include "server/cluster/cluster_hooks.h"

namespace ringkv::server {

class Config;
class ClusterBus;

// Redis's CLUSTER_REDIR_* (getNodeByQuery's verdicts).
enum class Redirect : uint8_t { kNone, kCrossSlot, kUnstable, kAsk, kMoved, kDownState, kDownUnbound, kDownReadOnly };

struct Route {
  Redirect redirect = Redirect::kNone;
  int slot = -1;                          // the keys' slot (-1: no key)
  const cluster::Node* node = nullptr;    // where MOVED / ASK send the client
};

// What the routing of one command (or EXEC's queue) needs to know.
struct RouteQuery {
  bool write = false;         // the command (EXEC: one queued command) may write
  bool asking = false;        // ASKING preceded it
  bool readonly = false;      // READONLY connection
  bool shard_pubsub = false;  // SPUBLISH / SSUBSCRIBE / SUNSUBSCRIBE
  bool migrate = false;       // MIGRATE works locally on an open slot
};

// The keys seen so far of a command being routed (Redis's getNodeByQuery
// loop state).
struct RouteBuilder {
  bool any = false;
  bool cross_slot = false;
  bool unbound = false;
  bool multiple_keys = false;
  bool migrating = false;
  bool importing = false;
  bool shard_pubsub = false;
  int slot = -1;
  std::string_view first_key;
  const cluster::Node* node = nullptr;
  int missing = 0;
  int existing = 0;
};

class ClusterMode {
 public:
  // Loads cluster-config-file, or makes a new node and writes the file
  // (Redis's clusterInit). `port` is the clients' port. An error stops the
  // start, as a corrupt nodes.conf stops Redis.
  static absl::StatusOr<std::unique_ptr<ClusterMode>> Start(Config& config, int port);
  ~ClusterMode();
  ClusterMode(const ClusterMode&) = delete;
  ClusterMode& operator=(const ClusterMode&) = delete;

  cluster::ClusterState& state() { return *state_; }
  const std::string& config_file() const { return path_; }

  // Writes the config file durably (SAVECONFIG answers its error).
  absl::Status Save();
  // After a change: state recomputed and the file written; a failure to
  // write ends the process, as Redis's clusterSaveConfigOrDie.
  void Changed();
  // The state recomputed (Redis's clusterUpdateState), its change logged.
  void UpdateState();

  // ---- the bus (cluster_bus.h) ----
  // Listens on the bus port on `addresses` (the bind list), on the I/O
  // system's thread 0 (hooks.io); `hooks` are what the bus asks of the
  // server (its notify wakes the main thread, which then calls OnBusEvents).
  absl::Status StartBus(const std::vector<std::string>& addresses, ClusterHooks hooks);
  ClusterBus* bus() { return bus_.get(); }
  void OnBusEvents();
  // From the server's cron (the bus's own cron runs every 100 ms).
  void Cron(int64_t now_ms);

  // ---- routing ----
  // Adds one command's keys to `route` (EXEC adds each queued command);
  // `exists` tells whether a key is in database 0. Call Finish after.
  void AddKeys(std::span<const std::string_view> keys, const RouteQuery& q,
               const std::function<bool(std::string_view)>& exists, RouteBuilder* b) const;
  Route Finish(const RouteBuilder& b, const RouteQuery& q) const;
  // The error reply for a redirect (without the leading '-');
  // `plain_connection`: the client's is a plain one (UsePlaintextPort).
  std::string RedirectError(const Route& r, bool plain_connection) const;
  // A client blocked on `key` (its first key) must be unblocked with this
  // error, "" when it stays blocked (Redis's
  // clusterRedirectBlockedClientIfNeeded): CLUSTERDOWN when the cluster is
  // down, MOVED when the slot is served elsewhere and not imported here,
  // CLUSTERDOWN Hash slot not served when unassigned. `readonly_read`: a
  // READONLY connection's read, which a replica serves for its master.
  std::string BlockedKeyError(std::string_view key, bool readonly_read, bool plain_connection) const;
  // MOVED / ASK's address: the node's preferred endpoint.
  std::string Endpoint(const cluster::Node& n) const;
  // The port a client is told for `n` (Redis's use_pport): with tls-cluster,
  // a client on a plain connection gets the node's plaintext port where it
  // is known; everyone else (TLS, scripts) gets the node's port, its TLS
  // port then.
  bool tls_cluster() const { return tls_cluster_; }
  bool UsePlaintextPort(bool plain_connection) const { return tls_cluster_ && plain_connection; }
  int PortFor(const cluster::Node& n, bool plain_connection) const {
    return n.ClientPort(UsePlaintextPort(plain_connection));
  }
  const std::string& preferred_endpoint() const { return preferred_endpoint_; }

  // ---- scripts (Redis 7.0's scriptVerifyClusterState) ----
  // "" when a script's call with these keys may run here; else its error.
  // `*slot` is the keys' slot (-1: none), for the caller's same-slot rule
  // (a script with a shebang or a function stays in one slot unless it has
  // allow-cross-slot-keys; a plain EVAL may span the slots served here).
  std::string ScriptCallError(std::span<const std::string_view> keys, const RouteQuery& q,
                              const std::function<bool(std::string_view)>& exists, int* slot) const;

  // ---- per connection ----
  void SetAsking(uint64_t client) { asking_.insert(client); }
  bool asking(uint64_t client) const { return !asking_.empty() && asking_.contains(client); }
  void ClearAsking(uint64_t client) {
    if (!asking_.empty()) asking_.erase(client);
  }
  void SetReadonly(uint64_t client, bool on) {
    if (on) {
      readonly_.insert(client);
    } else {
      readonly_.erase(client);
    }
  }
  bool readonly(uint64_t client) const { return !readonly_.empty() && readonly_.contains(client); }
  // The connection closed or ran RESET.
  void ForgetClient(uint64_t client) {
    ClearAsking(client);
    readonly_.erase(client);
  }

 private:
  ClusterMode(Config& config, std::string path, std::unique_ptr<cluster::NodesConfLock> lock,
              std::unique_ptr<cluster::ClusterState> state);
  void BindConfig(int port);
  void ApplyAnnounced();
  // The port the bus port is counted from: tls-port with tls-cluster, else
  // the clients' port.
  static int BasePort(const Config& config, int port);

  Config& config_;
  std::unique_ptr<ClusterBus> bus_;
  std::string path_;
  std::unique_ptr<cluster::NodesConfLock> lock_;  // held for the process's life
  std::unique_ptr<cluster::ClusterState> state_;
  int port_ = 0;
  bool tls_cluster_ = false;
  std::string preferred_endpoint_ = "ip";
  bool allow_reads_when_down_ = false;
  bool allow_pubsubshard_when_down_ = true;
  absl::flat_hash_set<uint64_t> asking_;
  absl::flat_hash_set<uint64_t> readonly_;
};

}  // namespace ringkv::server

#include "server/cluster/cluster_mode.h"

#include <cstdlib>

#include "core/cluster/nodes_conf.h"
#include "core/cluster/nodes_conf_lock.h"
#include "core/strings.h"
#include "server/clock.h"
#include "server/cluster/cluster_bus.h"
#include "server/config.h"
#include "server/logging.h"

namespace ringkv::server {

absl::StatusOr<std::unique_ptr<ClusterMode>> ClusterMode::Start(Config& config, int port) {
  // As Redis's clusterInit: the bus port would not fit.
  if (config.Int("cluster-port") == 0 && BasePort(config, port) > 65535 - 10000) {
    return absl::InvalidArgumentError(
        "Redis port number too high. Cluster communication port is 10,000 port numbers higher than your Redis "
        "port. Your Redis port number must be 55535 or less.");
  }
  const std::string path = config.Str("cluster-config-file");
  // As Redis: locked before it is read, so that every node uses its own
  // file; the lock is held until the process exits.
  absl::StatusOr<std::unique_ptr<cluster::NodesConfLock>> lock = cluster::NodesConfLock::Acquire(path);
  if (!lock.ok()) return lock.status();
  std::unique_ptr<cluster::ClusterState> state;
  absl::StatusOr<std::string> text = cluster::ReadWholeFile(path);
  if (text.ok() && !text->empty()) {
    absl::StatusOr<std::unique_ptr<cluster::ClusterState>> loaded = cluster::ParseNodesConf(*text);
    if (!loaded.ok()) {
      return absl::InvalidArgumentError(StrCat("Unrecoverable error: ", loaded.status().message(), " (", path, ")"));
    }
    state = std::move(*loaded);
    Log(kNotice, StrCat("Node configuration loaded, I'm ", state->myself().name));
  } else if (text.ok() || absl::IsNotFound(text.status())) {
    // No file, or an empty one (Redis treats both as a new node).
    state = std::make_unique<cluster::ClusterState>(cluster::RandomNodeName());
    Log(kNotice, StrCat("No cluster configuration found, I'm ", state->myself().name));
  } else {
    return absl::InvalidArgumentError(StrCat("Cannot read cluster config file ", path, ": ", text.status().message()));
  }
  std::unique_ptr<ClusterMode> mode(new ClusterMode(config, path, std::move(*lock), std::move(state)));
  mode->BindConfig(port);
  // Written at once: a new node's name must survive a restart, and a loaded
  // one's addresses follow this start's ports (as Redis saves after init).
  if (absl::Status s = mode->Save(); !s.ok()) {
    return absl::InvalidArgumentError(StrCat("Can't save the cluster config file ", path, ": ", s.message()));
  }
  return mode;
}

ClusterMode::ClusterMode(Config& config, std::string path, std::unique_ptr<cluster::NodesConfLock> lock,
                         std::unique_ptr<cluster::ClusterState> state)
    : config_(config), path_(std::move(path)), lock_(std::move(lock)), state_(std::move(state)) {}

ClusterMode::~ClusterMode() = default;

absl::Status ClusterMode::StartBus(const std::vector<std::string>& addresses, ClusterHooks hooks) {
  auto bus = std::make_unique<ClusterBus>(*this, config_, std::move(hooks));
  const int64_t bus_port = config_.Int("cluster-port");
  const int listen_port = bus_port != 0 ? static_cast<int>(bus_port) : BasePort(config_, port_) + 10000;
  if (absl::Status s = bus->Start(addresses, listen_port); !s.ok()) {
    return s;
  }
  bus_ = std::move(bus);
  return absl::OkStatus();
}

void ClusterMode::OnBusEvents() {
  if (bus_) bus_->OnEvents();
}

void ClusterMode::Cron(int64_t now_ms) {
  if (bus_) bus_->Cron(now_ms);
}

void ClusterMode::UpdateState() {
  if (state_->UpdateState(config_.Bool("cluster-require-full-coverage"), UnixMs(),
                          config_.Int("cluster-node-timeout"))) {
    Log(kWarning, StrCat("Cluster state changed: ", state_->ok() ? "ok" : "fail"));
  }
}

void ClusterMode::BindConfig(int port) {
  port_ = port;
  config_.Bind({"cluster-announce-ip", "cluster-announce-port", "cluster-announce-bus-port",
                "cluster-announce-tls-port", "cluster-announce-hostname", "cluster-port", "tls-cluster", "tls-port"},
               [this] { ApplyAnnounced(); });
  config_.Bind("cluster-require-full-coverage", [this] { UpdateState(); });
  config_.Bind("cluster-allow-reads-when-down",
               [this] { allow_reads_when_down_ = config_.Bool("cluster-allow-reads-when-down"); });
  config_.Bind("cluster-allow-pubsubshard-when-down",
               [this] { allow_pubsubshard_when_down_ = config_.Bool("cluster-allow-pubsubshard-when-down"); });
  config_.Bind("cluster-preferred-endpoint-type",
               [this] { preferred_endpoint_ = config_.Str("cluster-preferred-endpoint-type"); });
  config_.Bind("cluster-replica-no-failover", [this] {
    cluster::Node& me = state_->myself();
    if (config_.Bool("cluster-replica-no-failover")) {
      me.flags |= cluster::kFlagNoFailover;
    } else {
      me.flags &= ~cluster::kFlagNoFailover;
    }
  });
}

int ClusterMode::BasePort(const Config& config, int port) {
  return config.Bool("tls-cluster") ? static_cast<int>(config.Int("tls-port")) : port;
}

// Redis's deriveAnnouncedPorts, clusterUpdateMyselfAnnouncedPorts / Ip /
// Hostname: what myself tells others (and shows in CLUSTER NODES). With
// tls-cluster the port is the TLS port and pport the plaintext one
// (cluster-announce-tls-port and cluster-announce-port replace them
// together); without, pport is 0. The bus port is cluster-announce-bus-port,
// else cluster-port, else the port (TLS or not) + 10000.
void ClusterMode::ApplyAnnounced() {
  cluster::Node& me = state_->myself();
  tls_cluster_ = config_.Bool("tls-cluster");
  const int base = BasePort(config_, port_);
  const int64_t announced_port = config_.Int("cluster-announce-port");
  const int64_t announced_tls_port = config_.Int("cluster-announce-tls-port");
  const int64_t announced_bus = config_.Int("cluster-announce-bus-port");
  const int64_t bus_port = config_.Int("cluster-port");
  me.port = base;
  me.pport = tls_cluster_ ? port_ : 0;
  if (tls_cluster_ && announced_tls_port != 0) {
    me.port = static_cast<int>(announced_tls_port);
    me.pport = static_cast<int>(announced_port);
  } else if (announced_port != 0) {
    me.port = static_cast<int>(announced_port);
  }
  me.cport = announced_bus != 0 ? static_cast<int>(announced_bus)
                                : (bus_port != 0 ? static_cast<int>(bus_port) : base + 10000);
  // An announced ip replaces the one learnt; without one, myself keeps
  // what it had (the bus learns it from a MEET).
  if (const std::string& ip = config_.Str("cluster-announce-ip"); !ip.empty()) me.ip = ip;
  me.hostname = config_.Str("cluster-announce-hostname");
}

absl::Status ClusterMode::Save() {
  return cluster::WriteFileDurably(path_, cluster::FormatNodesConf(*state_), lock_.get());
}

void ClusterMode::Changed() {
  UpdateState();
  if (absl::Status s = Save(); !s.ok()) {
    Log(kWarning, StrCat("Fatal: can't update cluster config file: ", s.message()));
    std::exit(1);
  }
}

std::string ClusterMode::Endpoint(const cluster::Node& n) const {
  if (preferred_endpoint_ == "ip") return n.ip;
  if (preferred_endpoint_ == "hostname") return n.hostname.empty() ? "?" : n.hostname;
  return "";  // unknown-endpoint: Redis's clusterNodePreferredEndpoint gives ""
}

}  // namespace ringkv::server

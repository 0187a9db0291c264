// The cluster config file (cluster-config-file, "nodes.conf") in Redis
// 7.0's format, and the node lines CLUSTER NODES shows (the same text):
//
//   <id> <ip>:<port>@<cport>[,<hostname>] <flags> <master-id|-> <ping-sent>
//       <pong-recv> <config-epoch> <connected|disconnected> <slot>... 
//   vars currentEpoch <n> lastVoteEpoch <n>
//
// where a slot is "<n>" or "<a>-<b>", and myself's line adds its open
// migrations "[<slot>->-<id>]" and imports "[<slot>-<-<id>]".
//
// Thread-safety: pure functions, but SaveNodesConf does blocking file I/O
// (the main thread calls it, as Redis's clusterSaveConfig: the file is small).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/cluster/cluster_state.h"
#include "core/cluster/nodes_conf_lock.h"

namespace ringkv::cluster {

// "myself,master", "slave,fail?", ... or "noflags", as Redis prints them.
std::string FlagsString(uint16_t flags);
// One node's line, without the newline (Redis's clusterGenNodeDescription).
// `use_pport`: the node's plaintext port where known instead of its port
// (a client on a plain connection to a tls-cluster node).
std::string NodeLine(const ClusterState& state, const Node& node, bool use_pport);
// Every node's line, each ending in '\n' (CLUSTER NODES; handshake nodes
// are left out of the file only, which always has the nodes' port).
std::string NodeLines(const ClusterState& state, bool for_config, bool use_pport);
// The whole file's text.
std::string FormatNodesConf(const ClusterState& state);
// Parses a file as Redis's clusterLoadConfig does; an error names the line.
absl::StatusOr<std::unique_ptr<ClusterState>> ParseNodesConf(std::string_view text);

// Writes `content` to `path` atomically: a temporary file in the same
// folder, fsync, rename over `path`, fsync of the folder. The file is the
// old one or the new one, never a mix, whatever crashes when. With `lock`
// (this process's lock on `path`), the new file is locked before the rename
// and the lock moves to it, so the name never points at an unlocked file.
absl::Status WriteFileDurably(const std::string& path, std::string_view content, NodesConfLock* lock = nullptr);
// Reads the whole file; NotFound when it does not exist.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace ringkv::cluster

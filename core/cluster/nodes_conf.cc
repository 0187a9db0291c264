#include "core/cluster/nodes_conf.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/numbers.h"
#include "core/strings.h"

namespace ringkv::cluster {
namespace {

struct FlagName {
  uint16_t flag;
  const char* name;
};
// Redis's redisNodeFlagsTable, in its order.
constexpr FlagName kFlagNames[] = {
    {kFlagMyself, "myself"},       {kFlagMaster, "master"}, {kFlagReplica, "slave"},
    {kFlagPfail, "fail?"},         {kFlagFail, "fail"},     {kFlagHandshake, "handshake"},
    {kFlagNoAddr, "noaddr"},       {kFlagNoFailover, "nofailover"},
};

absl::Status LineError(int line, std::string_view why) {
  return absl::InvalidArgumentError(StrCat("corrupted cluster config file at line ", line, ": ", why));
}

bool ParseSlot(std::string_view s, int* slot) {
  return absl::SimpleAtoi(ToAbsl(s), slot) && *slot >= 0 && *slot < kClusterSlots;
}

}  // namespace

std::string FlagsString(uint16_t flags) {
  std::string out;
  for (const FlagName& f : kFlagNames) {
    if (flags & f.flag) StrAppend(&out, out.empty() ? "" : ",", f.name);
  }
  return out.empty() ? "noflags" : out;
}

std::string NodeLine(const ClusterState& state, const Node& node, bool use_pport) {
  std::string line = StrCat(node.name, " ", node.ip, ":", node.ClientPort(use_pport), "@", node.cport);
  if (!node.hostname.empty()) StrAppend(&line, ",", node.hostname);
  StrAppend(&line, " ", FlagsString(node.flags), " ", node.master.empty() ? "-" : node.master, " ",
                  node.ping_sent_ms, " ", node.pong_received_ms, " ", state.ShownEpoch(node), " ",
                  node.linked ? "connected" : "disconnected");
  for (const auto& [a, b] : state.SlotRanges(node)) {
    if (a == b) {
      StrAppend(&line, " ", a);
    } else {
      StrAppend(&line, " ", a, "-", b);
    }
  }
  if (node.is_myself()) {
    for (int s = 0; s < kClusterSlots; ++s) {
      // One per slot, a migration before an import, as Redis prints them.
      if (const Node* to = state.migrating_to(s)) {
        StrAppend(&line, " [", s, "->-", to->name, "]");
      } else if (const Node* from = state.importing_from(s)) {
        StrAppend(&line, " [", s, "-<-", from->name, "]");
      }
    }
  }
  return line;
}

std::string NodeLines(const ClusterState& state, bool for_config, bool use_pport) {
  std::string out;
  for (const auto& n : state.nodes()) {
    if (for_config && (n->flags & kFlagHandshake)) continue;
    StrAppend(&out, NodeLine(state, *n, use_pport), "\n");
  }
  return out;
}

std::string FormatNodesConf(const ClusterState& state) {
  return StrCat(NodeLines(state, true, false), "vars currentEpoch ", state.current_epoch, " lastVoteEpoch ",
                      state.last_vote_epoch, "\n");
}

absl::StatusOr<std::unique_ptr<ClusterState>> ParseNodesConf(std::string_view text) {
  struct Pending {
    std::string name;
    std::vector<std::string> args;  // the line's fields
    int line;
  };
  std::vector<Pending> lines;
  uint64_t current_epoch = 0, last_vote_epoch = 0;
  int line_no = 0;
  bool have_myself = false;
  for (std::string_view raw : Split(text, '\n')) {
    ++line_no;
    std::vector<std::string> args;
    for (std::string_view f : Split(raw, ' ', true)) args.emplace_back(f);
    if (!args.empty() && args.back().ends_with('\r')) args.back().pop_back();
    if (args.empty()) continue;
    if (args[0] == "vars") {
      if (args.size() % 2 == 0) return LineError(line_no, "odd vars");
      for (size_t i = 1; i + 1 < args.size(); i += 2) {
        uint64_t v;
        if (!absl::SimpleAtoi(ToAbsl(args[i + 1]), &v)) return LineError(line_no, "bad vars value");
        if (args[i] == "currentEpoch") {
          current_epoch = v;
        } else if (args[i] == "lastVoteEpoch") {
          last_vote_epoch = v;
        } else {
          return LineError(line_no, "unknown vars field");  // Redis logs and skips; a typo should not
        }
      }
      continue;
    }
    if (args.size() < 8) return LineError(line_no, "a node line has at least 8 fields");
    if (!IsValidNodeName(args[0])) return LineError(line_no, "bad node id");
    have_myself |= args[2].find("myself") != std::string::npos;
    lines.push_back({args[0], std::move(args), line_no});
  }
  if (!have_myself) return absl::InvalidArgumentError("corrupted cluster config file: no node is myself");

  auto state = std::make_unique<ClusterState>(std::string(kNodeNameLen, '0'));
  // Nodes first, then what refers to them (masters, slots, migrations).
  for (const Pending& p : lines) {
    if (state->Find(p.name) != nullptr) return LineError(p.line, "duplicate node id");
    Node n;
    n.name = p.name;
    // <ip>:<port>@<cport>[,<hostname>]; an old file without "@cport" means port + 10000.
    std::string_view addr = p.args[1];
    if (size_t comma = addr.find(','); comma != std::string_view::npos) {
      n.hostname = std::string(addr.substr(comma + 1));
      addr = addr.substr(0, comma);
    }
    const size_t colon = addr.rfind(':');
    if (colon == std::string_view::npos) return LineError(p.line, "address without port");
    n.ip = std::string(addr.substr(0, colon));
    std::string_view ports = addr.substr(colon + 1);
    const size_t at = ports.find('@');
    if (!absl::SimpleAtoi(ToAbsl(ports.substr(0, at)), &n.port) || n.port < 0 || n.port > 65535) {
      return LineError(p.line, "bad port");
    }
    if (at == std::string_view::npos) {
      n.cport = n.port + 10000;
    } else if (!absl::SimpleAtoi(ToAbsl(ports.substr(at + 1)), &n.cport) || n.cport < 0 || n.cport > 65535) {
      return LineError(p.line, "bad cluster bus port");
    }
    for (std::string_view f : Split(p.args[2], ',')) {
      bool known = f == "noflags" || f == "-";
      for (const FlagName& fn : kFlagNames) {
        if (f == fn.name) {
          n.flags |= fn.flag;
          known = true;
        }
      }
      if (!known) return LineError(p.line, StrCat("unknown flag '", f, "'"));
    }
    if (p.args[3] != "-") {
      if (!IsValidNodeName(p.args[3])) return LineError(p.line, "bad master id");
      n.master = p.args[3];
    }
    // Redis keeps only whether a ping was pending / a pong seen; without a
    // bus neither happened here.
    int64_t ignored;
    if (!absl::SimpleAtoi(ToAbsl(p.args[4]), &ignored) || !absl::SimpleAtoi(ToAbsl(p.args[5]), &ignored) ||
        !absl::SimpleAtoi(ToAbsl(p.args[6]), &n.config_epoch)) {
      return LineError(p.line, "bad number");
    }
    // A replica's own epoch is not kept: it shows its master's (Redis's loader).
    if (n.is_replica() && !n.master.empty()) n.config_epoch = 0;
    state->Add(std::move(n));
  }
  for (const Pending& p : lines) {
    Node* n = state->Find(p.name);
    if (!n->master.empty() && state->Find(n->master) == nullptr) {
      // Redis creates a placeholder for an unknown master; so do we.
      Node m;
      m.name = n->master;
      m.flags = kFlagMaster | kFlagNoAddr;
      state->Add(std::move(m));
    }
    for (size_t i = 8; i < p.args.size(); ++i) {
      std::string_view s = p.args[i];
      if (s.starts_with('[')) {
        // [<slot>->-<id>] or [<slot>-<-<id>]
        const size_t dash = s.find('-');
        int slot;
        if (dash == std::string_view::npos || s.size() < dash + 3 + kNodeNameLen + 1 || !s.ends_with(']') ||
            !ParseSlot(s.substr(1, dash - 1), &slot)) {
          return LineError(p.line, "bad open slot");
        }
        const bool migrating = s.substr(dash, 3) == "->-";
        if (!migrating && s.substr(dash, 3) != "-<-") return LineError(p.line, "bad open slot direction");
        std::string_view other = s.substr(dash + 3, s.size() - dash - 4);
        Node* o = state->Find(other);
        if (o == nullptr) {
          Node placeholder;
          placeholder.name = std::string(other);
          if (!IsValidNodeName(placeholder.name)) return LineError(p.line, "bad open slot node");
          placeholder.flags = kFlagMaster | kFlagNoAddr;
          o = state->Add(std::move(placeholder));
        }
        if (migrating) {
          state->SetMigrating(slot, o);
        } else {
          state->SetImporting(slot, o);
        }
        continue;
      }
      int a, b;
      const size_t dash = s.find('-');
      if (dash == std::string_view::npos) {
        if (!ParseSlot(s, &a)) return LineError(p.line, "bad slot");
        b = a;
      } else if (!ParseSlot(s.substr(0, dash), &a) || !ParseSlot(s.substr(dash + 1), &b) || a > b) {
        return LineError(p.line, "bad slot range");
      }
      for (int slot = a; slot <= b; ++slot) {
        if (!state->AssignSlot(slot, n)) return LineError(p.line, "slot assigned twice");
      }
    }
  }
  state->current_epoch = current_epoch;
  state->last_vote_epoch = last_vote_epoch;
  // As Redis: a current epoch below a node's config epoch is raised to it.
  state->current_epoch = state->MaxEpoch();
  return state;
}

absl::Status WriteFileDurably(const std::string& path, std::string_view content, NodesConfLock* lock) {
  const std::string tmp = StrCat(path, ".tmp-", getpid());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::ErrnoToStatus(errno, StrCat("open ", tmp));
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      unlink(tmp.c_str());
      return absl::ErrnoToStatus(err, StrCat("write ", tmp));
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) {
    const int err = errno;
    close(fd);
    unlink(tmp.c_str());
    return absl::ErrnoToStatus(err, StrCat("fsync ", tmp));
  }
  // No other process knows the temporary file yet: this cannot block.
  if (lock != nullptr && flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    close(fd);
    unlink(tmp.c_str());
    return absl::ErrnoToStatus(err, StrCat("flock ", tmp));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    close(fd);
    unlink(tmp.c_str());
    return absl::ErrnoToStatus(err, StrCat("rename ", tmp));
  }
  if (lock != nullptr) {
    lock->Adopt(fd);
  } else {
    close(fd);
  }
  // The rename itself is durable once the folder is synced.
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, StrCat("open ", path));
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return absl::ErrnoToStatus(err, StrCat("read ", path));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

}  // namespace ringkv::cluster

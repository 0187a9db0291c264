// Monitors: the MONITOR clients, in the order they started, and the line
// each command is shown to them as.
//
// Owns the list of monitoring clients (a client's `monitor` bit says it is
// listed). Delivery -- appending the line to each monitor's reply path --
// is the server's (Server::FeedMonitors): it knows the clients and their
// reply targets. The gate tests empty() on every command: one compare.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/client.h"

namespace ringkv::server {

class Monitors {
 public:
  // MONITOR: `c` receives every command from now on (again: no change).
  void Add(Client& c);
  // `c` closed or was reset.
  void Remove(Client& c);
  bool empty() const { return ids_.empty(); }
  const std::vector<uint64_t>& ids() const { return ids_; }

  // What a monitor sees of a command `c` ran at `now_us` (unix
  // microseconds): Redis's "+<s>.<us> [<db> <addr>] "arg" ..." line, CRLF
  // ended, each argument quoted as sdscatrepr does and passwords (AUTH's
  // arguments, HELLO's after AUTH) shown as "(redacted)". A connection-less
  // client (a script's) shows as "lua".
  static std::string Line(const Client& c, std::span<const std::string_view> argv, int64_t now_us);

 private:
  std::vector<uint64_t> ids_;
};

}  // namespace ringkv::server

// Server::PrimaryGlue: the server's repl::PrimaryHost -- what the primary
// side's cron (repl::Primary::Cron) asks of the server: dropping a
// replica's client, its CLIENT LIST line, freeing the backlog (a new
// history), a keep-alive newline. A member class, so it reaches the
// server's private state without the server carrying the interface (and a
// vtable) as a base; made by the first cron tick of a server with a backlog.
//
// Included by the files that create or destroy it (server.cc,
// server_replication.cc), nowhere else.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "replication/primary_host.h"
#include "server/server.h"

namespace ringkv::server {

class Server::PrimaryGlue final : public repl::PrimaryHost {
 public:
  explicit PrimaryGlue(Server& s) : s_(s) {}

  void DropReplica(uint64_t client_id) override { s_.DropReplica(client_id); }
  std::optional<std::string> ClientInfoLine(uint64_t client_id, int64_t now_ms) override {
    const Client* c = s_.FindClient(client_id);
    return c != nullptr ? std::optional<std::string>(s_.ClientInfoLine(*c, now_ms)) : std::nullopt;
  }
  void FreeBacklog(int64_t offset) override {
    s_.primary_.reset();
    s_.repl_ids_ = repl::ReplicationIds::Fresh();
    s_.repl_ids_.offset = offset;
  }
  void SendKeepAlive(repl::ReplicaLink& link) override { s_.io_->PrepareWrite(link.conn).Append("\n"); }

 private:
  Server& s_;
};

}  // namespace ringkv::server

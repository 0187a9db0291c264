// Server: the client-output-buffer-limit and maxmemory-clients glue. The
// limits and the soft-limit clocks are the OutputLimits component
// (output_limits.h); here the server measures a client's unsent output --
// its connection's buffers and the replies held for an fsync -- and closes
// the clients the limits condemn, logging them as Redis does.
#include <algorithm>

#include "core/strings.h"
#include "server/closing_client.h"
#include "server/logging.h"
#include "server/server.h"

namespace ringkv::server {

bool Server::OverOutputLimit(Client& c, const Config::OutputBufferLimit& limit, int64_t now_ms) {
  return output_limits_.Over(c, limit, UnsentOutputOf(c, persistence_), now_ms);
}

void Server::EvictClientsIfNeeded(int64_t now_ms, const Client* c) {
  const uint64_t limit = output_limits_.client_eviction_limit();
  if (limit == 0) return;
  if (c != nullptr && (c->conn == nullptr || MemoryOf(*c).total < limit)) return;
  uint64_t total = 0;
  std::vector<std::pair<uint64_t, Client*>> candidates;
  for (const auto& [id, client] : clients_) {
    if (client->is_replica || client->is_master || client->closing || client->conn == nullptr) continue;
    const uint64_t m = MemoryOf(*client).total;
    total += m;
    if (!client->no_evict) candidates.emplace_back(m, client);
  }
  if (total < limit) return;
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [m, victim] : candidates) {
    if (total < limit) break;
    Log(kNotice, StrCat("Evicting client: ", ClientInfoLine(*victim, now_ms)));
    MarkClosing(pubsub_, *victim);
    io_->CloseNow(victim->conn);
    ++stats_.evicted_clients;
    total -= m;
  }
}

void Server::CloseForOutputLimit(Client& c, int64_t now_ms) {
  if (c.closing) return;  // already (a subscriber can be listed twice)
  Log(kWarning, StrCat("Client ", ClientInfoLine(c, now_ms),
                       " scheduled to be closed ASAP for overcoming of output buffer limits."));
  MarkClosing(pubsub_, c);
  io_->CloseNow(c.conn);
}

}  // namespace ringkv::server

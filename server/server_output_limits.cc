// Server: client-output-buffer-limit. Three classes, as in Redis: normal
// clients (checked after each command), pubsub clients (checked as messages
// are delivered) and replicas (the hard limit bounds how far a replica may
// fall behind the backlog; server_replication.cc). A client over its hard
// limit, or over its soft limit for longer than the soft seconds, is closed
// at once and its pending output dropped.
#include "core/strings.h"
#include "server/logging.h"
#include "server/server.h"

namespace ringkv::server {

void Server::BindOutputLimitConfig() {
  config_->Bind("client-output-buffer-limit", [this] {
    obuf_normal_ = config_->OutputLimit("normal");
    obuf_pubsub_ = config_->OutputLimit("pubsub");
    obuf_replica_ = config_->OutputLimit("slave");
    obuf_normal_on_ = obuf_normal_.hard > 0 || obuf_normal_.soft > 0;
    obuf_pubsub_on_ = obuf_pubsub_.hard > 0 || obuf_pubsub_.soft > 0;
  });
  config_->Bind({"maxmemory", "maxmemory-clients"}, [this] { client_eviction_limit_ = ClientEvictionLimit(); });
}

bool Server::OverOutputLimit(Client& c, const Config::OutputBufferLimit& limit, int64_t now_ms) {
  const io::Connection& conn = *c.conn;
  const uint64_t unsent = (conn.thread == 0 ? conn.out.size()
                                            : conn.stat_obuf.load(std::memory_order_relaxed) + conn.main_out.size()) +
                          (c.held_replies ? durable_.held_bytes(c.id()) : 0);
  if (limit.hard > 0 && unsent > limit.hard) return true;
  if (limit.soft == 0 || unsent <= limit.soft) {
    if (c.over_soft_limit) {  // drained below it: the clock restarts
      c.over_soft_limit = false;
      over_soft_limit_since_.erase(c.id());
    }
    return false;
  }
  if (!c.over_soft_limit) {
    c.over_soft_limit = true;
    over_soft_limit_since_[c.id()] = now_ms;
    return false;
  }
  return now_ms - over_soft_limit_since_[c.id()] > limit.soft_seconds * 1000;
}

uint64_t Server::ClientEvictionLimit() const {
  const std::string& v = config_->Str("maxmemory-clients");
  uint64_t limit = 0;
  if (!v.empty() && v.back() == '%') {
    int64_t percent = 0;
    core::StringToInt64(std::string_view(v).substr(0, v.size() - 1), &percent);
    const int64_t maxmemory = config_->Int("maxmemory");  // maxmemory_ may not be refreshed yet
    if (maxmemory > 0 && percent > 0) limit = static_cast<uint64_t>(maxmemory) * static_cast<uint64_t>(percent) / 100;
  } else {
    limit = static_cast<uint64_t>(std::max<int64_t>(0, config_->Int("maxmemory-clients")));
  }
  if (limit == 0) return 0;
  return std::max<uint64_t>(limit, 128 * 1024);
}

void Server::EvictClientsIfNeeded(int64_t now_ms, const Client* c) {
  if (client_eviction_limit_ == 0) return;
  if (c != nullptr && (c->conn == nullptr || MemoryOf(*c).total < client_eviction_limit_)) return;
  uint64_t total = 0;
  std::vector<std::pair<uint64_t, Client*>> candidates;
  for (auto& [id, client] : clients_) {
    if (client->is_replica || client->is_master || client->closing || client->conn == nullptr) continue;
    const uint64_t m = MemoryOf(*client).total;
    total += m;
    if (!client->no_evict) candidates.emplace_back(m, client.get());
  }
  if (total < client_eviction_limit_) return;
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [m, victim] : candidates) {
    if (total < client_eviction_limit_) break;
    Log(kNotice, StrCat("Evicting client: ", ClientInfoLine(*victim, now_ms)));
    victim->closing = true;
    io_->CloseNow(victim->conn);
    ++stats_.evicted_clients;
    total -= m;
  }
}

void Server::CloseForOutputLimit(Client& c, int64_t now_ms) {
  if (c.closing) return;  // already (a subscriber can be listed twice)
  Log(kWarning, StrCat("Client ", ClientInfoLine(c, now_ms),
                       " scheduled to be closed ASAP for overcoming of output buffer limits."));
  c.closing = true;
  io_->CloseNow(c.conn);
}

}  // namespace ringkv::server

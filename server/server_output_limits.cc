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

void Server::CloseForOutputLimit(Client& c, int64_t now_ms) {
  if (c.closing) return;  // already (a subscriber can be listed twice)
  Log(kWarning, StrCat("Client ", ClientInfoLine(c, now_ms),
                       " scheduled to be closed ASAP for overcoming of output buffer limits."));
  c.closing = true;
  io_->CloseNow(c.conn);
}

}  // namespace ringkv::server

#include "server/tracking.h"

#include <algorithm>

#include "io/reply_builder.h"
#include "server/command_table.h"
#include "server/config.h"

namespace ringkv::server {
namespace {

bool Overlap(std::string_view a, std::string_view b) { return a.starts_with(b) || b.starts_with(a); }

}  // namespace

size_t Tracking::MemoryOf(uint64_t client) const {
  const ClientTracking* t = Find(client);
  if (t == nullptr) return 0;
  const std::vector<std::string>& prefixes = t->options.prefixes;
  size_t bytes = sizeof(ClientTracking) + prefixes.capacity() * sizeof(std::string) + prefixes.size() * sizeof(uint64_t);
  for (const std::string& p : prefixes) {
    if (p.capacity() > std::string().capacity()) bytes += p.capacity() + 1;
  }
  return bytes;
}

std::string Tracking::Enable(uint64_t client, const TrackingOptions& options) {
  // Redis 7.0's checks, in its order.
  if (!options.bcast && !options.prefixes.empty()) return "ERR PREFIX option requires BCAST mode to be enabled";
  auto it = clients_.find(client);
  if (it != clients_.end() && it->second.options.bcast != options.bcast) {
    return "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then "
           "re-enabling it with a different mode.";
  }
  if (options.bcast && (options.optin || options.optout)) return "ERR OPTIN and OPTOUT are not compatible with BCAST";
  if (options.optin && options.optout) return "ERR You can't specify both OPTIN mode and OPTOUT mode";
  if (it != clients_.end() && ((options.optin && it->second.options.optout) ||
                               (options.optout && it->second.options.optin))) {
    return "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then "
           "re-enabling it with a different mode.";
  }
  if (options.bcast) {
    // Each new prefix against the client's existing ones, then against the
    // new ones after it (Redis's checkPrefixCollisionsOrReply).
    for (size_t i = 0; i < options.prefixes.size(); ++i) {
      const std::string& p = options.prefixes[i];
      if (it != clients_.end()) {
        for (const std::string& existing : it->second.options.prefixes) {
          if (Overlap(p, existing)) {
            return "ERR Prefix '" + p + "' overlaps with an existing prefix '" + existing +
                   "'. Prefixes for a single client must not overlap.";
          }
        }
      }
      for (size_t j = i + 1; j < options.prefixes.size(); ++j) {
        if (Overlap(p, options.prefixes[j])) {
          return "ERR Prefix '" + p + "' overlaps with another provided prefix '" + options.prefixes[j] +
                 "'. Prefixes for a single client must not overlap.";
        }
      }
    }
  }
  ClientTracking& t = clients_[client];
  std::vector<std::string> prefixes = std::move(t.options.prefixes);
  t.options = options;
  t.broken_redirect = false;
  if (options.bcast) {
    std::vector<std::string> wanted = options.prefixes;
    if (wanted.empty()) wanted.emplace_back();  // no PREFIX: every key
    for (std::string& p : wanted) {
      if (std::find(prefixes.begin(), prefixes.end(), p) == prefixes.end()) prefixes.push_back(p);
      prefixes_[p].clients.insert(client);
    }
  }
  // In byte order, as Redis's rax of them: CLIENT TRACKINGINFO lists them
  // so, and the overlap check above names the first in that order.
  std::sort(prefixes.begin(), prefixes.end());
  t.options.prefixes = std::move(prefixes);
  return "";
}

void Tracking::Disable(uint64_t client) {
  auto it = clients_.find(client);
  if (it == clients_.end()) return;
  for (const std::string& p : it->second.options.prefixes) {
    auto pit = prefixes_.find(p);
    if (pit == prefixes_.end()) continue;
    pit->second.clients.erase(client);
    if (pit->second.clients.empty()) prefixes_.erase(pit);
  }
  // Default-mode entries are left to lapse: a key's next write skips
  // clients that no longer track, as Redis does.
  if (!pending_.empty() && client == pending_owner_) {
    lapsed_ = Lapsed{client, it->second.options.redirect};
  }
  clients_.erase(it);
}

void Tracking::RememberKeys(uint64_t client, const std::vector<std::string_view>& keys) {
  auto it = clients_.find(client);
  if (it == clients_.end() || it->second.options.bcast) return;
  const ClientTracking& t = it->second;
  if (t.options.optin && !t.caching_yes) return;
  if (t.options.optout && t.caching_no) return;
  for (std::string_view key : keys) table_[key].insert(client);
}

void Tracking::Invalidate(uint64_t writer, uint64_t current, std::string_view key,
                          const std::function<void(uint64_t)>& deliver) {
  for (auto& [prefix, p] : prefixes_) {
    if (key.starts_with(prefix)) {
      p.keys.insert_or_assign(std::string(key), writer);  // the last writer counts, as Redis
      pending_broadcasts_ = true;
    }
  }
  auto it = table_.find(key);
  if (it == table_.end()) return;
  absl::flat_hash_set<uint64_t> readers = std::move(it->second);
  table_.erase(it);
  for (uint64_t id : readers) {
    auto c = clients_.find(id);
    if (c == clients_.end() || c->second.options.bcast) continue;
    if (c->second.options.noloop && id == current) continue;
    deliver(id);
  }
}

void Tracking::EvictKeys(size_t n, const std::function<void(uint64_t, std::string_view)>& deliver) {
  while (n-- > 0 && !table_.empty()) {
    auto it = table_.begin();
    const std::string key = it->first;
    absl::flat_hash_set<uint64_t> readers = std::move(it->second);
    table_.erase(it);
    for (uint64_t id : readers) {
      if (clients_.contains(id)) deliver(id, key);
    }
  }
}

void Tracking::TakeBroadcasts(const std::function<void(uint64_t, const std::vector<std::string>&)>& deliver) {
  pending_broadcasts_ = false;
  for (auto& [prefix, p] : prefixes_) {
    if (p.keys.empty()) continue;
    std::map<std::string, uint64_t, std::less<>> keys = std::move(p.keys);
    p.keys.clear();
    for (uint64_t id : p.clients) {
      auto c = clients_.find(id);
      if (c == clients_.end()) continue;
      std::vector<std::string> mine;
      for (const auto& [key, writer] : keys) {
        if (c->second.options.noloop && writer == id) continue;
        mine.push_back(key);
      }
      if (!mine.empty()) deliver(id, mine);
    }
  }
}

// ---- delivery -------------------------------------------------------------------

void Tracking::BindConfig(Config& config) { config.Bind("tracking-table-max-keys", &max_keys_); }

std::string Tracking::Enable(Client& c, const TrackingOptions& options) {
  std::string error = Enable(c.id(), options);
  if (error.empty()) c.tracking = true;
  return error;
}

void Tracking::Disable(Client& c) {
  if (!c.tracking) return;
  Disable(c.id());
  c.tracking = false;
}

void Tracking::TrackRead(Client& c, const CommandSpec& spec, std::span<const std::string_view> argv) {
  std::vector<std::string_view> keys = CommandKeys(spec, argv);
  if (!keys.empty()) RememberKeys(c.id(), keys);
}

void Tracking::KeyWritten(std::string_view key, uint64_t current, bool by_server) {
  Invalidate(by_server ? 0 : current, current, key, [&](uint64_t id) {
    // The client whose command wrote the key gets the message after that
    // command's reply.
    if (current != 0 && id == current) {
      pending_.emplace_back(std::string(key));
      pending_owner_ = current;
      return;
    }
    const std::string k(key);
    Send(id, &k, 1);
  });
}

void Tracking::Flushed(uint64_t current) {
  ForgetAllKeys();
  if (clients_.empty()) return;
  std::vector<uint64_t> ids;
  ids.reserve(clients_.size());
  for (const auto& [id, t] : clients_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());  // in connection order, as Redis walks its client list
  for (uint64_t id : ids) {
    if (current != 0 && id == current) {
      pending_.emplace_back(std::nullopt);
      pending_owner_ = current;
    } else {
      Send(id, nullptr, 0);
    }
  }
}

void Tracking::SendPending(Client& c) {
  std::vector<std::optional<std::string>> pending;
  pending.swap(pending_);
  std::optional<Lapsed> lapsed;
  lapsed.swap(lapsed_);
  for (const std::optional<std::string>& k : pending) {
    const std::string* keys = k ? &*k : nullptr;
    const size_t n = k ? 1 : 0;
    if (Find(c.id()) != nullptr) {
      Send(c.id(), keys, n);
    } else if (!c.closing) {  // tracking turned off since
      if (lapsed && lapsed->client == c.id()) {
        bool broken = false;  // nothing keeps it: the client's settings are gone
        Deliver(c, lapsed->redirect, &broken, keys, n);
      } else {
        Write(c, /*redirected=*/false, keys, n, c.resp);
      }
    }
  }
}

void Tracking::EvictOverLimit() {
  // The readers of each forgotten key are told it changed.
  EvictKeys(table_.size() - max_keys_, [this](uint64_t id, std::string_view key) {
    const std::string k(key);
    Send(id, &k, 1);
  });
}

void Tracking::Broadcast() {
  TakeBroadcasts([this](uint64_t id, const std::vector<std::string>& keys) { Send(id, keys.data(), keys.size()); });
}

void Tracking::Send(uint64_t id, const std::string* keys, size_t n) {
  Client* c = delivery_.TrackingClient(id);
  if (c == nullptr || c->closing) return;
  ClientTracking* t = Find(id);
  if (t == nullptr) return;
  Deliver(*c, t->options.redirect, &t->broken_redirect, keys, n);
}

void Tracking::Deliver(Client& c, uint64_t redirect, bool* broken_redirect, const std::string* keys, size_t n) {
  if (redirect == 0) {
    Write(c, /*redirected=*/false, keys, n, c.resp);
    return;
  }
  Client* target = delivery_.TrackingClient(redirect);
  if (target == nullptr || target->closing) {
    // Each message becomes this notice, on the client's own connection when
    // it speaks RESP3 (Redis's sendTrackingMessage).
    *broken_redirect = true;
    if (c.resp >= 3) {
      io::ReplyBuilder rb(&delivery_.PushTarget(c), c.resp);
      rb.PushHeader(2);
      rb.Bulk("tracking-redir-broken");
      rb.Integer(static_cast<int64_t>(redirect));
    }
    return;
  }
  Write(*target, /*redirected=*/true, keys, n, c.resp);
}

void Tracking::Write(Client& target, bool redirected, const std::string* keys, size_t n, int tracker_resp) {
  io::ReplyBuilder rb(&delivery_.PushTarget(target), target.resp);
  if (target.resp >= 3) {
    rb.PushHeader(2);
    rb.Bulk("invalidate");
  } else if (redirected && target.pubsub) {
    rb.ArrayHeader(3);
    rb.Bulk("message");
    rb.Bulk("__redis__:invalidate");
  } else {
    return;  // a RESP2 connection cannot take a push on its own
  }
  if (keys == nullptr) {  // FLUSHDB / FLUSHALL: everything
    // A null in the tracking client's protocol, even when redirected to a
    // connection of the other one: Redis writes shared.null[tracker's resp].
    rb.set_resp(tracker_resp);
    rb.Null();
  } else {
    rb.ArrayHeader(static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) rb.Bulk(keys[i]);
  }
  if (redirected) delivery_.PushedToRedirect(target);
}

}  // namespace ringkv::server

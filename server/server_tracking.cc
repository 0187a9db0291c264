// Server: client-side caching (CLIENT TRACKING) -- remembering what tracking
// clients read, and delivering invalidation messages: RESP3 pushes, or for
// a redirect to a RESP2 client in subscribed mode, a message on
// __redis__:invalidate, exactly as Redis 7.0's sendTrackingMessage.
#include "core/strings.h"
#include "io/reply_builder.h"
#include "server/server.h"

namespace ringkv::server {

void Server::BindTrackingConfig() { config_->Bind("tracking-table-max-keys", &tracking_max_keys_); }

std::string Server::EnableTracking(Client& c, const TrackingOptions& options) {
  std::string error = tracking_.Enable(c.id(), options);
  if (error.empty()) c.tracking = true;
  return error;
}

void Server::DisableTracking(Client& c) {
  if (!c.tracking) return;
  tracking_.Disable(c.id());
  c.tracking = false;
}

void Server::TrackReadKeys(Client& c, const CommandSpec& spec, Argv argv) {
  std::vector<std::string_view> keys = CommandKeys(spec, argv);
  if (!keys.empty()) tracking_.RememberKeys(c.id(), keys);
}

void Server::InvalidateTrackedKey(std::string_view key, bool by_server) {
  const uint64_t writer = current_client_ != nullptr ? current_client_->id() : 0;
  tracking_.Invalidate(by_server ? 0 : writer, writer, key, [&](uint64_t id) {
    // The client whose command wrote the key gets the message after that
    // command's reply.
    if (current_client_ != nullptr && id == writer) {
      pending_invalidations_.emplace_back(std::string(key));
      return;
    }
    const std::string k(key);
    SendInvalidation(id, &k, 1);
  });
}

void Server::LimitTrackingTable() {
  // 0: no limit. The readers of each forgotten key are told it changed.
  if (tracking_max_keys_ == 0 || tracking_.keys() <= tracking_max_keys_) return;
  tracking_.EvictKeys(tracking_.keys() - tracking_max_keys_, [this](uint64_t id, std::string_view key) {
    const std::string k(key);
    SendInvalidation(id, &k, 1);
  });
}

void Server::SendInvalidation(uint64_t id, const std::string* keys, size_t n) {
  Client* c = FindClient(id);
  if (c == nullptr || c->closing) return;
  ClientTracking* t = tracking_.Find(id);
  if (t == nullptr) return;
  Client* target = c;
  bool redirected = false;
  if (t->options.redirect != 0) {
    target = FindClient(t->options.redirect);
    if (target == nullptr || target->closing) {
      // Told once, on its own connection, when it speaks RESP3.
      if (!t->broken_redirect && c->resp >= 3) {
        io::ReplyBuilder rb(&ReplyTarget(*c), c->resp);
        rb.PushHeader(2);
        rb.Bulk("tracking-redir-broken");
        rb.Integer(static_cast<int64_t>(t->options.redirect));
      }
      t->broken_redirect = true;
      return;
    }
    redirected = true;
  }
  io::ReplyBuilder rb(&ReplyTarget(*target), target->resp);
  if (target->resp >= 3) {
    rb.PushHeader(2);
    rb.Bulk("invalidate");
  } else if (redirected && target->pubsub) {
    rb.ArrayHeader(3);
    rb.Bulk("message");
    rb.Bulk("__redis__:invalidate");
  } else {
    return;  // a RESP2 connection cannot take a push on its own
  }
  if (keys == nullptr) {  // FLUSHDB / FLUSHALL: everything
    rb.Null();
    return;
  }
  rb.ArrayHeader(static_cast<int64_t>(n));
  for (size_t i = 0; i < n; ++i) rb.Bulk(keys[i]);
}

void Server::TrackingFlushed(bool all) {
  if (all) tracking_.ForgetAllKeys();
  if (tracking_.empty()) return;
  std::vector<uint64_t> ids;
  for (const auto& [id, c] : clients_) {
    if (c->tracking) ids.push_back(id);
  }
  for (uint64_t id : ids) {
    if (current_client_ != nullptr && id == current_client_->id()) {
      flush_invalidation_pending_ = true;
    } else {
      SendInvalidation(id, nullptr, 0);
    }
  }
}

void Server::FlushPendingInvalidations(Client& c) {
  std::vector<std::string> keys;
  keys.swap(pending_invalidations_);
  for (const std::string& k : keys) SendInvalidation(c.id(), &k, 1);
  if (flush_invalidation_pending_) {
    flush_invalidation_pending_ = false;
    SendInvalidation(c.id(), nullptr, 0);
  }
}

void Server::BroadcastInvalidations() {
  tracking_.TakeBroadcasts([this](uint64_t id, const std::vector<std::string>& keys) {
    SendInvalidation(id, keys.data(), keys.size());
  });
}

}  // namespace ringkv::server

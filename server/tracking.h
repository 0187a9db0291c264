// Tracking: client-side caching (CLIENT TRACKING), Redis 7.0's model.
//
// Default mode remembers, per key name (all databases share one table, as in
// Redis), the clients that read it; the first write to it invalidates the
// key for those clients and forgets them. BCAST mode remembers nothing per
// client: a write to a key under one of a client's prefixes queues the key,
// and the queue is sent once per loop turn. A client's settings are its
// tracking component, created by CLIENT TRACKING ON and erased by OFF (or
// closing); a client that never tracks has none, and a write to a key costs
// one emptiness test while nobody tracks.
//
// This component decides who is told what and writes the messages
// (Redis 7.0's sendTrackingMessage: RESP3 pushes, or for a redirect to a
// RESP2 client in subscribed mode, a message on __redis__:invalidate). It
// reaches clients through its Delivery, which the Server implements; so it
// is tested without a server (tests/server/tracking_test.cc).
//
//   Tracking tracking(delivery);
//   tracking.Enable(c, {});                  // CLIENT TRACKING ON
//   tracking.TrackRead(c, get_spec, argv);   // after GET k
//   tracking.KeyWritten("k", writer, false); // SET k by another client: c is told now
//
// Hot path: KeyWritten is called only while somebody tracks or a key is
// remembered (idle() is inline); FlushPending and LimitTable are inline
// tests; the Delivery's virtual calls happen once per invalidation message.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/string_hash.h"
#include "server/client.h"

namespace ringkv::io {
class OutBuffer;
}  // namespace ringkv::io

namespace ringkv::server {

struct TrackingOptions {
  uint64_t redirect = 0;  // 0: none
  bool bcast = false;
  bool optin = false;
  bool optout = false;
  bool noloop = false;
  std::vector<std::string> prefixes;  // BCAST only; "" when none given; once enabled, sorted
};

// A client's tracking component.
struct ClientTracking {
  TrackingOptions options;
  bool caching_yes = false;      // CLIENT CACHING YES for the next command (OPTIN)
  bool caching_no = false;       // CLIENT CACHING NO for the next command (OPTOUT)
  // The redirect client went away (CLIENT TRACKINGINFO's broken_redirect);
  // every message since was replaced by a tracking-redir-broken push.
  bool broken_redirect = false;
};

class Config;
struct CommandSpec;

class Tracking {
 public:
  // How invalidation messages reach clients.
  class Delivery {
   public:
    // The client with this id; nullptr when it is gone.
    virtual Client* TrackingClient(uint64_t id) = 0;
    // Where bytes pushed to `c` are written (its reply target).
    virtual io::OutBuffer& PushTarget(Client& c) = 0;
    // An invalidation was written to `target`, the redirect client of
    // another (not the client whose command runs): its output limit and
    // maxmemory-clients are weighed now, as after a command of its own.
    virtual void PushedToRedirect(Client& target) = 0;

   protected:
    ~Delivery() = default;
  };

  explicit Tracking(Delivery& delivery) : delivery_(delivery) {}
  Tracking(const Tracking&) = delete;
  Tracking& operator=(const Tracking&) = delete;

  // Binds tracking-table-max-keys (0: no limit).
  void BindConfig(Config& config);

  // ---- a client's commands -------------------------------------------------------
  // CLIENT TRACKING ON / OFF: c.tracking follows. Enable returns Redis's
  // error text, or "".
  std::string Enable(Client& c, const TrackingOptions& options);
  void Disable(Client& c);
  // After a read-only command of tracking client `c`: the keys it read.
  void TrackRead(Client& c, const CommandSpec& spec, std::span<const std::string_view> argv);
  // A write to `key` while the client `current` runs a command (0: none);
  // `by_server`: the server's own change (expiry, eviction), which reaches
  // NOLOOP BCAST clients too. Clients are told now, except `current`
  // itself, which is told after its reply (FlushPending).
  // A write forgets the key's readers even when none of them tracks any
  // more (as Redis: turning tracking off leaves the table alone, and a
  // client that turns it on again is told of keys it read before only if
  // they were not written meanwhile).
  // REQUIRES: !idle() (the caller's cheap test).
  void KeyWritten(std::string_view key, uint64_t current, bool by_server);
  // FLUSHDB / FLUSHALL: every tracking client is told to drop everything,
  // `current` after its reply, and every tracked key is forgotten (Redis's
  // trackingInvalidateKeysOnFlush, for either command).
  void Flushed(uint64_t current);
  // Whether the running command left messages for its own client.
  bool has_pending() const { return !pending_.empty(); }
  // After client `c`'s command replied: what it invalidated of its own keys
  // and each flush it made, in the order they happened -- even when the
  // command (inside EXEC) turned tracking off, as Redis sends them: then to
  // the redirect it had (Redis keeps client_tracking_redirection).
  void FlushPending(Client& c) {
    if (!pending_.empty()) SendPending(c);
  }
  // tracking-table-max-keys: forgets keys (telling their readers) until the
  // table fits; before each command and in the cron, as Redis.
  void LimitTable() {
    if (max_keys_ != 0 && table_.size() > max_keys_) EvictOverLimit();
  }
  // End of the loop turn: the BCAST invalidations queued in it.
  void Broadcast();
  // One invalidation message for client `id` (keys == nullptr: everything).
  void Send(uint64_t id, const std::string* keys, size_t n);

  // ---- the decisions (client ids, no delivery) ------------------------------------
  // CLIENT TRACKING ON; an error text when the options are refused (mode
  // switches, overlapping prefixes), "" on success. Prefixes add up across
  // calls in BCAST mode.
  std::string Enable(uint64_t client, const TrackingOptions& options);
  void Disable(uint64_t client);
  ClientTracking* Find(uint64_t client) {
    auto it = clients_.find(client);
    return it == clients_.end() ? nullptr : &it->second;
  }
  const ClientTracking* Find(uint64_t client) const {
    auto it = clients_.find(client);
    return it == clients_.end() ? nullptr : &it->second;
  }
  // What the client's tracking holds, for CLIENT LIST's tot-mem and client
  // eviction (maxmemory-clients): its settings, its BCAST prefixes and, per
  // prefix, its place in the prefix's list of clients. 0 when not tracking.
  size_t MemoryOf(uint64_t client) const;
  // Nobody tracks and no key is remembered: a write has nothing to do.
  bool idle() const { return clients_.empty() && table_.empty(); }
  size_t clients() const { return clients_.size(); }

  // After a read-only command of a default-mode client: remembers that it
  // may cache `keys` (subject to OPTIN / OPTOUT and CLIENT CACHING).
  void RememberKeys(uint64_t client, const std::vector<std::string_view>& keys);
  // A write to `key` by `writer` (0: the server itself, e.g. expiry) while
  // `current` runs a command (0: none): calls deliver(client) for every
  // default-mode client to tell now, forgets them, and queues the key for
  // matching BCAST prefixes. NOLOOP, as Redis: a default-mode client is not
  // told of changes made while its own command runs (an expiry its read
  // caused included); a BCAST client only of those its commands made.
  void Invalidate(uint64_t writer, uint64_t current, std::string_view key,
                  const std::function<void(uint64_t)>& deliver);
  // The BCAST invalidations queued since the last call: deliver(client,
  // keys) once per client and prefix with keys, then the queue is empty.
  void TakeBroadcasts(const std::function<void(uint64_t, const std::vector<std::string>&)>& deliver);
  bool has_broadcasts() const { return pending_broadcasts_; }
  // FLUSHDB / FLUSHALL: the per-key table is dropped (every tracking client
  // gets a null invalidation from the server).
  void ForgetAllKeys() { table_.clear(); }
  // tracking-table-max-keys: forgets `n` keys of the default-mode table
  // (arbitrary ones, as Redis's random pick), calling deliver(client, key)
  // for each client that was tracking a forgotten key, so that it drops it.
  void EvictKeys(size_t n, const std::function<void(uint64_t, std::string_view)>& deliver);
  // Keys in the default-mode table (INFO tracking_total_keys).
  size_t keys() const { return table_.size(); }
  size_t prefixes() const { return prefixes_.size(); }
  // (key, client) pairs in that table (INFO tracking_total_items).
  size_t items() const {
    size_t n = 0;
    for (const auto& [key, readers] : table_) n += readers.size();
    return n;
  }
  // The client's next command begins: a CLIENT CACHING choice applies to one
  // command only.
  void EndCommand(ClientTracking& t) { t.caching_yes = t.caching_no = false; }

 private:
  struct Prefix {
    absl::flat_hash_set<uint64_t> clients;
    // Keys written since the last broadcast, in key order (as Redis's rax),
    // each with its first writer (NOLOOP).
    std::map<std::string, uint64_t, std::less<>> keys;
  };
  absl::flat_hash_map<uint64_t, ClientTracking> clients_;
  core::StringMap<absl::flat_hash_set<uint64_t>> table_;
  std::map<std::string, Prefix, std::less<>> prefixes_;  // broadcast in prefix order, as Redis
  bool pending_broadcasts_ = false;

  void SendPending(Client& c);
  void EvictOverLimit();

  Delivery& delivery_;
  size_t max_keys_ = 1000000;  // tracking-table-max-keys
  // Invalidations for the running command's own client, sent after its
  // reply, in order: a key, or nullopt for a flush (everything).
  std::vector<std::optional<std::string>> pending_;
  uint64_t pending_owner_ = 0;  // the client pending_ is for
  // The running client, when it turned tracking off while it had pending
  // messages, and its redirect then (0: none): where SendPending sends them
  // (another client's tracking turned off meanwhile -- CLIENT KILL -- is not
  // recorded).
  struct Lapsed {
    uint64_t client;
    uint64_t redirect;
  };
  std::optional<Lapsed> lapsed_;
  // A message of tracking client `c` (its settings: redirect, broken flag)
  // to `c` or its redirect; a missing redirect gets c a
  // tracking-redir-broken push instead (RESP3 only).
  void Deliver(Client& c, uint64_t redirect, bool* broken_redirect, const std::string* keys, size_t n);
  // The message itself, to `target` (the tracking client or its redirect).
  // `tracker_resp`: the protocol of the tracking client, whose a flush's
  // null is written in (Redis's shared.null[c->resp]).
  void Write(Client& target, bool redirected, const std::string* keys, size_t n, int tracker_resp);
};

}  // namespace ringkv::server

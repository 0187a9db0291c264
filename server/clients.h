// Clients: the connected clients and what the server does to them as a
// whole -- the registry (by CLIENT ID, owning them) and `maxclients`,
// CLIENT PAUSE (its window, the clients it holds back and the commands they
// deferred), and the closes the server decides on its own: the idle
// `timeout`, client-output-buffer-limit (OutputLimits judges, this closes)
// and maxmemory-clients (client eviction, biggest first).
//
// What it cannot see it asks through Hooks: a client's CLIENT LIST line
// and memory (the log lines, eviction), its unsent output (its connection's
// buffers and the replies held for an fsync), closing it at once, running
// what it deferred, and the start and end of a pause (expiry and eviction
// stop while paused, as in Redis). The config, the output limits and the
// evicted_clients counter (INFO) are borrowed and outlive it.
//
// Cost: the per-command step (LimitOutput) is two cached flags when no
// limit is set; nothing is allocated while no client is held.
//
// Thread-safety: main thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "server/client.h"
#include "server/client_pause.h"
#include "server/client_registry.h"
#include "server/config.h"
#include "server/output_limits.h"

namespace ringkv::server {

class Clients {
 public:
  using Argv = std::span<const std::string_view>;

  class Hooks {
   public:
    // CLIENT LIST's line for `c` (the log lines of the closes).
    virtual std::string DescribeClient(const Client& c, int64_t now_ms) = 0;
    // Everything `c` holds (CLIENT LIST's tot-mem): what eviction weighs.
    virtual uint64_t ClientMemory(const Client& c) = 0;
    // `c`'s output not yet sent: what its output limit is judged on.
    virtual uint64_t UnsentOutput(const Client& c) = 0;
    // Closes `c` at once, dropping its output (its subscriptions go now).
    virtual void CloseNow(Client& c) = 0;
    // Runs the commands `c` deferred, in order (the pause ended).
    virtual void ResumeClient(Client& c) = 0;
    // A pause began / ended: expiry stops / resumes.
    virtual void PauseStarted() = 0;
    virtual void PauseEnded() = 0;

   protected:
    ~Hooks() = default;
  };

  // Binds maxclients and timeout (set now, refreshed by CONFIG SET).
  Clients(Hooks& hooks, Config& config, OutputLimits& output_limits, uint64_t& evicted_clients);
  Clients(const Clients&) = delete;
  Clients& operator=(const Clients&) = delete;

  // ---- the registry -------------------------------------------------------------
  const ClientRegistry& registry() const { return registry_; }
  ClientRegistry& registry() { return registry_; }
  Client* Find(uint64_t id) const { return registry_.Find(id); }
  // `maxclients` reached: a new connection is refused.
  bool Full() const { return static_cast<int64_t>(registry_.size()) >= maxclients_; }

  // ---- CLIENT PAUSE ----------------------------------------------------------------
  // CLIENT PAUSE (and SHUTDOWN's, FAILOVER's and a cluster manual
  // failover's pause of writes): a later pause extends, ALL wins.
  void Pause(int64_t until_ms, bool all);
  // The pause ends: the held clients run what they deferred, in order.
  void Unpause();
  // The window, to save and put back (Window, Restore).
  ClientPause& pause() { return pause_; }
  const ClientPause& pause() const { return pause_; }
  // `c`'s command waits behind what it deferred (a held or blocked client);
  // a client not blocked is held until the pause ends.
  void Defer(Client& c, Argv argv);
  // Clients held by the pause and waiting (INFO's blocked_clients counts them).
  size_t held_waiting() const;

  // ---- closes ----------------------------------------------------------------------
  // After a command of `c` (a normal or pub/sub client with a connection):
  // client-output-buffer-limit, then maxmemory-clients.
  void LimitOutput(Client& c, int64_t now_ms) {
    if (output_limits_.on(c) && !c.is_replica && !c.is_master && c.conn != nullptr) {
      if (output_limits_.Over(c, output_limits_.of(c), hooks_.UnsentOutput(c), now_ms)) CloseForOutputLimit(c, now_ms);
    }
    if (output_limits_.client_eviction_limit() != 0) Weigh(c, now_ms);
  }
  // CVE-2025-21605, as Debian's redis-server 7.0.15 patches it: a client
  // that must still authenticate may not let replies pile up unread. Past
  // what Redis's 16 KB reply buffer holds (anything more went to its reply
  // list, which may hold 1 KB), it is closed, its replies dropped. What a
  // client was sent before it lost its authentication (RESET) is not
  // counted: Redis checks as it adds a reply written while unauthenticated.
  void LimitUnauthenticatedOutput(Client& c, int64_t now_ms) {
    constexpr uint64_t kUnauthenticatedOutputMax = 16 * 1024;
    if (c.closing || c.conn == nullptr || c.is_replica || c.is_master) return;
    const uint64_t unsent = hooks_.UnsentOutput(c);
    uint64_t allowed = kUnauthenticatedOutputMax;
    if (!output_before_deauth_.empty()) [[unlikely]] {
      if (auto it = output_before_deauth_.find(c.id()); it != output_before_deauth_.end()) {
        it->second = std::min(it->second, unsent);  // what is left of it unsent
        allowed += it->second;
        if (it->second == 0) output_before_deauth_.erase(it);
      }
    }
    if (unsent > allowed) CloseForOutputLimit(c, now_ms);
  }
  // `c` must authenticate again (RESET): the replies it has unsent so far
  // are left out of LimitUnauthenticatedOutput's count.
  void NoteDeauthenticated(const Client& c) {
    if (const uint64_t unsent = hooks_.UnsentOutput(c); unsent > 0) output_before_deauth_[c.id()] = unsent;
  }
  // maxmemory-clients: `c` may have grown (its command ran, its input or
  // the output others wrote to it grew). Its new size goes into the running
  // total of what normal and pub/sub clients hold; a total at the limit
  // evicts (EvictIfNeeded). O(1) unless over the limit.
  void Weigh(Client& c, int64_t now_ms);
  // `c` closed: it leaves the running total (and NoteDeauthenticated's).
  void ForgetMemory(const Client& c) {
    if (!output_before_deauth_.empty()) output_before_deauth_.erase(c.id());
    if (auto it = memory_seen_.find(c.id()); it != memory_seen_.end()) {
      memory_total_ -= it->second;
      memory_seen_.erase(it);
    }
  }
  // Closes `c` for its output limit, logged as Redis logs it (a subscriber
  // listed twice is closed once).
  void CloseForOutputLimit(Client& c, int64_t now_ms);
  // maxmemory-clients: while normal and pub/sub clients together hold the
  // limit or more, closes the biggest ones (not NO-EVICT ones), as Redis
  // 7.0's client eviction. A full pass over the clients, which also
  // refreshes the running total. Each close is counted in evicted_clients.
  void EvictIfNeeded(int64_t now_ms);

  // The cron's part: a pause that ran out ends, idle clients (`timeout`)
  // are closed, so are clients above their soft output limit for longer
  // than its seconds, client eviction.
  void Cron(int64_t now_ms);
  // When the timer must wake for the pause's end (`wake_ms` if sooner).
  int64_t NextWakeMs(int64_t wake_ms) const {
    return pause_.active() && pause_.until_ms() < wake_ms ? pause_.until_ms() : wake_ms;
  }

 private:
  Hooks& hooks_;
  OutputLimits& output_limits_;
  uint64_t& evicted_clients_;
  ClientRegistry registry_;
  ClientPause pause_;
  // maxmemory-clients's account, kept only while a limit is set: what each
  // normal and pub/sub client was last weighed at, and the sum (Redis's
  // stat_clients_type_memory, updated the same way: per command and cron).
  absl::flat_hash_map<uint64_t, uint64_t> memory_seen_;
  uint64_t memory_total_ = 0;
  // NoteDeauthenticated: per client, the replies it had unsent when it lost
  // its authentication (what of them is still unsent, once looked at).
  absl::flat_hash_map<uint64_t, uint64_t> output_before_deauth_;
  int64_t maxclients_ = 10000;
  int64_t timeout_s_ = 0;
};

}  // namespace ringkv::server

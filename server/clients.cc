#include "server/clients.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/strings.h"
#include "server/logging.h"
#include "server/open_files_limit.h"

namespace ringkv::server {

Clients::Clients(Hooks& hooks, Config& config, OutputLimits& output_limits, uint64_t& evicted_clients)
    : hooks_(hooks), output_limits_(output_limits), evicted_clients_(evicted_clients) {
  config.Bind("maxclients", &maxclients_);
  config.Bind("timeout", &timeout_s_);
  // CONFIG SET maxclients raises the open-files limit as start-up does; one
  // it cannot raise enough refuses the value, with the most it allows, as
  // Redis 7.0's updateMaxclients.
  config.OnChange("maxclients", [&config]() -> absl::Status {
    const int64_t wanted = config.Int("maxclients");
    const OpenFilesLimit fits = AdjustOpenFilesLimit(wanted);
    if (fits.maxclients == wanted) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "The operating system is not able to handle the specified number of clients, try with ", fits.maxclients));
  });
}

void Clients::Pause(int64_t until_ms, bool all) {
  pause_.Pause(until_ms, all);
  hooks_.PauseStarted();
}

void Clients::Unpause() {
  pause_.End();
  hooks_.PauseEnded();
  for (uint64_t id : pause_.TakeHeld()) {
    Client* c = Find(id);
    if (c == nullptr) continue;
    c->paused_wait = false;
    if (c->blocked) continue;  // resumes when it is unblocked
    hooks_.ResumeClient(*c);
  }
}

void Clients::Defer(Client& c, Argv argv) {
  if (!c.deferred) c.deferred = std::make_unique<DeferredCommands>();
  c.deferred->commands.emplace_back(argv.begin(), argv.end());
  if (!c.blocked) pause_.Hold(c);  // a blocked client resumes on unblocking
}

size_t Clients::held_waiting() const {
  size_t n = 0;
  for (uint64_t id : pause_.held()) {
    const Client* c = Find(id);
    if (c != nullptr && c->paused_wait && !c->closing) ++n;
  }
  return n;
}

void Clients::CloseForOutputLimit(Client& c, int64_t now_ms) {
  if (c.closing) return;  // already (a subscriber can be listed twice)
  Log(kWarning, StrCat("Client ", hooks_.DescribeClient(c, now_ms),
                       " scheduled to be closed ASAP for overcoming of output buffer limits."));
  hooks_.CloseNow(c);
}

void Clients::Weigh(Client& c, int64_t now_ms) {
  const uint64_t limit = output_limits_.client_eviction_limit();
  if (limit == 0 || c.closing || c.conn == nullptr || c.is_replica || c.is_master) return;
  const uint64_t m = hooks_.ClientMemory(c);
  uint64_t& seen = memory_seen_[c.id()];
  memory_total_ = memory_total_ - seen + m;
  seen = m;
  if (memory_total_ >= limit) EvictIfNeeded(now_ms);
}

void Clients::EvictIfNeeded(int64_t now_ms) {
  const uint64_t limit = output_limits_.client_eviction_limit();
  memory_seen_.clear();
  memory_total_ = 0;
  if (limit == 0) return;  // the account is kept only while a limit is set
  std::vector<std::pair<uint64_t, Client*>> candidates;
  for (const auto& [id, client] : registry_) {
    if (client->is_replica || client->is_master || client->closing || client->conn == nullptr) continue;
    const uint64_t m = hooks_.ClientMemory(*client);
    memory_seen_[id] = m;
    memory_total_ += m;
    if (!client->no_evict) candidates.emplace_back(m, client);
  }
  if (memory_total_ < limit) return;
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [m, victim] : candidates) {
    if (memory_total_ < limit) break;
    Log(kNotice, StrCat("Evicting client: ", hooks_.DescribeClient(*victim, now_ms)));
    ForgetMemory(*victim);
    hooks_.CloseNow(*victim);
    ++evicted_clients_;
  }
}

void Clients::Cron(int64_t now_ms) {
  if (pause_.active() && now_ms >= pause_.until_ms()) Unpause();
  if (timeout_s_ > 0) {
    std::vector<Client*> idle;
    for (const auto& [id, c] : registry_) {
      if (!c->closing && now_ms / 1000 - c->last_interaction_s > timeout_s_) idle.push_back(c);
    }
    for (Client* c : idle) {
      Log(kVerbose, "Closing idle client");
      hooks_.CloseNow(*c);
    }
  }
  // Soft limits are judged on output, and also here: a client that stays
  // above its soft limit without receiving more is closed on time.
  for (uint64_t id : output_limits_.OverSoftLimitIds()) {
    Client* c = Find(id);
    if (c == nullptr || c->closing || c->is_replica || c->is_master || c->conn == nullptr) continue;
    if (output_limits_.Over(*c, output_limits_.of(*c), hooks_.UnsentOutput(*c), now_ms)) CloseForOutputLimit(*c, now_ms);
  }
  EvictIfNeeded(now_ms);
}

}  // namespace ringkv::server

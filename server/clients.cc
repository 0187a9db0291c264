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

void Clients::EvictIfNeeded(int64_t now_ms, const Client* c) {
  const uint64_t limit = output_limits_.client_eviction_limit();
  if (limit == 0) return;
  if (c != nullptr && (c->conn == nullptr || hooks_.ClientMemory(*c) < limit)) return;
  uint64_t total = 0;
  std::vector<std::pair<uint64_t, Client*>> candidates;
  for (const auto& [id, client] : registry_) {
    if (client->is_replica || client->is_master || client->closing || client->conn == nullptr) continue;
    const uint64_t m = hooks_.ClientMemory(*client);
    total += m;
    if (!client->no_evict) candidates.emplace_back(m, client);
  }
  if (total < limit) return;
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [m, victim] : candidates) {
    if (total < limit) break;
    Log(kNotice, StrCat("Evicting client: ", hooks_.DescribeClient(*victim, now_ms)));
    hooks_.CloseNow(*victim);
    ++evicted_clients_;
    total -= m;
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
  EvictIfNeeded(now_ms);
}

}  // namespace ringkv::server

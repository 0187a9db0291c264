#include "server/pubsub/pubsub.h"

#include <string>
#include <vector>

#include "core/strings.h"
#include "io/reply_builder.h"
#include "io/thread_check.h"
#include "server/clock.h"
#include "server/reply_paths.h"

namespace ringkv::server {
namespace {

// "message"/"smessage" channel payload, or "pmessage" pattern channel payload
// (`pattern` not null; it may be empty).
std::string EncodeMessage(int resp, std::string_view verb, const std::string* pattern, std::string_view channel,
                          std::string_view message) {
  io::OutBuffer out;
  io::ReplyBuilder rb(&out, resp);
  rb.PushHeader(pattern == nullptr ? 3 : 4);
  rb.Bulk(verb);
  if (pattern != nullptr) rb.Bulk(*pattern);
  rb.Bulk(channel);
  rb.Bulk(message);
  return out.ToString();
}

}  // namespace

PubSub::PubSub(Hooks& hooks, Config& config, core::KeyspaceObserver& observer, const ClientRegistry& clients,
               Persistence& persistence, io::IoSystem& io, OutputLimits& limits, HeldPushes& held)
    : hooks_(hooks),
      connected_(clients),
      persistence_(persistence),
      io_(io),
      limits_(limits),
      held_(held),
      notifications_(config, observer) {}

size_t PubSub::Publish(Kind kind, std::string_view channel, std::string_view message) {
  RINGKV_DCHECK_MAIN_THREAD();
  const std::string_view verb = kind == Kind::kShard ? "smessage" : "message";
  // client-output-buffer-limit pubsub: a subscriber that does not read is
  // closed rather than let its output grow without bound -- after the
  // delivery, as closing one changes the subscriptions being walked.
  const int64_t now_ms = UnixMs();
  // By id, looked up again at the close: a client listed twice (a channel
  // and a matching pattern) may be freed by its first close, which can
  // finish at once; one already closing is skipped.
  std::vector<uint64_t> over_limit;
  const bool weigh = limits_.client_eviction_limit() != 0;
  std::vector<uint64_t> grew;  // maxmemory-clients: the receivers, weighed after
  std::string plain[2];  // RESP2, RESP3: built on first need
  const std::string* last_pattern = nullptr;
  std::string patterned[2];
  const size_t receivers = ForEachReceiver(kind, channel, [&](uint64_t id, const std::string* pattern) {
    Client* c = connected_.Find(id);
    if (c == nullptr || c->closing) return;  // CLIENT REPLY OFF does not silence messages
    const int v = c->resp >= 3 ? 1 : 0;
    std::string* bytes = &plain[v];
    if (pattern != nullptr) {
      if (pattern != last_pattern) {
        patterned[0].clear();
        patterned[1].clear();
        last_pattern = pattern;
      }
      bytes = &patterned[v];
    }
    if (bytes->empty()) {
      *bytes = EncodeMessage(v == 1 ? 3 : 2, pattern == nullptr ? verb : "pmessage", pattern, channel, message);
    }
    io::OutBuffer* held = held_.TargetFor(c);
    (held != nullptr ? *held : FanoutTargetOf(*c, persistence_, io_)).Append(*bytes);
    if (weigh) grew.push_back(id);
    if (limits_.pubsub_on() && limits_.Over(*c, limits_.pubsub(), UnsentOutputOf(*c, persistence_), now_ms)) {
      over_limit.push_back(id);
    }
  });
  for (uint64_t id : over_limit) {
    if (Client* c = connected_.Find(id); c != nullptr && !c->closing) hooks_.CloseSlowSubscriber(*c, now_ms);
  }
  for (uint64_t id : grew) {
    if (Client* c = connected_.Find(id); c != nullptr && !c->closing) hooks_.WeighSubscriber(*c, now_ms);
  }
  return receivers;
}

void PubSub::UnsubscribeShardChannelsInSlot(int slot) {
  RINGKV_DCHECK_MAIN_THREAD();
  for (const std::string& channel : ShardChannelsInSlot(slot)) {
    std::vector<uint64_t> subscribers;
    ForEachReceiver(Kind::kShard, channel, [&](uint64_t id, const std::string*) { subscribers.push_back(id); });
    for (uint64_t id : subscribers) {
      Unsubscribe(id, Kind::kShard, channel);
      Client* c = connected_.Find(id);
      if (c == nullptr) continue;
      c->pubsub = Subscribed(id);
      if (c->closing) continue;
      io::OutBuffer out;
      io::ReplyBuilder rb(&out, c->resp);
      rb.PushHeader(3);
      rb.Bulk("sunsubscribe");
      rb.Bulk(channel);
      rb.Integer(static_cast<int64_t>(Count(id, Kind::kShard)));
      FanoutTargetOf(*c, persistence_, io_).Append(out.ToString());
    }
  }
}

void PubSub::PublishKeyspaceEvent(std::string_view event, int db, std::string_view key) {
  if (notifications_.keyspace_channel()) Publish(Kind::kChannel, StrCat("__keyspace@", db, "__:", key), event);
  if (notifications_.keyevent_channel()) Publish(Kind::kChannel, StrCat("__keyevent@", db, "__:", event), key);
}

}  // namespace ringkv::server

// Server: delivering published messages. A message is encoded once per
// protocol version (and per matching pattern) and appended to each
// receiver's reply path -- the held one when that client's replies wait for
// an AOF fsync, so a message never overtakes an earlier reply; otherwise the
// fan-out path, which gathers a busy channel's messages into fewer writes
// (IoSystem::PrepareFanoutWrite).
#include <string>
#include <vector>

#include "core/strings.h"
#include "io/reply_builder.h"
#include "io/thread_check.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

// "message"/"smessage" channel payload, or "pmessage" pattern channel payload.
std::string EncodeMessage(int resp, std::string_view verb, std::string_view pattern, std::string_view channel,
                          std::string_view message) {
  io::OutBuffer out;
  io::ReplyBuilder rb(&out, resp);
  rb.PushHeader(pattern.empty() ? 3 : 4);
  rb.Bulk(verb);
  if (!pattern.empty()) rb.Bulk(pattern);
  rb.Bulk(channel);
  rb.Bulk(message);
  return out.ToString();
}

}  // namespace

size_t Server::Publish(PubSub::Kind kind, std::string_view channel, std::string_view message) {
  RINGKV_DCHECK_MAIN_THREAD();
  const std::string_view verb = kind == PubSub::Kind::kShard ? "smessage" : "message";
  // client-output-buffer-limit pubsub: a subscriber that does not read is
  // closed rather than let its output grow without bound.
  const int64_t now_ms = UnixMs();
  std::vector<Client*> over_limit;
  std::string plain[2];  // RESP2, RESP3: built on first need
  std::string_view last_pattern;
  std::string patterned[2];
  const size_t receivers = pubsub_.ForEachReceiver(kind, channel, [&](uint64_t id, std::string_view pattern) {
    Client* c = FindClient(id);
    if (c == nullptr || c->closing) return;  // CLIENT REPLY OFF does not silence messages
    const int v = c->resp >= 3 ? 1 : 0;
    std::string* bytes = &plain[v];
    if (!pattern.empty()) {
      if (pattern != last_pattern) {
        patterned[0].clear();
        patterned[1].clear();
        last_pattern = pattern;
      }
      bytes = &patterned[v];
    }
    if (bytes->empty()) *bytes = EncodeMessage(v == 1 ? 3 : 2, pattern.empty() ? verb : "pmessage", pattern, channel, message);
    FanoutTarget(*c).Append(*bytes);
    if (output_limits_.pubsub_on() && OverOutputLimit(*c, output_limits_.pubsub(), now_ms)) over_limit.push_back(c);
  });
  for (Client* c : over_limit) CloseForOutputLimit(*c, now_ms);
  return receivers;
}

void Server::UnsubscribeShardChannelsInSlot(int slot) {
  RINGKV_DCHECK_MAIN_THREAD();
  for (const std::string& channel : pubsub_.ShardChannelsInSlot(slot)) {
    std::vector<uint64_t> subscribers;
    pubsub_.ForEachReceiver(PubSub::Kind::kShard, channel,
                            [&](uint64_t id, std::string_view) { subscribers.push_back(id); });
    for (uint64_t id : subscribers) {
      pubsub_.Unsubscribe(id, PubSub::Kind::kShard, channel);
      Client* c = FindClient(id);
      if (c == nullptr) continue;
      c->pubsub = pubsub_.Subscribed(id);
      if (c->closing) continue;
      io::OutBuffer out;
      io::ReplyBuilder rb(&out, c->resp);
      rb.PushHeader(3);
      rb.Bulk("sunsubscribe");
      rb.Bulk(channel);
      rb.Integer(static_cast<int64_t>(pubsub_.Count(id, PubSub::Kind::kShard)));
      FanoutTarget(*c).Append(out.ToString());
    }
  }
}

void Server::PropagateToReplicas(int db, Argv argv) {
  RINGKV_DCHECK_MAIN_THREAD();
  // A replica only relays its primary's stream.
  if (repl::Primary* p = primary_side_.primary(); p && !replica_side_.is_replica() && !loading_) p->Feed(db, argv);
}

}  // namespace ringkv::server

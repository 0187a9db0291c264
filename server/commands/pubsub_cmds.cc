// Pub/Sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE,
// SSUBSCRIBE, SUNSUBSCRIBE (standalone semantics), PUBLISH, SPUBLISH, PUBSUB.
// Confirmations and messages are push messages in RESP3 and arrays in RESP2.
#include <optional>

#include "core/strings.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

using Kind = PubSub::Kind;

std::string_view SubscribeVerb(Kind kind) {
  return kind == Kind::kChannel ? "subscribe" : kind == Kind::kPattern ? "psubscribe" : "ssubscribe";
}
std::string_view UnsubscribeVerb(Kind kind) {
  return kind == Kind::kChannel ? "unsubscribe" : kind == Kind::kPattern ? "punsubscribe" : "sunsubscribe";
}

// The count a confirmation reports: channels + patterns, or shard channels.
int64_t ConfirmCount(Server& server, const Client& c, Kind kind) {
  return static_cast<int64_t>(kind == Kind::kShard ? server.pubsub().Count(c.id(), Kind::kShard)
                                                   : server.pubsub().ChannelAndPatternCount(c.id()));
}

// A confirmation is a push: CLIENT REPLY OFF / SKIP does not silence it.
void Confirm(ServerCommandContext& ctx, std::string_view verb, const std::string* name, int64_t count) {
  Client& c = ctx.client;
  std::optional<io::ReplyBuilder> pushed;
  if (c.replies_silenced() && c.conn != nullptr && !c.is_replica && !c.is_master) {
    pushed.emplace(&ctx.server.ReplyTarget(c), c.resp);
  }
  io::ReplyBuilder& rb = pushed ? *pushed : ctx.reply;
  rb.PushHeader(3);
  rb.Bulk(verb);
  if (name != nullptr) {
    rb.Bulk(*name);
  } else {
    rb.Null();
  }
  rb.Integer(count);
}

void Subscribe(ServerCommandContext& ctx, Kind kind) {
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    const std::string name(ctx.argv[i]);
    if (ctx.server.pubsub().Subscribe(ctx.client.id(), kind, name)) ctx.client.pubsub = true;
    Confirm(ctx, SubscribeVerb(kind), &name, ConfirmCount(ctx.server, ctx.client, kind));
  }
}

void Unsubscribe(ServerCommandContext& ctx, Kind kind) {
  std::vector<std::string> names;
  if (ctx.argv.size() > 1) {
    names.assign(ctx.argv.begin() + 1, ctx.argv.end());
  } else {
    names = ctx.server.pubsub().Subscriptions(ctx.client.id(), kind);  // all of them
  }
  for (const std::string& name : names) {
    ctx.server.pubsub().Unsubscribe(ctx.client.id(), kind, name);
    Confirm(ctx, UnsubscribeVerb(kind), &name, ConfirmCount(ctx.server, ctx.client, kind));
  }
  if (names.empty()) Confirm(ctx, UnsubscribeVerb(kind), nullptr, ConfirmCount(ctx.server, ctx.client, kind));
  ctx.client.pubsub = ctx.server.pubsub().Subscribed(ctx.client.id());
}

void CmdSubscribe(ServerCommandContext& ctx) { Subscribe(ctx, Kind::kChannel); }
void CmdPsubscribe(ServerCommandContext& ctx) { Subscribe(ctx, Kind::kPattern); }
void CmdSsubscribe(ServerCommandContext& ctx) {
  // Redis 7.0 lets SUBSCRIBE and PSUBSCRIBE run inside EXEC, not SSUBSCRIBE:
  // a client that expects one reply per command cannot.
  if (!ctx.server.MayBlock(ctx.client)) {
    ctx.reply.Error("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
    return;
  }
  Subscribe(ctx, Kind::kShard);
}
void CmdUnsubscribe(ServerCommandContext& ctx) { Unsubscribe(ctx, Kind::kChannel); }
void CmdPunsubscribe(ServerCommandContext& ctx) { Unsubscribe(ctx, Kind::kPattern); }
void CmdSunsubscribe(ServerCommandContext& ctx) { Unsubscribe(ctx, Kind::kShard); }

void Publish(ServerCommandContext& ctx, Kind kind) {
  const size_t receivers = ctx.server.pubsub().Publish(kind, ctx.argv[1], ctx.argv[2]);
  // To the replicas, or in cluster mode over the bus (Server::PropagatePublish).
  ctx.server.PropagatePublish(kind, ctx.argv, ctx.client.db);
  ctx.reply.Integer(static_cast<int64_t>(receivers));
}

void CmdPublish(ServerCommandContext& ctx) { Publish(ctx, Kind::kChannel); }
void CmdSpublish(ServerCommandContext& ctx) { Publish(ctx, Kind::kShard); }

void ReplyChannels(ServerCommandContext& ctx, Kind kind) {
  if (ctx.argv.size() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  const std::vector<std::string> names =
      ctx.server.pubsub().Channels(kind, ctx.argv.size() == 3 ? std::optional<std::string_view>(ctx.argv[2]) : std::nullopt);
  ctx.reply.ArrayHeader(static_cast<int64_t>(names.size()));
  for (const std::string& n : names) ctx.reply.Bulk(n);
}

// Channel and count pairs in a flat array, in RESP3 too: Redis 7.0 sends no
// map here (7.2 does).
void ReplyNumSub(ServerCommandContext& ctx, Kind kind) {
  ctx.reply.ArrayHeader(static_cast<int64_t>(ctx.argv.size() - 2) * 2);
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    ctx.reply.Bulk(ctx.argv[i]);
    ctx.reply.Integer(static_cast<int64_t>(ctx.server.pubsub().NumSub(kind, ctx.argv[i])));
  }
}

void CmdPubsubChannels(ServerCommandContext& ctx) { ReplyChannels(ctx, Kind::kChannel); }
void CmdPubsubShardchannels(ServerCommandContext& ctx) { ReplyChannels(ctx, Kind::kShard); }
void CmdPubsubNumsub(ServerCommandContext& ctx) { ReplyNumSub(ctx, Kind::kChannel); }
void CmdPubsubShardnumsub(ServerCommandContext& ctx) { ReplyNumSub(ctx, Kind::kShard); }
void CmdPubsubNumpat(ServerCommandContext& ctx) {
  ctx.reply.Integer(static_cast<int64_t>(ctx.server.pubsub().NumPatterns()));
}

void CmdPubsubHelp(ServerCommandContext& ctx) {
  static const char* const kLines[] = {
      "CHANNELS [<pattern>]",
      "    Return the currently active channels matching a <pattern> (default: '*').",
      "NUMPAT",
      "    Return number of subscriptions to patterns.",
      "NUMSUB [<channel> ...]",
      "    Return the number of subscribers for the specified channels, excluding",
      "    pattern subscriptions(default: no channels).",
      "SHARDCHANNELS [<pattern>]",
      "    Return the currently active shard level channels matching a <pattern> (default: '*').",
      "SHARDNUMSUB [<shardchannel> ...]",
      "    Return the number of subscribers for the specified shard level channel(s)",
  };
  ReplyHelp(ctx, kLines);
}

}  // namespace

void RegisterPubsubCommands(CommandTable& t) {
  using namespace cmd;
  const uint32_t kSub = kPubsub | kNoscript | kLoading | kStale;
  const uint32_t kPub = kPubsub | kLoading | kStale | kFast | kMayReplicate;
  t.Add(Cmd("subscribe", -2, kSub, 0, 0, 0, "@pubsub @slow", "pubsub", "Listens for messages published to channels.", "2.0.0", CmdSubscribe));
  t.Add(Cmd("unsubscribe", -1, kSub, 0, 0, 0, "@pubsub @slow", "pubsub", "Stops listening to messages posted to channels.", "2.0.0", CmdUnsubscribe));
  t.Add(Cmd("psubscribe", -2, kSub, 0, 0, 0, "@pubsub @slow", "pubsub", "Listens for messages published to channels that match one or more patterns.", "2.0.0", CmdPsubscribe));
  t.Add(Cmd("punsubscribe", -1, kSub, 0, 0, 0, "@pubsub @slow", "pubsub", "Stops listening to messages published to channels that match one or more patterns.", "2.0.0", CmdPunsubscribe));
  t.Add(Cmd("publish", 3, kPub, 0, 0, 0, "@pubsub @fast", "pubsub", "Posts a message to a channel.", "2.0.0", CmdPublish));
  t.Add(NotKeys(Cmd("ssubscribe", -2, kSub, 1, -1, 1, "@pubsub @slow", "pubsub", "Listens for messages published to shard channels.", "7.0.0", CmdSsubscribe)));
  t.Add(NotKeys(Cmd("sunsubscribe", -1, kSub, 1, -1, 1, "@pubsub @slow", "pubsub", "Stops listening to messages posted to shard channels.", "7.0.0", CmdSunsubscribe)));
  t.Add(NotKeys(Cmd("spublish", 3, kPub, 1, 1, 1, "@pubsub @fast", "pubsub", "Post a message to a shard channel", "7.0.0", CmdSpublish)));
  const uint32_t kIntro = kPubsub | kLoading | kStale;
  std::vector<CommandSpec> subs;
  subs.push_back(Cmd("pubsub|channels", -2, kIntro, 0, 0, 0, "@pubsub @slow", "pubsub", "Returns the active channels.", "2.8.0", CmdPubsubChannels));
  subs.push_back(Cmd("pubsub|numpat", 2, kIntro, 0, 0, 0, "@pubsub @slow", "pubsub", "Returns a count of unique pattern subscriptions.", "2.8.0", CmdPubsubNumpat));
  subs.push_back(Cmd("pubsub|numsub", -2, kIntro, 0, 0, 0, "@pubsub @slow", "pubsub", "Returns a count of subscribers to channels.", "2.8.0", CmdPubsubNumsub));
  subs.push_back(Cmd("pubsub|shardchannels", -2, kIntro, 0, 0, 0, "@pubsub @slow", "pubsub", "Returns the active shard channels.", "7.0.0", CmdPubsubShardchannels));
  subs.push_back(Cmd("pubsub|shardnumsub", -2, kIntro, 0, 0, 0, "@pubsub @slow", "pubsub", "Returns the count of subscribers of shard channels.", "7.0.0", CmdPubsubShardnumsub));
  subs.push_back(Cmd("pubsub|help", 2, kLoading | kStale, 0, 0, 0, "@slow", "pubsub", "Returns helpful text about the different subcommands.", "6.2.0", CmdPubsubHelp));
  t.Add(Cmd("pubsub", -2, 0, 0, 0, 0, "@slow", "pubsub", "A container for Pub/Sub commands.", "2.8.0", nullptr, std::move(subs)));
}

}  // namespace ringkv::server

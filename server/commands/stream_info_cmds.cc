// XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS and HELP,
// with Redis 7.0's fields (entries-read and lag of groups included).
// ringkv indexes nodes in a B-tree, not a radix tree: radix-tree-nodes is
// the count Redis's rax would have for the same node IDs (core/rax_shape.h).
#include <string>
#include <vector>

#include "core/rax_shape.h"
#include "core/stream_value.h"
#include "core/strings.h"
#include "server/command_table.h"
#include "server/commands/stream_util.h"
#include "server/commands/util.h"
#include "server/errors.h"

namespace ringkv::server {
namespace {

using core::StreamConsumer;
using core::StreamGroup;
using core::StreamId;
using core::StreamValue;

// The stream at argv[2]: "no such key" when missing.
StreamValue* InfoTarget(CommandContext& ctx) {
  StreamValue* s;
  if (!LookupForRead(ctx, ctx.argv[2], &s)) return nullptr;
  if (s == nullptr) ctx.reply.Error(errors::kNoSuchKey);
  return s;
}

void ReplyEntriesReadAndLag(CommandContext& ctx, const StreamValue& s, const StreamGroup& g) {
  ctx.reply.Bulk("entries-read");
  if (g.entries_read != StreamGroup::kInvalidEntriesRead) {
    ctx.reply.Integer(g.entries_read);
  } else {
    ctx.reply.Null();
  }
  ctx.reply.Bulk("lag");
  int64_t lag = 0;
  bool valid = false;
  if (s.entries_added() == 0) {
    valid = true;
  } else if (g.entries_read != StreamGroup::kInvalidEntriesRead && !s.RangeHasTombstones(g.last_id, StreamId::Max())) {
    lag = static_cast<int64_t>(s.entries_added()) - g.entries_read;
    valid = true;
  } else {
    const int64_t read = s.EstimateDistanceFromFirstEverEntry(g.last_id);
    if (read != StreamGroup::kInvalidEntriesRead) {
      lag = static_cast<int64_t>(s.entries_added()) - read;
      valid = true;
    }
  }
  if (valid) {
    ctx.reply.Integer(lag);
  } else {
    ctx.reply.Null();
  }
}

void ReplyEdge(CommandContext& ctx, const StreamValue& s, bool first) {
  bool found = false;
  s.Range(StreamId::Min(), StreamId::Max(), !first, [&](StreamId id, core::FieldValues fv) {
    ReplyStreamEntry(ctx, id, fv);
    found = true;
    return false;
  });
  if (!found) ctx.reply.Null();
}

void ReplyStreamHeader(CommandContext& ctx, const StreamValue& s) {
  ctx.reply.Bulk("length");
  ctx.reply.Integer(static_cast<int64_t>(s.size()));
  ctx.reply.Bulk("radix-tree-keys");
  ctx.reply.Integer(static_cast<int64_t>(s.node_count()));
  ctx.reply.Bulk("radix-tree-nodes");
  std::vector<core::StreamId> masters;
  masters.reserve(s.node_count());
  s.ForEachNode([&](core::StreamId id, const core::Listpack&) { masters.push_back(id); });
  ctx.reply.Integer(static_cast<int64_t>(core::RaxNodeCount(masters)));
  ctx.reply.Bulk("last-generated-id");
  ctx.reply.Bulk(s.last_id().ToString());
  ctx.reply.Bulk("max-deleted-entry-id");
  ctx.reply.Bulk(s.max_deleted_id().ToString());
  ctx.reply.Bulk("entries-added");
  ctx.reply.Integer(static_cast<int64_t>(s.entries_added()));
  ctx.reply.Bulk("recorded-first-entry-id");
  ctx.reply.Bulk(s.first_id().ToString());
}

void ReplyFull(CommandContext& ctx, const StreamValue& s, int64_t count) {
  ctx.reply.MapHeader(9);
  ReplyStreamHeader(ctx, s);
  ctx.reply.Bulk("entries");
  ReplyStreamRange(ctx, s, StreamId::Min(), StreamId::Max(), static_cast<size_t>(count), false);
  ctx.reply.Bulk("groups");
  ctx.reply.ArrayHeader(static_cast<int64_t>(s.groups().size()));
  auto limit = [&](size_t n) { return count == 0 ? n : std::min(n, static_cast<size_t>(count)); };
  for (const auto& [name, g] : s.groups()) {
    ctx.reply.MapHeader(7);
    ctx.reply.Bulk("name");
    ctx.reply.Bulk(name);
    ctx.reply.Bulk("last-delivered-id");
    ctx.reply.Bulk(g->last_id.ToString());
    ReplyEntriesReadAndLag(ctx, s, *g);
    ctx.reply.Bulk("pel-count");
    ctx.reply.Integer(static_cast<int64_t>(g->pel.size()));
    ctx.reply.Bulk("pending");
    size_t n = limit(g->pel.size());
    ctx.reply.ArrayHeader(static_cast<int64_t>(n));
    for (auto it = g->pel.begin(); n > 0; ++it, --n) {
      ctx.reply.ArrayHeader(4);
      ctx.reply.Bulk(it->first.ToString());
      ctx.reply.Bulk(it->second.consumer->name);
      ctx.reply.Integer(it->second.delivery_time);
      ctx.reply.Integer(static_cast<int64_t>(it->second.delivery_count));
    }
    ctx.reply.Bulk("consumers");
    ctx.reply.ArrayHeader(static_cast<int64_t>(g->consumers.size()));
    for (const auto& [cname, c] : g->consumers) {
      ctx.reply.MapHeader(4);
      ctx.reply.Bulk("name");
      ctx.reply.Bulk(cname);
      ctx.reply.Bulk("seen-time");
      ctx.reply.Integer(c->seen_time);
      ctx.reply.Bulk("pel-count");
      ctx.reply.Integer(static_cast<int64_t>(c->pel.size()));
      ctx.reply.Bulk("pending");
      size_t m = limit(c->pel.size());
      ctx.reply.ArrayHeader(static_cast<int64_t>(m));
      for (auto it = c->pel.begin(); m > 0; ++it, --m) {
        const core::StreamNack& nack = g->pel.find(*it)->second;
        ctx.reply.ArrayHeader(3);
        ctx.reply.Bulk(it->ToString());
        ctx.reply.Integer(nack.delivery_time);
        ctx.reply.Integer(static_cast<int64_t>(nack.delivery_count));
      }
    }
  }
}

void CmdXinfoStream(CommandContext& ctx) {
  // The key first (missing, wrong type), then the options, as Redis.
  StreamValue* s = InfoTarget(ctx);
  if (s == nullptr) return;
  const size_t argc = ctx.argv.size();
  bool full = false;
  int64_t count = 10;
  if (argc > 3) {
    if (!Is(ctx.argv[3], "full") || (argc != 4 && argc != 6)) return ReplySubcommandSyntaxError(ctx);
    full = true;
    if (argc == 6) {
      if (!Is(ctx.argv[4], "count")) return ReplySubcommandSyntaxError(ctx);
      if (!ParseInt(ctx, ctx.argv[5], &count)) return;
      if (count < 0) count = 10;
    }
  }
  if (full) return ReplyFull(ctx, *s, count);
  ctx.reply.MapHeader(10);
  ReplyStreamHeader(ctx, *s);
  ctx.reply.Bulk("groups");
  ctx.reply.Integer(static_cast<int64_t>(s->groups().size()));
  ctx.reply.Bulk("first-entry");
  ReplyEdge(ctx, *s, true);
  ctx.reply.Bulk("last-entry");
  ReplyEdge(ctx, *s, false);
}

void CmdXinfoGroups(CommandContext& ctx) {
  StreamValue* s = InfoTarget(ctx);
  if (s == nullptr) return;
  ctx.reply.ArrayHeader(static_cast<int64_t>(s->groups().size()));
  for (const auto& [name, g] : s->groups()) {
    ctx.reply.MapHeader(6);
    ctx.reply.Bulk("name");
    ctx.reply.Bulk(name);
    ctx.reply.Bulk("consumers");
    ctx.reply.Integer(static_cast<int64_t>(g->consumers.size()));
    ctx.reply.Bulk("pending");
    ctx.reply.Integer(static_cast<int64_t>(g->pel.size()));
    ctx.reply.Bulk("last-delivered-id");
    ctx.reply.Bulk(g->last_id.ToString());
    ReplyEntriesReadAndLag(ctx, *s, *g);
  }
}

void CmdXinfoConsumers(CommandContext& ctx) {
  StreamValue* s = InfoTarget(ctx);
  if (s == nullptr) return;
  StreamGroup* g = s->FindGroup(ctx.argv[3]);
  if (g == nullptr) {
    return ctx.reply.Error(StrCat("NOGROUP No such consumer group '", ctx.argv[3], "' for key name '", ctx.argv[2],
                                  "'"));
  }
  ctx.reply.ArrayHeader(static_cast<int64_t>(g->consumers.size()));
  for (const auto& [name, c] : g->consumers) {
    ctx.reply.MapHeader(3);
    ctx.reply.Bulk("name");
    ctx.reply.Bulk(name);
    ctx.reply.Bulk("pending");
    ctx.reply.Integer(static_cast<int64_t>(c->pel.size()));
    ctx.reply.Bulk("idle");
    ctx.reply.Integer(std::max<int64_t>(0, ctx.now_ms - c->seen_time));
  }
}

void CmdXinfoHelp(CommandContext& ctx) {
  static const char* const kLines[] = {
      "CONSUMERS <key> <groupname>",
      "    Show consumers of <groupname>.",
      "GROUPS <key>",
      "    Show the stream consumer groups.",
      "STREAM <key> [FULL [COUNT <count>]",
      "    Show information about the stream.",
  };
  ReplyHelp(ctx, kLines);
}

}  // namespace

void RegisterStreamInfoCommands(CommandTable& t) {
  using namespace cmd;
  constexpr const char* kReadSlow = "@read @stream @slow";
  // Subcommands in redis-server's COMMAND order.
  std::vector<CommandSpec> subs;
  subs.push_back(Cmd("xinfo|stream", -3, kReadonly, 2, 2, 1, kReadSlow, "stream", "Get information about a stream", "5.0.0", CmdXinfoStream));
  subs.push_back(Cmd("xinfo|help", 2, kLoading | kStale, 0, 0, 0, "@stream @slow", "stream", "Show helpful text about the different subcommands", "5.0.0", CmdXinfoHelp));
  subs.push_back(Cmd("xinfo|groups", 3, kReadonly, 2, 2, 1, kReadSlow, "stream", "List the consumer groups of a stream", "5.0.0", CmdXinfoGroups));
  subs.push_back(Cmd("xinfo|consumers", 4, kReadonly, 2, 2, 1, kReadSlow, "stream", "List the consumers in a consumer group", "5.0.0", CmdXinfoConsumers));
  t.Add(Cmd("xinfo", -2, 0, 0, 0, 0, "@slow", "stream", "A container for stream introspection commands", "5.0.0", nullptr, std::move(subs)));
}

}  // namespace ringkv::server

// The consumer-group commands: XGROUP (CREATE, SETID, DESTROY,
// CREATECONSUMER, DELCONSUMER, HELP), XACK, XPENDING, XCLAIM and XAUTOCLAIM.
// Replies, errors and propagation follow Redis 7.0's t_stream.c; XCLAIM and
// XAUTOCLAIM propagate as one XCLAIM ... JUSTID FORCE per entry they moved
// (or dropped, for entries deleted meanwhile).
#include <climits>
#include <string>
#include <vector>

#include "core/stream_value.h"
#include "core/strings.h"
#include "server/clock.h"
#include "server/command_table.h"
#include "server/commands/stream_group_ops.h"
#include "server/commands/stream_util.h"
#include "server/commands/util.h"
#include "server/errors.h"

namespace ringkv::server {
namespace {

using core::StreamConsumer;
using core::StreamGroup;
using core::StreamId;
using core::StreamNack;
using core::StreamValue;

// The stream and group XGROUP's subcommands work on (Redis's checks, in its
// order). False after replying an error.
bool XgroupTarget(CommandContext& ctx, bool mkstream, bool group_required, StreamValue** s, StreamGroup** g) {
  core::Entry* e = ctx.db.Find(ctx.argv[2], ctx.now_ms);
  *s = nullptr;
  *g = nullptr;
  if (e != nullptr) {
    if (e->value.type() != core::ValueType::kStream) {
      ctx.reply.Error(errors::kWrongType);
      return false;
    }
    *s = &e->value.stream();
  }
  if (mkstream) return true;
  if (*s == nullptr) {
    ctx.reply.Error(
        "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM "
        "option to create an empty stream automatically.");
    return false;
  }
  *g = (*s)->FindGroup(ctx.argv[3]);
  if (*g == nullptr && group_required) {
    ctx.reply.Error(NoGroupError(ctx.argv[2], ctx.argv[3]));
    return false;
  }
  return true;
}

bool ParseEntriesRead(CommandContext& ctx, std::string_view arg, int64_t* out) {
  if (!ParseInt(ctx, arg, out)) return false;
  if (*out < 0 && *out != StreamGroup::kInvalidEntriesRead) {
    ctx.reply.Error("ERR value for ENTRIESREAD must be positive or -1");
    return false;
  }
  return true;
}

void CmdXgroupCreate(CommandContext& ctx) {
  bool mkstream = false;
  int64_t entries_read = StreamGroup::kInvalidEntriesRead;
  for (size_t i = 5; i < ctx.argv.size();) {
    if (Is(ctx.argv[i], "mkstream")) {
      mkstream = true;
      ++i;
    } else if (Is(ctx.argv[i], "entriesread") && i + 1 < ctx.argv.size()) {
      if (!ParseEntriesRead(ctx, ctx.argv[i + 1], &entries_read)) return;
      i += 2;
    } else {
      return ReplySubcommandSyntaxError(ctx);
    }
  }
  StreamValue* s;
  StreamGroup* g;
  if (!XgroupTarget(ctx, mkstream, false, &s, &g)) return;
  if (ctx.argv.size() > 8) return ReplySubcommandSyntaxError(ctx);
  StreamId id;
  if (ctx.argv[4] == "$") {
    id = s ? s->last_id() : StreamId::Min();
  } else if (!ParseStreamIdOrReply(ctx, ctx.argv[4], 0, true, &id)) {
    return;
  }
  const OpArgs op = OpArgsOf(ctx);
  if (s == nullptr) {
    core::OpResult<StreamValue*> made = core::FindOrCreate<StreamValue>(
        op.db, ctx.argv[2], op.now_ms, [] { return core::Value(std::make_unique<StreamValue>()); });
    s = made.value();
    op.Signaled(ctx.argv[2]);  // MKSTREAM's new key is signaled (its groups never are)
  }
  if (s->CreateGroup(ctx.argv[3], id, entries_read) == nullptr) {
    return ctx.reply.Error("BUSYGROUP Consumer Group name already exists");
  }
  // Redis 7.0 replies, then notifies; it does not signal the key (no WATCH,
  // no invalidation), as for every XGROUP subcommand and XSETID.
  ctx.reply.Ok();
  op.Notified(notify::kStream, "xgroup-create", ctx.argv[2], 1);
}

void CmdXgroupSetid(CommandContext& ctx) {
  // The options are checked before the key, as in Redis.
  if (ctx.argv.size() != 5 && ctx.argv.size() != 7) return ReplySubcommandSyntaxError(ctx);
  int64_t entries_read = StreamGroup::kInvalidEntriesRead;
  if (ctx.argv.size() == 7) {
    if (!Is(ctx.argv[5], "entriesread")) return ReplySubcommandSyntaxError(ctx);
    if (!ParseEntriesRead(ctx, ctx.argv[6], &entries_read)) return;
  }
  StreamValue* s;
  StreamGroup* g;
  if (!XgroupTarget(ctx, false, true, &s, &g)) return;
  StreamId id;
  if (ctx.argv[4] == "$") {
    id = s->last_id();
  } else if (!ParseStreamIdOrReply(ctx, ctx.argv[4], 0, false, &id)) {
    return;
  }
  g->last_id = id;
  g->entries_read = entries_read;
  ctx.reply.Ok();
  OpArgsOf(ctx).Notified(notify::kStream, "xgroup-setid", ctx.argv[2], 1);
}

void CmdXgroupDestroy(CommandContext& ctx) {
  StreamValue* s;
  StreamGroup* g;
  if (!XgroupTarget(ctx, false, false, &s, &g)) return;
  if (g == nullptr) return ctx.reply.Integer(0);
  s->DestroyGroup(ctx.argv[3]);
  ctx.reply.Integer(1);
  const OpArgs op = OpArgsOf(ctx);
  op.Notified(notify::kStream, "xgroup-destroy", ctx.argv[2], 1);
  op.KeyReady(ctx.argv[2]);  // its XREADGROUP clients are answered NOGROUP
}

void CmdXgroupCreateconsumer(CommandContext& ctx) {
  StreamValue* s;
  StreamGroup* g;
  if (!XgroupTarget(ctx, false, true, &s, &g)) return;
  bool created;
  LookupOrCreateConsumer(OpArgsOf(ctx), ctx.argv[2], *g, ctx.argv[4], 1, &created);
  ctx.reply.Integer(created ? 1 : 0);
}

void CmdXgroupDelconsumer(CommandContext& ctx) {
  StreamValue* s;
  StreamGroup* g;
  if (!XgroupTarget(ctx, false, true, &s, &g)) return;
  // A consumer that is not there: 0, and no change (no event, nothing
  // propagated), as in Redis 7.0.
  if (g->FindConsumer(ctx.argv[4]) == nullptr) return ctx.reply.Integer(0);
  const size_t pending = g->DeleteConsumer(ctx.argv[4]);
  OpArgsOf(ctx).Notified(notify::kStream, "xgroup-delconsumer", ctx.argv[2], 1);
  ctx.reply.Integer(static_cast<int64_t>(pending));
}

void CmdXgroupHelp(CommandContext& ctx) {
  static const char* const kLines[] = {
      "CREATE <key> <groupname> <id|$> [option]",
      "    Create a new consumer group. Options are:",
      "    * MKSTREAM",
      "      Create the empty stream if it does not exist.",
      "    * ENTRIESREAD entries_read",
      "      Set the group's entries_read counter (internal use).",
      "CREATECONSUMER <key> <groupname> <consumer>",
      "    Create a new consumer in the specified group.",
      "DELCONSUMER <key> <groupname> <consumer>",
      "    Remove the specified consumer.",
      "DESTROY <key> <groupname>",
      "    Remove the specified group.",
      "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
      "    Set the current group ID and entries_read counter.",
  };
  ReplyHelp(ctx, kLines);
}

void CmdXack(CommandContext& ctx) {
  StreamValue* s;
  if (!LookupForRead(ctx, ctx.argv[1], &s)) return;
  StreamGroup* g = s ? s->FindGroup(ctx.argv[2]) : nullptr;
  if (g == nullptr) return ctx.reply.Integer(0);
  std::vector<StreamId> ids(ctx.argv.size() - 3);
  for (size_t j = 3; j < ctx.argv.size(); ++j) {
    if (!ParseStreamIdOrReply(ctx, ctx.argv[j], 0, true, &ids[j - 3])) return;
  }
  int64_t acked = 0;
  for (StreamId id : ids) acked += AckNack(*g, id) ? 1 : 0;
  if (acked > 0) ctx.effects.Dirty(static_cast<uint64_t>(acked));
  ctx.reply.Integer(acked);
}

bool ParseIntervalBound(CommandContext& ctx, std::string_view arg, bool start, StreamId* id) {
  const bool exclusive = arg.size() > 1 && arg[0] == '(';
  if (!ParseStreamIdOrReply(ctx, exclusive ? arg.substr(1) : arg, start ? 0 : UINT64_MAX, exclusive, id)) {
    return false;
  }
  if (exclusive && !(start ? id->Incr() : id->Decr())) {
    ctx.reply.Error(start ? "ERR invalid start ID for the interval" : "ERR invalid end ID for the interval");
    return false;
  }
  return true;
}

void CmdXpending(CommandContext& ctx) {
  const size_t argc = ctx.argv.size();
  const bool summary = argc == 3;
  if (argc != 3 && (argc < 6 || argc > 9)) return ctx.reply.Error(errors::kSyntax);
  StreamId start, end;
  int64_t count = 0, min_idle = 0;
  std::string_view consumer_name;
  bool consumer_given = false;
  if (argc >= 6) {
    size_t at = 3;
    if (Is(ctx.argv[3], "idle")) {
      if (!ParseInt(ctx, ctx.argv[4], &min_idle)) return;
      if (argc < 8) return ctx.reply.Error(errors::kSyntax);
      at += 2;
    }
    if (!ParseInt(ctx, ctx.argv[at + 2], &count)) return;
    if (count < 0) count = 0;
    if (!ParseIntervalBound(ctx, ctx.argv[at], true, &start)) return;
    if (!ParseIntervalBound(ctx, ctx.argv[at + 1], false, &end)) return;
    if (at + 3 < argc) {
      consumer_name = ctx.argv[at + 3];
      consumer_given = true;
    }
  }
  StreamValue* s;
  if (!LookupForRead(ctx, ctx.argv[1], &s)) return;
  StreamGroup* g = s ? s->FindGroup(ctx.argv[2]) : nullptr;
  if (g == nullptr) {
    return ctx.reply.Error(StrCat("NOGROUP No such key '", ctx.argv[1], "' or consumer group '", ctx.argv[2], "'"));
  }
  if (summary) {
    ctx.reply.ArrayHeader(4);
    ctx.reply.Integer(static_cast<int64_t>(g->pel.size()));
    if (g->pel.empty()) {
      ctx.reply.Null();
      ctx.reply.Null();
      ctx.reply.NullArray();
      return;
    }
    ctx.reply.Bulk(g->pel.begin()->first.ToString());
    ctx.reply.Bulk(g->pel.rbegin()->first.ToString());
    int64_t with_pending = 0;
    for (const auto& [name, c] : g->consumers) with_pending += c->pel.empty() ? 0 : 1;
    ctx.reply.ArrayHeader(with_pending);
    for (const auto& [name, c] : g->consumers) {
      if (c->pel.empty()) continue;
      ctx.reply.ArrayHeader(2);
      ctx.reply.Bulk(name);
      ctx.reply.Bulk(std::to_string(c->pel.size()));
    }
    return;
  }
  struct Row {
    StreamId id;
    const StreamNack* nack;
  };
  std::vector<Row> rows;
  auto take = [&](StreamId id, const StreamNack* nack) {
    if (count == 0 || id > end) return false;
    if (min_idle != 0 && ctx.now_ms - nack->delivery_time < min_idle) return true;
    rows.push_back({id, nack});
    --count;
    return true;
  };
  if (consumer_given) {
    StreamConsumer* c = g->FindConsumer(consumer_name);
    if (c == nullptr) return ctx.reply.ArrayHeader(0);
    for (auto it = c->pel.lower_bound(start); it != c->pel.end() && take(*it, &g->pel.find(*it)->second); ++it) {
    }
  } else {
    for (auto it = g->pel.lower_bound(start); it != g->pel.end() && take(it->first, &it->second); ++it) {
    }
  }
  ctx.reply.ArrayHeader(static_cast<int64_t>(rows.size()));
  for (const Row& r : rows) {
    ctx.reply.ArrayHeader(4);
    ctx.reply.Bulk(r.id.ToString());
    ctx.reply.Bulk(r.nack->consumer->name);
    ctx.reply.Integer(std::max<int64_t>(0, ctx.now_ms - r.nack->delivery_time));
    ctx.reply.Integer(static_cast<int64_t>(r.nack->delivery_count));
  }
}

// The entry `id` as XCLAIM replies it: [id, fields] (JUSTID: the ID).
void ReplyClaimed(CommandContext& ctx, const StreamValue& s, StreamId id, bool justid) {
  if (justid) return ctx.reply.Bulk(id.ToString());
  bool found = false;
  s.Range(id, id, false, [&](StreamId eid, core::FieldValues fv) {
    ReplyStreamEntry(ctx, eid, fv);
    found = true;
    return false;
  });
  if (!found) ctx.reply.Null();
}

bool ClaimGroup(CommandContext& ctx, StreamValue** s, StreamGroup** g) {
  if (!LookupForRead(ctx, ctx.argv[1], s)) return false;
  *g = *s ? (*s)->FindGroup(ctx.argv[2]) : nullptr;
  if (*g == nullptr) {
    ctx.reply.Error(StrCat("NOGROUP No such key '", ctx.argv[1], "' or consumer group '", ctx.argv[2], "'"));
    return false;
  }
  return true;
}

void CmdXclaim(CommandContext& ctx) {
  StreamValue* s;
  StreamGroup* g;
  if (!ClaimGroup(ctx, &s, &g)) return;
  int64_t min_idle;
  if (!core::StringToInt64(ctx.argv[4], &min_idle)) {
    return ctx.reply.Error("ERR Invalid min-idle-time argument for XCLAIM");
  }
  if (min_idle < 0) min_idle = 0;
  std::vector<StreamId> ids;
  size_t j = 5;
  for (; j < ctx.argv.size(); ++j) {
    StreamId id;
    if (!ParseStreamId(ctx.argv[j], 0, true, nullptr, &id)) break;
    ids.push_back(id);
  }
  const int64_t now = ctx.now_ms;
  int64_t retrycount = -1, delivery_time = -1;
  bool force = false, justid = false;
  StreamId last_id;
  for (; j < ctx.argv.size(); ++j) {
    const bool more = j + 1 < ctx.argv.size();
    std::string_view opt = ctx.argv[j];
    auto int_opt = [&](const char* error, int64_t* out) {
      ++j;
      if (core::StringToInt64(ctx.argv[j], out)) return true;
      ctx.reply.Error(error);
      return false;
    };
    if (Is(opt, "force")) {
      force = true;
    } else if (Is(opt, "justid")) {
      justid = true;
    } else if (Is(opt, "idle") && more) {
      if (!int_opt("ERR Invalid IDLE option argument for XCLAIM", &delivery_time)) return;
      delivery_time = now - delivery_time;
    } else if (Is(opt, "time") && more) {
      if (!int_opt("ERR Invalid TIME option argument for XCLAIM", &delivery_time)) return;
    } else if (Is(opt, "retrycount") && more) {
      if (!int_opt("ERR Invalid RETRYCOUNT option argument for XCLAIM", &retrycount)) return;
    } else if (Is(opt, "lastid") && more) {
      ++j;
      if (!ParseStreamIdOrReply(ctx, ctx.argv[j], 0, true, &last_id)) return;
    } else {
      return ctx.reply.Error(StrCat("ERR Unrecognized XCLAIM option '", opt, "'"));
    }
  }
  const OpArgs op = OpArgsOf(ctx);
  bool propagate_last_id = false;
  if (last_id > g->last_id) {
    g->last_id = last_id;
    propagate_last_id = true;
  }
  delivery_time = ClaimedDeliveryTime(delivery_time, now, UnixMs());
  // Redis writes the reply's header first: a new consumer's event follows it.
  op.ReplyPoint();
  StreamConsumer* consumer = nullptr;
  std::vector<StreamId> claimed;
  uint64_t changes = 0;
  for (StreamId id : ids) {
    auto it = g->pel.find(id);
    StreamNack* nack = it == g->pel.end() ? nullptr : &it->second;
    if (!s->Contains(id)) {
      if (nack != nullptr) {
        op.effects.AlsoPropagate(XclaimPropagation(ctx.argv[1], ctx.argv[2], *g, id, *nack));
        propagate_last_id = false;
        ++changes;
        AckNack(*g, id);
      }
      continue;
    }
    if (nack == nullptr && !force) continue;
    if (nack != nullptr && nack->consumer != nullptr && min_idle != 0 && now - nack->delivery_time < min_idle) continue;
    if (consumer == nullptr) {
      bool created;
      consumer = LookupOrCreateConsumer(op, ctx.argv[1], *g, ctx.argv[3], 0, &created);
    }
    nack = ClaimNack(*g, *consumer, id, true);
    nack->delivery_time = delivery_time;
    if (retrycount >= 0) {
      nack->delivery_count = static_cast<uint64_t>(retrycount);
    } else if (!justid) {
      ++nack->delivery_count;
    }
    claimed.push_back(id);
    op.effects.AlsoPropagate(XclaimPropagation(ctx.argv[1], ctx.argv[2], *g, id, *nack));
    propagate_last_id = false;
    ++changes;
  }
  if (propagate_last_id) {
    op.effects.AlsoPropagate({"XGROUP", "SETID", std::string(ctx.argv[1]), std::string(ctx.argv[2]),
                              g->last_id.ToString(), "ENTRIESREAD", std::to_string(g->entries_read)});
    ++changes;
  }
  // Counted only with something to propagate (the XCLAIMs stand for the
  // command: a change counted alone would propagate the XCLAIM as given).
  if (changes > 0) op.effects.Dirty(changes);
  ctx.reply.ArrayHeader(static_cast<int64_t>(claimed.size()));
  ctx.effects.ReleasePushes();
  for (StreamId id : claimed) ReplyClaimed(ctx, *s, id, justid);
}

void CmdXautoclaim(CommandContext& ctx) {
  int64_t min_idle;
  if (!core::StringToInt64(ctx.argv[4], &min_idle)) {
    return ctx.reply.Error("ERR Invalid min-idle-time argument for XAUTOCLAIM");
  }
  if (min_idle < 0) min_idle = 0;
  StreamId start;
  if (!ParseIntervalBound(ctx, ctx.argv[5], true, &start)) return;
  int64_t count = 100;
  bool justid = false;
  for (size_t j = 6; j < ctx.argv.size(); ++j) {
    if (Is(ctx.argv[j], "count") && j + 1 < ctx.argv.size()) {
      const int64_t max_count = LONG_MAX / 16;
      if (!core::StringToInt64(ctx.argv[j + 1], &count) || count < 1 || count > max_count) {
        return ctx.reply.Error("ERR COUNT must be > 0");
      }
      ++j;
    } else if (Is(ctx.argv[j], "justid")) {
      justid = true;
    } else {
      return ctx.reply.Error(errors::kSyntax);
    }
  }
  StreamValue* s;
  StreamGroup* g;
  if (!ClaimGroup(ctx, &s, &g)) return;
  const OpArgs op = OpArgsOf(ctx);
  const int64_t now = ctx.now_ms;
  int64_t attempts = count * 10;
  // Redis writes the reply's headers first: a new consumer's event follows them.
  op.ReplyPoint();
  StreamConsumer* consumer = nullptr;
  std::vector<StreamId> claimed, deleted;
  uint64_t changes = 0;
  auto it = g->pel.lower_bound(start);
  while (attempts-- > 0 && count > 0 && it != g->pel.end()) {
    const StreamId id = it->first;
    StreamNack* nack = &it->second;  // valid: nothing below inserts into g->pel before it is used
    if (!s->Contains(id)) {
      op.effects.AlsoPropagate(XclaimPropagation(ctx.argv[1], ctx.argv[2], *g, id, *nack));
      ++changes;
      AckNack(*g, id);  // invalidates B-tree iterators: seek again
      it = g->pel.upper_bound(id);
      deleted.push_back(id);
      --count;
      continue;
    }
    if (min_idle != 0 && now - nack->delivery_time < min_idle) {
      ++it;
      continue;
    }
    if (consumer == nullptr) {
      bool created;
      consumer = LookupOrCreateConsumer(op, ctx.argv[1], *g, ctx.argv[3], 0, &created);
    }
    ClaimNack(*g, *consumer, id, false);
    nack->delivery_time = now;
    if (!justid) ++nack->delivery_count;
    claimed.push_back(id);
    op.effects.AlsoPropagate(XclaimPropagation(ctx.argv[1], ctx.argv[2], *g, id, *nack));
    ++changes;
    --count;
    ++it;
  }
  if (changes > 0) op.effects.Dirty(changes);
  ctx.reply.ArrayHeader(3);
  ctx.reply.Bulk(it == g->pel.end() ? "0-0" : it->first.ToString());
  ctx.reply.ArrayHeader(static_cast<int64_t>(claimed.size()));
  ctx.effects.ReleasePushes();
  for (StreamId id : claimed) ReplyClaimed(ctx, *s, id, justid);
  ctx.reply.ArrayHeader(static_cast<int64_t>(deleted.size()));
  for (StreamId id : deleted) ctx.reply.Bulk(id.ToString());
}

}  // namespace

void RegisterStreamGroupCommands(CommandTable& t) {
  using namespace cmd;
  constexpr const char* kWriteSlow = "@write @stream @slow";
  // Subcommands in redis-server's COMMAND order.
  std::vector<CommandSpec> subs;
  subs.push_back(Cmd("xgroup|createconsumer", 5, kWrite | kDenyOom, 2, 2, 1, kWriteSlow, "stream", "Create a consumer in a consumer group.", "6.2.0", CmdXgroupCreateconsumer));
  subs.push_back(Cmd("xgroup|delconsumer", 5, kWrite, 2, 2, 1, kWriteSlow, "stream", "Delete a consumer from a consumer group.", "5.0.0", CmdXgroupDelconsumer));
  subs.push_back(Cmd("xgroup|setid", -5, kWrite, 2, 2, 1, kWriteSlow, "stream", "Set a consumer group to an arbitrary last delivered ID value.", "5.0.0", CmdXgroupSetid));
  subs.push_back(Cmd("xgroup|create", -5, kWrite | kDenyOom, 2, 2, 1, kWriteSlow, "stream", "Create a consumer group.", "5.0.0", CmdXgroupCreate));
  subs.push_back(Cmd("xgroup|destroy", 4, kWrite, 2, 2, 1, kWriteSlow, "stream", "Destroy a consumer group.", "5.0.0", CmdXgroupDestroy));
  subs.push_back(Cmd("xgroup|help", 2, kLoading | kStale, 0, 0, 0, "@stream @slow", "stream", "Show helpful text about the different subcommands", "5.0.0", CmdXgroupHelp));
  t.Add(Cmd("xgroup", -2, 0, 0, 0, 0, "@slow", "stream", "A container for consumer groups commands", "5.0.0", nullptr, std::move(subs)));
  t.Add(Cmd("xack", -4, kWrite | kFast, 1, 1, 1, "@write @stream @fast", "stream", "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.", "5.0.0", CmdXack));
  t.Add(Cmd("xpending", -3, kReadonly, 1, 1, 1, "@read @stream @slow", "stream", "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.", "5.0.0", CmdXpending));
  t.Add(Cmd("xclaim", -6, kWrite | kFast, 1, 1, 1, "@write @stream @fast", "stream", "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.", "5.0.0", CmdXclaim));
  t.Add(Cmd("xautoclaim", -6, kWrite | kFast, 1, 1, 1, "@write @stream @fast", "stream", "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.", "6.2.0", CmdXautoclaim));
}

}  // namespace ringkv::server

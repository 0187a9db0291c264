// XREAD and XREADGROUP: reads from several streams at once, as a consumer
// group member or not, blocking (BLOCK ms) until an XADD serves them.
//
// A read with nothing to serve blocks through BlockOnKeys (commands/util.h) and runs
// again when one of its keys is written; `$` is replaced by the stream's
// last ID at that moment first, so the re-run reads what came after it.
// Inside MULTI, scripts and on the primary's link it never blocks (a null
// reply, as on timeout). Replies follow Redis 7.0: RESP2 an array of
// [key, entries], RESP3 a map key => entries.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/stream_value.h"
#include "core/strings.h"
#include "server/client.h"
#include "server/clock.h"
#include "server/command_table.h"
#include "server/commands/stream_group_ops.h"
#include "server/commands/stream_read.h"
#include "server/commands/stream_util.h"
#include "server/commands/util.h"
#include "server/errors.h"

namespace ringkv::server {
namespace {

using core::StreamConsumer;
using core::StreamGroup;
using core::StreamId;
using core::StreamValue;

struct ReadArgs {
  bool group_read = false;
  int64_t timeout_ms = -1;  // -1: no BLOCK
  int64_t count = 0;
  bool noack = false;
  std::string_view group, consumer;
  size_t streams_at = 0;  // argv index of the first key
  size_t nstreams = 0;
};

void ReplyRows(CommandContext& ctx, const std::vector<StreamRow>& rows) {
  ctx.reply.ArrayHeader(static_cast<int64_t>(rows.size()));
  for (const StreamRow& row : rows) {
    ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk(row.id.ToString());
    if (row.deleted) {
      ctx.reply.NullArray();
      continue;
    }
    ctx.reply.ArrayHeader(static_cast<int64_t>(row.fv.size()));
    for (const std::string& x : row.fv) ctx.reply.Bulk(x);
  }
}

bool ParseReadArgs(CommandContext& ctx, ReadArgs* a) {
  const size_t argc = ctx.argv.size();
  for (size_t i = 1; i < argc; ++i) {
    const size_t more = argc - i - 1;
    std::string_view o = ctx.argv[i];
    if (Is(o, "block") && more > 0) {
      if (ctx.client.is_script) {
        ctx.reply.Error(StrCat("ERR ", ctx.argv[0], " command is not allowed with BLOCK option from scripts"));
        return false;
      }
      ++i;
      int64_t ms;
      if (!core::StringToInt64(ctx.argv[i], &ms)) {
        ctx.reply.Error(errors::kTimeout);
        return false;
      }
      if (ms < 0) {
        ctx.reply.Error("ERR timeout is negative");
        return false;
      }
      a->timeout_ms = ms;
    } else if (Is(o, "count") && more > 0) {
      ++i;
      if (!ParseInt(ctx, ctx.argv[i], &a->count)) return false;
      if (a->count < 0) a->count = 0;
    } else if (Is(o, "streams") && more > 0) {
      a->streams_at = i + 1;
      const size_t n = argc - a->streams_at;
      if (n % 2 != 0) {
        ctx.reply.Error(
            "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.");
        return false;
      }
      a->nstreams = n / 2;
      break;
    } else if (Is(o, "group") && more >= 2) {
      if (!a->group_read) {
        ctx.reply.Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
        return false;
      }
      a->group = ctx.argv[i + 1];
      a->consumer = ctx.argv[i + 2];
      i += 2;
    } else if (Is(o, "noack")) {
      if (!a->group_read) {
        ctx.reply.Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
        return false;
      }
      a->noack = true;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  if (a->streams_at == 0) {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  if (a->group_read && a->group.empty() && a->consumer.empty()) {
    ctx.reply.Error("ERR Missing GROUP option for XREADGROUP");
    return false;
  }
  return true;
}

void Read(CommandContext& ctx, bool group_read) {
  ReadArgs a;
  a.group_read = group_read;
  if (!ParseReadArgs(ctx, &a)) return;
  if (group_read && a.streams_at < 4) {  // GROUP never given
    ctx.reply.Error("ERR Missing GROUP option for XREADGROUP");
    return;
  }
  core::Database& db = ctx.db;
  // Read lookups, counted in keyspace_hits / misses on the first run only:
  // Redis serves a blocked reader with LOOKUP_NOSTATS | LOOKUP_NONOTIFY.
  const core::Access access = ctx.serving_blocked ? core::Access::kReadUncounted : core::Access::kRead;
  // Serving a blocked reader, only the key it is served on is read (its
  // first place among the keys), whatever the others hold now: Redis's
  // serving code replies for that key alone.
  size_t served_at = a.nstreams;
  for (size_t k = 0; ctx.serving_blocked && k < a.nstreams; ++k) {
    if (ctx.argv[a.streams_at + k] == ctx.served_key) {
      served_at = k;
      break;
    }
  }
  auto skipped = [&](size_t k) { return ctx.serving_blocked && k != served_at; };
  // Resolve every key's ID (and group) first: errors come before any read.
  std::vector<StreamId> ids(a.nstreams);
  std::vector<StreamGroup*> groups(a.nstreams, nullptr);
  std::vector<bool> dollar(a.nstreams, false);
  for (size_t k = 0; k < a.nstreams; ++k) {
    if (skipped(k)) continue;
    std::string_view key = ctx.argv[a.streams_at + k];
    std::string_view id_arg = ctx.argv[a.streams_at + a.nstreams + k];
    core::OpResult<StreamValue*> looked = core::FindTyped<StreamValue>(db, key, ctx.now_ms, access);
    if (looked.status() == core::OpStatus::kWrongType) return ctx.reply.Error(errors::kWrongType);
    StreamValue* s = looked.ok() ? looked.value() : nullptr;
    if (group_read) {
      StreamGroup* g = s ? s->FindGroup(a.group) : nullptr;
      if (g == nullptr) {
        ctx.reply.Error(StrCat("NOGROUP No such key '", key, "' or consumer group '", a.group,
                               "' in XREADGROUP with GROUP option"));
        return;
      }
      groups[k] = g;
    }
    if (id_arg == "$") {
      if (group_read) {
        ctx.reply.Error(
            "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this "
            "consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an "
            "empty result set.");
        return;
      }
      ids[k] = s ? s->last_id() : StreamId::Min();
      dollar[k] = true;
      continue;
    }
    if (id_arg == ">") {
      if (!group_read) {
        ctx.reply.Error(
            "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.");
        return;
      }
      ids[k] = StreamId::Max();
      continue;
    }
    if (!ParseStreamIdOrReply(ctx, id_arg, 0, true, &ids[k])) return;
  }

  const OpArgs op = OpArgsOf(ctx);
  const size_t count = static_cast<size_t>(a.count);
  std::vector<std::pair<std::string_view, std::vector<StreamRow>>> served;
  bool propagated = false;  // XREADGROUP gathered commands to propagate
  for (size_t k = 0; k < a.nstreams; ++k) {
    if (skipped(k)) continue;
    std::string_view key = ctx.argv[a.streams_at + k];
    // A read lookup again, as Redis's serving loop makes (keyspace_hits /
    // misses count each key twice). Inside XREADGROUP, a write command, the
    // entry may still be changed through it.
    core::OpResult<StreamValue*> found = core::FindTyped<StreamValue>(db, key, ctx.now_ms, access);
    if (!found.ok()) continue;
    StreamValue& s = *found.value();
    if (!group_read) {
      // Served after blocking, it answers even with nothing past its ID
      // (entries deleted since they came: the stream's last ID still is).
      StreamId last;
      if (!ctx.serving_blocked && (s.size() == 0 || !s.EdgeId(false, &last) || !(last > ids[k]))) continue;
      StreamId start = ids[k];
      start.Incr();
      std::vector<StreamRow> rows;
      s.Range(start, StreamId::Max(), false, [&](StreamId id, core::FieldValues fv) {
        rows.push_back({id, false, std::vector<std::string>(fv.begin(), fv.end())});
        return count == 0 || rows.size() < count;
      });
      served.emplace_back(key, std::move(rows));
      continue;
    }
    StreamGroup& g = *groups[k];
    const bool history = ids[k] != StreamId::Max();
    bool serve = history || ctx.serving_blocked;
    if (!serve && s.size() > 0) {
      StreamId last;
      serve = s.EdgeId(false, &last) && last > g.last_id;
    }
    // The consumer is created only when it is served (a blocked reader is
    // not a consumer yet). Counted only with what it propagates (below): a
    // change counted alone would propagate the XREADGROUP itself.
    if (!serve) continue;
    // Redis writes this stream's key in the reply before a new consumer's
    // event: one held segment per stream served, released after its key
    // (its code serving a blocked reader creates the consumer first).
    if (!ctx.serving_blocked) op.ReplyPoint();
    bool created;
    StreamConsumer* c = LookupOrCreateConsumer(op, key, g, a.consumer, 0, &created);
    if (created && a.noack) {
      op.effects.AlsoPropagate(
          {"XGROUP", "CREATECONSUMER", std::string(key), std::string(a.group), std::string(a.consumer)});
      propagated = true;
    }
    c->seen_time = ctx.now_ms;
    // Both kinds of reads start after the given ID (history included).
    StreamId after = ids[k];
    after.Incr();
    std::vector<StreamRow> rows = history ? DeliverHistory(op, s, g, *c, after, count)
                                          : DeliverNew(op, key, a.group, s, g, *c, count, a.noack);
    if (!history && !rows.empty()) propagated = true;
    served.emplace_back(key, std::move(rows));
  }
  // XREADGROUP propagates only as the XCLAIMs & co. it gathered, never as itself.
  if (propagated) ctx.effects.Dirty(served.empty() ? 1 : served.size());
  if (!served.empty()) {
    if (ctx.client.resp == 2) {
      ctx.reply.ArrayHeader(static_cast<int64_t>(served.size()));
    } else {
      ctx.reply.MapHeader(static_cast<int64_t>(served.size()));
    }
    for (const auto& [key, rows] : served) {
      if (ctx.client.resp == 2) ctx.reply.ArrayHeader(2);
      ctx.reply.Bulk(key);
      if (group_read) ctx.effects.ReleasePushes();
      ReplyRows(ctx, rows);
    }
    return;
  }
  if (a.timeout_ms < 0) return ctx.reply.NullArray();
  const int64_t now = UnixMs();
  if (a.timeout_ms > 0 && a.timeout_ms > INT64_MAX - now) return ctx.reply.Error("ERR timeout is out of range");
  // Deadlines are kept in µs (UnixUs), counted from now.
  const int64_t now_us = UnixUs();
  const int64_t deadline =
      a.timeout_ms == 0 ? 0 : (a.timeout_ms > (INT64_MAX - now_us) / 1000 ? INT64_MAX : now_us + a.timeout_ms * 1000);
  // The re-run must read after the IDs resolved now: `$` becomes the ID.
  std::vector<std::string> argv(ctx.argv.begin(), ctx.argv.end());
  for (size_t k = 0; k < a.nstreams; ++k) {
    if (dollar[k]) argv[a.streams_at + a.nstreams + k] = ids[k].ToString();
  }
  std::vector<std::string_view> views(argv.begin(), argv.end());
  CommandContext blocked = ctx.WithArgv(views);
  std::vector<std::string> keys(ctx.argv.begin() + static_cast<std::ptrdiff_t>(a.streams_at),
                                ctx.argv.begin() + static_cast<std::ptrdiff_t>(a.streams_at + a.nstreams));
  // XREAD is served, once Redis readies a key (BlockedClients::SignalReady),
  // if its stream's last ID passes the one it gave (the first given, for a
  // key named twice); XREADGROUP if it passes its group's.
  std::vector<std::pair<std::string, StreamId>> read_after;
  for (size_t k = 0; !group_read && k < a.nstreams; ++k) {
    const bool first = std::none_of(read_after.begin(), read_after.end(),
                                    [&](const auto& r) { return r.first == keys[k]; });
    if (first) read_after.emplace_back(keys[k], ids[k]);
  }
  BlockOnKeys(blocked, BlockKind::kStream, std::move(keys), deadline, std::move(read_after));
}

void CmdXread(CommandContext& ctx) { Read(ctx, false); }
void CmdXreadgroup(CommandContext& ctx) { Read(ctx, true); }

bool XreadKeys(std::span<const std::string_view> argv, std::vector<std::string_view>* keys) {
  for (size_t i = 1; i < argv.size(); ++i) {
    if (Is(argv[i], "streams")) {
      const size_t n = argv.size() - i - 1;
      if (n == 0 || n % 2 != 0) return false;
      for (size_t k = 0; k < n / 2; ++k) keys->push_back(argv[i + 1 + k]);
      return true;
    }
  }
  return false;
}

}  // namespace

void RegisterStreamReadCommands(CommandTable& t) {
  using namespace cmd;
  CommandSpec xread = Cmd("xread", -4, kReadonly | kBlocking, 0, 0, 0, "@read @stream @slow @blocking", "stream",
                          "Return never seen elements in multiple streams, with IDs greater than the ones reported by "
                          "the caller for each stream. Can block.",
                          "5.0.0", CmdXread);
  xread.find_keys = XreadKeys;
  t.Add(std::move(xread));
  CommandSpec xreadgroup =
      Cmd("xreadgroup", -7, kWrite | kBlocking, 0, 0, 0, "@write @stream @slow @blocking", "stream",
          "Return new entries from a stream using a consumer group, or access the history of the pending entries for "
          "a given consumer. Can block.",
          "5.0.0", CmdXreadgroup);
  xreadgroup.find_keys = XreadKeys;
  t.Add(std::move(xreadgroup));
}

}  // namespace ringkv::server

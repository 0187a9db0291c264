// The stream family's entry commands: XADD, XLEN, XRANGE, XREVRANGE, XDEL,
// XTRIM, XSETID and XREAD. Replies, errors and propagation follow Redis
// 7.0's t_stream.c: XADD propagates the ID it generated, and `~` trimming
// propagates as `=` with the threshold that reproduces its result.
#include <string>
#include <vector>

#include "core/stream_value.h"
#include "core/strings.h"
#include "server/client.h"
#include "server/command_table.h"
#include "server/commands/stream_ops.h"
#include "server/commands/stream_read.h"
#include "server/commands/stream_util.h"
#include "server/commands/util.h"
#include "server/errors.h"

namespace ringkv::server {
namespace {

using core::StreamId;
using core::StreamValue;

// Whether the command comes from the primary or the AOF: LIMIT is then
// not enforced (the threshold was already made exact), as Redis does.
bool MustObey(const CommandContext& ctx) { return ctx.client.is_master || ctx.client.conn == nullptr; }

// XADD / XTRIM options (Redis's streamParseAddOrTrimArgsOrReply). For XADD
// returns the index of the ID argument; 0 after replying an error.
size_t ParseAddOrTrim(CommandContext& ctx, bool xadd, XaddArgs* args) {
  StreamTrim& trim = args->trim;
  size_t i = 2;
  bool limit_given = false;
  const size_t argc = ctx.argv.size();
  for (; i < argc; ++i) {
    const size_t more = argc - 1 - i;
    std::string_view opt = ctx.argv[i];
    if (xadd && opt == "*") break;
    const bool maxlen = Is(opt, "maxlen");
    if ((maxlen || Is(opt, "minid")) && more > 0) {
      if (trim.strategy != StreamTrim::Strategy::kNone) {
        ctx.reply.Error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
        return 0;
      }
      trim.approx = false;
      std::string_view next = ctx.argv[i + 1];
      if (more >= 2 && next == "~") {
        trim.approx = true;
        ++i;
      } else if (more >= 2 && next == "=") {
        ++i;
      }
      if (maxlen) {
        if (!ParseInt(ctx, ctx.argv[i + 1], &trim.maxlen)) return 0;
        if (trim.maxlen < 0) {
          ctx.reply.Error("ERR The MAXLEN argument must be >= 0.");
          return 0;
        }
      } else if (!ParseStreamIdOrReply(ctx, ctx.argv[i + 1], 0, true, &trim.minid)) {
        return 0;
      }
      ++i;
      trim.strategy = maxlen ? StreamTrim::Strategy::kMaxLen : StreamTrim::Strategy::kMinId;
      trim.arg_index = i;
    } else if (Is(opt, "limit") && more > 0) {
      if (!ParseInt(ctx, ctx.argv[i + 1], &trim.limit)) return 0;
      if (trim.limit < 0) {
        ctx.reply.Error("ERR The LIMIT argument must be >= 0.");
        return 0;
      }
      limit_given = true;
      ++i;
    } else if (xadd && Is(opt, "nomkstream")) {
      args->nomkstream = true;
    } else if (xadd) {
      if (!ParseStreamId(opt, 0, true, &args->seq_given, &args->id)) {
        ctx.reply.Error(kInvalidStreamId);
        return 0;
      }
      args->id_given = true;
      break;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return 0;
    }
  }
  if (trim.limit != 0 && trim.strategy == StreamTrim::Strategy::kNone) {
    ctx.reply.Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
    return 0;
  }
  if (!xadd && trim.strategy == StreamTrim::Strategy::kNone) {
    ctx.reply.Error("ERR syntax error, XTRIM must be called with a trimming strategy");
    return 0;
  }
  if (MustObey(ctx)) {
    trim.limit = 0;
  } else if (limit_given) {
    if (!trim.approx) {
      ctx.reply.Error("ERR syntax error, LIMIT cannot be used without the special ~ option");
      return 0;
    }
  } else {
    trim.limit = trim.approx ? 100 * ctx.keyspace.limits().stream.node_max_entries : 0;
  }
  return i;
}

// The argv to propagate after `~` trimming: "=" and the exact threshold.
void RewriteApproxTrim(const StreamTrim& trim, const TrimOutcome& t, std::vector<std::string>* argv) {
  if (!trim.approx) return;
  (*argv)[trim.arg_index - 1].assign(1, '=');
  (*argv)[trim.arg_index] = t.exact_threshold;
}

void CmdXadd(CommandContext& ctx) {
  XaddArgs args;
  const size_t id_pos = ParseAddOrTrim(ctx, true, &args);
  if (id_pos == 0) return;
  const size_t fields = ctx.argv.size() - id_pos - 1;
  if (fields < 2 || fields % 2 == 1) {
    ctx.reply.Error("ERR wrong number of arguments for 'xadd' command");
    return;
  }
  StreamResult<XaddOutcome> r = OpXadd(OpArgsOf(ctx), ctx.argv[1], args, ctx.argv.subspan(id_pos + 1));
  if (r.missing) return ctx.reply.Null();
  if (r.error) return ctx.reply.Error(r.error);
  // Every XADD readies the key for its stream readers, as Redis's does
  // (BlockedClients::SignalReady); a new key is readied as it is created.
  OpArgsOf(ctx).KeyReady(ctx.argv[1]);
  char id[StreamId::kMaxText];
  const std::string_view id_text(id, r.value.id.Format(id));
  ctx.reply.Bulk(id_text);
  const bool rewrite_id = !args.id_given || !args.seq_given;
  if (rewrite_id || args.trim.approx) {
    std::vector<std::string> argv(ctx.argv.begin(), ctx.argv.end());
    RewriteApproxTrim(args.trim, r.value.trim, &argv);
    if (rewrite_id) argv[id_pos].assign(id_text);
    ctx.effects.PropagateAs(std::move(argv));
  }
}

void CmdXtrim(CommandContext& ctx) {
  XaddArgs args;
  if (ParseAddOrTrim(ctx, false, &args) == 0) return;
  StreamResult<TrimOutcome> r = OpXtrim(OpArgsOf(ctx), ctx.argv[1], args.trim);
  if (r.error) return ctx.reply.Error(r.error);
  if (r.value.removed > 0 && args.trim.approx) {
    std::vector<std::string> argv(ctx.argv.begin(), ctx.argv.end());
    RewriteApproxTrim(args.trim, r.value, &argv);
    ctx.effects.PropagateAs(std::move(argv));
  }
  ctx.reply.Integer(r.value.removed);
}

void CmdXlen(CommandContext& ctx) {
  StreamValue* s;
  if (LookupForRead(ctx, ctx.argv[1], &s)) ctx.reply.Integer(s ? static_cast<int64_t>(s->size()) : 0);
}

// An XRANGE bound: "(" makes it exclusive (strict ID after it).
bool ParseIntervalId(CommandContext& ctx, std::string_view arg, uint64_t missing_seq, bool* exclusive,
                     StreamId* id) {
  *exclusive = arg.size() > 1 && arg[0] == '(';
  if (*exclusive) return ParseStreamIdOrReply(ctx, arg.substr(1), missing_seq, true, id);
  return ParseStreamIdOrReply(ctx, arg, missing_seq, false, id);
}

void RangeCommand(CommandContext& ctx, bool reverse) {
  std::string_view start_arg = reverse ? ctx.argv[3] : ctx.argv[2];
  std::string_view end_arg = reverse ? ctx.argv[2] : ctx.argv[3];
  StreamId start, end;
  bool start_ex, end_ex;
  if (!ParseIntervalId(ctx, start_arg, 0, &start_ex, &start)) return;
  if (start_ex && !start.Incr()) return ctx.reply.Error("ERR invalid start ID for the interval");
  if (!ParseIntervalId(ctx, end_arg, UINT64_MAX, &end_ex, &end)) return;
  if (end_ex && !end.Decr()) return ctx.reply.Error("ERR invalid end ID for the interval");
  int64_t count = -1;
  for (size_t j = 4; j < ctx.argv.size(); ++j) {
    if (Is(ctx.argv[j], "count") && j + 1 < ctx.argv.size()) {
      if (!ParseInt(ctx, ctx.argv[j + 1], &count)) return;
      if (count < 0) count = 0;
      ++j;
    } else {
      return ctx.reply.Error(errors::kSyntax);
    }
  }
  StreamValue* s;
  if (!LookupForRead(ctx, ctx.argv[1], &s)) return;
  if (s == nullptr) return ctx.reply.ArrayHeader(0);
  if (count == 0) return ctx.reply.NullArray();
  ReplyStreamRange(ctx, *s, start, end, count == -1 ? 0 : static_cast<size_t>(count), reverse);
}

void CmdXrange(CommandContext& ctx) { RangeCommand(ctx, false); }
void CmdXrevrange(CommandContext& ctx) { RangeCommand(ctx, true); }

void CmdXdel(CommandContext& ctx) {
  // A missing key answers 0 before the IDs are looked at, as in Redis.
  core::Entry* e = ctx.db.Find(ctx.argv[1], ctx.now_ms);
  if (e == nullptr) return ctx.reply.Integer(0);
  if (e->value.type() != core::ValueType::kStream) return ctx.reply.Error(errors::kWrongType);
  std::vector<StreamId> ids(ctx.argv.size() - 2);
  for (size_t j = 2; j < ctx.argv.size(); ++j) {
    if (!ParseStreamIdOrReply(ctx, ctx.argv[j], 0, true, &ids[j - 2])) return;
  }
  StreamResult<int64_t> r = OpXdel(OpArgsOf(ctx), ctx.argv[1], ids);
  if (r.error) return ctx.reply.Error(r.error);
  ctx.reply.Integer(r.value);
}

void CmdXsetid(CommandContext& ctx) {
  StreamId id, max_deleted;
  int64_t entries_added = -1;
  if (!ParseStreamIdOrReply(ctx, ctx.argv[2], 0, true, &id)) return;
  for (size_t i = 3; i < ctx.argv.size();) {
    const bool more = i + 1 < ctx.argv.size();
    if (Is(ctx.argv[i], "entriesadded") && more) {
      if (!ParseInt(ctx, ctx.argv[i + 1], &entries_added)) return;
      if (entries_added < 0) return ctx.reply.Error("ERR entries_added must be positive");
      i += 2;
    } else if (Is(ctx.argv[i], "maxdeletedid") && more) {
      if (!ParseStreamIdOrReply(ctx, ctx.argv[i + 1], 0, true, &max_deleted)) return;
      if (id < max_deleted) {
        return ctx.reply.Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
      }
      i += 2;
    } else {
      return ctx.reply.Error(errors::kSyntax);
    }
  }
  StreamResult<bool> r = OpXsetid(OpArgsOf(ctx), ctx.argv[1], id, entries_added, max_deleted);
  if (r.error) return ctx.reply.Error(r.error);
  ctx.reply.Ok();
}

}  // namespace

void RegisterStreamCommands(CommandTable& t) {
  using namespace cmd;
  constexpr const char* kWriteFast = "@write @stream @fast";
  constexpr const char* kWriteSlow = "@write @stream @slow";
  constexpr const char* kReadFast = "@read @stream @fast";
  constexpr const char* kReadSlow = "@read @stream @slow";
  t.Add(Cmd("xadd", -5, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "stream", "Appends a new entry to a stream", "5.0.0", CmdXadd));
  t.Add(Cmd("xlen", 2, kReadonly | kFast, 1, 1, 1, kReadFast, "stream", "Return the number of entries in a stream", "5.0.0", CmdXlen));
  t.Add(Cmd("xrange", -4, kReadonly, 1, 1, 1, kReadSlow, "stream", "Return a range of elements in a stream, with IDs matching the specified IDs interval", "5.0.0", CmdXrange));
  t.Add(Cmd("xrevrange", -4, kReadonly, 1, 1, 1, kReadSlow, "stream", "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE", "5.0.0", CmdXrevrange));
  t.Add(Cmd("xdel", -3, kWrite | kFast, 1, 1, 1, kWriteFast, "stream", "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.", "5.0.0", CmdXdel));
  t.Add(Cmd("xtrim", -4, kWrite, 1, 1, 1, kWriteSlow, "stream", "Trims the stream to (approximately if '~' is passed) a certain size", "5.0.0", CmdXtrim));
  t.Add(Cmd("xsetid", -3, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, "stream", "An internal command for replicating stream values", "5.0.0", CmdXsetid));
  RegisterStreamReadCommands(t);
  RegisterStreamGroupCommands(t);
  RegisterStreamInfoCommands(t);
}

}  // namespace ringkv::server

// The sorted-set family, single-key commands: ZADD, ZINCRBY, ZREM, scores
// and ranks, counts, range removal, pops, ZRANDMEMBER, ZSCAN. Replies and
// errors follow Redis 7.0's t_zset.c. (Ranges: zset_range_cmds.cc; unions,
// intersections and differences: zset_algebra_cmds.cc.)
#include <cmath>
#include <string>
#include <vector>

#include "core/strings.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/commands/zset_ops.h"
#include "server/commands/zset_util.h"
#include "server/errors.h"

namespace ringkv::server {
namespace {

using core::ZSetValue;

constexpr char kNotFloat[] = "ERR value is not a valid float";
constexpr char kNaNScore[] = "ERR resulting score is not a number (NaN)";

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
void ZAdd(CommandContext& ctx, bool zincrby) {
  core::ZAddFlags flags;
  bool ch = false;
  size_t i = 2;
  flags.incr = zincrby;
  for (; i < ctx.argv.size(); ++i) {  // ZINCRBY parses the flags too, as in Redis
    std::string_view a = ctx.argv[i];
    if (Is(a, "NX")) flags.nx = true;
    else if (Is(a, "XX")) flags.xx = true;
    else if (Is(a, "GT")) flags.gt = true;
    else if (Is(a, "LT")) flags.lt = true;
    else if (Is(a, "CH")) ch = true;
    else if (Is(a, "INCR")) flags.incr = true;
    else break;
  }
  const size_t elements = ctx.argv.size() - i;
  if (elements == 0 || elements % 2 != 0) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  if (flags.nx && flags.xx) {
    ctx.reply.Error("ERR XX and NX options at the same time are not compatible");
    return;
  }
  if ((flags.gt && flags.nx) || (flags.lt && flags.nx) || (flags.gt && flags.lt)) {
    ctx.reply.Error("ERR GT, LT, and/or NX options at the same time are not compatible");
    return;
  }
  if (flags.incr && elements > 2) {
    ctx.reply.Error("ERR INCR option supports a single increment-element pair");
    return;
  }
  std::vector<double> scores(elements / 2);
  for (size_t j = 0; j < scores.size(); ++j) {
    if (!ParseDouble(ctx.argv[i + 2 * j], &scores[j])) {
      ctx.reply.Error(kNotFloat);
      return;
    }
  }
  core::OpResult<ZAddResult> r = OpZadd(OpArgsOf(ctx), ctx.argv[1], flags, scores, ctx.argv.subspan(i));
  if (r.status() == core::OpStatus::kNanOrInf) return ctx.reply.Error(kNaNScore);
  if (!r.ok()) return ReplyOpError(ctx, r.status());
  if (!flags.incr) return ctx.reply.Integer(ch ? r->added + r->updated : r->added);
  if (r->skipped) return ctx.reply.Null();
  ctx.reply.Double(r->score);
}

void CmdZadd(CommandContext& ctx) { ZAdd(ctx, false); }

void CmdZincrby(CommandContext& ctx) { ZAdd(ctx, true); }

void CmdZrem(CommandContext& ctx) {
  ReplyInteger(ctx, OpZrem(OpArgsOf(ctx), ctx.argv[1], ctx.argv.subspan(2)));
}

void CmdZcard(CommandContext& ctx) {
  ZSetValue* z;
  if (LookupForRead(ctx, ctx.argv[1], &z)) ctx.reply.Integer(z ? static_cast<int64_t>(z->size()) : 0);
}

void CmdZscore(CommandContext& ctx) {
  ZSetValue* z;
  if (!LookupForRead(ctx, ctx.argv[1], &z)) return;
  double score;
  if (z != nullptr && z->Score(ctx.argv[2], &score)) {
    ctx.reply.Double(score);
  } else {
    ctx.reply.Null();
  }
}

void CmdZmscore(CommandContext& ctx) {
  ZSetValue* z;
  if (!LookupForRead(ctx, ctx.argv[1], &z)) return;
  ctx.reply.ArrayHeader(static_cast<int64_t>(ctx.argv.size() - 2));
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    double score;
    if (z != nullptr && z->Score(ctx.argv[i], &score)) {
      ctx.reply.Double(score);
    } else {
      ctx.reply.Null();
    }
  }
}

void Rank(CommandContext& ctx, bool reverse) {
  ZSetValue* z;
  if (!LookupForRead(ctx, ctx.argv[1], &z)) return;
  const int64_t rank = z ? z->Rank(ctx.argv[2], reverse) : -1;
  if (rank < 0) {
    ctx.reply.Null();
  } else {
    ctx.reply.Integer(rank);
  }
}

void CmdZrank(CommandContext& ctx) { Rank(ctx, false); }
void CmdZrevrank(CommandContext& ctx) { Rank(ctx, true); }

void CmdZcount(CommandContext& ctx) {
  core::ScoreRange range;
  if (!ParseScoreRange(ctx.argv[2], ctx.argv[3], &range)) {
    ctx.reply.Error("ERR min or max is not a float");
    return;
  }
  ZSetValue* z;
  if (LookupForRead(ctx, ctx.argv[1], &z)) ctx.reply.Integer(z ? static_cast<int64_t>(z->Count(range)) : 0);
}

void CmdZlexcount(CommandContext& ctx) {
  core::LexRange range;
  if (!ParseLexRange(ctx.argv[2], ctx.argv[3], &range)) {
    ctx.reply.Error("ERR min or max not valid string range item");
    return;
  }
  ZSetValue* z;
  if (LookupForRead(ctx, ctx.argv[1], &z)) ctx.reply.Integer(z ? static_cast<int64_t>(z->Count(range)) : 0);
}

// ZREMRANGEBYRANK / BYSCORE / BYLEX: the range is parsed before the lookup.
enum class RangeKind { kRank, kScore, kLex };

void ZRemRangeBy(CommandContext& ctx, RangeKind kind) {
  int64_t start = 0, end = 0;
  core::ScoreRange score_range;
  core::LexRange lex_range;
  switch (kind) {
    case RangeKind::kRank:
      if (!ParseInt(ctx, ctx.argv[2], &start) || !ParseInt(ctx, ctx.argv[3], &end)) return;
      break;
    case RangeKind::kScore:
      if (!ParseScoreRange(ctx.argv[2], ctx.argv[3], &score_range)) {
        ctx.reply.Error("ERR min or max is not a float");
        return;
      }
      break;
    case RangeKind::kLex:
      if (!ParseLexRange(ctx.argv[2], ctx.argv[3], &lex_range)) {
        ctx.reply.Error("ERR min or max not valid string range item");
        return;
      }
      break;
  }
  const OpArgs op = OpArgsOf(ctx);
  ReplyInteger(ctx, kind == RangeKind::kRank    ? OpZremRangeByRank(op, ctx.argv[1], start, end)
                    : kind == RangeKind::kScore ? OpZremRangeByScore(op, ctx.argv[1], score_range)
                                                : OpZremRangeByLex(op, ctx.argv[1], lex_range));
}

void CmdZremrangebyrank(CommandContext& ctx) { ZRemRangeBy(ctx, RangeKind::kRank); }
void CmdZremrangebyscore(CommandContext& ctx) { ZRemRangeBy(ctx, RangeKind::kScore); }
void CmdZremrangebylex(CommandContext& ctx) { ZRemRangeBy(ctx, RangeKind::kLex); }

// ZPOPMIN / ZPOPMAX key [count]
void ZsetPop(CommandContext& ctx, bool max) {
  if (ctx.argv.size() > 3) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  int64_t count = -1;  // not given: one element, flat reply even in RESP3
  if (ctx.argv.size() == 3) {
    if (!core::StringToInt64(ctx.argv[2], &count) || count < 0) {
      ctx.reply.Error("ERR value is out of range, must be positive");
      return;
    }
  }
  // Without a count: one element, flat even in RESP3.
  const bool nested = ctx.reply.resp() >= 3 && count != -1;
  core::OpResult<size_t> r = OpZpop(
      OpArgsOf(ctx), ctx.argv[1], count < 0 ? 1 : static_cast<uint64_t>(count), max,
      [&](size_t n) { ctx.reply.ArrayHeader(static_cast<int64_t>(nested ? n : n * 2)); },
      [&](std::string_view m, double score) { ReplyPoppedElement(ctx, m, score, nested); });
  if (r.status() == core::OpStatus::kNotFound) return ctx.reply.ArrayHeader(0);
  if (!r.ok()) ReplyOpError(ctx, r.status());
}

void CmdZpopmin(CommandContext& ctx) { ZsetPop(ctx, false); }
void CmdZpopmax(CommandContext& ctx) { ZsetPop(ctx, true); }

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]: pops from the first
// non-empty set; propagated as ZPOPMIN/ZPOPMAX of that key.
void CmdZmpop(CommandContext& ctx) {
  MpopArgs args;
  if (!ParseMpopArgs(ctx, 1, "MIN", "MAX", &args)) return;
  if (!ZSetMpopFirst(ctx, args)) ctx.reply.NullArray();
}

}  // namespace

bool ZSetMpopFirst(CommandContext& ctx, const MpopArgs& args) {
  core::OpResult<size_t> r = OpZmpop(
      OpArgsOf(ctx), args.keys, static_cast<uint64_t>(args.count), /*max=*/!args.first_end,  // MIN is the first end
      [&](std::string_view key, size_t n) {
        ctx.reply.ArrayHeader(2);
        ctx.reply.Bulk(key);
        ctx.reply.ArrayHeader(static_cast<int64_t>(n));
      },
      [&](std::string_view m, double score) { ReplyPoppedElement(ctx, m, score, /*nested=*/true); });
  if (r.status() == core::OpStatus::kNotFound) return false;
  if (!r.ok()) ReplyOpError(ctx, r.status());
  return true;
}

namespace {

// ZRANDMEMBER key [count [WITHSCORES]]
void CmdZrandmember(CommandContext& ctx) {
  absl::BitGen& rng = ctx.keyspace.rng();
  std::string member;
  double score;
  if (ctx.argv.size() == 2) {
    ZSetValue* z;
    if (!LookupForRead(ctx, ctx.argv[1], &z)) return;
    if (z == nullptr) {
      ctx.reply.Null();
      return;
    }
    z->RandomElement(rng, &member, &score);
    ctx.reply.Bulk(member);
    return;
  }
  int64_t l;
  bool withscores;
  if (!ParseRandomCountArgs(ctx, "WITHSCORES", &l, &withscores)) return;
  ZSetValue* z;
  if (!LookupForRead(ctx, ctx.argv[1], &z)) return;
  if (z == nullptr || l == 0) {
    ctx.reply.ArrayHeader(0);
    return;
  }
  const size_t size = z->size();
  const uint64_t count = l > 0 ? static_cast<uint64_t>(l) : static_cast<uint64_t>(-l);
  if (l < 0 || count == 1) {
    ReplyElementsHeader(ctx, static_cast<int64_t>(count), withscores);
    for (uint64_t i = 0; i < count; ++i) {
      z->RandomElement(rng, &member, &score);
      ReplyElement(ctx, member, score, withscores);
    }
    return;
  }
  if (count >= size) {  // the whole set, highest first (Redis's iterator walks from the tail)
    ReplyElementsHeader(ctx, static_cast<int64_t>(size), withscores);
    z->Walk(0, true, [&](std::string_view m, double s) {
      ReplyElement(ctx, m, s, withscores);
      return true;
    });
    return;
  }
  using Element = std::pair<std::string, double>;
  const std::vector<Element> picked = PickDistinct<Element>(
      count, size, rng,
      [&](std::vector<Element>* out) {
        z->Walk(0, false, [&](std::string_view m, double s) {
          out->emplace_back(m, s);
          return true;
        });
      },
      [&] {
        z->RandomElement(rng, &member, &score);
        return Element(member, score);
      },
      [](const Element& e) -> std::string_view { return e.first; });
  ReplyElementsHeader(ctx, static_cast<int64_t>(count), withscores);
  for (const auto& [m, s] : picked) ReplyElement(ctx, m, s, withscores);
}

// ZSCAN key cursor [MATCH pattern] [COUNT count]
void CmdZscan(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseScanCursor(ctx, ctx.argv[2], &cursor)) return;
  ZSetValue* z;
  if (!LookupForRead(ctx, ctx.argv[1], &z)) return;
  if (z == nullptr) {
    ReplyScan(ctx, 0, {});
    return;
  }
  // Scores as Redis's ZSCAN writes them (d2string).
  auto taker = [](const ScanOptions& opts, std::vector<std::string>* out) {
    return [&opts, out](std::string_view m, double score) {
      if (!opts.Matches(m)) return;
      out->emplace_back(m);
      out->push_back(core::ZScoreToString(score));
    };
  };
  ScanCollection(
      ctx, cursor, z->encoding() == ZSetValue::Encoding::kListpack, 2,
      [&](const ScanOptions& opts, std::vector<std::string>* out) {
        auto take = taker(opts, out);
        z->Walk(0, false, [&](std::string_view m, double score) {
          take(m, score);
          return true;
        });
      },
      [&](uint64_t c, const ScanOptions& opts, std::vector<std::string>* out) {
        return z->ScanTable(c, taker(opts, out));
      });
}

}  // namespace

void RegisterZSetCommands(CommandTable& t) {
  using namespace cmd;
  constexpr const char* kWriteFast = "@write @sortedset @fast";
  constexpr const char* kWriteSlow = "@write @sortedset @slow";
  constexpr const char* kReadFast = "@read @sortedset @fast";
  constexpr const char* kReadSlow = "@read @sortedset @slow";
  const char* g = "sorted-set";
  t.Add(Cmd("zadd", -4, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, g, "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.", "1.2.0", CmdZadd));
  t.Add(Cmd("zincrby", 4, kWrite | kDenyOom | kFast, 1, 1, 1, kWriteFast, g, "Increments the score of a member in a sorted set.", "1.2.0", CmdZincrby));
  t.Add(Cmd("zrem", -3, kWrite | kFast, 1, 1, 1, kWriteFast, g, "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.", "1.2.0", CmdZrem));
  t.Add(Cmd("zcard", 2, kReadonly | kFast, 1, 1, 1, kReadFast, g, "Returns the number of members in a sorted set.", "1.2.0", CmdZcard));
  t.Add(Cmd("zscore", 3, kReadonly | kFast, 1, 1, 1, kReadFast, g, "Returns the score of a member in a sorted set.", "1.2.0", CmdZscore));
  t.Add(Cmd("zmscore", -3, kReadonly | kFast, 1, 1, 1, kReadFast, g, "Returns the score of one or more members in a sorted set.", "6.2.0", CmdZmscore));
  t.Add(Cmd("zrank", 3, kReadonly | kFast, 1, 1, 1, kReadFast, g, "Returns the index of a member in a sorted set ordered by ascending scores.", "2.0.0", CmdZrank));
  t.Add(Cmd("zrevrank", 3, kReadonly | kFast, 1, 1, 1, kReadFast, g, "Returns the index of a member in a sorted set ordered by descending scores.", "2.0.0", CmdZrevrank));
  t.Add(Cmd("zcount", 4, kReadonly | kFast, 1, 1, 1, kReadFast, g, "Returns the count of members in a sorted set that have scores within a range.", "2.0.0", CmdZcount));
  t.Add(Cmd("zlexcount", 4, kReadonly | kFast, 1, 1, 1, kReadFast, g, "Returns the number of members in a sorted set within a lexicographical range.", "2.8.9", CmdZlexcount));
  t.Add(Cmd("zremrangebyrank", 4, kWrite, 1, 1, 1, kWriteSlow, g, "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed.", "2.0.0", CmdZremrangebyrank));
  t.Add(Cmd("zremrangebyscore", 4, kWrite, 1, 1, 1, kWriteSlow, g, "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed.", "1.2.0", CmdZremrangebyscore));
  t.Add(Cmd("zremrangebylex", 4, kWrite, 1, 1, 1, kWriteSlow, g, "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed.", "2.8.9", CmdZremrangebylex));
  t.Add(Cmd("zpopmin", -2, kWrite | kFast, 1, 1, 1, kWriteFast, g, "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", "5.0.0", CmdZpopmin));
  t.Add(Cmd("zpopmax", -2, kWrite | kFast, 1, 1, 1, kWriteFast, g, "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", "5.0.0", CmdZpopmax));
  t.Add(NumKeysAt1(Cmd("zmpop", -4, kWrite, 0, 0, 0, kWriteSlow, g, "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.", "7.0.0", CmdZmpop)));
  t.Add(Cmd("zrandmember", -2, kReadonly, 1, 1, 1, kReadSlow, g, "Returns one or more random members from a sorted set.", "6.2.0", CmdZrandmember));
  t.Add(Cmd("zscan", -3, kReadonly, 1, 1, 1, kReadSlow, g, "Iterates over members and scores of a sorted set.", "2.8.0", CmdZscan));
}

}  // namespace ringkv::server

// The sorted-set range commands: ZRANGE (BYSCORE BYLEX REV LIMIT
// WITHSCORES), ZRANGESTORE and the legacy forms ZREVRANGE, ZRANGEBYSCORE,
// ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX -- one parser and one walker,
// as Redis 7.0's zrangeGenericCommand. Replies stream straight from the set
// (no copy per element); the element count is computed first in O(log n).
#include <algorithm>
#include <string>
#include <utility>
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

enum class RangeType { kAuto, kRank, kScore, kLex };
enum class Direction { kAuto, kForward, kReverse };

struct RangeRequest {
  RangeType type = RangeType::kAuto;
  Direction direction = Direction::kAuto;
  bool withscores = false;
  int64_t offset = 0;
  int64_t limit = -1;  // -1: no LIMIT
  int64_t start = 0, end = 0;  // ranks
  core::ScoreRange score;
  core::LexRange lex;
};

// Parses options from argv[first + 3] on and the range at argv[first + 1],
// argv[first + 2]. `type` and `direction` are preset by the legacy commands.
bool ParseRangeRequest(CommandContext& ctx, size_t first, bool store, RangeRequest* r) {
  for (size_t j = first + 3; j < ctx.argv.size(); ++j) {
    const size_t left = ctx.argv.size() - j - 1;
    std::string_view a = ctx.argv[j];
    if (!store && Is(a, "WITHSCORES")) {
      r->withscores = true;
    } else if (Is(a, "LIMIT") && left >= 2) {
      if (!ParseInt(ctx, ctx.argv[j + 1], &r->offset) || !ParseInt(ctx, ctx.argv[j + 2], &r->limit)) return false;
      j += 2;
    } else if (r->direction == Direction::kAuto && Is(a, "REV")) {
      r->direction = Direction::kReverse;
    } else if (r->type == RangeType::kAuto && Is(a, "BYLEX")) {
      r->type = RangeType::kLex;
    } else if (r->type == RangeType::kAuto && Is(a, "BYSCORE")) {
      r->type = RangeType::kScore;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  if (r->direction == Direction::kAuto) r->direction = Direction::kForward;
  if (r->type == RangeType::kAuto) r->type = RangeType::kRank;
  // Redis tests the limit, not the word: "LIMIT 5 -1" passes with a rank range.
  if (r->limit != -1 && r->type == RangeType::kRank) {
    ctx.reply.Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
    return false;
  }
  if (r->withscores && r->type == RangeType::kLex) {
    ctx.reply.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
    return false;
  }
  size_t min_index = first + 1, max_index = first + 2;
  const bool reverse = r->direction == Direction::kReverse;
  if (reverse && r->type != RangeType::kRank) std::swap(min_index, max_index);  // given as max, min
  switch (r->type) {
    case RangeType::kAuto:
    case RangeType::kRank:
      return ParseInt(ctx, ctx.argv[min_index], &r->start) && ParseInt(ctx, ctx.argv[max_index], &r->end);
    case RangeType::kScore:
      if (!ParseScoreRange(ctx.argv[min_index], ctx.argv[max_index], &r->score)) {
        ctx.reply.Error("ERR min or max is not a float");
        return false;
      }
      return true;
    case RangeType::kLex:
      if (!ParseLexRange(ctx.argv[min_index], ctx.argv[max_index], &r->lex)) {
        ctx.reply.Error("ERR min or max not valid string range item");
        return false;
      }
      return true;
  }
  return true;
}

// The first rank (in the walk's direction) and how many elements follow.
void Resolve(const ZSetValue& z, const RangeRequest& r, size_t* first, size_t* count) {
  const bool reverse = r.direction == Direction::kReverse;
  const int64_t n = static_cast<int64_t>(z.size());
  *count = 0;
  if (r.type == RangeType::kRank) {
    int64_t start = r.start < 0 ? n + r.start : r.start;
    int64_t end = r.end < 0 ? n + r.end : r.end;
    if (start < 0) start = 0;
    if (start > end || start >= n) return;
    if (end >= n) end = n - 1;
    *first = static_cast<size_t>(start);
    *count = static_cast<size_t>(end - start + 1);
    return;
  }
  // A negative offset, or one past the end, selects nothing (as Redis's walk does).
  if (r.offset < 0 || (r.offset > 0 && r.offset >= n)) return;
  const size_t limit = r.limit < 0 ? SIZE_MAX : static_cast<size_t>(r.limit);
  if (r.type == RangeType::kLex) {
    // Redis skips the offset from the first element in range, then takes
    // elements while they are inside the far bound (see ZSetValue::LexRun).
    const size_t start = z.RankOfFirstIn(r.lex, reverse);
    if (start >= z.size()) return;
    *first = start + static_cast<size_t>(r.offset);
    *count = z.LexRun(r.lex, *first, reverse, limit);
    return;
  }
  const size_t start = z.RankOfFirstIn(r.score, reverse);
  const size_t in_range = start < z.size() ? z.Count(r.score) : 0;
  if (static_cast<size_t>(r.offset) >= in_range) return;
  *first = start + static_cast<size_t>(r.offset);
  *count = std::min(in_range - static_cast<size_t>(r.offset), limit);
}

// Redis 7.0 builds a ZRANGESTORE result by adding the elements, in the order
// the range yields them, to a listpack that it converts to a skiplist once
// one more would break the limits. A score that passed through the listpack
// was stored as text, where -0 is "0"; so -0 becomes +0 for every element
// before the conversion point and keeps its sign after it. (Only a skiplist
// source can hold -0: a listpack never does.)
void DropZeroSignsBeforeConversion(std::vector<std::pair<std::string, double>>& emitted,
                                   const core::ZSetLimits& limits) {
  for (size_t i = 0; i < emitted.size(); ++i) {
    if (i >= limits.max_listpack_entries || emitted[i].first.size() > limits.max_listpack_value) return;
    if (emitted[i].second == 0) emitted[i].second = 0.0;
  }
}

// ZRANGE-family core: `first` is the index of the source key; `store`
// (ZRANGESTORE) writes the result to argv[1].
void RangeGeneric(CommandContext& ctx, size_t first, bool store, RangeType type, Direction direction) {
  RangeRequest r;
  r.type = type;
  r.direction = direction;
  if (!ParseRangeRequest(ctx, first, store, &r)) return;
  ZSetValue* z;
  if (!LookupForRead(ctx, ctx.argv[first], &z)) return;
  size_t start = 0, count = 0;
  if (z != nullptr) Resolve(*z, r, &start, &count);
  const bool reverse = r.direction == Direction::kReverse;
  if (store) {
    std::vector<std::pair<std::string, double>> elements;
    elements.reserve(count);
    if (count > 0) {
      size_t left = count;
      z->Walk(start, reverse, [&](std::string_view m, double score) {
        elements.emplace_back(m, score);
        return --left > 0;
      });
    }
    DropZeroSignsBeforeConversion(elements, ZSetLimitsOf(ctx));
    if (reverse) std::reverse(elements.begin(), elements.end());  // a set is stored in ascending order
    ctx.reply.Integer(
        OpZstore(OpArgsOf(ctx), ctx.argv[1], ZSetValue::FromSorted(elements, ZSetLimitsOf(ctx)), "zrangestore"));
    return;
  }
  ReplyElementsHeader(ctx, static_cast<int64_t>(count), r.withscores);
  if (count == 0) return;
  size_t left = count;
  z->Walk(start, reverse, [&](std::string_view m, double score) {
    ReplyElement(ctx, m, score, r.withscores);
    return --left > 0;
  });
}

void CmdZrange(CommandContext& ctx) { RangeGeneric(ctx, 1, false, RangeType::kAuto, Direction::kAuto); }
void CmdZrangestore(CommandContext& ctx) { RangeGeneric(ctx, 2, true, RangeType::kAuto, Direction::kAuto); }
void CmdZrevrange(CommandContext& ctx) { RangeGeneric(ctx, 1, false, RangeType::kRank, Direction::kReverse); }
void CmdZrangebyscore(CommandContext& ctx) { RangeGeneric(ctx, 1, false, RangeType::kScore, Direction::kForward); }
void CmdZrevrangebyscore(CommandContext& ctx) { RangeGeneric(ctx, 1, false, RangeType::kScore, Direction::kReverse); }
void CmdZrangebylex(CommandContext& ctx) { RangeGeneric(ctx, 1, false, RangeType::kLex, Direction::kForward); }
void CmdZrevrangebylex(CommandContext& ctx) { RangeGeneric(ctx, 1, false, RangeType::kLex, Direction::kReverse); }

}  // namespace

void RegisterZSetRangeCommands(CommandTable& t) {
  using namespace cmd;
  constexpr const char* kRead = "@read @sortedset @slow";
  const char* g = "sorted-set";
  t.Add(Cmd("zrange", -4, kReadonly, 1, 1, 1, kRead, g, "Returns members in a sorted set within a range of indexes.", "1.2.0", CmdZrange));
  t.Add(Cmd("zrangestore", -5, kWrite | kDenyOom, 1, 2, 1, "@write @sortedset @slow", g, "Stores a range of members from sorted set in a key.", "6.2.0", CmdZrangestore));
  t.Add(Cmd("zrevrange", -4, kReadonly, 1, 1, 1, kRead, g, "Returns members in a sorted set within a range of indexes in reverse order.", "1.2.0", CmdZrevrange));
  t.Add(Cmd("zrangebyscore", -4, kReadonly, 1, 1, 1, kRead, g, "Returns members in a sorted set within a range of scores.", "1.0.5", CmdZrangebyscore));
  t.Add(Cmd("zrevrangebyscore", -4, kReadonly, 1, 1, 1, kRead, g, "Returns members in a sorted set within a range of scores in reverse order.", "2.2.0", CmdZrevrangebyscore));
  t.Add(Cmd("zrangebylex", -4, kReadonly, 1, 1, 1, kRead, g, "Returns members in a sorted set within a lexicographical range.", "2.8.9", CmdZrangebylex));
  t.Add(Cmd("zrevrangebylex", -4, kReadonly, 1, 1, 1, kRead, g, "Returns members in a sorted set within a lexicographical range in reverse order.", "2.8.9", CmdZrevrangebylex));
}

}  // namespace ringkv::server

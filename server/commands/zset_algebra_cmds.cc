// Sorted-set algebra: ZUNION, ZINTER, ZDIFF (WEIGHTS, AGGREGATE,
// WITHSCORES), their STORE forms and ZINTERCARD. Plain sets are accepted as
// operands with every score 1, as in Redis. Parsing, errors and NaN rules
// follow Redis 7.0's zunionInterDiffGenericCommand.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/set_value.h"
#include "core/string_hash.h"
#include "core/strings.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/commands/zset_ops.h"
#include "server/commands/zset_util.h"
#include "server/errors.h"

namespace ringkv::server {
namespace {

using core::SetValue;
using core::ZSetValue;

enum class Op { kUnion, kInter, kDiff };
enum class Aggregate { kSum, kMin, kMax };

// One input: a sorted set, a set (scores 1), or a missing key (empty).
struct Operand {
  const ZSetValue* zset = nullptr;
  const SetValue* set = nullptr;
  double weight = 1;

  size_t size() const { return zset ? zset->size() : set ? set->size() : 0; }
  bool Score(std::string_view member, double* score) const {
    if (zset) return zset->Score(member, score);
    if (set && set->Contains(member)) {
      *score = 1;
      return true;
    }
    return false;
  }
  void ForEach(const std::function<void(std::string_view, double)>& fn) const {
    if (zset) {
      zset->Walk(0, false, [&](std::string_view m, double s) {
        fn(m, s);
        return true;
      });
    } else if (set) {
      set->ForEach([&](std::string_view m) { fn(m, 1); });
    }
  }
};

// A weighted score; NaN (inf * 0) counts as 0, as in Redis.
double Weighted(double score, double weight) {
  const double v = score * weight;
  return std::isnan(v) ? 0 : v;
}

void Combine(double* target, double v, Aggregate agg) {
  switch (agg) {
    case Aggregate::kSum:
      *target += v;
      if (std::isnan(*target)) *target = 0;  // inf + -inf
      break;
    case Aggregate::kMin: *target = std::min(*target, v); break;
    case Aggregate::kMax: *target = std::max(*target, v); break;
  }
}

struct Request {
  std::vector<Operand> operands;
  Aggregate aggregate = Aggregate::kSum;
  bool withscores = false;
  int64_t limit = 0;  // ZINTERCARD
};

// Parses `numkeys key... [options]` starting at argv[numkeys_index].
bool ParseAlgebraRequest(CommandContext& ctx, size_t numkeys_index, Op op, bool store, bool cardinality_only, Request* r) {
  int64_t setnum;
  if (!ParseInt(ctx, ctx.argv[numkeys_index], &setnum)) return false;
  if (setnum < 1) {
    ctx.reply.Error(StrCat("ERR at least 1 input key is needed for '", AsciiLower(ctx.argv[0]), "' command"));
    return false;
  }
  if (setnum > static_cast<int64_t>(ctx.argv.size() - numkeys_index - 1)) {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  core::Database& db = ctx.db;
  size_t j = numkeys_index + 1;
  for (int64_t i = 0; i < setnum; ++i, ++j) {
    Operand o;
    if (core::Entry* e = db.FindForRead(ctx.argv[j], ctx.now_ms)) {
      if (e->value.type() == core::ValueType::kZSet) {
        o.zset = &e->value.zset();
      } else if (e->value.type() == core::ValueType::kSet) {
        o.set = &e->value.set();
      } else {
        ctx.reply.Error(errors::kWrongType);
        return false;
      }
    }
    r->operands.push_back(o);
  }
  while (j < ctx.argv.size()) {
    const size_t remaining = ctx.argv.size() - j;
    std::string_view a = ctx.argv[j];
    if (op != Op::kDiff && !cardinality_only && remaining >= static_cast<size_t>(setnum) + 1 && Is(a, "WEIGHTS")) {
      ++j;
      for (Operand& o : r->operands) {
        if (!ParseDouble(ctx.argv[j++], &o.weight)) {
          ctx.reply.Error("ERR weight value is not a float");
          return false;
        }
      }
    } else if (op != Op::kDiff && !cardinality_only && remaining >= 2 && Is(a, "AGGREGATE")) {
      std::string_view v = ctx.argv[j + 1];
      if (Is(v, "SUM")) {
        r->aggregate = Aggregate::kSum;
      } else if (Is(v, "MIN")) {
        r->aggregate = Aggregate::kMin;
      } else if (Is(v, "MAX")) {
        r->aggregate = Aggregate::kMax;
      } else {
        ctx.reply.Error(errors::kSyntax);
        return false;
      }
      j += 2;
    } else if (!store && !cardinality_only && Is(a, "WITHSCORES")) {
      r->withscores = true;
      ++j;
    } else if (cardinality_only && remaining >= 2 && Is(a, "LIMIT")) {
      if (!core::StringToInt64(ctx.argv[j + 1], &r->limit) || r->limit < 0) {
        ctx.reply.Error("ERR LIMIT can't be negative");
        return false;
      }
      j += 2;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

using Elements = std::vector<std::pair<std::string, double>>;

// The result, sorted by (score, member) as a sorted set orders it.
Elements Compute(const Request& r, Op op, size_t limit = 0) {
  Elements out;
  std::vector<Operand> ops = r.operands;
  if (op != Op::kDiff) {
    // Redis takes the sets from the smallest up. The order is visible: it
    // decides between 0 and -0 in MIN/MAX and the rounding of a SUM.
    std::stable_sort(ops.begin(), ops.end(), [](const Operand& a, const Operand& b) { return a.size() < b.size(); });
  }
  if (op == Op::kInter) {
    for (const Operand& o : ops) {
      if (o.size() == 0) return out;  // one empty operand: empty intersection
    }
    ops[0].ForEach([&](std::string_view m, double s) {
      if (limit != 0 && out.size() >= limit) return;
      double score = Weighted(s, ops[0].weight);
      for (size_t i = 1; i < ops.size(); ++i) {
        double other;
        if (!ops[i].Score(m, &other)) return;
        // Unlike the first, these products reach Combine even when NaN, as
        // in Redis: a SUM then ends at 0, a MIN or MAX keeps its value.
        Combine(&score, other * ops[i].weight, r.aggregate);
      }
      out.emplace_back(m, score);
    });
  } else if (op == Op::kUnion) {
    core::StringMap<double> acc;
    for (const Operand& o : ops) {
      o.ForEach([&](std::string_view m, double s) {
        const double v = Weighted(s, o.weight);
        auto [it, inserted] = acc.try_emplace(std::string(m), v);
        if (!inserted) Combine(&it->second, v, r.aggregate);
      });
    }
    out.reserve(acc.size());
    for (auto& [m, s] : acc) out.emplace_back(m, s);
  } else {
    ops[0].ForEach([&](std::string_view m, double s) {
      double unused;
      for (size_t i = 1; i < ops.size(); ++i) {
        if (ops[i].Score(m, &unused)) return;
      }
      out.emplace_back(m, s);
    });
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return core::ElementLess(a.second, a.first, b.second, b.first);
  });
  return out;
}

void Generic(CommandContext& ctx, Op op, bool store) {
  Request r;
  if (!ParseAlgebraRequest(ctx, store ? 2 : 1, op, store, false, &r)) return;
  const Elements result = Compute(r, op);
  if (store) {
    static constexpr std::string_view kEvents[] = {"zunionstore", "zinterstore", "zdiffstore"};
    ctx.reply.Integer(OpZstore(OpArgsOf(ctx), ctx.argv[1], ZSetValue::FromSorted(result, ZSetLimitsOf(ctx)),
                               kEvents[static_cast<int>(op)]));
    return;
  }
  ReplyElementsHeader(ctx, static_cast<int64_t>(result.size()), r.withscores);
  for (const auto& [m, s] : result) ReplyElement(ctx, m, s, r.withscores);
}

void CmdZunion(CommandContext& ctx) { Generic(ctx, Op::kUnion, false); }
void CmdZinter(CommandContext& ctx) { Generic(ctx, Op::kInter, false); }
void CmdZdiff(CommandContext& ctx) { Generic(ctx, Op::kDiff, false); }
void CmdZunionstore(CommandContext& ctx) { Generic(ctx, Op::kUnion, true); }
void CmdZinterstore(CommandContext& ctx) { Generic(ctx, Op::kInter, true); }
void CmdZdiffstore(CommandContext& ctx) { Generic(ctx, Op::kDiff, true); }

void CmdZintercard(CommandContext& ctx) {
  Request r;
  if (!ParseAlgebraRequest(ctx, 1, Op::kInter, false, true, &r)) return;
  ctx.reply.Integer(static_cast<int64_t>(Compute(r, Op::kInter, static_cast<size_t>(r.limit)).size()));
}

}  // namespace

void RegisterZSetAlgebraCommands(CommandTable& t) {
  using namespace cmd;
  constexpr const char* kRead = "@read @sortedset @slow";
  constexpr const char* kWriteAcl = "@write @sortedset @slow";
  const char* g = "sorted-set";
  t.Add(NumKeysAt1(Cmd("zunion", -3, kReadonly, 0, 0, 0, kRead, g, "Returns the union of multiple sorted sets.", "6.2.0", CmdZunion)));
  t.Add(NumKeysAt1(Cmd("zinter", -3, kReadonly, 0, 0, 0, kRead, g, "Returns the intersect of multiple sorted sets.", "6.2.0", CmdZinter)));
  t.Add(NumKeysAt1(Cmd("zdiff", -3, kReadonly, 0, 0, 0, kRead, g, "Returns the difference between multiple sorted sets.", "6.2.0", CmdZdiff)));
  t.Add(DestinationAndNumKeys(Cmd("zunionstore", -4, kWrite | kDenyOom, 1, 1, 1, kWriteAcl, g, "Stores the union of multiple sorted sets in a key.", "2.0.0", CmdZunionstore)));
  t.Add(DestinationAndNumKeys(Cmd("zinterstore", -4, kWrite | kDenyOom, 1, 1, 1, kWriteAcl, g, "Stores the intersect of multiple sorted sets in a key.", "2.0.0", CmdZinterstore)));
  t.Add(DestinationAndNumKeys(Cmd("zdiffstore", -4, kWrite | kDenyOom, 1, 1, 1, kWriteAcl, g, "Stores the difference of multiple sorted sets in a key.", "6.2.0", CmdZdiffstore)));
  t.Add(NumKeysAt1(Cmd("zintercard", -3, kReadonly, 0, 0, 0, kRead, g, "Returns the number of members of the intersect of multiple sorted sets.", "7.0.0", CmdZintercard)));
}

}  // namespace ringkv::server

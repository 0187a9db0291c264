#include "server/commands/zset_util.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "server/commands/util.h"

namespace ringkv::server {

const core::ZSetLimits& ZSetLimitsOf(CommandContext& ctx) { return ctx.keyspace.limits().zset; }

namespace {

// One bound of a score range: strtod over the text after an optional "("
// (so "inf", "-inf" and even "" parse, as in Redis); NaN is refused.
bool ParseScoreBound(std::string_view text, double* value, bool* exclusive) {
  *exclusive = !text.empty() && text[0] == '(';
  const std::string s(text.substr(*exclusive ? 1 : 0));
  char* end;
  *value = std::strtod(s.c_str(), &end);
  return *end == '\0' && !std::isnan(*value);
}

// One bound of a lex range; `is_min` says which end "-" / "+" stand for.
bool ParseLexBound(std::string_view text, bool is_min, core::LexRange* r) {
  if (text == "+" || text == "-") {
    const bool infinite_side_matches = (text == "-") == is_min;
    if (infinite_side_matches) {
      (is_min ? r->min_unbounded : r->max_unbounded) = true;
    } else {
      r->nothing = true;  // min "+" or max "-"
    }
    return true;
  }
  if (text.empty() || (text[0] != '(' && text[0] != '[')) return false;
  (is_min ? r->min_exclusive : r->max_exclusive) = text[0] == '(';
  (is_min ? r->min : r->max) = std::string(text.substr(1));
  return true;
}

}  // namespace

bool ParseScoreRange(std::string_view min, std::string_view max, core::ScoreRange* range) {
  return ParseScoreBound(min, &range->min, &range->min_exclusive) &&
         ParseScoreBound(max, &range->max, &range->max_exclusive);
}

bool ParseLexRange(std::string_view min, std::string_view max, core::LexRange* range) {
  return ParseLexBound(min, true, range) && ParseLexBound(max, false, range);
}

void ReplyElementsHeader(CommandContext& ctx, int64_t n, bool withscores) {
  ctx.reply.ArrayHeader(withscores && ctx.reply.resp() == 2 ? n * 2 : n);
}

void ReplyElement(CommandContext& ctx, std::string_view member, double score, bool withscores) {
  if (withscores && ctx.reply.resp() >= 3) ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(member);
  if (withscores) ctx.reply.Double(score);
}

void ReplyPoppedElement(CommandContext& ctx, std::string_view member, double score, bool nested) {
  if (nested) ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(member);
  ctx.reply.Double(score);
}

}  // namespace ringkv::server

// Helpers shared by the sorted-set command files (zset_cmds.cc,
// zset_range_cmds.cc, zset_algebra_cmds.cc, blocking_cmds.cc): range parsing
// with Redis's error texts, score replies, ZMPOP's reply. The data side is
// zset_ops.h.
#pragma once

#include <memory>
#include <string_view>

#include "core/skiplist.h"
#include "core/zset_value.h"
#include "server/command.h"

namespace ringkv::server {

struct MpopArgs;

// zset-max-listpack-entries / -value, as the config sets them.
const core::ZSetLimits& ZSetLimitsOf(CommandContext& ctx);
// ZMPOP / BZMPOP: pops from the first of args.keys that holds a sorted set
// and replies [key, [[member, score] ...]] (propagated as ZPOPMIN/ZPOPMAX
// key count). False when none holds one (nothing replied); true when served
// or an error replied.
bool ZSetMpopFirst(CommandContext& ctx, const MpopArgs& args);
// "(1.5" / "2" / "-inf" pairs; false on anything Redis's zslParseRange refuses.
bool ParseScoreRange(std::string_view min, std::string_view max, core::ScoreRange* range);
// "[a" / "(a" / "-" / "+" pairs; false on anything zslParseLexRange refuses.
bool ParseLexRange(std::string_view min, std::string_view max, core::LexRange* range);

// One element of a reply: the member, then its score when `withscores`
// (RESP3 nests the pair in a 2-array).
void ReplyElement(CommandContext& ctx, std::string_view member, double score, bool withscores);
// The array header for n elements with or without scores.
void ReplyElementsHeader(CommandContext& ctx, int64_t n, bool withscores);
// One popped element: member and score, nested in a 2-array when `nested`
// (ZMPOP, and RESP3 ZPOPMIN/ZPOPMAX with a count).
void ReplyPoppedElement(CommandContext& ctx, std::string_view member, double score, bool nested);

}  // namespace ringkv::server

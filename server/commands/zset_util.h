// Helpers shared by the sorted-set command files (zset_cmds.cc,
// zset_range_cmds.cc, zset_algebra_cmds.cc): lookups with Redis's type
// checks, range parsing with Redis's error texts, score replies, storing a
// computed result.
#pragma once

#include <memory>
#include <string_view>

#include "core/skiplist.h"
#include "core/zset_value.h"
#include "server/command.h"

namespace ringkv::server {

struct MpopArgs;

// The sorted set at `key`: nullptr when missing (nothing replied) or of
// another type (WRONGTYPE replied, *failed set). `for_read` counts the
// lookup in keyspace_hits/misses.
core::ZSetValue* ZSetLookup(CommandContext& ctx, std::string_view key, bool for_read, bool* failed);
// Creates `key` holding an empty sorted set.
core::ZSetValue* ZSetCreate(CommandContext& ctx, std::string_view key);
// Deletes `key` when its sorted set became empty (no event: for a set the
// running command created and left empty).
void ZSetDeleteIfEmpty(CommandContext& ctx, std::string_view key, const core::ZSetValue& z);
// After members were removed from the set at `key`: the keyspace event
// `event`, then deletion with "del" when it became empty.
void ZSetRemoved(CommandContext& ctx, std::string_view key, const core::ZSetValue& z, std::string_view event);
const core::ZSetLimits& ZSetLimitsOf(CommandContext& ctx);
// ZMPOP / BZMPOP: pops from the first of args.keys that holds a sorted set
// and replies [key, [[member, score] ...]] (propagated as ZPOPMIN/ZPOPMAX
// key count). False when none holds one (nothing replied); true when served
// or an error replied.
bool ZSetMpopFirst(CommandContext& ctx, const MpopArgs& args);
// Pops up to `count` lowest (or highest, `max`) elements of the set at
// `key`, which must exist, replying member/score pairs (`nested`: each pair
// a 2-array, as ZMPOP and RESP3 ZPOPMIN with a count); deletes an emptied key.
void ZSetPopAndReply(CommandContext& ctx, std::string_view key, core::ZSetValue& z, int64_t count, bool max,
                     bool nested);

// "(1.5" / "2" / "-inf" pairs; false on anything Redis's zslParseRange refuses.
bool ParseScoreRange(std::string_view min, std::string_view max, core::ScoreRange* range);
// "[a" / "(a" / "-" / "+" pairs; false on anything zslParseLexRange refuses.
bool ParseLexRange(std::string_view min, std::string_view max, core::LexRange* range);

// One element of a reply: the member, then its score when `withscores`
// (RESP3 nests the pair in a 2-array).
void ReplyElement(CommandContext& ctx, std::string_view member, double score, bool withscores);
// The array header for n elements with or without scores.
void ReplyElementsHeader(CommandContext& ctx, int64_t n, bool withscores);

// Stores `result` at `dst` (replacing it, TTL included) in the encoding
// zset-max-listpack-* call for, or deletes `dst` when the result is empty.
// Returns the cardinality stored.
int64_t StoreZSet(CommandContext& ctx, std::string_view dst, core::ZSetValue result);

}  // namespace ringkv::server

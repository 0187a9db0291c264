// Data operations of the sorted-set family, apart from their replies
// (zset_cmds.cc, zset_range_cmds.cc, zset_algebra_cmds.cc and
// blocking_cmds.cc parse and reply): ZADD, removals, pops, and the STORE
// forms' write. Each reports what it changed through OpArgs
// (server/commands/op_args.h); kWrongType when a key holds another type. An
// emptied set is deleted ("del" after the command's own event).
//
// Pops hand the elements to the caller while they are still at hand --
// begin(...) once with their number, then each(member, score) -- so the
// reply is written from them without copies.
//
// REQUIRES: main thread.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "core/op_result.h"
#include "core/zset_value.h"
#include "server/commands/op_args.h"

namespace ringkv::server {

using ZElementSink = absl::FunctionRef<void(std::string_view member, double score)>;

struct ZAddResult {
  int64_t added = 0;    // new members
  int64_t updated = 0;  // members whose score changed
  bool skipped = false; // INCR: the member was not written (NX/XX/GT/LT, or XX on a missing key)
  double score = 0;     // INCR: the resulting score
};
// ZADD / ZINCRBY: `elements` is score member [score member ...] as given,
// `scores` the scores parsed from it. XX on a missing key creates nothing.
// kNanOrInf when INCR would make NaN (nothing changed).
core::OpResult<ZAddResult> OpZadd(const OpArgs& op, std::string_view key, const core::ZAddFlags& flags,
                                  std::span<const double> scores, std::span<const std::string_view> elements);
// ZREM: how many of `members` went (0 for a missing key).
core::OpResult<int64_t> OpZrem(const OpArgs& op, std::string_view key, std::span<const std::string_view> members);
// ZREMRANGEBYRANK / BYSCORE / BYLEX: how many went (0 for a missing key).
core::OpResult<int64_t> OpZremRangeByRank(const OpArgs& op, std::string_view key, int64_t start, int64_t end);
core::OpResult<int64_t> OpZremRangeByScore(const OpArgs& op, std::string_view key, const core::ScoreRange& range);
core::OpResult<int64_t> OpZremRangeByLex(const OpArgs& op, std::string_view key, const core::LexRange& range);

// ZPOPMIN / ZPOPMAX (`max`): up to `count` lowest (highest) elements
// (kNotFound for a missing key; count 0 checks the type and takes nothing).
core::OpResult<size_t> OpZpop(const OpArgs& op, std::string_view key, uint64_t count, bool max,
                              absl::FunctionRef<void(size_t)> begin, ZElementSink each);
// ZMPOP / BZMPOP: up to `count` from the first of `keys` that holds a sorted
// set -- begin(key, n) -- propagated as ZPOPMIN/ZPOPMAX key count.
// kNotFound when none holds one.
core::OpResult<size_t> OpZmpop(const OpArgs& op, std::span<const std::string_view> keys, uint64_t count, bool max,
                               absl::FunctionRef<void(std::string_view, size_t)> begin, ZElementSink each);
// BZPOPMIN / BZPOPMAX: one element from the first of `keys` that holds a
// sorted set -- begin(key) -- propagated as ZPOPMIN/ZPOPMAX key.
// kNotFound when none holds one (the caller blocks).
core::OpStatus OpBlockingZpop(const OpArgs& op, std::span<const std::string_view> keys, bool max,
                              absl::FunctionRef<void(std::string_view)> begin, ZElementSink each);

// The STORE forms (ZRANGESTORE, ZUNIONSTORE, ...): stores `result` at `dst`
// (replacing it, TTL included; deleting it when empty) with `event` (the
// command's name); returns its cardinality.
int64_t OpZstore(const OpArgs& op, std::string_view dst, core::ZSetValue result, std::string_view event);

}  // namespace ringkv::server

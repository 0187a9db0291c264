// Data operations of the list family and of its blocking forms, apart from
// their replies (server/commands/list_cmds.cc and blocking_cmds.cc parse and
// reply). Each reports what it changed through OpArgs
// (server/commands/op_args.h); kWrongType when a key holds another type. An
// emptied list is deleted ("del" after the command's own event).
//
// Pops that return several elements hand them to the caller while they are
// still at hand -- begin(...) once with their number, then each(element) --
// so the reply is written from them without copies.
//
// REQUIRES: main thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "core/op_result.h"
#include "server/commands/op_args.h"

namespace ringkv::server {

using ElementSink = absl::FunctionRef<void(std::string_view)>;

// LPUSH / RPUSH (`head`: at the head), creating the list; LPUSHX / RPUSHX
// (`only_existing`: 0 and nothing created for a missing key). The new length.
core::OpResult<int64_t> OpPush(const OpArgs& op, std::string_view key, bool head,
                               std::span<const std::string_view> values, bool only_existing);
// LPOP / RPOP key: one element (kNotFound for a missing key).
core::OpResult<std::string> OpPop(const OpArgs& op, std::string_view key, bool head);
// LPOP / RPOP key count: up to `count` elements (kNotFound for a missing key).
core::OpResult<size_t> OpPopCount(const OpArgs& op, std::string_view key, bool head, uint64_t count,
                                  absl::FunctionRef<void(size_t)> begin, ElementSink each);
// LMPOP / BLMPOP: pops up to `count` from the first of `keys` that holds a
// list -- begin(key, n), then each(element) -- propagated as LPOP/RPOP key
// count. kNotFound when none holds one.
core::OpResult<size_t> OpMpop(const OpArgs& op, std::span<const std::string_view> keys, bool head, uint64_t count,
                              absl::FunctionRef<void(std::string_view, size_t)> begin, ElementSink each);
// BLPOP / BRPOP: one element from the first of `keys` that holds a list,
// begin(key) told which; propagated as LPOP/RPOP key. kNotFound when none
// holds one (the caller blocks).
core::OpResult<std::string> OpBlockingPop(const OpArgs& op, std::span<const std::string_view> keys, bool head,
                                          absl::FunctionRef<void(std::string_view)> begin);

// LSET: kNotFound for a missing key, kNotInteger for an `index` that is
// no integer (checked after the key, as Redis does), kOutOfRange.
core::OpStatus OpLset(const OpArgs& op, std::string_view key, std::string_view index, std::string_view value);
// LINSERT: the new length; 0 for a missing key, -1 when `pivot` is absent.
core::OpResult<int64_t> OpLinsert(const OpArgs& op, std::string_view key, bool after, std::string_view pivot,
                                  std::string_view value);
// LREM: how many elements equal to `value` went (count as Redis's LREM).
core::OpResult<int64_t> OpLrem(const OpArgs& op, std::string_view key, int64_t count, std::string_view value);
// LTRIM: keeps [start, end] (Redis's index rules); a missing key is no error.
core::OpStatus OpLtrim(const OpArgs& op, std::string_view key, int64_t start, int64_t end);

// How LMOVE's write is propagated: as the command itself, or -- for the
// blocking forms -- as the non-blocking one (BLMOVE as LMOVE, BRPOPLPUSH as
// RPOPLPUSH), as Redis 7.0 does.
enum class MoveForm : uint8_t { kAsIs, kLmove, kRpoplpush };
// LMOVE / RPOPLPUSH and the blocking forms: moves one element from an end
// of `src` to an end of `dst` and returns it. kNotFound for a missing
// source; both types are checked before anything moves.
core::OpResult<std::string> OpLmove(const OpArgs& op, std::string_view src, std::string_view dst, bool from_head,
                                    bool to_head, MoveForm form = MoveForm::kAsIs);

// Clips [start, end] to a list of n elements as Redis's list ranges do;
// false when nothing is left.
bool ClipListRange(int64_t n, int64_t* start, int64_t* end);

}  // namespace ringkv::server

// Data operations of the set family, apart from their replies
// (server/commands/set_cmds.cc parses and replies): membership changes,
// pops, SMOVE and the set algebra with its STORE forms. Each reports what it
// changed through OpArgs (server/commands/op_args.h); kWrongType when a key
// holds another type.
//
// REQUIRES: main thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "core/op_result.h"
#include "core/set_value.h"
#include "server/commands/op_args.h"

namespace ringkv::server {

// SADD: how many of `members` are new; creates the set in the encoding
// Redis picks for its first member.
core::OpResult<int64_t> OpSadd(const OpArgs& op, std::string_view key, std::span<const std::string_view> members);
// SREM: how many were removed (0 for a missing key); an emptied set is
// deleted.
core::OpResult<int64_t> OpSrem(const OpArgs& op, std::string_view key, std::span<const std::string_view> members);
// SPOP key: removes a random member, handed to popped() while still at
// hand (kNotFound for a missing key). Propagated as SREM of it.
core::OpStatus OpSpop(const OpArgs& op, std::string_view key, absl::FunctionRef<void(std::string_view)> popped);
// SPOP key count: removes up to `count` random members -- the whole set
// when count covers it (propagated as DEL, or UNLINK with
// lazyfree-lazy-server-del), else as SREM of what went. begin(n) is told
// how many first, then each(member) gets them in order. kNotFound for a
// missing key (count 0 checks the type and takes nothing).
core::OpResult<size_t> OpSpopCount(const OpArgs& op, std::string_view key, uint64_t count,
                                   absl::FunctionRef<void(size_t)> begin,
                                   absl::FunctionRef<void(std::string_view)> each);
// SMOVE: true when `member` moved (or src == dst holds it). kNotFound for a
// missing source, checked before the types, as Redis does.
core::OpResult<bool> OpSmove(const OpArgs& op, std::string_view src, std::string_view dst, std::string_view member);

// The set algebra over `keys` (a missing key is an empty set). The STORE
// forms' lookups are writes' (core::Access::kWrite).
// SINTER / SINTERCARD: the intersection's members, in the iteration order of
// the smallest set, at most `limit` of them (0: all).
core::OpResult<std::vector<std::string>> OpSinter(const OpArgs& op, std::span<const std::string_view> keys,
                                                  core::Access access, size_t limit = 0);
// SUNION / SDIFF: the result as a fresh set, built as an intset first as
// Redis builds it (sets of integers come out ascending).
core::OpResult<core::SetValue> OpSunionOrDiff(const OpArgs& op, std::span<const std::string_view> keys, bool diff,
                                              core::Access access);
// SINTERSTORE / SUNIONSTORE / SDIFFSTORE: stores the result at `dst`
// (replacing it, TTL included; deleting it when empty) and returns its
// size. `event` is the command's name.
core::OpResult<int64_t> OpSinterstore(const OpArgs& op, std::string_view dst, std::span<const std::string_view> keys);
core::OpResult<int64_t> OpSunionOrDiffStore(const OpArgs& op, std::string_view dst,
                                            std::span<const std::string_view> keys, bool diff);

}  // namespace ringkv::server

// Data operations of the hash family (HSET and friends, HDEL, the counters),
// apart from their replies: server/commands/hash_cmds.cc parses and replies.
// Each reports what it changed through OpArgs (server/commands/op_args.h);
// kWrongType when the key holds another type.
//
// REQUIRES: main thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/op_result.h"
#include "server/commands/op_args.h"

namespace ringkv::server {

// HSET / HMSET: sets `pairs` (field, value, field, value, ...), creating the
// hash; returns how many fields are new. Counts a change per pair.
core::OpResult<int64_t> OpHset(const OpArgs& op, std::string_view key, std::span<const std::string_view> pairs);
// HSETNX: false, and nothing written, when the field exists.
core::OpResult<bool> OpHsetnx(const OpArgs& op, std::string_view key, std::string_view field,
                              std::string_view value);
// HDEL: how many of `fields` were removed (0 for a missing key); an emptied
// hash is deleted.
core::OpResult<int64_t> OpHdel(const OpArgs& op, std::string_view key, std::span<const std::string_view> fields);
// HINCRBY: the new value. kNotInteger when the field holds no integer,
// kOverflow when the sum leaves int64.
core::OpResult<int64_t> OpHincrby(const OpArgs& op, std::string_view key, std::string_view field, int64_t delta);
// HINCRBYFLOAT (REQUIRES: delta is finite): the new value as stored (and
// propagated, as HSET of it, so a replica stores the same text).
// kNotFloat when the field holds no float, kNanOrInf for an infinite sum.
core::OpResult<std::string> OpHincrbyfloat(const OpArgs& op, std::string_view key, std::string_view field,
                                           long double delta);

}  // namespace ringkv::server

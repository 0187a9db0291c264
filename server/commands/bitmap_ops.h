// Data operations of the bitmap family (SETBIT, BITOP, BITFIELD's writes),
// apart from their replies: server/commands/bitmap_cmds.cc parses and
// replies. A bitmap is a plain string (core/string_value.h); the bit
// algorithms are core/bitops.h. Each reports what it changed through OpArgs
// (server/commands/op_args.h); kWrongType when a key holds another type
// than a string.
//
// REQUIRES: main thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/bitops.h"
#include "core/op_result.h"
#include "server/commands/op_args.h"

namespace ringkv::server {

// SETBIT (REQUIRES: offset within proto-max-bulk-len): the bit's previous
// value. As Redis: the string is created or zero-grown to hold the bit and
// made raw; "setbit" and one dirty change only when it was created, grew,
// or the bit changed.
core::OpResult<int64_t> OpSetBit(const OpArgs& op, std::string_view key, uint64_t offset, bool on);

// BITOP: `dest` becomes the result (no deadline, "set"), or is deleted
// ("del") when every source is empty or missing. Returns the result's
// length. Sources are read lookups (keyspace hits / misses).
core::OpResult<int64_t> OpBitOp(const OpArgs& op, core::BitOpKind kind, std::string_view dest,
                                std::span<const std::string_view> sources);

// One BITFIELD subcommand, parsed.
struct BitfieldOp {
  enum Kind : uint8_t { kGet, kSet, kIncrBy } kind = kGet;
  bool is_signed = false;
  unsigned bits = 0;    // 1..64 signed, 1..63 unsigned
  uint64_t offset = 0;  // in bits
  int64_t value = 0;    // SET's value, INCRBY's increment
  core::Overflow overflow = core::Overflow::kWrap;
};

// Runs `ops` in order on the bytes p[0..len) (p may be null when len is 0):
// one reply each, nullopt for a write refused by OVERFLOW FAIL. REQUIRES:
// every SET / INCRBY lies inside p. GETs past the end read zeros. *changes
// counts the writes done that changed the field, or all done when `grown`
// (the string was created or grew), as Redis 7.0 counts them.
std::vector<std::optional<int64_t>> RunBitfield(uint8_t* p, size_t len, std::span<const BitfieldOp> ops, bool grown,
                                                uint64_t* changes);

// BITFIELD with at least one SET or INCRBY: the string is created or
// zero-grown to hold the farthest write (made raw), then `ops` run; "setbit"
// once, counting RunBitfield's changes, when there are any.
core::OpResult<std::vector<std::optional<int64_t>>> OpBitfield(const OpArgs& op, std::string_view key,
                                                               std::span<const BitfieldOp> ops);

}  // namespace ringkv::server

// Data operations of the string family and of key deadlines (GET/SET and
// friends, counters, ranges; EXPIRE's and GETEX's write), apart from their
// replies: server/commands/string_cmds.cc and key_cmds.cc parse and reply.
// Each reports what it changed through OpArgs (server/commands/op_args.h);
// kWrongType when a key holds another type than a string.
//
// REQUIRES: main thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "core/keyspace.h"
#include "core/op_result.h"
#include "server/commands/op_args.h"

namespace ringkv::server {

struct SetOptions {
  enum class Condition : uint8_t { kAlways, kIfMissing, kIfExists } condition = Condition::kAlways;
  bool keep_ttl = false;
  bool get = false;           // return the previous value
  int64_t expire_at_ms = -1;  // absolute deadline, -1 = none
};

struct SetResult {
  bool written = false;
  std::optional<std::string> previous;  // when SetOptions::get
};

// SET / SETNX / SETEX / PSETEX / MSET's write: "set" when written, and
// "expire" with a deadline -- propagated then as SET key value PXAT ms, so
// a replay later gives the same deadline. kWrongType only with `get`.
core::OpResult<SetResult> OpSet(const OpArgs& op, std::string_view key, std::string_view value,
                                const SetOptions& opts);
// GETSET: the previous value; propagated as SET key value (as Redis 7.0).
core::OpResult<SetResult> OpGetset(const OpArgs& op, std::string_view key, std::string_view value);
// MSET / MSETNX (`nx`: nothing is written when any key exists; false then).
// `pairs` is key value [key value ...].
bool OpMset(const OpArgs& op, std::span<const std::string_view> pairs, bool nx);
// GETDEL: hands the value to value() before deleting the key (kNotFound for
// a missing key); propagated as DEL.
core::OpStatus OpGetdel(const OpArgs& op, std::string_view key, absl::FunctionRef<void(std::string_view)> value);

// What GETEX does to the key's deadline after reading it.
struct GetexChange {
  enum Kind : uint8_t {
    kNone,
    kExpire,   // set `when` (see OpSetDeadline)
    kPersist,  // drop the deadline
    kCheck,    // the expiry given was refused: only look the key up
  } kind = kNone;
  int64_t when = -1;
};
// GETEX: hands the value to value() (not for kCheck), then applies `change`.
// kNotFound for a missing key.
core::OpStatus OpGetex(const OpArgs& op, std::string_view key, const GetexChange& change,
                       absl::FunctionRef<void(std::string_view)> value);
// EXPIRE & co. and GETEX on the live entry `e` of `key`: a deadline at or
// before now deletes the key on a primary ("del", propagated as DEL, or
// UNLINK with lazyfree-lazy-expire); otherwise it is set ("expire",
// propagated as PEXPIREAT key when: absolute, as Redis 7.0 propagates).
void OpSetDeadline(const OpArgs& op, std::string_view key, core::Entry* e, int64_t when);

// INCR / DECR / INCRBY / DECRBY: the new value ("incrby" for all, as
// Redis). kNotInteger, kOverflow.
core::OpResult<int64_t> OpIncrBy(const OpArgs& op, std::string_view key, int64_t delta);
// INCRBYFLOAT: the new value as stored, propagated as SET key value
// KEEPTTL. As Redis checks them: the key's type, its value (kNotFloat),
// then the increment given as text (kNotFloat); kNanOrInf.
core::OpResult<std::string> OpIncrByFloat(const OpArgs& op, std::string_view key, std::string_view delta_text);
// APPEND: the new length. max_len is proto-max-bulk-len (kTooBig past it).
core::OpResult<int64_t> OpAppend(const OpArgs& op, std::string_view key, std::string_view value, int64_t max_len);
// SETRANGE (REQUIRES: offset >= 0): the new length.
core::OpResult<int64_t> OpSetRange(const OpArgs& op, std::string_view key, int64_t offset, std::string_view value,
                                   int64_t max_len);

}  // namespace ringkv::server

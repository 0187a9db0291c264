// Data operations of the generic key commands (DEL, the EXPIRE family,
// PERSIST, RENAME, MOVE, COPY), apart from their replies:
// server/commands/key_cmds.cc parses and replies. Each reports what it
// changed through OpArgs (server/commands/op_args.h). Deadlines are
// string_ops.h's OpSetDeadline.
//
// REQUIRES: main thread.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/op_result.h"
#include "server/commands/op_args.h"

namespace ringkv::server {

// DEL / UNLINK: how many of `keys` existed; `lazy` frees big values on the
// lazy-free thread.
int64_t OpDel(const OpArgs& op, std::span<const std::string_view> keys, bool lazy);

// EXPIRE's conditions.
struct ExpireFlags {
  bool nx = false, xx = false, gt = false, lt = false;
};
// EXPIRE / PEXPIRE / EXPIREAT / PEXPIREAT with the absolute deadline `when`:
// false when the key is missing or a condition says no.
bool OpExpire(const OpArgs& op, std::string_view key, int64_t when, const ExpireFlags& flags);
// PERSIST: false when the key is missing or has no deadline.
bool OpPersist(const OpArgs& op, std::string_view key);

// RENAME / RENAMENX (`nx`): kNotFound for a missing source; false when
// nothing moved (the same key, or NX and the target exists).
core::OpResult<bool> OpRename(const OpArgs& op, std::string_view src, std::string_view dst, bool nx);
// MOVE to database `dst` (REQUIRES: another database): false when the key
// is missing here or exists there.
bool OpMove(const OpArgs& op, std::string_view key, core::Database& dst);
// COPY `src` to `dst_key` in database `dst` (REQUIRES: not the same key of
// the same database): false when the source is missing or, without
// `replace`, the target exists.
bool OpCopy(const OpArgs& op, std::string_view src, core::Database& dst, std::string_view dst_key, bool replace);

// RESTORE's write, once the payload parsed: `value` goes to `key` (a key
// there is replaced first when `replace`; REQUIRES: none there otherwise)
// with the deadline `ttl` (0: none; relative to now when `relative`) and the
// access clock IDLETIME / FREQ ask for (-1: not given). A deadline already
// past on a primary creates nothing, and a replaced key is gone ("del",
// propagated as DEL). `command` is RESTORE's argv: with a relative ttl it is
// propagated with the absolute deadline and ABSTTL, as Redis does.
void OpRestore(const OpArgs& op, std::string_view key, core::Value value, bool replace, int64_t ttl, bool relative,
               int64_t idle, int64_t freq, std::span<const std::string_view> command);

}  // namespace ringkv::server

// Small helpers shared by the command families: argument parsing with
// Redis's error replies. Does not include server/server.h: the data
// families see the keyspace, their context and these helpers, not the
// server (scripts/check_layering.py holds that).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/random/random.h"
#include "core/strings.h"
#include "core/keyspace.h"
#include "core/op_result.h"
#include "core/stream_value.h"
#include "core/typed_lookup.h"
#include "server/command.h"
#include "server/commands/op_args.h"
#include "server/block_kind.h"
#include "server/errors.h"

namespace ringkv::server {

// Case-insensitive comparison of an argument with an option name.
inline bool Is(std::string_view arg, std::string_view option) { return EqualsIgnoreCase(arg, option); }

// Parses an int64 exactly as Redis's getLongLongFromObject; replies
// "value is not an integer or out of range" and returns false on failure.
bool ParseInt(CommandContext& ctx, std::string_view arg, int64_t* out);
// Parses an int as Redis's getIntFromObjectOrReply: not an integer replies as
// ParseInt, outside int's range "value is out of range, value must between
// -2147483648 and 2147483647"; a non-empty `error` replaces both messages.
bool ParseInt32(CommandContext& ctx, std::string_view arg, int32_t* out, std::string_view error = {});
// Parses a long double as Redis's string2ld; replies "value is not a valid
// float" on failure.
bool ParseFloat(CommandContext& ctx, std::string_view arg, long double* out);
// Parses a double as Redis's string2d (getDoubleFromObject): the whole text,
// no leading space; NaN, overflow and underflow to zero are refused.
bool ParseDouble(std::string_view s, double* out);

// Blocks the running command's client on `keys` (BlockedClients::BlockOnKeys)
// until a write makes one of them ready or `deadline_us` (UnixUs; 0: none) passes
// (XREAD: `read_after`, BlockState::read_after).
// Where the client may not block (inside EXEC, the primary's link, the AOF
// loader) it answers as on timeout -- BLMOVE and BRPOPLPUSH as LMOVE on an
// empty list.
void BlockOnKeys(CommandContext& ctx, BlockKind kind, std::vector<std::string> keys, int64_t deadline_us,
                 std::vector<std::pair<std::string, core::StreamId>> read_after = {});

// Replies with a container's HELP text as Redis's addReplyHelp does: one
// simple string per line, "<COMMAND> <subcommand> [<arg> [value] [opt] ...].
// Subcommands are:" first (the command as the client spelled it, upper
// case), then `lines`, then "HELP" and "    Prints this help.".
void ReplyHelp(CommandContext& ctx, std::span<const char* const> lines);

// Redis's addReplySubcommandSyntaxError: "ERR unknown subcommand or wrong
// number of arguments for '<argv[1] as typed, at most 128 bytes>'. Try
// <ARGV[0]> HELP." -- what a container's subcommand answers to arguments its
// arity allows but its handler does not. REQUIRES: argv.size() >= 2.
void ReplySubcommandSyntaxError(CommandContext& ctx);

// True when `e` is missing or holds a value of `type`; otherwise replies
// WRONGTYPE and returns false.
bool CheckType(CommandContext& ctx, const core::Entry* e, core::ValueType type);

// SCAN-family arguments. The cursor is parsed first (strtoul rules, "ERR
// invalid cursor"); options after it: MATCH, COUNT (>= 1), and TYPE where
// `allow_type` (SCAN only). False when an error was replied.
struct ScanOptions {
  int64_t count = 10;
  std::string_view pattern;  // MATCH's, when has_pattern
  bool has_pattern = false;
  std::string_view type;     // SCAN's TYPE, empty: any
  bool Matches(std::string_view s) const;
};
bool ParseScanCursor(CommandContext& ctx, std::string_view arg, uint64_t* cursor);
bool ParseScanOptions(CommandContext& ctx, size_t first, bool allow_type, ScanOptions* opts);
// [cursor, [items...]], as every SCAN-family command replies.
void ReplyScan(CommandContext& ctx, uint64_t cursor, const std::vector<std::string>& items);

// Collects one SCAN-family step over a table encoding: calls step(cursor)
// (which appends to items and returns the next cursor) until the scan wraps,
// `count` elements (items / per_element) were collected, or count * 10 steps
// were spent -- Redis's bound on the work of one call. Returns the cursor.
template <typename Step>
uint64_t ScanTableSteps(uint64_t cursor, int64_t count, const std::vector<std::string>& items, size_t per_element,
                        Step step) {
  int64_t budget = count * 10;
  do {
    cursor = step(cursor);
  } while (cursor != 0 && --budget > 0 && static_cast<int64_t>(items.size() / per_element) < count);
  return cursor;
}

// Chooses `count` distinct elements of a collection of `size` (REQUIRES:
// count < size) as Redis's HRANDFIELD / SRANDMEMBER / ZRANDMEMBER do: when
// that is most of it (count * 3 > size), all elements minus random ones;
// otherwise random draws until `count` distinct ones. all(out) appends every
// element to *out; draw() returns a random one; id(e) names it.
template <typename T, typename All, typename Draw, typename Id>
std::vector<T> PickDistinct(size_t count, size_t size, absl::BitGen& rng, All all, Draw draw, Id id) {
  std::vector<T> picked;
  picked.reserve(count * 3 > size ? size : count);
  if (count * 3 > size) {
    all(&picked);
    while (picked.size() > count) {
      const size_t i = absl::Uniform<size_t>(rng, 0, picked.size());
      std::swap(picked[i], picked.back());
      picked.pop_back();
    }
    return picked;
  }
  absl::flat_hash_set<std::string> seen;
  while (picked.size() < count) {
    T e = draw();
    if (seen.insert(std::string(id(e))).second) picked.push_back(std::move(e));
  }
  return picked;
}

// HRANDFIELD / ZRANDMEMBER key count [WITHVALUES|WITHSCORES]: parses
// argv[2] (any int64 but INT64_MIN) and the optional `with_word` at
// argv[3], whose use limits |count| to INT64_MAX / 2 (as Redis 7.0 does, so
// count * 2 replies cannot overflow). False when an error was replied.
bool ParseRandomCountArgs(CommandContext& ctx, std::string_view with_word, int64_t* count, bool* with);

// HSCAN / SSCAN / ZSCAN after the lookup found a value: parses the options
// (from argv[3]); a packed value is returned whole with cursor 0
// (each_packed(opts, &items)), a table is walked from `cursor`
// (step_table(cursor, opts, &items) -> next cursor) within Redis's budget.
// `per_element` is 2 when items come in pairs.
template <typename EachPacked, typename StepTable>
void ScanCollection(CommandContext& ctx, uint64_t cursor, bool packed, size_t per_element, EachPacked each_packed,
                    StepTable step_table) {
  ScanOptions opts;
  if (!ParseScanOptions(ctx, 3, /*allow_type=*/false, &opts)) return;
  std::vector<std::string> items;
  if (packed) {
    each_packed(opts, &items);
    cursor = 0;
  } else {
    cursor = ScanTableSteps(cursor, opts.count, items, per_element,
                            [&](uint64_t c) { return step_table(c, opts, &items); });
  }
  ReplyScan(ctx, cursor, items);
}

// LMPOP / ZMPOP arguments: numkeys key [key ...] <end> [COUNT count], with
// <end> one of `first_end` / `other_end` (LEFT/RIGHT, MIN/MAX). False when an
// error was replied, with Redis's texts.
struct MpopArgs {
  Argv keys;
  bool first_end = true;  // <end> was `first_end`
  int64_t count = 1;
};
bool ParseMpopArgs(CommandContext& ctx, size_t numkeys_index, std::string_view first_end, std::string_view other_end,
                   MpopArgs* out);

// The Op* arguments of the running command: its client's database, its
// clock, its effects record.
inline OpArgs OpArgsOf(CommandContext& ctx) {
  return OpArgs{ctx.db, ctx.keyspace, ctx.now_ms, ctx.effects};
}

// A read command's lookup of the T at `key` (counted in keyspace_hits /
// misses): *out is the value, or nullptr when the key is missing. False,
// after replying WRONGTYPE, when the key holds another type.
template <typename T>
bool LookupForRead(CommandContext& ctx, std::string_view key, T** out) {
  core::OpResult<T*> r = core::FindTyped<T>(ctx.db, key, ctx.now_ms, core::Access::kRead);
  if (r.status() == core::OpStatus::kWrongType) {
    ctx.reply.Error(errors::kWrongType);
    return false;
  }
  *out = r.ok() ? r.value() : nullptr;
  return true;
}

// Replies with the error text for a failed keyspace operation.
void ReplyOpError(CommandContext& ctx, core::OpStatus status);
// Replies with an Op* function's count, or its error.
inline void ReplyInteger(CommandContext& ctx, const core::OpResult<int64_t>& r) {
  if (r.ok()) {
    ctx.reply.Integer(r.value());
  } else {
    ReplyOpError(ctx, r.status());
  }
}

}  // namespace ringkv::server

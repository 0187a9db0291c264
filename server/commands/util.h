// Small helpers shared by the command families: argument parsing with
// Redis's error replies.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/strings.h"
#include "core/keyspace.h"
#include "core/op_result.h"
#include "server/command.h"

namespace ringkv::server {

// Case-insensitive comparison of an argument with an option name.
inline bool Is(std::string_view arg, std::string_view option) { return EqualsIgnoreCase(arg, option); }

// Parses an int64 exactly as Redis's getLongLongFromObject; replies
// "value is not an integer or out of range" and returns false on failure.
bool ParseInt(CommandContext& ctx, std::string_view arg, int64_t* out);
// Parses a long double as Redis's string2ld; replies "value is not a valid
// float" on failure.
bool ParseFloat(CommandContext& ctx, std::string_view arg, long double* out);
bool ParseLongDouble(std::string_view s, long double* out);

// Replies with a HELP text: one simple string per line, as Redis does.
void ReplyHelp(CommandContext& ctx, std::span<const char* const> lines);

// True when `e` is missing or holds a value of `type`; otherwise replies
// WRONGTYPE and returns false.
bool CheckType(CommandContext& ctx, const core::Entry* e, core::ValueType type);

// SCAN-family arguments. The cursor is parsed first (strtoul rules, "ERR
// invalid cursor"); options after it: MATCH, COUNT (>= 1), and TYPE where
// `allow_type` (SCAN only). False when an error was replied.
struct ScanOptions {
  int64_t count = 10;
  std::string_view pattern;  // empty: every element
  std::string_view type;     // SCAN's TYPE, empty: any
  bool Matches(std::string_view s) const;
};
bool ParseScanCursor(CommandContext& ctx, std::string_view arg, uint64_t* cursor);
bool ParseScanOptions(CommandContext& ctx, size_t first, bool allow_type, ScanOptions* opts);
// [cursor, [items...]], as every SCAN-family command replies.
void ReplyScan(CommandContext& ctx, uint64_t cursor, const std::vector<std::string>& items);

// Replies with the error text for a failed keyspace operation.
void ReplyOpError(CommandContext& ctx, core::OpStatus status);

}  // namespace ringkv::server

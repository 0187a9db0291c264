// Small helpers shared by the command families: argument parsing with
// Redis's error replies.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

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

// Replies with the error text for a failed keyspace operation.
void ReplyOpError(CommandContext& ctx, core::OpStatus status);

}  // namespace ringkv::server

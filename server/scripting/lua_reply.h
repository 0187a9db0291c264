// Conversions between RESP replies and Lua values, as Redis 7.0 converts
// them for scripts.
//
// RESP -> Lua (what redis.call returns): integer -> number, bulk -> string,
// null bulk / null array -> false (RESP2) or nil (RESP3 null), array ->
// table, status -> {ok=...}, error -> {err=...}; RESP3 map -> {map={...}},
// set -> {set={k=true}}, double -> {double=n}, boolean -> true/false,
// big number -> {big_number=s}, verbatim -> {verbatim_string={format=,
// string=}}; attributes are skipped.
//
// Lua -> RESP (what a script returns): number -> integer (truncated; NaN and
// out-of-range give INT64_MIN as Redis's cast does), string -> bulk, true ->
// 1 (or a RESP3 boolean under redis.setresp(3)), false / nil -> null, tables
// with err / ok / double / big_number / map / set / verbatim_string fields
// -> those types, other tables -> the array of t[1..n] up to the first nil.
#pragma once

#include <string_view>

#include "io/reply_builder.h"

struct lua_State;

namespace ringkv::server::scripting {

// Pushes the Lua value of one RESP reply (the whole of `resp`). Returns false
// (pushing nothing) when `resp` is not one complete reply.
bool PushRespAsLua(lua_State* L, std::string_view resp);

// Writes the value at the top of the stack as a reply (it stays on the
// stack). `script_resp` is the script's redis.setresp version, which decides
// how booleans are sent.
void WriteLuaAsReply(lua_State* L, io::ReplyBuilder& rb, int script_resp);

// The field Redis sets in the error table of a command's error reply
// (redis.pcall's result, redis.call's raised error): the error was counted
// in the error statistics when the command replied it, so the script's own
// error reply carrying it is not counted again (only as a failed call).
inline constexpr char kErrorCountedField[] = "ignore_error_stats_update";

// Whether the error table at the top of the stack carries kErrorCountedField.
bool ErrorCounted(lua_State* L);

// Pushes Redis's error table {err = "<CODE> <message>"} for an error text
// given as "-CODE message", "CODE message" with a leading '-', or a bare
// message (which gets the ERR code), as redis.error_reply builds it.
void PushErrorTable(lua_State* L, std::string_view error);

}  // namespace ringkv::server::scripting

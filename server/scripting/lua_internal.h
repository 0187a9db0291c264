// What the Lua engine's files share (lua_engine.cc, lua_redis_api.cc); not
// for other code.
//
// Thread-safety: main thread only, as the engine.
#pragma once

struct lua_State;

namespace ringkv::server::scripting {

class LuaEngine;

// The registry key under which an engine keeps a pointer to itself.
inline constexpr char kEngineKey[] = "ringkv_engine";
// Functions engine: the `redis` table a library sees while it loads.
inline constexpr char kLoadApiKey[] = "ringkv_redis_load";

// The engine a lua_State belongs to.
LuaEngine* EngineOf(lua_State* L);

// Raises `msg` as a Lua error with no position prefix: the error handler
// adds the script's line, and the "ERR " code when it is bare text.
[[noreturn]] void RaiseString(lua_State* L, const char* msg);
// Raises {err = "ERR <msg>"}, as Redis's redis.* helpers raise their
// argument errors (luaPushError + luaError): pcall catches the table.
[[noreturn]] void RaiseErrorTable(lua_State* L, const char* msg);

}  // namespace ringkv::server::scripting

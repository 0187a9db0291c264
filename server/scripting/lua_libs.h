// The two Lua C libraries Redis 7.0 bundles for scripts that Debian's Lua 5.1
// does not ship: `cmsgpack` (lua-cmsgpack 0.4.0, MessagePack) and `struct`
// (Roberto Ierusalimschy's struct 1.4 with Redis's hardening). Written for
// ringkv; what a script can observe -- the bytes packed, the values unpacked,
// the error messages, where Lua's stack limit bites -- matches redis-server
// 7.0 on x86-64 Linux, including its quirks (see each .cc file). One thing
// is the interpreter's, not the libraries': pairs()/lua_next order, hence the
// entry order of packed maps, differs from Redis's for string keys of 32
// bytes or more (Redis's patched Lua hashes those strings differently from
// stock Lua 5.1, whose hash samples at most ~32 of their bytes).
//
// Contract of both openers: called like a `luaopen_*` function (lua_call or
// directly; any arguments on the stack are ignored), each creates its library
// table, sets it as the global of the same name and leaves it on top of the
// stack (returns 1). OpenStruct registers through luaL_register, so the
// table is also package.loaded.struct as in Redis; cmsgpack, as in Redis, is
// only a global.
//
// Errors are raised with lua_error/luaL_error (longjmp in Debian's C Lua), so
// the library functions must be called from Lua or lua_pcall, never directly.
//
// Thread-safety: a lua_State is single-threaded; the libraries keep no state
// outside it.
#pragma once

extern "C" {
#include <lua.h>
}

namespace ringkv::server::scripting {

// Opens `cmsgpack`: pack(...), unpack(s), unpack_one(s [, offset]),
// unpack_limit(s, limit [, offset]), and the fields _NAME, _VERSION,
// _COPYRIGHT and _DESCRIPTION.
int OpenCmsgpack(lua_State* L);

// Opens `struct`: pack(fmt, ...), unpack(fmt, s [, i]), size(fmt).
int OpenStruct(lua_State* L);

}  // namespace ringkv::server::scripting

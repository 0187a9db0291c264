// Read-only tables as C code sees them. Redis 7.0 marks its protected tables
// (the libraries, _G, their metatables) read-only with a flag of its patched
// Lua, so a C function that reads one raw (lua_next, lua_rawgeti) sees its
// entries and one that writes it raw gets "Attempt to modify a readonly
// table". Debian's Lua has no such flag: ringkv's sandbox (lua_engine.cc)
// shows scripts an empty proxy table whose metatable reads the real one.
// The C functions a script can hand a proxy to would see the empty proxy
// instead; these helpers make them see, and refuse, what Redis's do:
//   - rawset and setmetatable refuse a proxy, rawget, next and pairs read
//     its real table, and a proxy given to setmetatable as a metatable is
//     set as its real table;
//   - table.insert refuses a proxy (Redis's raw write fails; without this
//     the value would land in the proxy, which every later script shares);
//   - table.foreach walks the real table;
//   - cjson.encode (Debian's lua-cjson, and that of each cjson.new()) and
//     cmsgpack.pack (lua_cmsgpack.cc) encode the real table of every proxy
//     they reach.
//
// Thread-safety: main thread only, as the engine.
#pragma once

struct lua_State;

namespace ringkv::server::scripting {

// Keeps the sandbox's proxy -> real table map (a weak-keyed table) at
// `proxies` for the helpers below.
void SetReadOnlyProxies(lua_State* L, int proxies);

// When the value at `index` is a read-only proxy, puts the table it stands
// for in its place and returns true. Any other value (and any state without
// SetReadOnlyProxies, or without 2 free stack slots) is left alone: false.
bool ReplaceReadOnlyProxy(lua_State* L, int index);

// Wraps table.insert and table.foreach in the real table library `table`
// (a stack index), and cjson.encode and cjson.new in the real cjson library
// `cjson`. Each wrapper calls the original C function in its own call frame,
// so the originals' argument errors name the function as before ("bad
// argument #1 to 'insert'"); table.insert on a proxy makes the original's
// argument checks first, then refuses.
void GuardLibrariesAgainstProxies(lua_State* L, int table, int cjson);

// Replaces rawset, rawget, next, pairs and setmetatable in the globals
// (the real ones) by wrappers that make the originals' argument checks
// first, then see through a proxy (rawget, next, pairs; setmetatable's
// metatable) or refuse to write one (rawset, setmetatable's table).
void GuardBaseFunctionsAgainstProxies(lua_State* L);

// Kept here with the other base-function wrappers, for the same reason
// (argument errors in the original's words and frame): loadstring and load
// refuse precompiled chunks (Lua 5.1 does not verify bytecode), answering
// nil and "binary code not allowed" as Redis's Lua does.
void GuardLoaders(lua_State* L);

// Wraps the sandbox's getmetatable (a Lua function, global by then) so that
// a call without an argument fails as Lua's own does ("bad argument #1 to
// 'getmetatable' (value expected)").
void GuardGetmetatable(lua_State* L);

}  // namespace ringkv::server::scripting

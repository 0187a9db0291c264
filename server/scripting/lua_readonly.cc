#include "server/scripting/lua_readonly.h"

#include <cstring>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

namespace ringkv::server::scripting {
namespace {

// Registry key of the proxy -> real table map.
constexpr char kProxiesKey[] = "ringkv_readonly_proxies";

// The wrapped C functions: the same in every engine (liblua's, lua-cjson's).
lua_CFunction g_table_insert = nullptr;
lua_CFunction g_table_foreach = nullptr;
lua_CFunction g_cjson_encode = nullptr;
lua_CFunction g_cjson_new = nullptr;
lua_CFunction g_rawset = nullptr;
lua_CFunction g_rawget = nullptr;
lua_CFunction g_next = nullptr;
lua_CFunction g_setmetatable = nullptr;
lua_CFunction g_loadstring = nullptr;
lua_CFunction g_load = nullptr;

// Whether the value at `index` (absolute) is a read-only proxy.
bool IsReadOnlyProxy(lua_State* L, int index) {
  if (!lua_istable(L, index) || !lua_getmetatable(L, index)) return false;  // (a proxy always has one)
  lua_pop(L, 1);
  lua_pushvalue(L, index);
  const bool proxy = ReplaceReadOnlyProxy(L, lua_gettop(L));
  lua_pop(L, 1);
  return proxy;
}

// Redis's raw write of a read-only table: no position in the message.
int RaiseReadOnly(lua_State* L) {
  lua_pushstring(L, "Attempt to modify a readonly table");
  return lua_error(L);
}

// The base library's table functions. Each makes the original's argument
// checks itself first (so their messages name the function and the
// script's line), then sees through a proxy or refuses to write one.
int RawSet(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  luaL_checkany(L, 3);
  if (IsReadOnlyProxy(L, 1)) return RaiseReadOnly(L);
  return g_rawset(L);
}

int RawGet(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  ReplaceReadOnlyProxy(L, 1);
  return g_rawget(L);
}

int Next(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  ReplaceReadOnlyProxy(L, 1);
  return g_next(L);
}

// pairs(t): the wrapped next (upvalue 1), t, nil.
int Pairs(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

// loadstring(s [, name]): a precompiled chunk (it starts with ESC) is
// refused as Redis's Lua refuses it; anything else is the original's.
int LoadString(lua_State* L) {
  size_t n = 0;
  const char* s = luaL_checklstring(L, 1, &n);
  if (n > 0 && s[0] == '\033') {
    lua_pushnil(L);
    lua_pushstring(L, "binary code not allowed");
    return 2;
  }
  return g_loadstring(L);
}

// The reader load() gets in place of the script's: upvalue 1 the script's
// reader, upvalue 2 whether its first non-empty piece is still to come.
int GuardedReader(lua_State* L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_call(L, 0, 1);
  if (lua_toboolean(L, lua_upvalueindex(2)) && lua_type(L, -1) == LUA_TSTRING && lua_objlen(L, -1) > 0) {
    lua_pushboolean(L, 0);
    lua_replace(L, lua_upvalueindex(2));
    if (lua_tostring(L, -1)[0] == '\033') {
      lua_pushstring(L, "binary code not allowed");  // (load answers nil and this)
      return lua_error(L);
    }
  }
  return 1;
}

// load(f [, name]): the original's check of f, then the original with f's
// pieces seen first by GuardedReader.
int Load(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_pushvalue(L, 1);
  lua_pushboolean(L, 1);
  lua_pushcclosure(L, GuardedReader, 2);
  lua_replace(L, 1);
  return g_load(L);
}

// getmetatable(v): the original's argument check, then the sandbox's Lua
// getmetatable (upvalue 1), which answers views of protected metatables.
int GetMetatable(lua_State* L) {
  luaL_checkany(L, 1);
  lua_settop(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, 1, 1);
  return 1;
}

// setmetatable(t, m): a proxy as m is set as its real table (Lua reads
// metatables raw); the sandbox's getmetatable answers the proxy again.
int SetMetatable(lua_State* L) {
  const int type = lua_type(L, 2);
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_argcheck(L, type == LUA_TNIL || type == LUA_TTABLE, 2, "nil or table expected");
  if (IsReadOnlyProxy(L, 1)) return RaiseReadOnly(L);
  if (type == LUA_TTABLE) ReplaceReadOnlyProxy(L, 2);
  return g_setmetatable(L);
}

int TableInsert(lua_State* L) {
  if (IsReadOnlyProxy(L, 1)) {
    // The original's argument checks come before its write, so first
    // theirs (in this frame: the same messages and position).
    const int n = lua_gettop(L);
    if (n != 2 && n != 3) return luaL_error(L, "wrong number of arguments to 'insert'");
    if (n == 3) luaL_checkint(L, 2);
    return RaiseReadOnly(L);
  }
  return g_table_insert(L);
}

int TableForeach(lua_State* L) {
  ReplaceReadOnlyProxy(L, 1);
  return g_table_foreach(L);
}

// Replaces, in the table at `root` and every table it reaches through values,
// each proxy value by its real table (rawset on an existing key: no table
// changes shape, so none changes its iteration order), and appends each
// change (table, key, proxy) to the list at `undo`. Returns whether any was
// made. The walk keeps its own list of tables to visit (no C recursion).
bool SwapProxies(lua_State* L, int root, int undo) {
  luaL_checkstack(L, 8, "in function cjson.encode");
  lua_getfield(L, LUA_REGISTRYINDEX, kProxiesKey);
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    return false;
  }
  const int proxies = lua_gettop(L);
  lua_newtable(L);
  const int visited = lua_gettop(L);
  lua_newtable(L);
  const int pending = lua_gettop(L);
  int npending = 0, nundo = 0;
  bool swapped = false;
  lua_pushvalue(L, root);
  lua_rawseti(L, pending, ++npending);
  while (npending > 0) {
    lua_rawgeti(L, pending, npending);
    lua_pushnil(L);
    lua_rawseti(L, pending, npending--);
    const int t = lua_gettop(L);
    lua_pushvalue(L, t);
    lua_rawget(L, visited);
    const bool seen = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (seen) {
      lua_pop(L, 1);
      continue;
    }
    lua_pushvalue(L, t);
    lua_pushboolean(L, 1);
    lua_rawset(L, visited);
    lua_pushnil(L);
    while (lua_next(L, t) != 0) {  // key value
      if (lua_istable(L, -1)) {
        lua_pushvalue(L, -1);
        lua_rawget(L, proxies);  // key value real|nil
        if (!lua_isnil(L, -1)) {
          lua_pushvalue(L, t);
          lua_rawseti(L, undo, ++nundo);
          lua_pushvalue(L, -3);
          lua_rawseti(L, undo, ++nundo);
          lua_pushvalue(L, -2);
          lua_rawseti(L, undo, ++nundo);
          lua_pushvalue(L, -3);  // key value real key
          lua_pushvalue(L, -2);  // key value real key real
          lua_rawset(L, t);      // an existing key: allowed during lua_next
          lua_replace(L, -2);    // key real
          swapped = true;
        } else {
          lua_pop(L, 1);
        }
        lua_pushvalue(L, -1);
        lua_rawseti(L, pending, ++npending);
      }
      lua_pop(L, 1);  // key
    }
    lua_pop(L, 1);  // t
  }
  lua_settop(L, proxies - 1);
  return swapped;
}

// SwapProxies(root, undo) in protected mode: arguments 1 and 2; returns the
// boolean. An error (out of memory) leaves the swaps made so far in undo.
int SwapProxiesProtected(lua_State* L) {
  lua_pushboolean(L, SwapProxies(L, 1, 2));
  return 1;
}

// Puts back what SwapProxies changed, last change first (a change it was
// recording when an error stopped it is not whole: left out, and not made).
void RestoreProxies(lua_State* L, int undo) {
  luaL_checkstack(L, 3, "in function cjson.encode");
  const int recorded = static_cast<int>(lua_objlen(L, undo));
  for (int i = recorded - recorded % 3; i >= 3; i -= 3) {
    lua_rawgeti(L, undo, i - 2);  // t
    lua_rawgeti(L, undo, i - 1);  // key
    lua_rawgeti(L, undo, i);      // proxy
    lua_rawset(L, -3);
    lua_pop(L, 1);
  }
}

// Raises again the error on top, which the original encode raised inside
// lua_pcall. Its luaL_error named the position of its caller, this wrapper
// (none: a C function); called directly it would have named the script's
// line, which is this wrapper's caller: that position is put in front.
int RaiseEncodeError(lua_State* L, int status) {
  if (status == LUA_ERRRUN && lua_type(L, -1) == LUA_TSTRING) {
    luaL_where(L, 1);
    lua_insert(L, -2);
    lua_concat(L, 2);
  }
  return lua_error(L);
}

// cjson.encode(v). Upvalue 1: the library's configuration, the original's
// own upvalue, so that the original runs in this frame (its errors name the
// script's line, as when called directly); upvalue 2: the original. A proxy
// encodes as "{}" (its own table is empty), possibly where its real table
// would raise an error; so only a result with "{}" in it makes the wrapper
// look for proxies, and with some found, encode again with the real tables.
// (An error the first encode raises stands: a value can have two reasons to
// fail, one inside a proxy's table, and then which one cjson meets first may
// differ from Redis; no check pays for that case.)
int CjsonEncode(lua_State* L) {
  g_cjson_encode(L);  // arg, result (or an error raised from here)
  size_t n = 0;
  const char* s = lua_tolstring(L, -1, &n);
  if (s == nullptr || memmem(s, n, "{}", 2) == nullptr) return 1;
  lua_settop(L, 2);
  bool swapped = ReplaceReadOnlyProxy(L, 1);
  lua_newtable(L);  // arg, result, undo
  if (lua_istable(L, 1)) {
    // Protected, so that whatever it swapped is put back even when it fails:
    // a real table left behind would be writable for every later script.
    lua_pushcfunction(L, SwapProxiesProtected);
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 3);
    const int walked = lua_pcall(L, 2, 1, 0);  // arg, result, undo, swapped|error
    if (walked != 0) {
      RestoreProxies(L, 3);
      return lua_error(L);
    }
    swapped = lua_toboolean(L, -1) || swapped;
    lua_pop(L, 1);
  }
  if (!swapped) {
    lua_settop(L, 2);
    return 1;
  }
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_pushvalue(L, 1);
  const int status = lua_pcall(L, 1, 1, 0);  // arg, result, undo, result|error
  RestoreProxies(L, 3);
  if (status != 0) return RaiseEncodeError(L, status);
  return 1;
}

lua_CFunction Wrap(lua_State* L, int lib, const char* name, lua_CFunction wrapper);

// cjson.new(): a new instance of the library, whose encode (and new) are
// wrapped as the library's own. Upvalues as Wrap's.
int CjsonNew(lua_State* L) {
  g_cjson_new(L);  // ..., the instance
  Wrap(L, -1, "encode", CjsonEncode);
  Wrap(L, -1, "new", CjsonNew);
  return 1;
}

// Replaces the function `name` of the table at `lib` by `wrapper`, whose
// upvalues are the original's first upvalue (nil when none) and the original;
// returns the original's C function.
lua_CFunction Wrap(lua_State* L, int lib, const char* name, lua_CFunction wrapper) {
  if (lib < 0 && lib > LUA_REGISTRYINDEX) lib = lua_gettop(L) + lib + 1;  // (not a pseudo-index)
  lua_getfield(L, lib, name);
  const lua_CFunction original = lua_tocfunction(L, -1);
  if (lua_getupvalue(L, -1, 1) == nullptr) lua_pushnil(L);
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, wrapper, 2);
  lua_setfield(L, lib, name);
  lua_pop(L, 1);
  return original;
}

}  // namespace

void SetReadOnlyProxies(lua_State* L, int proxies) {
  lua_pushvalue(L, proxies);
  lua_setfield(L, LUA_REGISTRYINDEX, kProxiesKey);
}

bool ReplaceReadOnlyProxy(lua_State* L, int index) {
  if (!lua_istable(L, index) || !lua_checkstack(L, 2)) return false;
  if (index < 0) index = lua_gettop(L) + index + 1;
  lua_getfield(L, LUA_REGISTRYINDEX, kProxiesKey);
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    return false;
  }
  lua_pushvalue(L, index);
  lua_rawget(L, -2);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 2);
    return false;
  }
  lua_replace(L, index);
  lua_pop(L, 1);
  return true;
}

void GuardLibrariesAgainstProxies(lua_State* L, int table, int cjson) {
  g_table_insert = Wrap(L, table, "insert", TableInsert);
  g_table_foreach = Wrap(L, table, "foreach", TableForeach);
  g_cjson_encode = Wrap(L, cjson, "encode", CjsonEncode);
  g_cjson_new = Wrap(L, cjson, "new", CjsonNew);
}

void GuardBaseFunctionsAgainstProxies(lua_State* L) {
  g_rawset = Wrap(L, LUA_GLOBALSINDEX, "rawset", RawSet);
  g_rawget = Wrap(L, LUA_GLOBALSINDEX, "rawget", RawGet);
  g_next = Wrap(L, LUA_GLOBALSINDEX, "next", Next);
  g_setmetatable = Wrap(L, LUA_GLOBALSINDEX, "setmetatable", SetMetatable);
  lua_pushcfunction(L, Next);  // (a closure of its own, as Lua's pairs has: not == next)
  lua_pushcclosure(L, Pairs, 1);
  lua_setglobal(L, "pairs");
}

void GuardLoaders(lua_State* L) {
  g_loadstring = Wrap(L, LUA_GLOBALSINDEX, "loadstring", LoadString);
  g_load = Wrap(L, LUA_GLOBALSINDEX, "load", Load);
}

void GuardGetmetatable(lua_State* L) {
  lua_getglobal(L, "getmetatable");
  lua_pushcclosure(L, GetMetatable, 1);
  lua_setglobal(L, "getmetatable");
}

}  // namespace ringkv::server::scripting

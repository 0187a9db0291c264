#include "server/scripting/lua_engine.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/strings.h"
#include "core/sha1.h"
#include "io/reply_builder.h"
#include "server/scripting/lua_internal.h"
#include "server/scripting/lua_libs.h"
#include "server/scripting/lua_readonly.h"
#include "server/scripting/lua_reply.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
int luaopen_cjson(lua_State* L);
int luaopen_bit(lua_State* L);
}

namespace ringkv::server::scripting {
namespace {

// Registry keys (kEngineKey: lua_internal.h).
constexpr char kRealGlobalsKey[] = "ringkv_globals";
constexpr char kHandlerKey[] = "ringkv_err_handler";
constexpr char kLoadGlobalsKey[] = "ringkv_load_globals";  // functions: all a library sees while it loads
constexpr char kGlobalsMetaKey[] = "ringkv_globals_meta";  // the globals proxy's metatable

// Instructions between two calls of the hook (busy check, kill), as Redis.
constexpr int kHookInstructions = 100000;
// A library's code must finish loading within this (Redis's load timeout).
constexpr int64_t kLoadTimeoutMs = 500;

// What scripts may see of the globals (Redis 7.0's allow lists).
constexpr const char* kAllowedGlobals[] = {
    "_G", "_VERSION", "__redis__err__handler", "assert", "bit", "cjson", "cmsgpack", "collectgarbage",
    "coroutine", "error", "gcinfo", "getmetatable", "ipairs", "load", "loadstring", "math", "next", "pairs",
    "pcall", "rawequal", "rawget", "rawset", "redis", "select", "setmetatable", "string", "struct", "table",
    "tonumber", "tostring", "type", "unpack", "xpcall"};
// The tables made read-only (besides the globals themselves).
constexpr const char* kLibraryTables[] = {"bit", "cjson", "cmsgpack", "coroutine", "math",
                                          "string", "struct", "table"};

// The sandbox, run once with the real globals as its environment. It
// returns the read-only proxy that becomes the scripts' global table, a
// function that makes a read-only proxy of a table, one that answers the
// table a proxy stands for, and the map of proxies to those tables (for the
// C libraries: lua_readonly.h).
constexpr char kSandboxLua[] = R"lua(
local proxies = setmetatable({}, {__mode = 'k'})
-- known_as[t]: the proxy scripts know a protected table t as (its first).
local known_as = setmetatable({}, {__mode = 'k'})
local raw_setmt, raw_error, raw_tostring = setmetatable, error, tostring
local function refuse() raw_error('Attempt to modify a readonly table', 2) end
local function protect(t)
  local p = {}
  local mt = {__index = t, __newindex = refuse}
  -- getmetatable() sees the metatable through a read-only view of it.
  local view = raw_setmt({}, {__index = mt, __newindex = refuse, __metatable = false})
  proxies[view] = mt
  mt.__metatable = view
  raw_setmt(p, mt)
  proxies[p] = t
  if known_as[t] == nil then known_as[t] = p end
  return p
end
-- rawset, rawget, next, pairs and setmetatable see through the proxies
-- (C wrappers: lua_readonly.h). A protected table set as a metatable is set
-- as itself (Lua reads metatables raw, and would find the proxy empty);
-- getmetatable answers the proxy again (known_as), so no script gets hold
-- of the real table.
-- No precompiled chunks: bytecode is not verified by Lua 5.1 and can
-- corrupt the interpreter. Redis's Lua refuses them the same way
-- (loadstring and load: C wrappers, lua_readonly.h).
local dbg = debug
__redis__err__handler = function(err)
  -- The frame that raised it: C functions and this sandbox's own Lua
  -- (read-only tables, missing globals) are skipped for the user's code.
  local level = 2
  local i = dbg.getinfo(level, 'nSl')
  while i and (i.what == 'C' or i.source == '=sandbox') do
    level = level + 1
    i = dbg.getinfo(level, 'nSl')
  end
  if type(err) ~= 'table' then
    err = {err = 'ERR ' .. raw_tostring(err)}
  end
  if i then
    err['source'] = i.source
    err['line'] = i.currentline
  end
  return err
end
local globals = _G
raw_setmt(globals, {__index = function(_, k)
  raw_error("Script attempted to access nonexistent global variable '" .. raw_tostring(k) .. "'", 2)
end})
-- unwrap(t): the table a read-only proxy (or metatable view) stands for; nil
-- for any other value.
local function unwrap(t) return proxies[t] end
local function known(t) return known_as[t] end
return protect(globals), protect, unwrap, proxies, known
)lua";

// Run after the libraries are protected, with protect(), the real
// getmetatable, the protected string library, unwrap() and known(). getmetatable()
// answers as Redis's read-only tables do: for a protected table, the
// metatable of what it protects (nil for the libraries, the missing-global
// __index for _G), and for strings their metatable, each through a
// read-only view.
constexpr char kStringMetatableLua[] = R"lua(
local protect, raw_getmt, string_lib, unwrap, known = ...
local mt = raw_getmt('')
mt.__index = string_lib
local string_view = protect(mt)
local views = setmetatable({}, {__mode = 'k'})
local raw_type = type
getmetatable = function(v)
  if raw_type(v) == 'string' then return string_view end
  local real = unwrap(v)
  if real == nil then
    local m = raw_getmt(v)
    return m ~= nil and known(m) or m
  end
  local m = raw_getmt(real)
  if m == nil then return nil end
  local view = views[m]
  if view == nil then
    view = protect(m)
    views[m] = view
  end
  return view
end
)lua";

// ---- rand48, as Redis's math.random -------------------------------------------

struct Rand48 {
  uint64_t x = 0x330E;
  void Seed(int32_t seed) { x = (static_cast<uint64_t>(static_cast<uint32_t>(seed)) << 16) | 0x330E; }
  int32_t Next() {
    x = (0x5DEECE66DULL * x + 0xB) & ((1ULL << 48) - 1);
    return static_cast<int32_t>(x >> 17);
  }
};
Rand48 g_rand;  // main thread only, as the engines

int MathRandom(lua_State* L) {
  constexpr int32_t kMax = 2147483647;
  const lua_Number r = static_cast<lua_Number>(g_rand.Next() % kMax) / static_cast<lua_Number>(kMax);
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, r);
      break;
    case 1: {
      const int u = luaL_checkint(L, 1);
      luaL_argcheck(L, 1 <= u, 1, "interval is empty");
      lua_pushnumber(L, std::floor(r * u) + 1);
      break;
    }
    case 2: {
      const int l = luaL_checkint(L, 1);
      const int u = luaL_checkint(L, 2);
      luaL_argcheck(L, l <= u, 2, "interval is empty");
      lua_pushnumber(L, std::floor(r * (u - l + 1)) + l);
      break;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
  return 1;
}

int MathRandomSeed(lua_State* L) {
  g_rand.Seed(static_cast<int32_t>(luaL_checkint(L, 1)));
  return 0;
}

// Redis 7.0's global pcall: Lua's, except that a caught error table with an
// `err` field gives its message, so `pcall(redis.call, ...)` returns the
// error text as it did when redis.call raised a string.
int RedisPcall(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc == 0) {  // Lua's pcall would complain; Redis's calls nothing
    lua_pushboolean(L, 0);
    lua_pushstring(L, "attempt to call a nil value");
    return 2;
  }
  lua_pushboolean(L, 1);  // the result, in front of the returned values
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != 0) {
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) {
        lua_replace(L, -2);
      } else {
        lua_pop(L, 1);
      }
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

int64_t MonotonicMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace

void RaiseString(lua_State* L, const char* msg) {
  lua_pushstring(L, msg);
  lua_error(L);
  __builtin_unreachable();
}

void RaiseErrorTable(lua_State* L, const char* msg) {
  PushErrorTable(L, msg);
  lua_error(L);
  __builtin_unreachable();
}

LuaEngine* EngineOf(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kEngineKey);
  auto* e = static_cast<LuaEngine*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return e;
}

void LuaEngine::Hook(lua_State* L, lua_Debug*) {
  LuaEngine* e = EngineOf(L);
  if (e->registering_ != nullptr) {
    if (MonotonicMs() - e->load_start_ms_ > kLoadTimeoutMs) {
      lua_sethook(L, Hook, LUA_MASKLINE, 0);  // pcall cannot catch it for long
      RaiseString(L, "FUNCTION LOAD timeout");
    }
    return;
  }
  ScriptRun* run = e->current_;
  if (run == nullptr) return;
  if (run->killed || e->host_->OnScriptHook(*run)) {
    // From now on on every line, so a script that catches the error with
    // pcall cannot keep running.
    lua_sethook(L, Hook, LUA_MASKLINE, 0);
    PushErrorTable(L, "Script killed by user with SCRIPT KILL...");
    lua_error(L);
  }
}

LuaEngine::LuaEngine(Kind kind, ScriptHost* host) : kind_(kind), host_(host) {
  L_ = luaL_newstate();
  lua_pushlightuserdata(L_, this);
  lua_setfield(L_, LUA_REGISTRYINDEX, kEngineKey);
  OpenLibraries();
  InstallRedisApi();
  Protect();
  lua_createtable(L_, static_cast<int>(name_cache_.size()), 0);
  names_ref_ = luaL_ref(L_, LUA_REGISTRYINDEX);
  gc_trigger_kb_ = lua_gc(L_, LUA_GCCOUNT, 0) + kGcSlackKb;
}

LuaEngine::~LuaEngine() { lua_close(L_); }

size_t LuaEngine::memory() const {
  return static_cast<size_t>(lua_gc(L_, LUA_GCCOUNT, 0)) * 1024 + static_cast<size_t>(lua_gc(L_, LUA_GCCOUNTB, 0));
}

void LuaEngine::OpenLibraries() {
  // Each opener returns its table; it becomes the global of its name
  // (openers differ on whether they set it themselves).
  const std::pair<const char*, lua_CFunction> libs[] = {
      {"_G", luaopen_base},           {LUA_TABLIBNAME, luaopen_table}, {LUA_STRLIBNAME, luaopen_string},
      {LUA_MATHLIBNAME, luaopen_math}, {LUA_DBLIBNAME, luaopen_debug}, {"cjson", luaopen_cjson},
      {"bit", luaopen_bit},           {"struct", OpenStruct},          {"cmsgpack", OpenCmsgpack},
  };
  for (const auto& [name, open] : libs) {
    lua_pushcfunction(L_, open);
    lua_pushstring(L_, name);
    lua_call(L_, 1, 1);
    if (lua_istable(L_, -1)) {
      lua_setglobal(L_, name);
    } else {
      lua_pop(L_, 1);
    }
  }
  lua_pushcfunction(L_, RedisPcall);
  lua_setglobal(L_, "pcall");
  // math.random: Redis's rand48 (seeded once; math.randomseed reseeds).
  lua_getglobal(L_, "math");
  lua_pushcfunction(L_, MathRandom);
  lua_setfield(L_, -2, "random");
  lua_pushcfunction(L_, MathRandomSeed);
  lua_setfield(L_, -2, "randomseed");
  lua_pop(L_, 1);
  static bool seeded = false;
  if (!seeded) {
    g_rand.Seed(static_cast<int32_t>(std::random_device{}()));
    seeded = true;
  }
}

void LuaEngine::Protect() {
  // Drop every global the allow list does not name.
  std::vector<std::string> drop;
  lua_pushnil(L_);
  while (lua_next(L_, LUA_GLOBALSINDEX) != 0) {
    lua_pop(L_, 1);
    if (lua_type(L_, -1) != LUA_TSTRING) continue;
    const std::string name = lua_tostring(L_, -1);
    bool allowed = name == "debug";  // the sandbox's error handler takes it, then it goes
    for (const char* a : kAllowedGlobals) allowed = allowed || name == a;
    if (!allowed) drop.push_back(name);
  }
  for (const std::string& name : drop) {
    lua_pushnil(L_);
    lua_setglobal(L_, name.c_str());
  }
  lua_pushvalue(L_, LUA_GLOBALSINDEX);
  lua_setfield(L_, LUA_REGISTRYINDEX, kRealGlobalsKey);
  lua_pushvalue(L_, LUA_GLOBALSINDEX);
  globals_ref_ = luaL_ref(L_, LUA_REGISTRYINDEX);
  if (luaL_loadbuffer(L_, kSandboxLua, sizeof(kSandboxLua) - 1, "=sandbox") != 0 || lua_pcall(L_, 0, 5, 0) != 0) {
    std::abort();  // the sandbox is part of the binary: it always compiles
  }
  // Stack: proxy of the globals, protect(), unwrap(), the proxies' map, known().
  SetReadOnlyProxies(L_, -2);
  lua_remove(L_, -2);
  lua_getglobal(L_, "table");  // (the real libraries: protect_field has not replaced them yet)
  lua_getglobal(L_, "cjson");
  GuardLibrariesAgainstProxies(L_, -2, -1);
  lua_pop(L_, 2);
  GuardBaseFunctionsAgainstProxies(L_);
  GuardLoaders(L_);
  const int known = lua_gettop(L_);
  const int unwrap = known - 1;
  const int protect = unwrap - 1;
  const int globals_proxy = protect - 1;
  lua_getglobal(L_, "__redis__err__handler");
  lua_pushvalue(L_, -1);
  lua_setfield(L_, LUA_REGISTRYINDEX, kHandlerKey);
  handler_ref_ = luaL_ref(L_, LUA_REGISTRYINDEX);
  lua_pushnil(L_);
  lua_setglobal(L_, "debug");
  if (kind_ == Kind::kFunctions) {  // a global of EVAL's only, as in Redis
    lua_pushnil(L_);
    lua_setglobal(L_, "__redis__err__handler");
  }
  auto protect_field = [&](int table, const char* name) {
    lua_pushvalue(L_, protect);
    lua_getfield(L_, table, name);
    lua_call(L_, 1, 1);
    lua_setfield(L_, table, name);  // raw: the real table has no __newindex
  };
  for (const char* name : kLibraryTables) protect_field(LUA_GLOBALSINDEX, name);
  protect_field(LUA_GLOBALSINDEX, "redis");
  // The strings' metatable, which ('x'):upper() looks in, is shared by every
  // script: it reads the read-only string library, and getmetatable('')
  // answers a read-only view of it, so that no script changes what string
  // methods do for the scripts after it (Redis makes it read-only).
  if (luaL_loadbuffer(L_, kStringMetatableLua, sizeof(kStringMetatableLua) - 1, "=sandbox") != 0) std::abort();
  lua_pushvalue(L_, protect);
  lua_getglobal(L_, "getmetatable");
  lua_getglobal(L_, "string");
  lua_pushvalue(L_, unwrap);
  lua_pushvalue(L_, known);
  lua_call(L_, 5, 0);
  GuardGetmetatable(L_);
  if (kind_ == Kind::kFunctions) {
    // The load-time API: a missing field is an error naming it.
    lua_getfield(L_, LUA_REGISTRYINDEX, kLoadApiKey);
    const int load_api = lua_gettop(L_);
    lua_getmetatable(L_, LUA_GLOBALSINDEX);  // the real globals' metatable: the same __index error
    lua_setmetatable(L_, load_api);
    lua_pushvalue(L_, protect);
    lua_pushvalue(L_, load_api);
    lua_call(L_, 1, 1);
    lua_setfield(L_, LUA_REGISTRYINDEX, kLoadApiKey);
    lua_pop(L_, 1);
    // While a library loads, its globals are `redis` (the load-time API)
    // and nothing else: the globals proxy looks there instead.
    lua_newtable(L_);
    lua_getfield(L_, LUA_REGISTRYINDEX, kLoadApiKey);
    lua_setfield(L_, -2, "redis");
    lua_getmetatable(L_, LUA_GLOBALSINDEX);
    lua_setmetatable(L_, -2);
    lua_setfield(L_, LUA_REGISTRYINDEX, kLoadGlobalsKey);
  }
  lua_getmetatable(L_, globals_proxy);
  lua_setfield(L_, LUA_REGISTRYINDEX, kGlobalsMetaKey);
  lua_pushvalue(L_, globals_proxy);
  lua_setfield(L_, LUA_GLOBALSINDEX, "_G");
  lua_pushvalue(L_, globals_proxy);
  lua_replace(L_, LUA_GLOBALSINDEX);
  lua_settop(L_, 0);
}

namespace {

// Code with a "#!..." first line: the line is blanked (the engine's
// options were read from it), so line numbers stay the user's.
std::string WithoutShebang(std::string_view code) {
  std::string body(code);
  if (body.starts_with("#!")) {
    const size_t eol = body.find('\n');
    body.erase(0, eol == std::string::npos ? body.size() : eol);
  }
  return body;
}

}  // namespace

absl::StatusOr<int> LuaEngine::CompileScript(std::string_view body) {
  const std::string code = WithoutShebang(body);
  if (luaL_loadbuffer(L_, code.data(), code.size(), "@user_script") != 0) {
    std::string err = StrCat("ERR Error compiling script (new function): ", lua_tostring(L_, -1));
    lua_pop(L_, 1);
    return absl::InvalidArgumentError(err);
  }
  return luaL_ref(L_, LUA_REGISTRYINDEX);
}

namespace {

void PushArgs(lua_State* L, Argv args) {
  lua_createtable(L, static_cast<int>(args.size()), 0);
  for (size_t i = 0; i < args.size(); ++i) {
    lua_pushlstring(L, args[i].data(), args[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

}  // namespace

void LuaEngine::RunScript(ScriptRun& run, int ref, Argv keys, Argv args, io::ReplyBuilder& rb) {
  lua_rawgeti(L_, LUA_REGISTRYINDEX, globals_ref_);
  PushArgs(L_, keys);
  lua_setfield(L_, -2, "KEYS");
  PushArgs(L_, args);
  lua_setfield(L_, -2, "ARGV");
  lua_pop(L_, 1);
  lua_rawgeti(L_, LUA_REGISTRYINDEX, handler_ref_);
  lua_rawgeti(L_, LUA_REGISTRYINDEX, ref);
  Run(run, 0, rb);
}

void LuaEngine::RunFunction(ScriptRun& run, int callback_ref, Argv keys, Argv args, io::ReplyBuilder& rb) {
  lua_rawgeti(L_, LUA_REGISTRYINDEX, handler_ref_);
  lua_rawgeti(L_, LUA_REGISTRYINDEX, callback_ref);
  PushArgs(L_, keys);
  PushArgs(L_, args);
  Run(run, 2, rb);
}

void LuaEngine::Run(ScriptRun& run, int nargs, io::ReplyBuilder& rb) {
  // Stack: handler, function, args...
  const int handler = lua_gettop(L_) - nargs - 1;
  current_ = &run;
  lua_sethook(L_, Hook, LUA_MASKCOUNT, kHookInstructions);
  const int status = lua_pcall(L_, nargs, 1, handler);
  lua_sethook(L_, nullptr, 0, 0);
  current_ = nullptr;
  if (status != 0) {
    ReplyError(run, rb);
  } else {
    WriteLuaAsReply(L_, rb, run.resp);
  }
  lua_settop(L_, handler - 1);
  CollectGarbage();
}

void LuaEngine::CollectGarbage() {
  // Explicit incremental steps keep the heap near its live size without a
  // full collection's pause (the allocation-driven collector runs besides,
  // as in Redis); stepping by the garbage made rather than by the number of
  // runs lets each cycle's mark of the live heap pay for more of it.
  const int heap_kb = lua_gc(L_, LUA_GCCOUNT, 0);
  if (heap_kb < gc_trigger_kb_) return;
  if (lua_gc(L_, LUA_GCSTEP, kGcStepKb) == 1) {  // a cycle ended
    const int left_kb = lua_gc(L_, LUA_GCCOUNT, 0);
    gc_trigger_kb_ = left_kb + std::max(kGcSlackKb, left_kb / 2);
  }
}

const CommandSpec* LuaEngine::CommandNamed(lua_State* L, std::string_view name) {
  const uint64_t address = reinterpret_cast<uintptr_t>(name.data());
  const size_t slot = (address * 0x9E3779B97F4A7C15ULL) >> (64 - kNameCacheBits);
  NamedCommand& entry = name_cache_[slot];
  if (entry.name == name.data()) return entry.command;
  entry.command = host_->FindCommand(name);
  entry.name = name.data();
  // Anchor the name in the slot (releasing the one it replaces).
  lua_rawgeti(L, LUA_REGISTRYINDEX, names_ref_);
  lua_pushvalue(L, 1);
  lua_rawseti(L, -2, static_cast<int>(slot) + 1);
  lua_pop(L, 1);
  return entry.command;
}

void LuaEngine::ReplyError(ScriptRun& run, io::ReplyBuilder& rb) {
  if (!lua_istable(L_, -1)) {
    const char* msg = lua_tostring(L_, -1);
    rb.Error(StrCat("ERR Error running script ", run.name, ", ", msg == nullptr ? "execution failure" : msg));
    return;
  }
  lua_getfield(L_, -1, "err");
  std::string msg = lua_isstring(L_, -1) ? lua_tostring(L_, -1) : "";
  lua_pop(L_, 1);
  lua_getfield(L_, -1, "source");
  const std::string source = lua_isstring(L_, -1) ? lua_tostring(L_, -1) : "";
  lua_pop(L_, 1);
  lua_getfield(L_, -1, "line");
  const std::string line = lua_isstring(L_, -1) ? lua_tostring(L_, -1) : "";
  lua_pop(L_, 1);
  if (!source.empty() && !line.empty()) StrAppend(&msg, " script: ", run.name, ", on ", source, ":", line, ".");
  for (char& ch : msg) {
    if (ch == '\r' || ch == '\n') ch = ' ';
  }
  // redis.call's error: counted when the command replied it.
  if (ErrorCounted(L_)) {
    rb.ErrorNoStats(msg);
  } else {
    rb.Error(msg);
  }
}

absl::Status LuaEngine::LoadLibrary(std::string_view code, std::vector<Registration>* registered) {
  const std::string body = WithoutShebang(code);
  if (luaL_loadbuffer(L_, body.data(), body.size(), "@user_function") != 0) {
    std::string err = StrCat("ERR Error compiling function: ", lua_tostring(L_, -1));
    lua_pop(L_, 1);
    return absl::InvalidArgumentError(err);
  }
  const int chunk = lua_gettop(L_);
  lua_getfield(L_, LUA_REGISTRYINDEX, kHandlerKey);
  lua_insert(L_, chunk);  // handler below the chunk
  // While the library loads, its globals are the load-time ones.
  auto globals_lookup = [this](const char* key) {
    lua_getfield(L_, LUA_REGISTRYINDEX, kGlobalsMetaKey);
    lua_pushstring(L_, "__index");
    lua_getfield(L_, LUA_REGISTRYINDEX, key);
    lua_rawset(L_, -3);
    lua_pop(L_, 1);
  };
  globals_lookup(kLoadGlobalsKey);
  registering_ = registered;
  load_start_ms_ = MonotonicMs();
  lua_sethook(L_, Hook, LUA_MASKCOUNT, kHookInstructions);
  const int status = lua_pcall(L_, 0, 0, chunk);
  lua_sethook(L_, nullptr, 0, 0);
  registering_ = nullptr;
  globals_lookup(kRealGlobalsKey);
  if (status != 0) {
    std::string msg;
    if (lua_istable(L_, -1)) {
      lua_getfield(L_, -1, "err");
      msg = lua_isstring(L_, -1) ? lua_tostring(L_, -1) : "";
      lua_pop(L_, 1);
    } else if (lua_isstring(L_, -1)) {
      msg = lua_tostring(L_, -1);
    }
    lua_settop(L_, chunk - 1);
    for (const Registration& r : *registered) Unref(r.callback_ref);
    registered->clear();
    return absl::InvalidArgumentError(StrCat("ERR Error registering functions: ", msg));
  }
  lua_settop(L_, chunk - 1);
  return absl::OkStatus();
}

void LuaEngine::Unref(int ref) { luaL_unref(L_, LUA_REGISTRYINDEX, ref); }

std::string Sha1Hex(std::string_view s) {
  core::Sha1 sha;
  sha.Update(s);
  const auto digest = sha.Final();
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(40, '0');
  for (size_t i = 0; i < digest.size(); ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 15];
  }
  return out;
}

}  // namespace ringkv::server::scripting

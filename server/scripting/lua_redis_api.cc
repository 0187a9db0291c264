// The `redis` table scripts see: its C functions and LuaEngine::InstallRedisApi.
// Split from lua_engine.cc (the interpreter, sandbox and runs). The API
// functions are C closures whose one upvalue is their engine (a registry
// lookup by name per redis.call showed in profiles).
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "core/strings.h"
#include "io/reply_builder.h"
#include "server/scripting/lua_engine.h"
#include "server/scripting/lua_internal.h"
#include "server/scripting/lua_reply.h"
#include "server/version.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

namespace ringkv::server::scripting {

// The `redis` API's C functions (they reach the engine through the registry).
struct LuaApi {
  static LuaEngine* Engine(lua_State* L) { return static_cast<LuaEngine*>(lua_touserdata(L, lua_upvalueindex(1))); }

  // redis.call / redis.pcall
  static int Command(lua_State* L, bool raise) {
    LuaEngine* e = Engine(L);
    const int argc = lua_gettop(L);
    auto fail = [&](std::string_view error) -> int {
      PushErrorTable(L, error);
      if (raise) lua_error(L);
      return 1;
    };
    if (argc == 0) return fail("Please specify at least one argument for this redis lib call");
    ScriptRun* run = e->current_;
    if (run == nullptr) return fail("redis.call/pcall can only be called inside a script invocation");
    // Arguments as views of the Lua strings on the stack (numbers are
    // formatted as Redis formats them, into owned buffers).
    std::vector<std::string_view>& argv = e->call_argv_;
    std::vector<std::string>& numbers = e->call_numbers_;
    argv.clear();
    numbers.clear();
    numbers.reserve(static_cast<size_t>(argc));  // views into it must not move
    bool name_is_string = false;
    for (int i = 1; i <= argc; ++i) {
      const int type = lua_type(L, i);
      if (i == 1) name_is_string = type == LUA_TSTRING;
      if (type == LUA_TNUMBER) {
        char buf[40];
        const int n = io::FormatDouble(lua_tonumber(L, i), buf);
        numbers.emplace_back(buf, static_cast<size_t>(n));
        argv.emplace_back(numbers.back());
      } else if (type == LUA_TSTRING) {
        size_t len;
        const char* s = lua_tolstring(L, i, &len);
        argv.emplace_back(s, len);
      } else {
        return fail("Lua redis lib command arguments must be strings or integers");
      }
    }
    const CommandSpec* command =
        name_is_string ? e->CommandNamed(L, argv[0]) : e->host_->FindCommand(argv[0]);
    io::OutBuffer& out = e->call_out_;
    out.Rewind();  // empty even if an exception (a Lua memory error) left the last call's reply in it
    e->host_->Call(*run, command, argv, out);
    // The arguments are done with: their stack room is the reply's (a call
    // with thousands of arguments leaves none otherwise).
    lua_settop(L, 0);
    // A reply in one chunk (nearly all) is read where it is; a longer one
    // is copied out in one piece first.
    std::string_view reply = out.Front();
    if (out.MultiLink()) {
      e->call_reply_ = out.ToString();
      reply = e->call_reply_;
    }
    const bool converted = PushRespAsLua(L, reply);
    const bool is_error = !reply.empty() && reply[0] == '-';
    out.Rewind();  // before a raise unwinds past this frame
    if (!converted) return fail("reply from the command could not be converted");
    if (raise && is_error) lua_error(L);
    return 1;
  }
  static int Call(lua_State* L) { return Command(L, true); }
  static int PCall(lua_State* L) { return Command(L, false); }

  static int Sha1HexApi(lua_State* L) {
    if (lua_gettop(L) != 1) RaiseErrorTable(L, "wrong number of arguments");
    size_t len;
    const char* s = lua_tolstring(L, 1, &len);
    const std::string hex = Sha1Hex(s == nullptr ? std::string_view() : std::string_view(s, len));
    lua_pushlstring(L, hex.data(), hex.size());
    return 1;
  }

  static int ErrorReply(lua_State* L) {
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
      PushErrorTable(L, "wrong number or type of arguments");
      return 1;
    }
    size_t len;
    const char* s = lua_tolstring(L, 1, &len);
    std::string_view msg(s, len);
    PushErrorTable(L, msg.starts_with('-') ? std::string(msg) : StrCat("-", msg));
    return 1;
  }

  static int StatusReply(lua_State* L) {
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
      PushErrorTable(L, "wrong number or type of arguments");
      return 1;
    }
    lua_newtable(L);
    lua_pushstring(L, "ok");
    lua_pushvalue(L, 1);
    lua_rawset(L, -3);
    return 1;
  }

  static int LogApi(lua_State* L) {
    const int argc = lua_gettop(L);
    if (argc < 2) RaiseErrorTable(L, "redis.log() requires two arguments or more.");
    if (!lua_isnumber(L, 1)) RaiseErrorTable(L, "First argument must be a number (log level).");
    const int level = static_cast<int>(lua_tonumber(L, 1));
    if (level < 0 || level > 3) RaiseErrorTable(L, "Invalid debug level.");
    std::string message;
    for (int i = 2; i <= argc; ++i) {
      size_t len;
      const char* s = lua_tolstring(L, i, &len);
      if (s == nullptr) continue;  // tables, nil: skipped, as Redis
      if (!message.empty()) message += ' ';
      message.append(s, len);
    }
    Engine(L)->host_->Log(level, message);
    return 0;
  }

  static int SetResp(lua_State* L) {
    LuaEngine* e = Engine(L);
    if (lua_gettop(L) != 1) RaiseErrorTable(L, "redis.setresp() requires one argument.");
    const int resp = static_cast<int>(lua_tonumber(L, 1));
    if (resp != 2 && resp != 3) RaiseErrorTable(L, "RESP version must be 2 or 3.");
    if (e->current_ != nullptr) e->current_->resp = resp;
    return 0;
  }

  static int SetRepl(lua_State* L) {
    LuaEngine* e = Engine(L);
    if (lua_gettop(L) != 1) RaiseErrorTable(L, "redis.set_repl() requires two arguments.");  // sic, Redis 7.0's words
    const int flags = static_cast<int>(lua_tonumber(L, 1));
    if ((flags & ~kReplAll) != 0) {
      RaiseErrorTable(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
    }
    if (e->current_ != nullptr) e->current_->repl = flags;
    return 0;
  }

  static int ReplicateCommands(lua_State* L) {
    lua_pushboolean(L, 1);
    return 1;
  }

  static int Breakpoint(lua_State* L) {
    lua_pushboolean(L, 0);
    return 1;
  }

  static int Debug(lua_State*) { return 0; }

  static int AclCheckCmd(lua_State* L) {
    const int argc = lua_gettop(L);
    if (argc == 0) RaiseErrorTable(L, "Please specify at least one argument for this redis lib call");
    std::vector<std::string_view> argv;
    for (int i = 1; i <= argc; ++i) {
      size_t len;
      const char* s = lua_tolstring(L, i, &len);
      if (s == nullptr) RaiseErrorTable(L, "Lua redis lib command arguments must be strings or integers");
      argv.emplace_back(s, len);
    }
    bool allowed = false;
    if (!Engine(L)->host_->AclCheckCmd(argv, &allowed)) {
      RaiseErrorTable(L, "Invalid command passed to redis.acl_check_cmd()");
    }
    lua_pushboolean(L, allowed ? 1 : 0);
    return 1;
  }

  // redis.register_function(name, callback) or
  // redis.register_function{function_name=, callback=, flags=, description=}
  static int RegisterFunction(lua_State* L) {
    LuaEngine* e = Engine(L);
    if (e->registering_ == nullptr) RaiseString(L, "redis.register_function can only be called on FUNCTION LOAD command");
    LuaEngine::Registration r{"", LUA_NOREF, 0, "", false};
    const int argc = lua_gettop(L);
    if (argc == 1 && lua_type(L, 1) == LUA_TTABLE) {
      ReadNamedArgs(L, &r);
    } else if (argc == 1) {
      RaiseString(L,
                  "calling redis.register_function with a single argument is only applicable to Lua table "
                  "(representing named arguments).");
    } else if (argc != 2) {
      RaiseString(L, "wrong number of arguments to redis.register_function");
    } else {
      if (!lua_isstring(L, 1)) RaiseString(L, "first argument to redis.register_function must be a string");
      if (lua_type(L, 2) != LUA_TFUNCTION) RaiseString(L, "second argument to redis.register_function must be a function");
      r.name = ToString(L, 1);
      lua_pushvalue(L, 2);
      r.callback_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    if (!ValidFunctionName(r.name)) {
      luaL_unref(L, LUA_REGISTRYINDEX, r.callback_ref);
      // Redis 7.0 words this check with "Library names".
      RaiseString(L, "Library names can only contain letters, numbers, or underscores(_) and must be at least one "
                     "character long");
    }
    for (const LuaEngine::Registration& other : *e->registering_) {
      if (other.name == r.name) {  // names in another case are two functions, as in Redis
        luaL_unref(L, LUA_REGISTRYINDEX, r.callback_ref);
        RaiseString(L, "Function already exists in the library");
      }
    }
    e->registering_->push_back(std::move(r));
    return 0;
  }

  static std::string ToString(lua_State* L, int index) {
    size_t len;
    const char* s = lua_tolstring(L, index, &len);
    return std::string(s, len);
  }

  static bool ValidFunctionName(std::string_view name) {
    if (name.empty()) return false;
    for (char c : name) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    }
    return true;
  }

  static void ReadNamedArgs(lua_State* L, LuaEngine::Registration* r) {
    bool have_name = false;
    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {
      if (!lua_isstring(L, -2)) RaiseString(L, "named argument key given to redis.register_function is not a string");
      const std::string key = ToString(L, -2);
      if (key == "function_name") {
        if (!lua_isstring(L, -1)) RaiseString(L, "function_name argument given to redis.register_function must be a string");
        r->name = ToString(L, -1);
        have_name = true;
      } else if (key == "description") {
        if (!lua_isstring(L, -1)) RaiseString(L, "description argument given to redis.register_function must be a string");
        r->description = ToString(L, -1);
        r->has_description = true;
      } else if (key == "callback") {
        if (lua_type(L, -1) != LUA_TFUNCTION) {
          RaiseString(L, "callback argument given to redis.register_function must be a function");
        }
        luaL_unref(L, LUA_REGISTRYINDEX, r->callback_ref);
        lua_pushvalue(L, -1);
        r->callback_ref = luaL_ref(L, LUA_REGISTRYINDEX);
      } else if (key == "flags") {
        if (lua_type(L, -1) != LUA_TTABLE) {
          RaiseString(L, "flags argument to redis.register_function must be a table representing function flags");
        }
        r->flags = ReadFlags(L);
      } else {
        RaiseString(L, "unknown argument given to redis.register_function");
      }
      lua_pop(L, 1);
    }
    if (!have_name) RaiseString(L, "redis.register_function must get a function name argument");
    if (r->callback_ref == LUA_NOREF) RaiseString(L, "redis.register_function must get a callback argument");
  }

  // The flags table at the top of the stack.
  static uint32_t ReadFlags(lua_State* L) {
    uint32_t flags = 0;
    for (int i = 1;; ++i) {
      lua_rawgeti(L, -1, i);
      if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return flags;
      }
      if (lua_type(L, -1) != LUA_TSTRING) RaiseString(L, "unknown flag given");
      // Any case, as Redis compares them (strcasecmp); a shebang's are exact.
      const std::string flag = absl::AsciiStrToLower(ToString(L, -1));
      lua_pop(L, 1);
      if (flag == "no-writes") flags |= kNoWrites;
      else if (flag == "allow-oom") flags |= kAllowOom;
      else if (flag == "allow-stale") flags |= kAllowStale;
      else if (flag == "no-cluster") flags |= kNoCluster;
      else if (flag == "allow-cross-slot-keys") flags |= kAllowCrossSlotKeys;
      else RaiseString(L, "unknown flag given");
    }
  }
};


void LuaEngine::InstallRedisApi() {
  auto make_api = [this](bool load_time) {
    lua_newtable(L_);
    auto fn = [this](const char* name, lua_CFunction f) {
      lua_pushlightuserdata(L_, this);
      lua_pushcclosure(L_, f, 1);
      lua_setfield(L_, -2, name);
    };
    auto num = [this](const char* name, lua_Number v) {
      lua_pushnumber(L_, v);
      lua_setfield(L_, -2, name);
    };
    fn("log", LuaApi::LogApi);
    num("LOG_DEBUG", 0);
    num("LOG_VERBOSE", 1);
    num("LOG_NOTICE", 2);
    num("LOG_WARNING", 3);
    lua_pushstring(L_, kRedisVersion);
    lua_setfield(L_, -2, "REDIS_VERSION");
    int major = 0, minor = 0, patch = 0;
    std::sscanf(kRedisVersion, "%d.%d.%d", &major, &minor, &patch);
    num("REDIS_VERSION_NUM", (major << 16) | (minor << 8) | patch);
    if (load_time) {
      fn("register_function", LuaApi::RegisterFunction);
      return;
    }
    fn("call", LuaApi::Call);
    fn("pcall", LuaApi::PCall);
    fn("sha1hex", LuaApi::Sha1HexApi);
    fn("error_reply", LuaApi::ErrorReply);
    fn("status_reply", LuaApi::StatusReply);
    fn("setresp", LuaApi::SetResp);
    fn("set_repl", LuaApi::SetRepl);
    if (kind_ == Kind::kEval) {  // EVAL's alone, as in Redis (nil in functions)
      fn("replicate_commands", LuaApi::ReplicateCommands);
      fn("breakpoint", LuaApi::Breakpoint);
      fn("debug", LuaApi::Debug);
    }
    fn("acl_check_cmd", LuaApi::AclCheckCmd);
    num("REPL_NONE", kReplNone);
    num("REPL_AOF", kReplAof);
    num("REPL_SLAVE", kReplReplica);
    num("REPL_REPLICA", kReplReplica);
    num("REPL_ALL", kReplAll);
  };
  make_api(false);
  lua_setglobal(L_, "redis");
  if (kind_ == Kind::kFunctions) {
    make_api(true);
    lua_setfield(L_, LUA_REGISTRYINDEX, kLoadApiKey);
  }
}

}  // namespace ringkv::server::scripting

// LuaEngine: one sandboxed Lua 5.1 interpreter with Redis's `redis` API.
//
// The sandbox is Redis 7.0's: the base, table, string, math, cjson, bit,
// struct and cmsgpack libraries; no print, loadfile, dofile, os, io,
// require, getfenv/setfenv; the global table and every library table are
// read-only ("Attempt to modify a readonly table"), and reading a global that
// does not exist is an error ("Script attempted to access nonexistent global
// variable"). math.random is Redis's rand48, reseeded for every script so a
// script's randomness is deterministic.
//
// Two flavours: kEval (EVAL scripts, compiled as "@user_script", KEYS and
// ARGV globals) and kFunctions (FUNCTION libraries, "@user_function"; while a
// library loads, `redis` offers only register_function, log and the
// constants; callbacks get KEYS and ARGV as arguments).
//
// Stock Lua 5.1 has no read-only tables, so the protected tables are empty
// proxies (__index to the real table, __newindex refusing), and rawset,
// rawget, setmetatable, next and pairs see through them.
//
// Thread-safety: main thread only. Ownership: owns its lua_State.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "io/reply_builder.h"
#include "server/scripting/script_run.h"

struct lua_State;
struct lua_Debug;

namespace ringkv::server::scripting {

class LuaEngine {
 public:
  enum class Kind : uint8_t { kEval, kFunctions };

  LuaEngine(Kind kind, ScriptHost* host);
  ~LuaEngine();
  LuaEngine(const LuaEngine&) = delete;
  LuaEngine& operator=(const LuaEngine&) = delete;

  lua_State* state() const { return L_; }
  Kind kind() const { return kind_; }
  // Bytes the interpreter holds (INFO used_memory_vm_*).
  size_t memory() const;

  // EVAL: compiles `body` and keeps the function in the registry; returns
  // its reference. The error is Redis's reply text ("ERR Error compiling
  // script (new function): user_script:1: ...").
  absl::StatusOr<int> CompileScript(std::string_view body);

  // Runs the EVAL function `ref` with KEYS / ARGV; the reply (or Redis's
  // error) goes to `rb`.
  void RunScript(ScriptRun& run, int ref, Argv keys, Argv args, io::ReplyBuilder& rb);

  // FUNCTION: runs a library's code with the load-time API. Every
  // redis.register_function call is passed to `on_register` (name, Lua
  // registry reference of the callback, flags, description); its error text
  // aborts the load. Returns Redis's error text ("ERR Error compiling
  // function: ...", "ERR Error registering functions: ...") on failure.
  struct Registration {
    std::string name;
    int callback_ref;
    uint32_t flags;
    std::string description;
    bool has_description;
  };
  absl::Status LoadLibrary(std::string_view code, std::vector<Registration>* registered);
  // Frees a callback reference (library deleted or replaced).
  void Unref(int ref);
  // Runs a function callback with (keys, args).
  void RunFunction(ScriptRun& run, int callback_ref, Argv keys, Argv args, io::ReplyBuilder& rb);

 private:
  void OpenLibraries();
  void InstallRedisApi();
  void Protect();
  void Run(ScriptRun& run, int nargs, io::ReplyBuilder& rb);
  void ReplyError(ScriptRun& run, io::ReplyBuilder& rb);
  // The collector's share of a run (see gc_trigger_kb_).
  void CollectGarbage();
  // The command redis.call names by the Lua string at stack index 1 of L
  // (`name` is its bytes), through name_cache_.
  const CommandSpec* CommandNamed(lua_State* L, std::string_view name);

  static void Hook(lua_State* L, lua_Debug* ar);

  Kind kind_;
  ScriptHost* host_;
  lua_State* L_ = nullptr;
  ScriptRun* current_ = nullptr;
  // Registry references (integer keys: no string lookup per run) of the
  // real globals table and the error handler, set by Protect().
  int globals_ref_ = 0;
  int handler_ref_ = 0;
  // redis.call's scratch (one call at a time per engine: scripts cannot
  // run scripts): the arguments, formatted numbers, the reply (its buffer
  // keeps its chunk between calls), the reply's bytes when in pieces.
  std::vector<std::string_view> call_argv_;
  std::vector<std::string> call_numbers_;
  io::OutBuffer call_out_;
  std::string call_reply_;
  // The collector. After a run, while the heap (KiB) is at or above
  // gc_trigger_kb_, the run ends with an incremental step (LUA_GCSTEP of
  // kGcStepKb: the work Lua does for that many KiB allocated, about twice
  // that many KiB traversed at the default step multiplier); when a step
  // ends a cycle, the next trigger is the heap left plus kGcSlackKb (or
  // half the heap, when that is larger). Lua's own allocation-driven
  // collector runs besides, so a heap that drops below the trigger
  // mid-cycle is still collected.
  // Why not a step every 50 runs whatever they allocated, as Redis's
  // LUA_GC_CYCLE_PERIOD: that was 7.7% of a ten-command script's
  // instructions. Each cycle marks the whole live heap (about 45 KiB of
  // libraries and sandbox), and 50 runs left only about 20 KiB of garbage
  // to collect with it (docs/performance.md 31.1). A fresh interpreter's
  // heap stays under 80 KiB.
  static constexpr int kGcStepKb = 50;
  static constexpr int kGcSlackKb = 32;
  int gc_trigger_kb_ = 0;
  // redis.call's command by its name: the command FindCommand gave for a
  // Lua string, keyed by the string's address. Each name in the cache is
  // also held at its slot in the registry table names_ref_, so it cannot be
  // collected, nor its address reused by another string, while its entry
  // stands: a hit is one compare of addresses, where CommandTable::Find's
  // folding and hashing cost about 100 instructions per call.
  struct NamedCommand {
    const char* name = nullptr;
    const CommandSpec* command = nullptr;
  };
  static constexpr int kNameCacheBits = 6;
  std::array<NamedCommand, size_t{1} << kNameCacheBits> name_cache_{};
  int names_ref_ = 0;
  // FUNCTION LOAD in progress: register_function collects here.
  std::vector<Registration>* registering_ = nullptr;
  int64_t load_start_ms_ = 0;

  friend struct LuaApi;
};

// "f_" + sha1hex: the name Redis gives an EVAL script's function.
std::string Sha1Hex(std::string_view s);

}  // namespace ringkv::server::scripting

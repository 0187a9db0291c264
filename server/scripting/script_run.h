// ScriptRun: the state of one running script or function, and ScriptHost,
// what a running script may ask of the server.
//
// A ScriptRun lives on the stack of EVAL / FCALL for the duration of the
// call; the Lua engine points at it while the script runs (redis.call,
// redis.setresp, the busy hook read and update it) and forgets it after.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "io/out_buffer.h"

namespace ringkv::server {
struct CommandSpec;
}  // namespace ringkv::server

namespace ringkv::server::scripting {

// Shebang / register_function flags, as Redis 7.0 names them.
enum ScriptFlag : uint32_t {
  kNoWrites = 1u << 0,
  kAllowOom = 1u << 1,
  kAllowStale = 1u << 2,
  kNoCluster = 1u << 3,
  kAllowCrossSlotKeys = 1u << 4,
  // An EVAL script without a shebang: Redis 7.0's compatibility rules (the
  // OOM check at the first write, not at the start; stale replicas refuse
  // only what they refuse outside scripts).
  kEvalCompat = 1u << 5,
};

// redis.set_repl targets.
enum ReplTarget : int { kReplNone = 0, kReplAof = 1, kReplReplica = 2, kReplAll = 3 };

using Argv = std::span<const std::string_view>;

struct ScriptRun {
  std::string_view name;     // "<sha>" for EVAL, the function's name for FCALL
  uint32_t flags = 0;        // ScriptFlag bits
  bool read_only = false;    // EVAL_RO / FCALL_RO / no-writes
  bool is_function = false;
  int resp = 2;              // redis.setresp
  int repl = kReplAll;       // redis.set_repl
  bool wrote = false;        // a write command ran: SCRIPT KILL refuses from now on
  bool oom_at_start = false; // used memory was over maxmemory when the script started
  bool killed = false;       // SCRIPT KILL / FUNCTION KILL asked for it to stop
  bool shutdown_nosave = false;  // SHUTDOWN NOSAVE while it ran: stop it, then the server
  bool timed_out = false;    // ran past busy-reply-threshold: other clients got -BUSY
  uint64_t start_ticks = 0;  // Clock::Ticks() at the start (Scripting::ElapsedMs)
  int64_t now_ms = 0;        // wall clock at the start: the script's time for expiry
  Argv command;              // the EVAL / FCALL command (FUNCTION STATS); valid while it runs
  // Cluster mode: the slot of the declared keys, else of the first key a
  // redis.call touched (-1: none yet); later calls must stay in it unless
  // cross-slot keys are allowed (Redis's c->slot in scriptVerifyClusterState).
  int slot = -1;
};

// What the Lua side needs from the server. Implemented by the scripting
// component on top of the command gate.
class ScriptHost {
 public:
  virtual ~ScriptHost() = default;
  // The command redis.call names by argv[0] (any case), or nullptr when
  // there is none. The result holds for the life of the process: the
  // command table is fixed once the server runs, so the engine may keep it
  // per name (LuaEngine's name cache).
  virtual const CommandSpec* FindCommand(std::string_view name) = 0;
  // redis.call / redis.pcall: runs argv through the command gate on behalf
  // of `run` and appends its reply (RESP `run.resp`) to `out`. `command` is
  // FindCommand(argv[0]). Refusals (unknown command, not allowed from
  // scripts, read-only script, OOM, ...) come back as RESP errors with
  // Redis's text.
  virtual void Call(ScriptRun& run, const CommandSpec* command, Argv argv, io::OutBuffer& out) = 0;
  // redis.acl_check_cmd: false when the command does not exist; else
  // *allowed tells whether the script's caller's user may run it.
  virtual bool AclCheckCmd(Argv argv, bool* allowed) = 0;
  // redis.log
  virtual void Log(int level, std::string_view message) = 0;
  // The Lua hook, every so many instructions: true when the script must stop
  // (killed); `run.timed_out` becomes true once it ran too long, and the
  // server serves other clients (-BUSY) from here.
  virtual bool OnScriptHook(ScriptRun& run) = 0;
};

}  // namespace ringkv::server::scripting

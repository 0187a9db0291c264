// ScriptingSide: the owner of the scripting component (Scripting, made on
// the first script command) and of what exists without it -- the busy state
// of a script past busy-reply-threshold (other clients get -BUSY), DEBUG
// SET-DISABLE-DENY-SCRIPTS, and the FUNCTION libraries a snapshot carries
// and loads (RDB, AOF preamble, a replica's full sync, DEBUG RELOAD).
//
// Lazy: the object itself is a few pointers and two flags, a member of the
// Server; a server that never runs a script (nor loads a library) allocates
// nothing here. Pointer-like, as the owning pointer it replaced: true once
// the component is made, and `->` is the component.
//
// What scripting needs from the server -- the command gate's entrance for
// scripts, the propagation block a script's writes go in, the caller's ACL
// user, serving other clients while busy -- comes through Hooks, which the
// Server implements (server_scripting.cc). The config, the clock and the
// command table are borrowed at construction and must outlive it.
//
//   ScriptingSide scripting(hooks, config, clock, commands);
//   scripting.Ensure().Eval(ctx, /*by_sha=*/false, /*read_only=*/false);  // EVAL
//   if (scripting.busy()) ...                                           // the gate: -BUSY
//
// Cost: the gate reads busy() (inline) once per command; a script makes
// up to four hook calls (virtual: the propagation block's begin and end,
// OOM at its start, cluster mode) per run and one per redis.call.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "io/out_buffer.h"
#include "server/client.h"
#include "server/scripting/script_run.h"

namespace ringkv::server {
class Clock;
class CommandTable;
class Config;
struct CommandSpec;
}  // namespace ringkv::server

namespace ringkv::server::scripting {

class Scripting;

class ScriptingSide {
 public:
  using Argv = std::span<const std::string_view>;

  // What scripting asks of the server.
  class Hooks {
   public:
    // Runs `argv` for the running script through the command gate's entrance
    // for scripts (Server::CallFromScript) on `script_client`, its reply
    // into `out` in RESP run.resp, its errors counted as that client's.
    // `command` is the command table's entry for argv[0] (nullptr: none).
    virtual void RunScriptCommand(Client& script_client, ScriptRun& run, const CommandSpec* command, Argv argv,
                                  io::OutBuffer& out) = 0;
    // A script's writes reach the AOF and the replicas as one MULTI ... EXEC:
    // begun before it runs, ended after (`discard`: dropped, as when
    // SHUTDOWN NOSAVE stopped it).
    virtual void BeginScriptPropagation() = 0;
    virtual void EndScriptPropagation(bool discard) = 0;
    // Cluster mode is on (no-cluster scripts are refused; a script's keys
    // stay in one slot).
    virtual bool ClusterEnabled() = 0;
    // Used memory was over maxmemory when the script's command started.
    virtual bool OomAtCommandStart() = 0;
    // Whether the running command's client (the script's caller; the
    // default user without one) may run `spec` with `argv`
    // (redis.acl_check_cmd).
    virtual bool CallerMayRun(const CommandSpec& spec, Argv argv) = 0;
    // A script is past busy-reply-threshold: serve the other clients now
    // (they get -BUSY but for what may run beside it).
    virtual void ServeWhileBusy() = 0;

   protected:
    ~Hooks() = default;
  };

  // REQUIRES: the arguments outlive this object. Allocates nothing.
  ScriptingSide(Hooks& hooks, Config& config, const Clock& clock, const CommandTable& commands);
  ScriptingSide(const ScriptingSide&) = delete;
  ScriptingSide& operator=(const ScriptingSide&) = delete;
  ~ScriptingSide();

  // ---- the component -----------------------------------------------------------------
  // Made on first use (a script command, a library loaded).
  Scripting& Ensure();
  // Null until then.
  Scripting* get() const { return scripting_.get(); }
  explicit operator bool() const { return scripting_ != nullptr; }
  Scripting* operator->() const { return scripting_.get(); }

  // ---- a script past busy-reply-threshold ------------------------------------------
  // Other clients get -BUSY (Scripting::BusyError) until it ends; a
  // replica holds its primary's stream; nothing is evicted.
  bool busy() const { return busy_; }

  // DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call noscript commands.
  bool noscript_allowed() const { return noscript_allowed_; }
  void set_noscript_allowed(bool on) { noscript_allowed_ = on; }

  // ---- the FUNCTION libraries of a snapshot ------------------------------------------
  // Their code, as a snapshot (RDB, AOF preamble, full sync) carries it.
  std::vector<std::string> FunctionLibraryCodes() const;
  // Loads a snapshot's libraries: kReplaceAll (what a full load does:
  // they replace all), kReplaceSame (DEBUG RELOAD MERGE: a library of the
  // same name is replaced) or kAddOnly (NOFLUSH: a clash is an error). All
  // or nothing: on an error the libraries are as they were. Nothing to
  // load and nothing to replace allocates nothing.
  enum class FunctionLoadMode : uint8_t { kReplaceAll, kReplaceSame, kAddOnly };
  absl::Status LoadFunctionLibraries(const std::vector<std::string>& codes,
                                     FunctionLoadMode mode = FunctionLoadMode::kReplaceAll);

 private:
  friend class Scripting;  // what the component reaches of its owner

  Hooks& hooks() { return hooks_; }
  Config& config() { return config_; }
  const Clock& clock() const { return clock_; }
  const CommandTable& commands() const { return commands_; }
  // A script ran past busy-reply-threshold; it ended.
  void BusyStarted() { busy_ = true; }
  void BusyEnded() { busy_ = false; }

  Hooks& hooks_;
  Config& config_;
  const Clock& clock_;
  const CommandTable& commands_;
  std::unique_ptr<Scripting> scripting_;
  bool busy_ = false;
  bool noscript_allowed_ = false;
};

}  // namespace ringkv::server::scripting

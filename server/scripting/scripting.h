// Scripting: EVAL scripts and FUNCTION libraries -- the server's Lua
// component.
//
// Created on the first script command (a server that never runs a script
// allocates none of it); each Lua interpreter is created on first use too.
// Owned by ScriptingSide (scripting_side.h), whose Hooks are its only way
// to the server. Scripts call commands through the server's command gate
// (Server::CallFromScript) on a connection-less client of their own, so
// every check of the gate applies inside scripts too. A script's writes
// reach the AOF and the replicas as one MULTI ... EXEC (effects
// replication, Redis 7.0).
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "server/client.h"
#include "server/scripting/function_libraries.h"
#include "server/scripting/lua_engine.h"
#include "server/scripting/script_run.h"
#include "server/scripting/scripting_side.h"

namespace ringkv::server {
struct CommandContext;
struct CommandSpec;
}  // namespace ringkv::server

namespace ringkv::server::scripting {

class Scripting final : public ScriptHost {
 public:
  // REQUIRES: `side` outlives this object (it owns it).
  explicit Scripting(ScriptingSide& side);
  ~Scripting() override;

  // ---- EVAL family ---------------------------------------------------------
  // EVAL / EVALSHA / EVAL_RO / EVALSHA_RO.
  void Eval(CommandContext& ctx, bool by_sha, bool read_only);
  // SCRIPT LOAD: the sha, or Redis's compile error.
  absl::StatusOr<std::string> LoadScript(std::string_view body);
  bool ScriptExists(std::string_view sha) const;
  // SCRIPT FLUSH: forgets every script and resets the interpreter.
  void FlushScripts();
  size_t cached_scripts() const { return scripts_.size(); }

  // ---- FUNCTION family -------------------------------------------------------
  FunctionLibraries& functions() { return functions_; }
  const FunctionLibraries& functions() const { return functions_; }
  // FCALL / FCALL_RO.
  void FCall(CommandContext& ctx, bool read_only);

  // ---- the command gate's questions -------------------------------------------
  // The flags EVAL & co. / FCALL & co. are judged by (OOM, write, stale): a
  // script with a shebang or a function declares them; an EVAL script
  // without one keeps the command's flags (Redis's evalGetCommandFlags).
  uint32_t GateFlags(const CommandSpec& spec, Argv argv, uint32_t command_flags) const;
  // GateFlags before any script ran (no component yet): only an EVAL body's
  // shebang can declare anything.
  static uint32_t ShebangGateFlags(const CommandSpec& spec, Argv argv, uint32_t command_flags);

  // ---- a running script ----------------------------------------------------------
  // The script running now, if any.
  const ScriptRun* running() const { return running_; }
  // How long it has been running.
  int64_t RunningMs() const;
  // SCRIPT KILL / FUNCTION KILL: "" when the script will stop, else Redis's
  // error (NOTBUSY, UNKILLABLE, or the wrong kind).
  std::string Kill(bool function);
  // The -BUSY error other clients get while a script runs too long.
  std::string BusyError() const;
  // SHUTDOWN NOSAVE while a script runs: stop it, whatever it wrote.
  void KillForShutdown();

  // ---- INFO -------------------------------------------------------------------------
  size_t eval_memory() const { return eval_ ? eval_->memory() : 0; }
  size_t eval_scripts_memory() const { return scripts_bytes_; }
  size_t functions_memory() const { return functions_.memory(); }

  // ---- ScriptHost ------------------------------------------------------------------
  const CommandSpec* FindCommand(std::string_view name) override;
  void Call(ScriptRun& run, const CommandSpec* command, Argv argv, io::OutBuffer& out) override;
  bool AclCheckCmd(Argv argv, bool* allowed) override;
  void Log(int level, std::string_view message) override;
  bool OnScriptHook(ScriptRun& run) override;

 private:
  LuaEngine& EnsureEval();
  // The body's compiled function ("f_<sha>"), compiling it on first use.
  // Returns the sha, or Redis's error text.
  absl::StatusOr<std::string> Compile(std::string_view body, std::string sha);
  // Runs `body` (the script or the function) as the running script: its
  // client set up from the caller's, its writes in one propagation block.
  void RunChecked(CommandContext& ctx, ScriptRun& run,
                  absl::FunctionRef<void(ScriptRun&, io::ReplyBuilder&)> body);
  // The refusal of a script about to run with `flags` (ScriptFlag bits), or
  // "": what the gate's checks leave, the _RO commands' rule.
  std::string PreRunError(uint32_t flags, bool read_only) const;
  // Milliseconds since `run` started (the server's TSC clock).
  int64_t ElapsedMs(const ScriptRun& run) const;

  ScriptingSide& side_;
  std::unique_ptr<LuaEngine> eval_;
  struct CachedScript {
    std::string sha;
    std::string body;
    uint32_t flags = 0;  // from its shebang; kEvalCompat without one
    int ref = 0;         // the compiled function in the EVAL engine's registry
  };
  // The cached script of a sha (any case), or null.
  const CachedScript* FindScript(std::string_view sha) const;
  absl::flat_hash_map<std::string, CachedScript> scripts_;  // by sha
  // The last sha FindScript found, as it was asked (EVALSHA looks its sha up
  // twice: for the gate's flags, then to run it). Cleared whenever scripts_
  // changes: flat_hash_map moves its entries when it grows.
  mutable std::string last_sha_;
  mutable const CachedScript* last_script_ = nullptr;
  size_t scripts_bytes_ = 0;
  FunctionLibraries functions_;
  Client script_client_;  // runs the commands scripts call (no connection)
  ScriptRun* running_ = nullptr;
};

// The flags of a "#!lua ..." first line (kEvalCompat when there is none), or
// Redis's error text.
absl::StatusOr<uint32_t> ParseShebangFlags(std::string_view body);

}  // namespace ringkv::server::scripting

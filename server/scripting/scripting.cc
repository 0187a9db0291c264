#include "server/scripting/scripting.h"

#include "server/errors.h"

#include <functional>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "core/key_slot.h"
#include "core/string_value.h"
#include "absl/strings/str_split.h"
#include "core/strings.h"
#include "io/resp_parser.h"
#include "server/clock.h"
#include "server/command.h"
#include "server/logging.h"
#include "server/command_table.h"
#include "server/config.h"

namespace ringkv::server::scripting {
namespace {

// numkeys of EVAL / FCALL (argv[2]); Redis's errors (FCALL words a
// non-number its own way).
bool ParseNumKeys(CommandContext& ctx, int64_t* numkeys, bool fcall) {
  if (!core::StringToInt64(ctx.argv[2], numkeys)) {
    ctx.reply.Error(fcall ? "ERR Bad number of keys provided" : "ERR value is not an integer or out of range");
    return false;
  }
  if (*numkeys < 0) {
    ctx.reply.Error("ERR Number of keys can't be negative");
    return false;
  }
  if (*numkeys > static_cast<int64_t>(ctx.argv.size()) - 3) {
    ctx.reply.Error("ERR Number of keys can't be greater than number of args");
    return false;
  }
  return true;
}

// Redis's scriptFlagsToCmdFlags: what a script declares replaces what the
// command's own flags say about writes, OOM and stale replicas.
uint32_t DeclaredCommandFlags(uint32_t command_flags, uint32_t script_flags) {
  uint32_t flags = command_flags & ~(cmd::kStale | cmd::kDenyOom | cmd::kWrite | cmd::kMayReplicate);
  if (!(script_flags & (kAllowOom | kNoWrites))) flags |= cmd::kDenyOom;
  if (!(script_flags & kNoWrites)) flags |= cmd::kWrite;
  if (script_flags & kAllowStale) flags |= cmd::kStale;
  return flags;
}

std::string LowerSha(std::string_view sha) { return AsciiLower(sha); }

}  // namespace

absl::StatusOr<uint32_t> ParseShebangFlags(std::string_view body) {
  if (!body.starts_with("#!")) return static_cast<uint32_t>(kEvalCompat);
  // Redis reads the line as a C string up to its '\n', split as
  // sdssplitargs splits it; a word is printed up to a NUL (%s).
  const size_t eol = body.find('\n');
  if (eol == std::string_view::npos || body.substr(0, eol).find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError("ERR Invalid script shebang");
  }
  std::string storage;
  absl::InlinedVector<std::string_view, 8> parts;
  if (!io::SplitInlineArgs(body.substr(0, eol), &storage, &parts) || parts.empty()) {
    return absl::InvalidArgumentError("ERR Invalid engine in script shebang");
  }
  if (parts[0] != "#!lua") {
    return absl::InvalidArgumentError(StrCat("ERR Unexpected engine in script shebang: ", errors::UpToNul(parts[0])));
  }
  uint32_t flags = 0;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (!parts[i].starts_with("flags=")) {
      return absl::InvalidArgumentError(StrCat("ERR Unknown lua shebang option: ", errors::UpToNul(parts[i])));
    }
    const std::string_view list = parts[i].substr(6);
    if (list.empty()) continue;  // "flags=": none (an empty name between commas is not)
    for (std::string_view flag : Split(list, ',', /*skip_empty=*/false)) {
      if (flag == "no-writes") flags |= kNoWrites;
      else if (flag == "allow-oom") flags |= kAllowOom;
      else if (flag == "allow-stale") flags |= kAllowStale;
      else if (flag == "no-cluster") flags |= kNoCluster;
      else if (flag == "allow-cross-slot-keys") flags |= kAllowCrossSlotKeys;
      else return absl::InvalidArgumentError(StrCat("ERR Unexpected flag in script shebang: ", errors::UpToNul(flag)));
    }
  }
  return flags;
}

Scripting::Scripting(ScriptingSide& side) : side_(side), functions_(this) {
  script_client_.authenticated = true;
  script_client_.is_script = true;
}

Scripting::~Scripting() = default;

LuaEngine& Scripting::EnsureEval() {
  if (!eval_) eval_ = std::make_unique<LuaEngine>(LuaEngine::Kind::kEval, this);
  return *eval_;
}

absl::StatusOr<std::string> Scripting::Compile(std::string_view body, std::string sha) {
  if (scripts_.contains(sha)) return sha;
  absl::StatusOr<uint32_t> flags = ParseShebangFlags(body);
  if (!flags.ok()) return flags.status();
  absl::StatusOr<int> ref = EnsureEval().CompileScript(body);
  if (!ref.ok()) return ref.status();
  scripts_bytes_ += body.size();
  last_script_ = nullptr;
  scripts_[sha] = CachedScript{sha, std::string(body), *flags, *ref};
  return sha;
}

absl::StatusOr<std::string> Scripting::LoadScript(std::string_view body) { return Compile(body, Sha1Hex(body)); }

bool Scripting::ScriptExists(std::string_view sha) const { return FindScript(sha) != nullptr; }

const Scripting::CachedScript* Scripting::FindScript(std::string_view sha) const {
  if (last_script_ != nullptr && sha == last_sha_) return last_script_;
  // Shas are kept in lower case; a lower-case one is looked up as it is.
  const bool lower = std::none_of(sha.begin(), sha.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
  auto it = lower ? scripts_.find(ToAbsl(sha)) : scripts_.find(LowerSha(sha));
  if (it == scripts_.end()) return nullptr;
  last_sha_.assign(sha);
  last_script_ = &it->second;
  return last_script_;
}

void Scripting::FlushScripts() {
  scripts_.clear();
  last_script_ = nullptr;
  scripts_bytes_ = 0;
  eval_.reset();
}

uint32_t Scripting::GateFlags(const CommandSpec& spec, Argv argv, uint32_t command_flags) const {
  if (argv.size() < 2) return command_flags;
  uint32_t script_flags;
  switch (spec.script) {
    case CommandSpec::Script::kFunction: {
      const FunctionInfo* f = functions_.FindFunction(argv[1]);
      if (f == nullptr) return command_flags;
      script_flags = f->flags;
      break;
    }
    case CommandSpec::Script::kSha: {
      const CachedScript* script = FindScript(argv[1]);
      if (script == nullptr) return command_flags;
      script_flags = script->flags;
      break;
    }
    case CommandSpec::Script::kBody:
      return ShebangGateFlags(spec, argv, command_flags);
    default:
      return command_flags;
  }
  if (script_flags & kEvalCompat) return command_flags;
  return DeclaredCommandFlags(command_flags, script_flags);
}

uint32_t Scripting::ShebangGateFlags(const CommandSpec& spec, Argv argv, uint32_t command_flags) {
  if (spec.script != CommandSpec::Script::kBody || argv.size() < 2) return command_flags;
  // The shebang line alone says the flags (an error in it is reported when
  // the script runs).
  absl::StatusOr<uint32_t> parsed = ParseShebangFlags(argv[1]);
  if (!parsed.ok() || (*parsed & kEvalCompat)) return command_flags;
  return DeclaredCommandFlags(command_flags, *parsed);
}

std::string Scripting::PreRunError(uint32_t flags, bool read_only) const {
  if (flags & kEvalCompat) return "";
  if ((flags & kNoCluster) && side_.hooks().ClusterEnabled()) {
    return "ERR Can not run script on cluster, 'no-cluster' flag is set.";
  }
  // The gate already refused what the declared flags forbid (OOM, READONLY,
  // MASTERDOWN, MISCONF, NOREPLICAS); what is left is the _RO variants.
  if (read_only && !(flags & kNoWrites)) return "ERR Can not execute a script with write flag using *_ro command.";
  return "";
}

void Scripting::RunChecked(CommandContext& ctx, ScriptRun& run,
                           absl::FunctionRef<void(ScriptRun&, io::ReplyBuilder&)> body) {
  if (running_ != nullptr) {  // a script calling EVAL is refused before; this is a bug guard
    ctx.reply.Error("ERR a script is already running");
    return;
  }
  run.start_ticks = Clock::Ticks();  // a TSC read: clock_gettime per script showed in profiles
  run.now_ms = ctx.now_ms;
  run.command = ctx.argv;
  run.oom_at_start = side_.hooks().OomAtCommandStart();
  script_client_.db = ctx.client.db;
  script_client_.resp = 2;
  script_client_.is_master = ctx.client.is_master;  // the primary's scripts obey no refusal
  running_ = &run;
  side_.hooks().BeginScriptPropagation();
  body(run, ctx.reply);
  // Stopped by SHUTDOWN NOSAVE: what it wrote is not propagated either.
  side_.hooks().EndScriptPropagation(/*discard=*/run.shutdown_nosave);
  running_ = nullptr;
  if (run.timed_out) {
    Log(kWarning, "Slow script finished");
    side_.BusyEnded();
  }
}

void Scripting::Eval(CommandContext& ctx, bool by_sha, bool read_only) {
  // A digest that is not 40 characters long matches nothing: Redis answers
  // NOSCRIPT before it reads numkeys.
  if (by_sha && ctx.argv[1].size() != 40) {
    ctx.reply.Error(errors::kNoScript);
    return;
  }
  int64_t numkeys;
  if (!ParseNumKeys(ctx, &numkeys, false)) return;
  const CachedScript* script;
  if (by_sha) {
    script = FindScript(ctx.argv[1]);
    if (script == nullptr) {
      ctx.reply.Error(errors::kNoScript);
      return;
    }
  } else {
    absl::StatusOr<std::string> compiled = Compile(ctx.argv[1], Sha1Hex(ctx.argv[1]));
    if (!compiled.ok()) {
      ctx.reply.Error(ToStd(compiled.status().message()));
      return;
    }
    script = FindScript(*compiled);
  }
  // The entry stays put while the script runs: nothing that adds or drops
  // scripts can run meanwhile (scripts cannot, and other clients get -BUSY).
  if (std::string err = PreRunError(script->flags, read_only); !err.empty()) {
    ctx.reply.Error(err);
    return;
  }
  ScriptRun run;
  run.name = script->sha;
  run.flags = script->flags;
  run.read_only = read_only || (script->flags & kNoWrites);
  Argv keys = ctx.argv.subspan(3, static_cast<size_t>(numkeys));
  if (!keys.empty() && side_.hooks().ClusterEnabled()) run.slot = core::KeyHashSlot(keys[0]);  // cluster mode only
  Argv args = ctx.argv.subspan(3 + static_cast<size_t>(numkeys));
  const int ref = script->ref;
  RunChecked(ctx, run, [&](ScriptRun& r, io::ReplyBuilder& rb) { eval_->RunScript(r, ref, keys, args, rb); });
}

void Scripting::FCall(CommandContext& ctx, bool read_only) {
  int64_t numkeys;
  const FunctionInfo* f = functions_.FindFunction(ctx.argv[1]);
  if (f == nullptr) {
    ctx.reply.Error("ERR Function not found");
    return;
  }
  if (!ParseNumKeys(ctx, &numkeys, true)) return;
  if (std::string err = PreRunError(f->flags, read_only); !err.empty()) {
    ctx.reply.Error(err);
    return;
  }
  ScriptRun run;
  run.name = f->name;
  run.flags = f->flags;
  run.is_function = true;
  run.read_only = read_only || (f->flags & kNoWrites);
  Argv keys = ctx.argv.subspan(3, static_cast<size_t>(numkeys));
  if (!keys.empty() && side_.hooks().ClusterEnabled()) run.slot = core::KeyHashSlot(keys[0]);  // cluster mode only
  Argv args = ctx.argv.subspan(3 + static_cast<size_t>(numkeys));
  const int ref = f->callback_ref;
  LuaEngine* engine = functions_.engine();
  RunChecked(ctx, run, [&](ScriptRun& r, io::ReplyBuilder& rb) {
    engine->RunFunction(r, ref, keys, args, rb);
  });
}

std::string Scripting::Kill(bool function) {
  if (running_ == nullptr) return "NOTBUSY No scripts in execution right now.";
  if (script_client_.is_master) {
    return "UNKILLABLE The busy script was sent by a master instance in the context of replication and cannot be "
           "killed.";
  }
  if (running_->wrote) {
    return "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait "
           "the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";
  }
  if (running_->is_function != function) return BusyError();
  running_->killed = true;
  return "";
}

std::string Scripting::BusyError() const {
  if (running_ != nullptr && running_->is_function) {
    return "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
  }
  return "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
}

int64_t Scripting::RunningMs() const { return running_ == nullptr ? 0 : ElapsedMs(*running_); }

int64_t Scripting::ElapsedMs(const ScriptRun& run) const {
  return side_.clock().TicksToMillis(Clock::Ticks() - run.start_ticks);
}

void Scripting::KillForShutdown() {
  if (running_ == nullptr) return;
  running_->killed = true;
  running_->shutdown_nosave = true;
}

const CommandSpec* Scripting::FindCommand(std::string_view name) { return side_.commands().Find(name); }

void Scripting::Call(ScriptRun& run, const CommandSpec* command, Argv argv, io::OutBuffer& out) {
  script_client_.resp = static_cast<uint8_t>(run.resp);
  side_.hooks().RunScriptCommand(script_client_, run, command, argv, out);
}

bool Scripting::AclCheckCmd(Argv argv, bool* allowed) {
  const CommandSpec* spec = side_.commands().Find(argv[0]);
  if (spec == nullptr) return false;
  if (!spec->subcommands.empty() && (spec->container() || argv.size() >= 2)) {
    if (argv.size() < 2) return false;
    spec = CommandTable::FindSub(*spec, argv[1]);
    if (spec == nullptr) return false;
  }
  *allowed = side_.hooks().CallerMayRun(*spec, argv);
  return true;
}

void Scripting::Log(int level, std::string_view message) { server::Log(level, message); }

bool Scripting::OnScriptHook(ScriptRun& run) {
  if (!run.timed_out) {
    const int64_t elapsed = ElapsedMs(run);
    if (elapsed >= side_.config().Int("busy-reply-threshold")) {
      run.timed_out = true;
      server::Log(kWarning,
                  StrCat("Slow script detected: still in execution after ", elapsed,
                               " milliseconds. You can try killing the script using the ",
                               run.is_function ? "FUNCTION KILL" : "SCRIPT KILL", " command. Script name is: ",
                               run.name, "."));
      side_.BusyStarted();
    }
  }
  if (run.timed_out) side_.hooks().ServeWhileBusy();
  return run.killed;
}

}  // namespace ringkv::server::scripting

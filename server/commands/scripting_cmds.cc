// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT: Lua scripts sent by
// clients (server/scripting/scripting.h runs them).
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/reply_paths.h"
#include "server/scripting/scripting.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

void CmdEval(ServerCommandContext& ctx) { ctx.server.scripting().Ensure().Eval(ctx, false, false); }
void CmdEvalSha(ServerCommandContext& ctx) { ctx.server.scripting().Ensure().Eval(ctx, true, false); }
void CmdEvalRo(ServerCommandContext& ctx) { ctx.server.scripting().Ensure().Eval(ctx, false, true); }
void CmdEvalShaRo(ServerCommandContext& ctx) { ctx.server.scripting().Ensure().Eval(ctx, true, true); }

void CmdScriptLoad(ServerCommandContext& ctx) {
  absl::StatusOr<std::string> sha = ctx.server.scripting().Ensure().LoadScript(ctx.argv[2]);
  if (!sha.ok()) {
    ctx.reply.Error(ToStd(sha.status().message()));
    return;
  }
  ctx.reply.Bulk(*sha);
}

void CmdScriptExists(ServerCommandContext& ctx) {
  const scripting::Scripting* s = ctx.server.scripting().get();
  ctx.reply.ArrayHeader(static_cast<int64_t>(ctx.argv.size() - 2));
  for (size_t i = 2; i < ctx.argv.size(); ++i) ctx.reply.Integer(s != nullptr && s->ScriptExists(ctx.argv[i]) ? 1 : 0);
}

void CmdScriptFlush(ServerCommandContext& ctx) {
  if (ctx.argv.size() > 3 || (ctx.argv.size() == 3 && !Is(ctx.argv[2], "sync") && !Is(ctx.argv[2], "async"))) {
    ctx.reply.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    return;
  }
  // ASYNC and SYNC end the same way here: the interpreter is closed now
  // (freeing it is quick next to what a background thread would save).
  if (scripting::Scripting* s = ctx.server.scripting().get()) s->FlushScripts();
  ctx.reply.Ok();
}

void CmdScriptKill(ServerCommandContext& ctx) {
  scripting::Scripting* s = ctx.server.scripting().get();
  const std::string err = s == nullptr ? "NOTBUSY No scripts in execution right now." : s->Kill(false);
  if (!err.empty()) {
    ctx.reply.Error(err);
    return;
  }
  ctx.reply.Ok();
}

// There is no Lua debugger (docs/scripting.md): NO, which leaves scripts
// undebugged as they are, is OK; YES and SYNC are refused; anything else
// gets Redis's usage error. First, as Redis: refused while the client has
// replies not yet sent (inside EXEC, or behind pipelined commands).
void CmdScriptDebug(ServerCommandContext& ctx) {
  const Client& c = ctx.client;
  if (ctx.server.transactions().in_exec() || (c.conn != nullptr && UnsentOutputOf(c, ctx.server.persistence()) > 0)) {
    ctx.reply.Error("ERR SCRIPT DEBUG must be called outside a pipeline");
  } else if (Is(ctx.argv[2], "no")) {
    ctx.reply.Ok();
  } else if (Is(ctx.argv[2], "yes") || Is(ctx.argv[2], "sync")) {
    ctx.reply.Error("ERR SCRIPT DEBUG is not supported: ringkv has no Lua debugger");
  } else {
    ctx.reply.Error("ERR Use SCRIPT DEBUG YES/SYNC/NO");
  }
}

void CmdScriptHelp(ServerCommandContext& ctx) {
  static const char* kLines[] = {
      "DEBUG (YES|SYNC|NO)",
      "    Set the debug mode for subsequent scripts executed.",
      "EXISTS <sha1> [<sha1> ...]",
      "    Return information about the existence of the scripts in the script cache.",
      "FLUSH [ASYNC|SYNC]",
      "    Flush the Lua scripts cache. Very dangerous on replicas.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the scripts cache.",
      "    * SYNC: Synchronously flush the scripts cache.",
      "KILL",
      "    Kill the currently executing Lua script.",
      "LOAD <script>",
      "    Load a script into the scripts cache without executing it.",
  };
  ReplyHelp(ctx, kLines);
}

}  // namespace

void RegisterScriptingCommands(CommandTable& t) {
  using namespace cmd;
  const uint32_t kEvalFlags = kNoscript | kStale | kSkipMonitor | kNoMandatoryKeys;
  const char* kAcl = "@slow @scripting";
  // EVAL and EVALSHA may replicate (CLIENT PAUSE WRITE holds them back unless the script declares no-writes).
  t.Add(ScriptCommand(Cmd("eval", -3, kEvalFlags | kMayReplicate, 0, 0, 0, kAcl, "scripting", "Execute a Lua script server side", "2.6.0", CmdEval), CommandSpec::Script::kBody));
  t.Add(ScriptCommand(Cmd("evalsha", -3, kEvalFlags | kMayReplicate, 0, 0, 0, kAcl, "scripting", "Execute a Lua script server side", "2.6.0", CmdEvalSha), CommandSpec::Script::kSha));
  t.Add(ScriptCommand(Cmd("eval_ro", -3, kReadonly | kEvalFlags, 0, 0, 0, kAcl, "scripting", "Execute a read-only Lua script server side", "7.0.0", CmdEvalRo), CommandSpec::Script::kBody));
  t.Add(ScriptCommand(Cmd("evalsha_ro", -3, kReadonly | kEvalFlags, 0, 0, 0, kAcl, "scripting", "Execute a read-only Lua script server side", "7.0.0", CmdEvalShaRo), CommandSpec::Script::kSha));
  std::vector<CommandSpec> subs;
  subs.push_back(Cmd("script|debug", 3, kNoscript, 0, 0, 0, kAcl, "scripting", "Set the debug mode for executed scripts.", "3.2.0", CmdScriptDebug));
  subs.push_back(Cmd("script|exists", -3, kNoscript, 0, 0, 0, kAcl, "scripting", "Check existence of scripts in the script cache.", "2.6.0", CmdScriptExists));
  subs.push_back(Cmd("script|flush", -2, kNoscript, 0, 0, 0, kAcl, "scripting", "Remove all the scripts from the script cache.", "2.6.0", CmdScriptFlush));
  subs.push_back(Cmd("script|help", 2, kLoading | kStale, 0, 0, 0, kAcl, "scripting", "Show helpful text about the different subcommands", "5.0.0", CmdScriptHelp));
  subs.push_back(Cmd("script|kill", 2, kNoscript | kAllowBusy, 0, 0, 0, kAcl, "scripting", "Kill the script currently in execution.", "2.6.0", CmdScriptKill));
  subs.push_back(Cmd("script|load", 3, kNoscript | kStale, 0, 0, 0, kAcl, "scripting", "Load the specified Lua script into the script cache.", "2.6.0", CmdScriptLoad));
  t.Add(Cmd("script", -2, 0, 0, 0, 0, "@slow", "scripting", "A container for Lua scripts management commands", "2.6.0", nullptr, std::move(subs)));
}

}  // namespace ringkv::server

// FUNCTION and FCALL / FCALL_RO: Redis 7.0 function libraries
// (server/scripting/function_libraries.h keeps them). FUNCTION LOAD,
// DELETE, FLUSH and RESTORE are writes: they reach the AOF and the replicas
// as they were sent.
#include "absl/strings/match.h"
#include "core/glob.h"
#include "server/errors.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/scripting/scripting.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

using scripting::FunctionInfo;
using scripting::LibraryInfo;

void CmdFCall(ServerCommandContext& ctx) { ctx.server.scripting().Ensure().FCall(ctx, false); }
void CmdFCallRo(ServerCommandContext& ctx) { ctx.server.scripting().Ensure().FCall(ctx, true); }

void CmdFunctionLoad(ServerCommandContext& ctx) {
  bool replace = false;
  size_t i = 2;
  for (; i + 1 < ctx.argv.size(); ++i) {
    if (Is(ctx.argv[i], "replace")) {
      replace = true;
    } else {
      ctx.reply.Error(StrCat("ERR Unknown option given: ", ctx.argv[i]));
      return;
    }
  }
  if (i >= ctx.argv.size()) {
    ctx.reply.Error("ERR Function code is missing");
    return;
  }
  absl::StatusOr<std::string> name = ctx.server.scripting().Ensure().functions().Load(ctx.argv[i], replace);
  if (!name.ok()) {
    ctx.reply.Error(ToStd(name.status().message()));
    return;
  }
  ctx.effects.Dirty(1);
  ctx.reply.Bulk(*name);
}

void CmdFunctionDelete(ServerCommandContext& ctx) {
  scripting::Scripting* s = ctx.server.scripting().get();
  if (s == nullptr || !s->functions().Delete(ctx.argv[2])) {
    ctx.reply.Error("ERR Library not found");
    return;
  }
  ctx.effects.Dirty(1);
  ctx.reply.Ok();
}

void CmdFunctionFlush(ServerCommandContext& ctx) {
  if (ctx.argv.size() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  if (ctx.argv.size() == 3 && !Is(ctx.argv[2], "sync") && !Is(ctx.argv[2], "async")) {
    ctx.reply.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
    return;
  }
  if (scripting::Scripting* s = ctx.server.scripting().get()) s->functions().Flush();
  ctx.effects.Dirty(1);
  ctx.reply.Ok();
}

void ReplyFunction(ServerCommandContext& ctx, const FunctionInfo& f) {
  io::ReplyBuilder& rb = ctx.reply;
  rb.MapHeader(3);
  rb.Bulk("name");
  rb.Bulk(f.name);
  rb.Bulk("description");
  if (f.has_description) {
    rb.Bulk(f.description);
  } else {
    rb.Null();
  }
  rb.Bulk("flags");
  std::vector<const char*> flags;
  if (f.flags & scripting::kNoWrites) flags.push_back("no-writes");
  if (f.flags & scripting::kAllowOom) flags.push_back("allow-oom");
  if (f.flags & scripting::kAllowStale) flags.push_back("allow-stale");
  if (f.flags & scripting::kNoCluster) flags.push_back("no-cluster");
  if (f.flags & scripting::kAllowCrossSlotKeys) flags.push_back("allow-cross-slot-keys");
  rb.SetHeader(static_cast<int64_t>(flags.size()));
  for (const char* flag : flags) rb.SimpleString(flag);
}

void CmdFunctionList(ServerCommandContext& ctx) {
  bool with_code = false;
  std::optional<std::string_view> pattern;
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    // A repeated option is an unknown argument, as Redis words it.
    if (Is(ctx.argv[i], "withcode") && !with_code) {
      with_code = true;
    } else if (Is(ctx.argv[i], "libraryname") && !pattern) {
      if (i + 1 >= ctx.argv.size()) {
        ctx.reply.Error("ERR library name argument was not given");
        return;
      }
      pattern = ctx.argv[++i];
    } else {
      ctx.reply.Error(StrCat("ERR Unknown argument ", ctx.argv[i]));
      return;
    }
  }
  scripting::Scripting* s = ctx.server.scripting().get();
  std::vector<const LibraryInfo*> libs;
  if (s != nullptr) {
    for (const auto& [name, lib] : s->functions().libraries()) {
      if (!pattern || core::GlobMatch(*pattern, name, /*nocase=*/true)) libs.push_back(&lib);
    }
  }
  io::ReplyBuilder& rb = ctx.reply;
  rb.ArrayHeader(static_cast<int64_t>(libs.size()));
  for (const LibraryInfo* lib : libs) {
    rb.MapHeader(with_code ? 4 : 3);
    rb.Bulk("library_name");
    rb.Bulk(lib->name);
    rb.Bulk("engine");
    rb.Bulk("LUA");
    rb.Bulk("functions");
    rb.ArrayHeader(static_cast<int64_t>(lib->functions.size()));
    for (const std::string& f : lib->functions) ReplyFunction(ctx, s->functions().listed_function(*lib, f));
    if (with_code) {
      rb.Bulk("library_code");
      rb.Bulk(lib->code);
    }
  }
}

void CmdFunctionDump(ServerCommandContext& ctx) {
  scripting::Scripting& s = ctx.server.scripting().Ensure();
  ctx.reply.Bulk(s.functions().Dump());
}

void CmdFunctionRestore(ServerCommandContext& ctx) {
  std::string_view policy = "append";
  if (ctx.argv.size() > 4) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  if (ctx.argv.size() == 4) {
    policy = ctx.argv[3];
    if (!Is(policy, "flush") && !Is(policy, "append") && !Is(policy, "replace")) {
      ctx.reply.Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
      return;
    }
  }
  if (absl::Status st = ctx.server.scripting().Ensure().functions().Restore(ctx.argv[2], policy); !st.ok()) {
    ctx.reply.Error(ToStd(st.message()));
    return;
  }
  ctx.effects.Dirty(1);
  ctx.reply.Ok();
}

void CmdFunctionStats(ServerCommandContext& ctx) {
  io::ReplyBuilder& rb = ctx.reply;
  scripting::Scripting* s = ctx.server.scripting().get();
  rb.MapHeader(2);
  rb.Bulk("running_script");
  const scripting::ScriptRun* run = s != nullptr ? s->running() : nullptr;
  if (run == nullptr || !run->is_function) {
    rb.Null();
  } else {
    rb.MapHeader(3);
    rb.Bulk("name");
    rb.Bulk(run->name);
    rb.Bulk("command");
    rb.ArrayHeader(static_cast<int64_t>(run->command.size()));
    for (std::string_view a : run->command) rb.Bulk(a);
    rb.Bulk("duration_ms");
    rb.Integer(s->RunningMs());
  }
  rb.Bulk("engines");
  rb.MapHeader(1);
  rb.Bulk("LUA");
  rb.MapHeader(2);
  rb.Bulk("libraries_count");
  rb.Integer(s != nullptr ? static_cast<int64_t>(s->functions().libraries().size()) : 0);
  rb.Bulk("functions_count");
  rb.Integer(s != nullptr ? static_cast<int64_t>(s->functions().function_count()) : 0);
}

void CmdFunctionKill(ServerCommandContext& ctx) {
  scripting::Scripting* s = ctx.server.scripting().get();
  const std::string err = s == nullptr ? "NOTBUSY No scripts in execution right now." : s->Kill(true);
  if (!err.empty()) {
    ctx.reply.Error(err);
    return;
  }
  ctx.reply.Ok();
}

void CmdFunctionHelp(ServerCommandContext& ctx) {
  static const char* kLines[] = {
      "LOAD [REPLACE] <FUNCTION CODE>",
      "    Create a new library with the given library name and code.",
      "DELETE <LIBRARY NAME>",
      "    Delete the given library.",
      "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
      "    Return general information on all the libraries:",
      "    * Library name",
      "    * The engine used to run the Library",
      "    * Library description",
      "    * Functions list",
      "    * Library code (if WITHCODE is given)",
      "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
      "STATS",
      "    Return information about the current function running:",
      "    * Function name",
      "    * Command used to run the function",
      "    * Duration in MS that the function is running",
      "    If no function is running, return nil",
      "    In addition, returns a list of available engines.",
      "KILL",
      "    Kill the current running function.",
      "FLUSH [ASYNC|SYNC]",
      "    Delete all the libraries.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the libraries.",
      "    * SYNC: Synchronously flush the libraries.",
      "DUMP",
      "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE "
      "command",
      "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
      "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
      "    control how to handle existing libraries (default APPEND):",
      "    * FLUSH: delete all existing libraries.",
      "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
      "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
      "      libraries with the new libraries (notice that even on this option there is a chance of failure",
      "      in case of functions name collision with another library).",
  };
  ReplyHelp(ctx, kLines);
}

}  // namespace

void RegisterFunctionCommands(CommandTable& t) {
  using namespace cmd;
  const char* kAcl = "@slow @scripting";
  const char* kWriteAcl = "@write @slow @scripting";
  const uint32_t kCallFlags = kNoscript | kStale | kSkipMonitor | kNoMandatoryKeys;
  t.Add(ScriptCommand(Cmd("fcall", -3, kCallFlags | kMayReplicate, 0, 0, 0, kAcl, "scripting", "Invoke a function", "7.0.0", CmdFCall), CommandSpec::Script::kFunction));
  t.Add(ScriptCommand(Cmd("fcall_ro", -3, kReadonly | kCallFlags, 0, 0, 0, kAcl, "scripting", "Invoke a read-only function", "7.0.0", CmdFCallRo), CommandSpec::Script::kFunction));
  std::vector<CommandSpec> subs;
  subs.push_back(Cmd("function|delete", 3, kWrite | kNoscript, 0, 0, 0, kWriteAcl, "scripting", "Delete a function by name", "7.0.0", CmdFunctionDelete));
  subs.push_back(Cmd("function|dump", 2, kNoscript, 0, 0, 0, kAcl, "scripting", "Dump all functions into a serialized binary payload", "7.0.0", CmdFunctionDump));
  subs.push_back(Cmd("function|flush", -2, kWrite | kNoscript, 0, 0, 0, kWriteAcl, "scripting", "Deleting all functions", "7.0.0", CmdFunctionFlush));
  subs.push_back(Cmd("function|help", 2, kLoading | kStale, 0, 0, 0, kAcl, "scripting", "Show helpful text about the different subcommands", "7.0.0", CmdFunctionHelp));
  subs.push_back(Cmd("function|kill", 2, kNoscript | kAllowBusy, 0, 0, 0, kAcl, "scripting", "Kill the function currently in execution.", "7.0.0", CmdFunctionKill));
  subs.push_back(Cmd("function|list", -2, kNoscript, 0, 0, 0, kAcl, "scripting", "List information about all the functions", "7.0.0", CmdFunctionList));
  subs.push_back(Cmd("function|load", -3, kWrite | kDenyOom | kNoscript, 0, 0, 0, kWriteAcl, "scripting", "Create a function with the given arguments (name, code, description)", "7.0.0", CmdFunctionLoad));
  subs.push_back(Cmd("function|restore", -3, kWrite | kDenyOom | kNoscript, 0, 0, 0, kWriteAcl, "scripting", "Restore all the functions on the given payload", "7.0.0", CmdFunctionRestore));
  subs.push_back(Cmd("function|stats", 2, kNoscript | kAllowBusy, 0, 0, 0, kAcl, "scripting", "Return information about the function currently running (name, description, duration)", "7.0.0", CmdFunctionStats));
  t.Add(Cmd("function", -2, 0, 0, 0, 0, "@slow", "scripting", "A container for function commands", "7.0.0", nullptr, std::move(subs)));
}

}  // namespace ringkv::server

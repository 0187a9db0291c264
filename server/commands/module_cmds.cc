// MODULE: ringkv loads no Redis modules (they are built against Redis's
// internals and its module API). The command answers as redis-server 7.0
// does with no module loaded: LIST is an empty array; LOAD, LOADEX and
// UNLOAD stay behind `enable-module-command` (no / yes / local, default no:
// the gate refuses them with Redis's error, cmd::kProtected); where allowed,
// a load fails with Redis's reply and a log line saying why, and an unload
// finds no such module.
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/logging.h"

namespace ringkv::server {
namespace {

using namespace cmd;  // NOLINT: flag names in the table below

void CmdModuleList(CommandContext& ctx) { ctx.reply.ArrayHeader(0); }

// MODULE LOAD path [arg ...] / MODULE LOADEX path [CONFIG name value ...] [ARGS ...]
void CmdModuleLoad(CommandContext& ctx) {
  Log(kWarning, StrCat("Module ", ctx.argv[2], " failed to load: ringkv does not load Redis modules"));
  ctx.reply.Error("ERR Error loading the extension. Please check the server logs.");
}

void CmdModuleUnload(CommandContext& ctx) {
  ctx.reply.Error("ERR Error unloading module: no such module with that name");
}

void CmdModuleHelp(CommandContext& ctx) {
  static constexpr const char* kLines[] = {
      "LIST",
      "    Return a list of loaded modules.",
      "LOAD <path> [<arg> ...]",
      "    Load a module library from <path>, passing to it any optional arguments.",
      "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
      "    Load a module library from <path>, while passing it module configurations and optional arguments.",
      "UNLOAD <name>",
      "    Unload a module.",
  };
  ReplyHelp(ctx, kLines);
}

}  // namespace

void RegisterModuleCommands(CommandTable& t) {
  const char* kAdminAcl = "@admin @slow @dangerous";
  std::vector<CommandSpec> subs;
  subs.push_back(Cmd("module|help", 2, kLoading | kStale, 0, 0, 0, "@slow", "server",
                     "Show helpful text about the different subcommands", "5.0.0", CmdModuleHelp));
  subs.push_back(Cmd("module|list", 2, kAdmin | kNoscript, 0, 0, 0, kAdminAcl, "server",
                     "List all modules loaded by the server", "4.0.0", CmdModuleList));
  subs.push_back(Cmd("module|load", -3, kAdmin | kProtected | kNoscript | kNoAsyncLoading, 0, 0, 0, kAdminAcl, "server",
                     "Load a module", "4.0.0", CmdModuleLoad));
  subs.push_back(Cmd("module|loadex", -3, kAdmin | kProtected | kNoscript | kNoAsyncLoading, 0, 0, 0, kAdminAcl, "server",
                     "Load a module with extended parameters", "7.0.0", CmdModuleLoad));
  subs.push_back(Cmd("module|unload", 3, kAdmin | kProtected | kNoscript | kNoAsyncLoading, 0, 0, 0, kAdminAcl, "server",
                     "Unload a module", "4.0.0", CmdModuleUnload));
  t.Add(Cmd("module", -2, 0, 0, 0, 0, "@slow", "server", "A container for module commands", "4.0.0", nullptr,
            std::move(subs)));
}

}  // namespace ringkv::server

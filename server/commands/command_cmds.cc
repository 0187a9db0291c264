// COMMAND and its subcommands: the command table as clients see it.
#include "core/strings.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/glob.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

void ReplyCommandInfo(io::ReplyBuilder& rb, const CommandSpec& c) {
  rb.ArrayHeader(10);
  rb.Bulk(c.name);
  rb.Integer(c.arity);
  auto flags = FlagNames(c.flags);
  rb.SetHeader(static_cast<int64_t>(flags.size()));
  for (std::string_view f : flags) rb.SimpleString(f);
  rb.Integer(c.first_key);
  rb.Integer(c.last_key);
  rb.Integer(c.step);
  std::vector<std::string_view> cats = Split(c.acl, ' ', true);
  rb.SetHeader(static_cast<int64_t>(cats.size()));
  for (std::string_view cat : cats) rb.SimpleString(cat);
  // Tips and key specs are sets in RESP3, as Redis 7.0 sends them; so are
  // subcommands when there are none (an array otherwise).
  rb.SetHeader(0);  // tips
  if (c.first_key > 0) {
    // One key spec describing the positions in the legacy triple.
    rb.SetHeader(1);
    rb.MapHeader(3);
    rb.Bulk("flags");
    rb.SetHeader(c.not_keys ? 1 : 0);
    if (c.not_keys) rb.SimpleString("not_key");
    rb.Bulk("begin_search");
    rb.MapHeader(2);
    rb.Bulk("type");
    rb.Bulk("index");
    rb.Bulk("spec");
    rb.MapHeader(1);
    rb.Bulk("index");
    rb.Integer(c.first_key);
    rb.Bulk("find_keys");
    rb.MapHeader(2);
    rb.Bulk("type");
    rb.Bulk("range");
    rb.Bulk("spec");
    rb.MapHeader(3);
    rb.Bulk("lastkey");
    rb.Integer(c.last_key < 0 ? c.last_key : c.last_key - c.first_key);
    rb.Bulk("keystep");
    rb.Integer(c.step);
    rb.Bulk("limit");
    rb.Integer(0);
  } else {
    rb.SetHeader(0);
  }
  if (c.subcommands.empty()) {
    rb.SetHeader(0);
    return;
  }
  rb.ArrayHeader(static_cast<int64_t>(c.subcommands.size()));
  for (const CommandSpec& s : c.subcommands) ReplyCommandInfo(rb, s);
}

void ReplyCommandDocs(io::ReplyBuilder& rb, const CommandSpec& c) {
  rb.Bulk(c.name);
  rb.MapHeader(c.subcommands.empty() ? 3 : 4);
  rb.Bulk("summary");
  rb.Bulk(c.summary);
  rb.Bulk("since");
  rb.Bulk(c.since);
  rb.Bulk("group");
  rb.Bulk(c.group);
  if (!c.subcommands.empty()) {
    rb.Bulk("subcommands");
    rb.MapHeader(static_cast<int64_t>(c.subcommands.size()));
    for (const CommandSpec& s : c.subcommands) ReplyCommandDocs(rb, s);
  }
}

void CmdCommand(CommandContext& ctx) {
  const auto& all = ctx.server.commands().all();
  ctx.reply.ArrayHeader(static_cast<int64_t>(all.size()));
  for (const auto& c : all) ReplyCommandInfo(ctx.reply, *c);
}

void CmdCommandCount(CommandContext& ctx) { ctx.reply.Integer(static_cast<int64_t>(ctx.server.commands().size())); }

// A command by its full name: "get", or "config|get" for a subcommand.
const CommandSpec* FindByFullName(CommandContext& ctx, std::string_view name) {
  const size_t bar = name.find('|');
  if (bar == std::string_view::npos) return ctx.server.commands().Find(name);
  const CommandSpec* container = ctx.server.commands().Find(name.substr(0, bar));
  return container == nullptr ? nullptr : CommandTable::FindSub(*container, name.substr(bar + 1));
}

void CmdCommandInfo(CommandContext& ctx) {
  if (ctx.argv.size() == 2) {
    CmdCommand(ctx);
    return;
  }
  ctx.reply.ArrayHeader(static_cast<int64_t>(ctx.argv.size() - 2));
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    const CommandSpec* c = FindByFullName(ctx, ctx.argv[i]);
    if (c == nullptr) {
      ctx.reply.Null();  // Redis's addReplyNull: $-1 in RESP2
    } else {
      ReplyCommandInfo(ctx.reply, *c);
    }
  }
}

void CmdCommandDocs(CommandContext& ctx) {
  std::vector<const CommandSpec*> list;
  if (ctx.argv.size() == 2) {
    for (const auto& c : ctx.server.commands().all()) list.push_back(c.get());
  } else {
    for (size_t i = 2; i < ctx.argv.size(); ++i) {
      if (const CommandSpec* c = FindByFullName(ctx, ctx.argv[i])) list.push_back(c);
    }
  }
  ctx.reply.MapHeader(static_cast<int64_t>(list.size()));
  for (const CommandSpec* c : list) ReplyCommandDocs(ctx.reply, *c);
}

void CmdCommandList(CommandContext& ctx) {
  std::string_view kind, value;
  if (ctx.argv.size() == 5 && Is(ctx.argv[2], "FILTERBY")) {
    kind = ctx.argv[3];
    value = ctx.argv[4];
    if (!Is(kind, "MODULE") && !Is(kind, "ACLCAT") && !Is(kind, "PATTERN")) {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  } else if (ctx.argv.size() != 2) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  std::vector<std::string_view> names;
  auto consider = [&](const CommandSpec& c) {
    if (Is(kind, "MODULE")) return;  // no modules
    if (Is(kind, "ACLCAT") && c.acl.find(StrCat("@", value)) == std::string::npos) return;
    if (Is(kind, "PATTERN") && !core::GlobMatch(value, c.name, true)) return;
    names.push_back(c.name);
  };
  for (const auto& c : ctx.server.commands().all()) {
    consider(*c);
    for (const CommandSpec& s : c->subcommands) consider(s);
  }
  ctx.reply.ArrayHeader(static_cast<int64_t>(names.size()));
  for (std::string_view n : names) ctx.reply.Bulk(n);
}

void CmdCommandGetkeys(CommandContext& ctx) {
  Argv args = ctx.argv.subspan(2);
  const CommandSpec* c = ctx.server.commands().Find(args[0]);
  if (c == nullptr) {
    ctx.reply.Error("ERR Invalid command specified");
    return;
  }
  if (!c->subcommands.empty() && args.size() >= 2) {
    if (const CommandSpec* s = CommandTable::FindSub(*c, args[1])) c = s;
  }
  const int argc = static_cast<int>(args.size());
  if ((c->arity > 0 && argc != c->arity) || argc < -c->arity) {
    ctx.reply.Error("ERR Invalid arguments specified for command");
    return;
  }
  if (c->first_key == 0) {
    ctx.reply.Error("ERR The command has no key arguments");
    return;
  }
  int last = c->last_key < 0 ? argc + c->last_key : c->last_key;
  std::vector<std::string_view> keys;
  for (int i = c->first_key; i <= last && i < argc; i += c->step) keys.push_back(args[i]);
  ctx.reply.ArrayHeader(static_cast<int64_t>(keys.size()));
  for (std::string_view k : keys) ctx.reply.Bulk(k);
}

void CmdCommandHelp(CommandContext& ctx) {
  static const char* kLines[] = {
      "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "(no subcommand)",
      "    Return details about all Redis commands.",
      "COUNT",
      "    Return the total number of commands in this Redis server.",
      "LIST",
      "    Return a list of all commands in this Redis server.",
      "INFO [<command-name> ...]",
      "    Return details about multiple Redis commands.",
      "    If no command names are given, documentation details for all",
      "    commands are returned.",
      "DOCS [<command-name> ...]",
      "    Return documentation details about multiple Redis commands.",
      "    If no command names are given, documentation details for all",
      "    commands are returned.",
      "GETKEYS <full-command>",
      "    Return the keys from a full Redis command.",
      "GETKEYSANDFLAGS <full-command>",
      "    Return the keys and the access flags from a full Redis command.",
      "HELP",
      "    Print this help.",
  };
  ReplyHelp(ctx, kLines);
}

}  // namespace

void RegisterIntrospectionCommands(CommandTable& t) {
  using namespace cmd;
  const uint32_t f = kLoading | kStale;
  std::vector<CommandSpec> subs;
  subs.push_back(Cmd("command|count", 2, f, 0, 0, 0, "@slow @connection", "server", "Returns a count of commands.", "2.8.13", CmdCommandCount));
  subs.push_back(Cmd("command|docs", -2, f, 0, 0, 0, "@slow @connection", "server", "Returns documentary information about one, multiple or all commands.", "7.0.0", CmdCommandDocs));
  subs.push_back(Cmd("command|getkeys", -4, f, 0, 0, 0, "@slow @connection", "server", "Extracts the key names from an arbitrary command.", "2.8.13", CmdCommandGetkeys));
  subs.push_back(Cmd("command|info", -2, f, 0, 0, 0, "@slow @connection", "server", "Returns information about one, multiple or all commands.", "2.8.13", CmdCommandInfo));
  subs.push_back(Cmd("command|list", -2, f, 0, 0, 0, "@slow @connection", "server", "Returns a list of command names.", "7.0.0", CmdCommandList));
  subs.push_back(Cmd("command|help", 2, f, 0, 0, 0, "@slow @connection", "server", "Returns helpful text about the different subcommands.", "5.0.0", CmdCommandHelp));
  // A container with a handler of its own: COMMAND alone lists everything.
  t.Add(Cmd("command", -1, f, 0, 0, 0, "@slow @connection", "server", "Returns detailed information about all commands.", "2.8.13", CmdCommand, std::move(subs)));
}

}  // namespace ringkv::server

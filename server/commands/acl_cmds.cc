// ACL and its subcommands: users, the rules, the log, the ACL file.
#include <openssl/rand.h>

#include "core/strings.h"
#include "server/acl/acl.h"
#include "server/acl/acl_clients.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

void ReplySelector(io::ReplyBuilder& rb, const acl::CommandIndex& index, const acl::Selector& s) {
  rb.Bulk("commands");
  rb.Bulk(acl::DescribeCommandRules(index, s));
  rb.Bulk("keys");
  rb.Bulk(acl::DescribeKeys(s));
  rb.Bulk("channels");
  rb.Bulk(acl::DescribeChannels(s));
}

void CmdAclSetuser(ServerCommandContext& ctx) {
  std::string_view name = ctx.argv[2];
  if (acl::HasSpaces(name)) {
    ctx.reply.Error("ERR Usernames can't contain spaces or null characters");
    return;
  }
  std::string err;
  std::shared_ptr<const acl::User> before;
  if (!ctx.server.acl().SetUser(name, ctx.argv.subspan(3), &err, &before)) {
    ctx.reply.Error(StrCat("ERR ", err));
    return;
  }
  if (before != nullptr) CloseRevokedSubscribers(ctx.server, *before, *ctx.server.acl().Find(name));
  ctx.reply.Ok();
}

void CmdAclDeluser(ServerCommandContext& ctx) {
  for (std::string_view name : ctx.argv.subspan(2)) {
    if (name == "default") {
      ctx.reply.Error("ERR The 'default' user cannot be removed");
      return;
    }
  }
  std::vector<std::shared_ptr<acl::User>> deleted;
  for (std::string_view name : ctx.argv.subspan(2)) {
    if (std::shared_ptr<acl::User> u = ctx.server.acl().DeleteUser(name)) deleted.push_back(std::move(u));
  }
  // The reply first: the caller may be among the clients closed.
  ctx.reply.Integer(static_cast<int64_t>(deleted.size()));
  for (const auto& u : deleted) CloseClientsOfUser(ctx.server, u.get());
}

void CmdAclGetuser(ServerCommandContext& ctx) {
  std::shared_ptr<acl::User> u = ctx.server.acl().Find(ctx.argv[2]);
  if (u == nullptr) {
    ctx.reply.Null();
    return;
  }
  io::ReplyBuilder& rb = ctx.reply;
  rb.MapHeader(6);
  rb.Bulk("flags");
  const std::vector<std::string_view> flags = acl::UserFlags(*u);
  rb.SetHeader(static_cast<int64_t>(flags.size()));
  for (std::string_view f : flags) rb.Bulk(f);
  rb.Bulk("passwords");
  rb.ArrayHeader(static_cast<int64_t>(u->passwords.size()));
  for (const std::string& p : u->passwords) rb.Bulk(p);
  ReplySelector(rb, ctx.server.acl().index(), u->selectors[0]);
  rb.Bulk("selectors");
  rb.ArrayHeader(static_cast<int64_t>(u->selectors.size() - 1));
  for (size_t i = 1; i < u->selectors.size(); ++i) {
    rb.MapHeader(3);
    ReplySelector(rb, ctx.server.acl().index(), u->selectors[i]);
  }
}

void CmdAclList(ServerCommandContext& ctx) {
  const std::vector<std::string> lines = ctx.server.acl().UserLines();
  ctx.reply.ArrayHeader(static_cast<int64_t>(lines.size()));
  for (const std::string& l : lines) ctx.reply.Bulk(l);
}

void CmdAclUsers(ServerCommandContext& ctx) {
  ctx.reply.ArrayHeader(static_cast<int64_t>(ctx.server.acl().users().size()));
  for (const auto& [name, u] : ctx.server.acl().users()) ctx.reply.Bulk(name);
}

void CmdAclWhoami(ServerCommandContext& ctx) { ctx.reply.Bulk(AclUserOf(ctx.server, ctx.client).name); }

bool CheckAclFile(ServerCommandContext& ctx) {
  if (!ctx.server.config().Str("aclfile").empty()) return true;
  ctx.reply.Error(
      "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL "
      "SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order "
      "to store users in the Redis configuration.");
  return false;
}

void CmdAclLoad(ServerCommandContext& ctx) {
  if (!CheckAclFile(ctx)) return;
  std::string err;
  std::vector<std::shared_ptr<acl::User>> dropped;
  if (!ctx.server.acl().LoadFile(ctx.server.config().Str("aclfile"), &err, &dropped)) {
    ctx.reply.Error(StrCat("ERR ", err));
    return;
  }
  ctx.reply.Ok();
  for (const auto& u : dropped) CloseClientsOfUser(ctx.server, u.get());
}

void CmdAclSave(ServerCommandContext& ctx) {
  if (!CheckAclFile(ctx)) return;
  std::string err;
  if (!ctx.server.acl().SaveFile(ctx.server.config().Str("aclfile"), &err)) {
    ctx.reply.Error(StrCat("ERR ", err));
    return;
  }
  ctx.reply.Ok();
}

void CmdAclCat(ServerCommandContext& ctx) {
  if (ctx.argv.size() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  if (ctx.argv.size() == 2) {
    ctx.reply.ArrayHeader(static_cast<int64_t>(std::size(acl::kCategories)));
    for (std::string_view c : acl::kCategories) ctx.reply.Bulk(c);
    return;
  }
  const uint32_t bit = acl::CommandIndex::CategoryBit(ctx.argv[2]);
  if (bit == 0) {
    ctx.reply.Error(StrCat("ERR Unknown category '", ctx.argv[2].substr(0, 128), "'"));
    return;
  }
  const acl::CommandIndex& index = ctx.server.acl().index();
  std::vector<std::string_view> names;
  for (size_t id = 0; id < index.commands().size(); ++id) {
    if (index.categories(id) & bit) names.push_back(index.commands()[id]->name);
  }
  ctx.reply.ArrayHeader(static_cast<int64_t>(names.size()));
  for (std::string_view n : names) ctx.reply.Bulk(n);
}

void CmdAclGenpass(ServerCommandContext& ctx) {
  if (ctx.argv.size() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  int64_t bits = 256;
  if (ctx.argv.size() == 3 && !ParseInt(ctx, ctx.argv[2], &bits)) return;
  if (bits <= 0 || bits > 4096) {
    ctx.reply.Error(
        "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096");
    return;
  }
  const size_t chars = static_cast<size_t>((bits + 3) / 4);
  std::vector<unsigned char> raw((chars + 1) / 2);
  RAND_bytes(raw.data(), static_cast<int>(raw.size()));
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : raw) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xf]);
  }
  out.resize(chars);
  ctx.reply.Bulk(out);
}

const char* ReasonName(acl::Denied d) {
  switch (d) {
    case acl::Denied::kCommand:
      return "command";
    case acl::Denied::kKey:
      return "key";
    case acl::Denied::kChannel:
      return "channel";
    case acl::Denied::kAuth:
      return "auth";
    default:
      return "unknown";
  }
}

const char* ContextName(acl::LogContext c) {
  switch (c) {
    case acl::LogContext::kToplevel:
      return "toplevel";
    case acl::LogContext::kMulti:
      return "multi";
    case acl::LogContext::kLua:
      return "lua";
  }
  return "unknown";
}

void CmdAclLog(ServerCommandContext& ctx) {
  if (ctx.argv.size() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  int64_t count = 10;
  if (ctx.argv.size() == 3) {
    if (Is(ctx.argv[2], "reset")) {
      ctx.server.acl().ResetLog();
      ctx.reply.Ok();
      return;
    }
    if (!ParseInt(ctx, ctx.argv[2], &count)) return;
    if (count < 0) count = 0;
  }
  const auto& log = ctx.server.acl().log();
  count = std::min<int64_t>(count, static_cast<int64_t>(log.size()));
  ctx.reply.ArrayHeader(count);
  for (int64_t i = 0; i < count; ++i) {
    const acl::LogEntry& e = log[static_cast<size_t>(i)];
    ctx.reply.MapHeader(7);
    ctx.reply.Bulk("count");
    ctx.reply.Integer(static_cast<int64_t>(e.count));
    ctx.reply.Bulk("reason");
    ctx.reply.Bulk(ReasonName(e.reason));
    ctx.reply.Bulk("context");
    ctx.reply.Bulk(ContextName(e.context));
    ctx.reply.Bulk("object");
    ctx.reply.Bulk(e.object);
    ctx.reply.Bulk("username");
    ctx.reply.Bulk(e.username);
    ctx.reply.Bulk("age-seconds");
    ctx.reply.Double(static_cast<double>(ctx.now_ms - e.ctime_ms) / 1000);
    ctx.reply.Bulk("client-info");
    ctx.reply.Bulk(e.client_info);
  }
}

void CmdAclDryrun(ServerCommandContext& ctx) {
  std::shared_ptr<acl::User> u = ctx.server.acl().Find(ctx.argv[2]);
  if (u == nullptr) {
    ctx.reply.Error(StrCat("ERR User '", ctx.argv[2], "' not found"));
    return;
  }
  Argv args = ctx.argv.subspan(3);
  const CommandSpec* spec = ctx.server.commands().Find(args[0]);
  if (spec != nullptr && !spec->subcommands.empty() && args.size() >= 2) {
    spec = CommandTable::FindSub(*spec, args[1]);
  }
  if (spec == nullptr) {
    ctx.reply.Error(StrCat("ERR Command '", args[0], "' not found"));
    return;
  }
  const int argc = static_cast<int>(args.size());
  if ((spec->arity > 0 && argc != spec->arity) || argc < -spec->arity) {
    ctx.reply.Error(StrCat("ERR wrong number of arguments for '", spec->name, "' command"));
    return;
  }
  acl::Verdict v = ctx.server.acl().Check(*u, *spec, args);
  if (!v.ok()) {
    ctx.reply.Bulk(acl::Acl::DryRunError(v.denied, *spec, args[v.pos]));
    return;
  }
  ctx.reply.Ok();
}

void CmdAclHelp(ServerCommandContext& ctx) {
  static const char* kLines[] = {
      "CAT [<category>]",
      "    List all commands that belong to <category>, or all command categories",
      "    when no category is specified.",
      "DELUSER <username> [<username> ...]",
      "    Delete a list of users.",
      "DRYRUN <username> <command> [<arg> ...]",
      "    Returns whether the user can execute the given command without executing the command.",
      "GETUSER <username>",
      "    Get the user's details.",
      "GENPASS [<bits>]",
      "    Generate a secure 256-bit user password. The optional `bits` argument can",
      "    be used to specify a different size.",
      "LIST",
      "    Show users details in config file format.",
      "LOAD",
      "    Reload users from the ACL file.",
      "LOG [<count> | RESET]",
      "    Show the ACL log entries.",
      "SAVE",
      "    Save the current config to the ACL file.",
      "SETUSER <username> <attribute> [<attribute> ...]",
      "    Create or modify a user with the specified attributes.",
      "USERS",
      "    List all the registered usernames.",
      "WHOAMI",
      "    Return the current connection username.",
  };
  ReplyHelp(ctx, kLines);
}

}  // namespace

void RegisterAclCommands(CommandTable& t) {
  using namespace cmd;
  const uint32_t admin = kAdmin | kNoscript | kLoading | kStale;
  const uint32_t plain = kNoscript | kLoading | kStale;
  const char* kAdminCats = "@admin @slow @dangerous";
  std::vector<CommandSpec> subs;
  subs.push_back(Cmd("acl|cat", -2, plain, 0, 0, 0, "@slow", "server", "List the ACL categories or the commands inside a category", "6.0.0", CmdAclCat));
  subs.push_back(Cmd("acl|deluser", -3, admin, 0, 0, 0, kAdminCats, "server", "Remove the specified ACL users and the associated rules", "6.0.0", CmdAclDeluser));
  subs.push_back(Cmd("acl|dryrun", -4, admin, 0, 0, 0, kAdminCats, "server", "Returns whether the user can execute the given command without executing the command.", "7.0.0", CmdAclDryrun));
  subs.push_back(Cmd("acl|genpass", -2, plain, 0, 0, 0, "@slow", "server", "Generate a pseudorandom secure password to use for ACL users", "6.0.0", CmdAclGenpass));
  subs.push_back(Cmd("acl|getuser", 3, admin, 0, 0, 0, kAdminCats, "server", "Get the rules for a specific ACL user", "6.0.0", CmdAclGetuser));
  subs.push_back(Cmd("acl|help", 2, kLoading | kStale, 0, 0, 0, "@slow", "server", "Show helpful text about the different subcommands", "6.0.0", CmdAclHelp));
  subs.push_back(Cmd("acl|list", 2, admin, 0, 0, 0, kAdminCats, "server", "List the current ACL rules in ACL config file format", "6.0.0", CmdAclList));
  subs.push_back(Cmd("acl|load", 2, admin, 0, 0, 0, kAdminCats, "server", "Reload the ACLs from the configured ACL file", "6.0.0", CmdAclLoad));
  subs.push_back(Cmd("acl|log", -2, admin, 0, 0, 0, kAdminCats, "server", "List latest events denied because of ACLs in place", "6.0.0", CmdAclLog));
  subs.push_back(Cmd("acl|save", 2, admin, 0, 0, 0, kAdminCats, "server", "Save the current ACL rules in the configured ACL file", "6.0.0", CmdAclSave));
  subs.push_back(Cmd("acl|setuser", -3, admin, 0, 0, 0, kAdminCats, "server", "Modify or create the rules for a specific ACL user", "6.0.0", CmdAclSetuser));
  subs.push_back(Cmd("acl|users", 2, admin, 0, 0, 0, kAdminCats, "server", "List the username of all the configured ACL rules", "6.0.0", CmdAclUsers));
  subs.push_back(Cmd("acl|whoami", 2, plain, 0, 0, 0, "@slow", "server", "Return the name of the user associated to the current connection", "6.0.0", CmdAclWhoami));
  t.Add(Cmd("acl", -2, 0, 0, 0, 0, "@slow", "server", "A container for Access List Control commands ", "6.0.0", nullptr, std::move(subs)));
}

}  // namespace ringkv::server

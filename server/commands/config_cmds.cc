// CONFIG GET / SET / REWRITE / RESETSTAT / HELP.
#include "core/strings.h"
#include "absl/strings/str_cat.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/logging.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

void CmdConfigGet(ServerCommandContext& ctx) {
  std::vector<std::string> patterns(ctx.argv.begin() + 2, ctx.argv.end());
  auto pairs = ctx.server.config().Match(patterns);
  ctx.reply.MapHeader(static_cast<int64_t>(pairs.size()));
  for (const auto& [name, value] : pairs) {
    ctx.reply.Bulk(name);
    ctx.reply.Bulk(value);
  }
}

void CmdConfigSet(ServerCommandContext& ctx) {
  if ((ctx.argv.size() - 2) % 2 != 0) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t i = 2; i + 1 < ctx.argv.size(); i += 2) pairs.emplace_back(ctx.argv[i], ctx.argv[i + 1]);
  // Redis's DENY_LOADING_CONFIG (dir, appendonly): refused while a dataset
  // loads -- at start-up, DEBUG RELOAD, a replica's load of its primary's
  // payload, and a diskless load aside (the AOF is not switched while it
  // will be rebuilt from that payload).
  const bool loading = ctx.server.loading().active() || ctx.server.replica_side().async_loading() ||
                       ctx.server.replica_side().sync_loading();
  std::string error;
  if (!ctx.server.config().SetFromCommand(pairs, &error, ctx.client.loopback, loading)) {
    ctx.reply.Error(error);
    return;
  }
  ctx.reply.Ok();
}

void CmdConfigRewrite(ServerCommandContext& ctx) {
  // replicaof is written as the server replicates now (REPLICAOF changes it
  // at run time), so a restart continues the replication -- with the RDB's
  // replication info, by partial resync.
  const repl::MasterLink* m = ctx.server.replica_side().master_link();
  std::vector<std::string> primary;
  if (m != nullptr) primary = {m->host, std::to_string(m->port)};
  if (absl::Status set = ctx.server.config().SetValue("replicaof", primary); !set.ok()) {
    ctx.reply.Error(ToStd(set.message()));
    return;
  }
  absl::Status s = ctx.server.config().Rewrite();
  if (!s.ok()) {
    Log(kWarning, StrCat("CONFIG REWRITE failed: ", s.message()));
    ctx.reply.Error(ToStd(s.message()));
    return;
  }
  Log(kNotice, "CONFIG REWRITE executed with success.");
  ctx.reply.Ok();
}

void CmdConfigResetstat(ServerCommandContext& ctx) {
  Server& s = ctx.server;
  s.stats().ResetCounters();
  s.stats().net_base = s.io().net_totals();
  s.error_stats().Reset();
  s.keyspace().stats() = core::KeyspaceStats{};
  s.mutable_commands().ResetStats();
  s.lazy_freer().ResetFreedObjects();
  ctx.reply.Ok();
}

void CmdConfigHelp(ServerCommandContext& ctx) {
  static const char* kLines[] = {
      "GET <pattern>",
      "    Return parameters matching the glob-like <pattern> and their values.",
      "SET <directive> <value>",
      "    Set the configuration <directive> to <value>.",
      "RESETSTAT",
      "    Reset statistics reported by the INFO command.",
      "REWRITE",
      "    Rewrite the configuration file.",
  };
  ReplyHelp(ctx, kLines);
}

}  // namespace

void RegisterConfigCommands(CommandTable& t) {
  using namespace cmd;
  std::vector<CommandSpec> subs;
  subs.push_back(Cmd("config|get", -3, kAdmin | kNoscript | kLoading | kStale, 0, 0, 0, "@admin @slow @dangerous", "server", "Returns the effective values of configuration parameters.", "2.0.0", CmdConfigGet));
  subs.push_back(Cmd("config|set", -4, kAdmin | kNoscript | kLoading | kStale, 0, 0, 0, "@admin @slow @dangerous", "server", "Sets configuration parameters in-flight.", "2.0.0", CmdConfigSet));
  subs.push_back(Cmd("config|rewrite", 2, kAdmin | kNoscript | kLoading | kStale, 0, 0, 0, "@admin @slow @dangerous", "server", "Persists the effective configuration to file.", "2.8.0", CmdConfigRewrite));
  subs.push_back(Cmd("config|resetstat", 2, kAdmin | kNoscript | kLoading | kStale, 0, 0, 0, "@admin @slow @dangerous", "server", "Resets the server's statistics.", "2.0.0", CmdConfigResetstat));
  subs.push_back(Cmd("config|help", 2, kLoading | kStale, 0, 0, 0, "@slow", "server", "Returns helpful text about the different subcommands.", "5.0.0", CmdConfigHelp));
  t.Add(Cmd("config", -2, 0, 0, 0, 0, "@slow", "server", "A container for server configuration commands.", "2.0.0", nullptr, std::move(subs)));
}

}  // namespace ringkv::server

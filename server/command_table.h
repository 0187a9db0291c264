// CommandTable: every command, looked up case-insensitively by name.
//
// Built once at start-up by the Register*Commands functions of the command
// family files; read-only afterwards except for the per-command statistics.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/string_hash.h"
#include "server/command.h"

namespace ringkv::server {

class CommandTable {
 public:
  void Add(CommandSpec spec);
  // nullptr when unknown. `name` in any case.
  const CommandSpec* Find(std::string_view name) const;
  // Subcommand of a container (e.g. CONFIG GET) or nullptr.
  static const CommandSpec* FindSub(const CommandSpec& parent, std::string_view sub);
  const std::vector<std::unique_ptr<CommandSpec>>& all() const { return commands_; }
  size_t size() const { return commands_.size(); }
  void ResetStats();

 private:
  std::vector<std::unique_ptr<CommandSpec>> commands_;
  core::StringMap<const CommandSpec*> by_name_;
};

// The key arguments of a call, by the command's key positions (first, last,
// step) or its numkeys argument; empty for a command without keys.
std::vector<std::string_view> CommandKeys(const CommandSpec& spec, std::span<const std::string_view> argv);

// Each command family registers its table (server/commands/*.cc).
void RegisterConnectionCommands(CommandTable& table);
void RegisterPubsubCommands(CommandTable& table);
void RegisterServerCommands(CommandTable& table);
void RegisterConfigCommands(CommandTable& table);
void RegisterClientCommands(CommandTable& table);
void RegisterIntrospectionCommands(CommandTable& table);  // COMMAND
void RegisterStringCommands(CommandTable& table);
void RegisterBitmapCommands(CommandTable& table);  // SETBIT & co., BITFIELD
void RegisterHyperLogLogCommands(CommandTable& table);  // PFADD & co.
void RegisterGeoCommands(CommandTable& table);  // GEOADD & co.
void RegisterHashCommands(CommandTable& table);
void RegisterStreamCommands(CommandTable& table);
void RegisterListCommands(CommandTable& table);
void RegisterBlockingCommands(CommandTable& table);  // BLPOP & co.
void RegisterTransactionCommands(CommandTable& table);  // MULTI & co., MONITOR
void RegisterSortCommands(CommandTable& table);
void RegisterSetCommands(CommandTable& table);
void RegisterZSetCommands(CommandTable& table);
void RegisterZSetRangeCommands(CommandTable& table);
void RegisterZSetAlgebraCommands(CommandTable& table);
void RegisterKeyCommands(CommandTable& table);
void RegisterInfoCommand(CommandTable& table);
void RegisterDebugCommand(CommandTable& table);
void RegisterMemoryCommands(CommandTable& table);
void RegisterLatencyCommands(CommandTable& table);  // LATENCY
void RegisterPersistenceCommands(CommandTable& table);  // SAVE, BGSAVE, BGREWRITEAOF
void RegisterReplicationCommands(CommandTable& table);  // REPLCONF, PSYNC, SYNC, WAIT, WAITAOF, ROLE
void RegisterDumpCommands(CommandTable& table);         // DUMP, RESTORE
void RegisterMigrateCommands(CommandTable& table);      // MIGRATE
void RegisterScriptingCommands(CommandTable& table);  // EVAL & co., SCRIPT
void RegisterFunctionCommands(CommandTable& table);   // FUNCTION, FCALL
void RegisterAclCommands(CommandTable& table);        // ACL
void RegisterClusterCommands(CommandTable& table);    // CLUSTER, ASKING, READONLY, READWRITE (cluster-enabled no)
void RegisterModuleCommands(CommandTable& table);     // MODULE (no module loads)
void RegisterAllCommands(CommandTable& table);

}  // namespace ringkv::server

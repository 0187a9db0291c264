// CommandTable: every command, looked up case-insensitively by name.
//
// Built once at start-up by the Register*Commands functions of the command
// family files; read-only afterwards except for the per-command statistics.
//
// Find runs once per command on the main thread, so it is built for that:
// the name is case-folded eight bytes at a time (SWAR) into two words, and
// those words, hashed, index a small open-addressing array of slots that
// hold the folded words of each name.  A hit costs two word compares and,
// for names longer than 16 bytes, a compare of the rest; no per-byte loop,
// no temporary string.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

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

  // The first 16 bytes of a name, ASCII letters folded to lower case, zero
  // padded.  Exposed for the tests.
  struct Folded {
    uint64_t w0 = 0;
    uint64_t w1 = 0;
    bool operator==(const Folded&) const = default;
  };
  static Folded Fold(std::string_view name);

 private:
  struct Slot {
    Folded folded;
    const CommandSpec* spec = nullptr;  // nullptr: empty slot
    uint32_t len = 0;
  };
  // Power of two, at least four times the number of commands (Add grows it).
  static constexpr size_t kInitialSlots = 512;
  static size_t SlotOf(const Folded& f, size_t len, size_t mask);
  void Insert(const CommandSpec* spec);

  std::vector<std::unique_ptr<CommandSpec>> commands_;
  std::vector<Slot> slots_ = std::vector<Slot>(kInitialSlots);
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
void RegisterFlushCommands(CommandTable& table);  // FLUSHDB, FLUSHALL, SWAPDB
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

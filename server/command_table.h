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
// no temporary string.  Before all that, the last name found (its exact
// bytes) is compared: a pipeline's commands mostly repeat it.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "server/command.h"

namespace ringkv::server {

class CommandTable {
 public:
  void Add(CommandSpec spec);
  // nullptr when unknown. `name` in any case. Main thread only: the last
  // name found is remembered as its bytes, and a pipeline's commands mostly
  // repeat it, so a repeat costs a length and a word compare (no fold, no
  // hash, no slot).
  [[gnu::always_inline]] const CommandSpec* Find(std::string_view name) const {
    if (name.size() == last_len_ && LoadUpTo8(name.data(), name.size()) == last_word_) return last_spec_;
    return FindAndRemember(name);
  }
  // rename-command: the command named `from` is found by the name `to`
  // from now on, and no longer by its own; `to` empty: by no name at all.
  // Every lookup follows (clients, scripts, the AOF and the primary's
  // stream, as in Redis); the command keeps its name everywhere else
  // (COMMAND, commandstats). Errors in Redis's words: an unknown `from`, a
  // `to` already taken. Top-level commands only, as Redis.
  absl::Status Rename(std::string_view from, std::string_view to);
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

  // Up to 8 bytes of `p` as a little-endian word, zero padded, without
  // reading past p + n: the inline Find's compare, and the tests'.
  static uint64_t LoadUpTo8(const char* p, size_t n) {
    uint64_t w = 0;
    if (n >= 8) {
      std::memcpy(&w, p, 8);
    } else if (n >= 4) {
      uint32_t lo, hi;
      std::memcpy(&lo, p, 4);
      std::memcpy(&hi, p + n - 4, 4);
      // The two loads overlap when n < 8: shift the high one into place.
      w = lo | (static_cast<uint64_t>(hi) << (8 * (n - 4)));
    } else if (n > 0) {
      const auto b = [p](size_t i) { return static_cast<uint64_t>(static_cast<unsigned char>(p[i])); };
      w = b(0) | (b(n / 2) << (8 * (n / 2))) | (b(n - 1) << (8 * (n - 1)));
    }
    return w;
  }

 private:
  struct Slot {
    Folded folded;
    const CommandSpec* spec = nullptr;  // nullptr: empty slot
    uint32_t len = 0;
    const char* name = nullptr;  // the name it is found by (lower case): spec->name, or a rename's
  };
  // Power of two, at least four times the number of commands (Add grows it).
  static constexpr size_t kInitialSlots = 512;
  static size_t SlotOf(const Folded& f, size_t len, size_t mask);
  void Insert(const CommandSpec* spec, std::string_view name);
  // Every slot again, each command under the name it is found by.
  void Rebuild();
  // The name a command is found by: its own, unless renamed.
  std::string_view LookupName(const CommandSpec* spec) const;

  const CommandSpec* FindAndRemember(std::string_view name) const;
  const CommandSpec* FindSlow(std::string_view name) const;

  std::vector<std::unique_ptr<CommandSpec>> commands_;
  std::vector<Slot> slots_ = std::vector<Slot>(kInitialSlots);
  // rename-command: a command's lookup name ("": hidden). Node-based, so
  // the slots' name pointers stay valid.
  std::map<const CommandSpec*, std::string> renamed_;
  // The last name Find found: its exact bytes (names of at most 8 bytes;
  // last_len_ 0 matches only the empty name, which is unknown: last_spec_
  // nullptr) and its command.
  mutable uint64_t last_word_ = 0;
  mutable size_t last_len_ = 0;
  mutable const CommandSpec* last_spec_ = nullptr;
};

// The key arguments of a call, by the command's key positions (first, last,
// step) or its numkeys argument; empty for a command without keys.
std::vector<std::string_view> CommandKeys(const CommandSpec& spec, std::span<const std::string_view> argv);

// Each command family registers its table (server/commands/*.cc).
void RegisterConnectionCommands(CommandTable& table);
void RegisterPubsubCommands(CommandTable& table);
void RegisterServerCommands(CommandTable& table);
void RegisterLolwutCommands(CommandTable& table);  // LOLWUT
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

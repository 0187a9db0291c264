// CommandSpec and CommandContext: what a command is and what it runs with.
//
// A command family file declares its commands as a table of CommandSpec rows
// (name, arity, flags, key positions, handler) and registers them with the
// CommandTable. Arity, authentication and the "is this allowed now" checks run
// once in the gate (Server::Execute, command_gate.cc), never in handlers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/latency_histogram.h"
#include "io/reply_builder.h"
#include "server/effects.h"

namespace ringkv::core {
class Value;
class Database;
class Keyspace;
}  // namespace ringkv::core

namespace ringkv::server {

class Server;
struct Client;

namespace cmd {
// Flags, with the names COMMAND INFO shows.
enum Flag : uint32_t {
  kWrite = 1u << 0,
  kReadonly = 1u << 1,
  kDenyOom = 1u << 2,
  kAdmin = 1u << 3,
  kPubsub = 1u << 4,
  kNoscript = 1u << 5,
  kBlocking = 1u << 6,
  kLoading = 1u << 7,
  kStale = 1u << 8,
  kSkipMonitor = 1u << 9,
  kSkipSlowlog = 1u << 10,
  kFast = 1u << 11,
  kNoAuth = 1u << 12,
  kMayReplicate = 1u << 13,
  kNoMulti = 1u << 14,
  kAllowBusy = 1u << 15,
  kSentinel = 1u << 16,
  kOnlySentinel = 1u << 17,
  kNoAsyncLoading = 1u << 18,
  kAsking = 1u << 19,  // accepted for a slot being imported (RESTORE-ASKING); shown only
  // Behind enable-debug-command / enable-module-command (DEBUG, MODULE LOAD,
  // LOADEX, UNLOAD): refused by the gate where not allowed. Not shown, as in
  // Redis.
  kProtected = 1u << 20,
  // The key arguments are optional (EVAL & co., FCALL & co.); shown only.
  kNoMandatoryKeys = 1u << 21,
};
}  // namespace cmd

using Argv = std::span<const std::string_view>;

// What a data family's handler has (generic keys, strings, hashes, lists,
// sets, sorted sets, streams, bitmaps, HyperLogLog, geo, blocking pops): the
// keyspace, the client's database, its arguments, its reply, and the effects
// record through which it reports what it changed (and blocks its client).
// It has no way to the server: the type carries none.
struct CommandContext {
  // `server`: what the effects record is bound to (null: unbound, the Op*
  // unit tests).
  CommandContext(Server* server, Client& client, io::ReplyBuilder& reply, Argv argv, int64_t now_ms,
                 core::Keyspace& keyspace, core::Database& db)
      : client(client), reply(reply), argv(argv), now_ms(now_ms), keyspace(keyspace), db(db), effects(server, &client) {}
  CommandContext(const CommandContext&) = delete;
  CommandContext& operator=(const CommandContext&) = delete;

  Client& client;
  io::ReplyBuilder& reply;
  Argv argv;
  int64_t now_ms;  // wall clock at dispatch (one read per command)
  core::Keyspace& keyspace;  // its limits (the encodings, proto-max-bulk-len) and random generator
  core::Database& db;        // the client's database when the command started
  // What the command's Op* functions change is reported here; bound to the
  // server, which applies each report as it comes (server/effects.h).
  Effects effects;
  // This run serves a client its blocked command (the re-run once a key it
  // waits on is ready), not the command as sent: Redis's serving code
  // orders a few things otherwise (XREADGROUP: a new consumer's event
  // before the reply).
  bool serving_blocked = false;
  // Serving it, the key it was served on: the only one of its keys it
  // looks at (Redis serves a blocked client from the key that was ready).
  std::string_view served_key;

  // The same command with other arguments, reporting to the same server (a
  // blocked command is re-run on an argv rewritten now, XREAD's `$` turned
  // into the ID it stands for).
  CommandContext WithArgv(Argv other) const {
    return CommandContext(effects.bound_server(), client, reply, other, now_ms, keyspace, db);
  }
};

// What a server-level family's handler has: the command's context and the
// server it administers (CLIENT, CONFIG, DEBUG, INFO, REPLICAOF, ACL,
// CLUSTER, SCRIPT / FUNCTION, FLUSHALL, ...). A handler says which it is by
// its parameter's type; Cmd() keeps the two kinds apart in CommandSpec.
struct ServerCommandContext : CommandContext {
  ServerCommandContext(Server& server, Client& client, io::ReplyBuilder& reply, Argv argv, int64_t now_ms,
                       core::Keyspace& keyspace, core::Database& db)
      : CommandContext(&server, client, reply, argv, now_ms, keyspace, db), server(server) {}
  Server& server;
};

using CommandHandler = void (*)(CommandContext& ctx);
using ServerCommandHandler = void (*)(ServerCommandContext& ctx);

struct CommandSpec {
  std::string name;         // lower case; "config|get" for subcommands
  int arity;                // Redis convention: negative = at least -arity
  uint32_t flags;
  int first_key, last_key, step;
  std::string acl;          // "@read @string @fast"
  std::string group;        // COMMAND DOCS group
  std::string summary;
  std::string since;
  // One of the two is set, by the handler's kind; neither for containers
  // (dispatch picks a subcommand).
  CommandHandler handler = nullptr;
  ServerCommandHandler server_handler = nullptr;
  bool container() const { return handler == nullptr && server_handler == nullptr; }
  // Runs the handler, of either kind. REQUIRES: not a container.
  void Run(ServerCommandContext& ctx) const {
    if (handler != nullptr) {
      handler(ctx);
    } else {
      server_handler(ctx);
    }
  }
  std::vector<CommandSpec> subcommands;
  // The positions named by first/last/step are channels, not keys (the
  // shard pub/sub commands): COMMAND INFO's key spec says "not_key".
  bool not_keys = false;
  // Keys that first/last/step cannot describe (Redis's "movablekeys": a key
  // count, SORT's STORE) are found in the arguments by this function. It
  // returns false when the arguments name no valid keys (COMMAND GETKEYS's
  // "Invalid arguments"); a command whose keys are optional (EVAL) returns
  // true with none.
  using KeysFinder = bool (*)(std::span<const std::string_view> argv, std::vector<std::string_view>* keys);
  KeysFinder find_keys = nullptr;
  // Where a `numkeys key [key ...]` count sits (0: none); its first key
  // follows it. Read by the prefetcher, which looks at the first key only.
  uint8_t numkeys_index = 0;
  // The last prefetch round of a pipelined batch (Server::PrefetchBatch): given
  // the first key's stored value (expired or not, of any type) and the
  // command's arguments, hints the bytes the handler will read from it (the
  // byte GETBIT reads). Must change nothing and not trust the arguments.
  using ValuePrefetcher = void (*)(const core::Value& value, std::span<const std::string_view> argv);
  ValuePrefetcher prefetch_value = nullptr;
  // EVAL & co., FCALL & co.: the script's declared flags, not these, decide
  // the gate's write / OOM / stale checks (Scripting::GateFlags), from the
  // script's body, a cached script's sha, or a function's name.
  enum class Script : uint8_t { kNone, kBody, kSha, kFunction } script = Script::kNone;

  // commandstats (main thread)
  mutable uint64_t calls = 0;
  mutable uint64_t usec = 0;
  mutable uint64_t rejected_calls = 0;
  mutable uint64_t failed_calls = 0;
  // LATENCY HISTOGRAM and INFO latencystats: created by the first call
  // recorded while latency-tracking is on, dropped by CONFIG RESETSTAT.
  mutable std::unique_ptr<core::LatencyHistogram> latency_histogram;
};

// Files a handler by its kind (Cmd below).
inline void SetHandler(CommandSpec& s, CommandHandler handler) { s.handler = handler; }
inline void SetHandler(CommandSpec& s, ServerCommandHandler handler) { s.server_handler = handler; }
inline void SetHandler(CommandSpec&, std::nullptr_t /*a container*/) {}

// A command row for the family tables:
//   Cmd("get", 2, cmd::kReadonly | cmd::kFast, 1, 1, 1, "@read @string @fast", "string",
//       "Returns the string value of a key.", "1.0.0", CmdGet)
// `handler`: a data family's (CommandHandler), a server-level family's
// (ServerCommandHandler), or nullptr for a container of subcommands.
template <typename Handler>
CommandSpec Cmd(std::string name, int arity, uint32_t flags, int first_key, int last_key, int step, std::string acl,
                std::string group, std::string summary, std::string since, Handler handler,
                std::vector<CommandSpec> subcommands = {}) {
  CommandSpec s;
  s.name = std::move(name);
  s.arity = arity;
  s.flags = flags;
  s.first_key = first_key;
  s.last_key = last_key;
  s.step = step;
  s.acl = std::move(acl);
  s.group = std::move(group);
  s.summary = std::move(summary);
  s.since = std::move(since);
  SetHandler(s, handler);
  s.subcommands = std::move(subcommands);
  return s;
}

// Gives a command a value prefetcher (CommandSpec::prefetch_value).
inline CommandSpec PrefetchValue(CommandSpec s, CommandSpec::ValuePrefetcher prefetcher) {
  s.prefetch_value = prefetcher;
  return s;
}

// Marks a command's key positions as "not_key" (SSUBSCRIBE & co.).
inline CommandSpec NotKeys(CommandSpec s) {
  s.not_keys = true;
  return s;
}

// The key finders of movable-key commands (command_table.cc).
namespace keys {
// `numkeys key [key ...]` with the count at argv[1] (ZUNION, LMPOP, ...) or
// argv[2] (BLMPOP, BZMPOP): at least one key, all of them present.
bool AfterCountAt1(std::span<const std::string_view> argv, std::vector<std::string_view>* keys);
bool AfterCountAt2(std::span<const std::string_view> argv, std::vector<std::string_view>* keys);
// `destination numkeys key [key ...]` (ZUNIONSTORE & co.).
bool DestinationThenCount(std::span<const std::string_view> argv, std::vector<std::string_view>* keys);
// EVAL & co., FCALL & co.: `script numkeys key ...`, keys optional (a bad
// count names none, as Redis answers).
bool ScriptKeys(std::span<const std::string_view> argv, std::vector<std::string_view>* keys);
// SORT: the key, and the destination of STORE (Redis's sortGetKeys).
bool SortKeys(std::span<const std::string_view> argv, std::vector<std::string_view>* keys);
}  // namespace keys

// Marks a command whose keys follow a count at argv[1] or argv[2].
inline CommandSpec NumKeysAt(CommandSpec s, uint8_t index) {
  s.numkeys_index = index;
  s.find_keys = index == 1 ? keys::AfterCountAt1 : keys::AfterCountAt2;
  return s;
}
inline CommandSpec NumKeysAt1(CommandSpec s) { return NumKeysAt(std::move(s), 1); }
// `destination numkeys key [key ...]`.
inline CommandSpec DestinationAndNumKeys(CommandSpec s) {
  s.numkeys_index = 2;
  s.find_keys = keys::DestinationThenCount;
  return s;
}
// Marks a command whose keys a function finds (SORT).
inline CommandSpec MovableKeys(CommandSpec s, CommandSpec::KeysFinder finder) {
  s.find_keys = finder;
  return s;
}

// A script command: keys from a count at argv[2], flags from the script
// that argv[1] names.
inline CommandSpec ScriptCommand(CommandSpec s, CommandSpec::Script script) {
  s.numkeys_index = 2;
  s.find_keys = keys::ScriptKeys;
  s.script = script;
  return s;
}

// Names of the set flags, as COMMAND INFO lists them.
std::vector<std::string_view> FlagNames(uint32_t flags);

}  // namespace ringkv::server

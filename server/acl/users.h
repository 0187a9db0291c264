// ACL users and selectors: what a user may run, which keys and channels it
// may touch, and the rule language (Redis 7.0's ACL SETUSER) that edits them.
//
//   CommandIndex index(table);         // once, after the command table is built
//   User u("alice", index.pubsub_default_all());
//   std::string err;
//   if (!ApplyRules(index, {"on", ">pw", "~app:*", "+@read"}, &u, &err)) ... // err: Redis's text
//
// A User is a value: ACL SETUSER edits a copy and assigns it back only when
// every rule applied (all or nothing). The root selector is selectors[0];
// `(...)` rules add more, and a command is allowed when any selector allows
// it with all its keys and channels.
//
// Thread-safety: main thread only (values; the CommandIndex is read-only
// once built).
#pragma once

#include <bitset>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "server/command.h"

namespace ringkv::server {
class CommandTable;
}

namespace ringkv::server::acl {

// Redis 7.0's categories, in ACL CAT's order.
inline constexpr std::string_view kCategories[] = {
    "keyspace", "read",  "write", "set",       "sortedset", "list",       "hash",
    "string",   "bitmap", "hyperloglog", "geo", "stream",   "pubsub",     "admin",
    "fast",     "slow",  "blocking", "dangerous", "connection", "transaction", "scripting"};

// The bitmap of commands a selector allows, by CommandIndex id. The last bit
// is never a command: +@all sets it, so it tells "+@all minus some" (future
// commands allowed) from "-@all plus some".
inline constexpr size_t kCommandBits = 1024;
inline constexpr size_t kFutureBit = kCommandBits - 1;

// Every command and subcommand of the table with an id and its categories.
class CommandIndex {
 public:
  explicit CommandIndex(const CommandTable& table);
  // -1 when `spec` is not in the table.
  int IdOf(const CommandSpec* spec) const {
    auto it = ids_.find(spec);
    return it == ids_.end() ? -1 : static_cast<int>(it->second);
  }
  // "get", "config|get" (any case); nullptr when unknown (three parts, or a
  // subcommand of a command without any).
  const CommandSpec* Lookup(std::string_view name) const;
  const std::vector<const CommandSpec*>& commands() const { return by_id_; }
  uint32_t categories(size_t id) const { return categories_[id]; }
  // The bit of a category name (without '@', any case); 0 when unknown.
  static uint32_t CategoryBit(std::string_view name);

 private:
  void Add(const CommandSpec* spec);
  const CommandTable& table_;
  absl::flat_hash_map<const CommandSpec*, uint32_t> ids_;
  std::vector<const CommandSpec*> by_id_;
  std::vector<uint32_t> categories_;
};

// Key permissions of a pattern (%R~, %W~, %RW~ / ~).
enum KeyPerm : uint8_t { kRead = 1, kWrite = 2, kReadWrite = 3 };

struct KeyPattern {
  std::string pattern;
  uint8_t perms;
  bool operator==(const KeyPattern&) const = default;
};

struct Selector {
  bool root = false;
  bool all_keys = false;
  bool all_channels = false;
  bool all_commands = false;  // Redis's SELECTOR_FLAG_ALLCOMMANDS: cleared by any denial
  std::bitset<kCommandBits> allowed;
  std::vector<KeyPattern> keys;
  std::vector<std::string> channels;
  // +select|0: first arguments allowed of an otherwise denied command.
  absl::flat_hash_map<uint32_t, std::vector<std::string>> first_args;
  bool operator==(const Selector&) const = default;
};

struct User {
  User(std::string n, bool pubsub_all);
  std::string name;
  bool enabled = false;
  bool nopass = false;
  int8_t sanitize = 0;  // 0: not set; 1: sanitize-payload; -1: skip-sanitize-payload
  std::vector<std::string> passwords;  // SHA-256, lower-case hex
  std::vector<Selector> selectors;     // [0] is the root selector
  // Some selector allows everything: the gate's check is skipped.
  bool unrestricted = false;

  void Refresh();  // recomputes `unrestricted`
  bool CheckPassword(std::string_view pass) const;
};

// SHA-256 of `text` as 64 lower-case hex characters.
std::string HashPassword(std::string_view text);

// Applies one rule (ACLSetUser). False with Redis's reason (no prefix) on error.
bool ApplyRule(const CommandIndex& index, bool pubsub_all, std::string_view op, User* u, std::string* reason);
// Applies rules already merged into selectors (MergeSelectorArgs), all or
// nothing: on error `*err` is "Error in ACL SETUSER modifier '<op>': <reason>".
bool ApplyRules(const CommandIndex& index, bool pubsub_all, std::span<const std::string> ops, User* u,
                std::string* err, size_t* failed_at = nullptr);
// "(+get" "~k)" -> "(+get ~k)". False (with the index of the unmatched
// opening) when a parenthesis is not closed.
bool MergeSelectorArgs(std::span<const std::string_view> args, std::vector<std::string>* out,
                       size_t* invalid_idx);

// Redis's descriptions: ACL LIST's / the ACL file's text after "user <name> ",
// a selector's command rules (ACL GETUSER's "commands"), keys and channels.
std::string DescribeUser(const CommandIndex& index, const User& u);
std::string DescribeCommandRules(const CommandIndex& index, const Selector& s);
std::string DescribeKeys(const Selector& s);
std::string DescribeChannels(const Selector& s);
// ACL GETUSER's flags: on/off, nopass, [skip-]sanitize-payload.
std::vector<std::string_view> UserFlags(const User& u);

// True when the text has a space or a NUL (usernames, patterns).
bool HasSpaces(std::string_view s);

}  // namespace ringkv::server::acl

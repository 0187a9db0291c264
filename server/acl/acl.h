// Acl: the server's users, the permission check, ACL LOG and the ACL file.
//
// Owned by the Server (Server::acl()). Every connection starts as the
// default user; AUTH / HELLO AUTH switch it (the client's ClientMeta holds a
// shared pointer to its user, null for the default one). ACL SETUSER edits a
// user in place, so clients see the new rules at their next command; ACL
// DELUSER and ACL LOAD drop users, and the server closes their clients.
//
// The check (Check) is Redis 7.0's ACLCheckAllUserCommandPerm: a command is
// allowed when one selector allows the command (or subcommand, or its first
// argument), every key by the read/write access of its key spec, and every
// channel of PUBLISH / SPUBLISH / SUBSCRIBE / SSUBSCRIBE / PSUBSCRIBE. A user
// with a selector that allows everything is `unrestricted` and the gate skips
// the check (the default user's case unless configured otherwise).
//
// Thread-safety: main thread only.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "server/acl/users.h"

namespace ringkv::server::acl {

// Why a command was refused, in Redis's order of relevance (the highest of
// all selectors' reasons is reported).
enum class Denied : uint8_t { kNone = 0, kCommand = 1, kKey = 2, kAuth = 3, kChannel = 4 };
enum class LogContext : uint8_t { kToplevel, kMulti, kLua };

struct Verdict {
  Denied denied = Denied::kNone;
  size_t pos = 0;  // argv index of the key or channel refused
  bool ok() const { return denied == Denied::kNone; }
};

struct LogEntry {
  uint64_t count = 1;
  Denied reason;
  LogContext context;
  std::string object;    // command, key, channel, or AUTH / HELLO
  std::string username;
  int64_t ctime_ms;      // last time it happened
  std::string client_info;
};

using UserMap = std::map<std::string, std::shared_ptr<User>, std::less<>>;

class Acl {
 public:
  explicit Acl(const CommandTable& table);
  Acl(const Acl&) = delete;
  Acl& operator=(const Acl&) = delete;

  const CommandIndex& index() const { return index_; }
  const UserMap& users() const { return users_; }
  User& default_user() { return *default_; }
  const std::shared_ptr<User>& default_ptr() const { return default_; }
  // nullptr when there is no such user.
  std::shared_ptr<User> Find(std::string_view name) const;

  // acl-pubsub-default: whether new selectors (and "reset") get allchannels.
  void set_pubsub_default_all(bool on) { pubsub_all_ = on; }
  bool pubsub_default_all() const { return pubsub_all_; }
  // requirepass: "" makes the default user nopass.
  void SetDefaultPassword(std::string_view pass);
  // Whether a new connection is authenticated as the default user.
  bool DefaultAuthenticates() const { return default_->enabled && default_->nopass; }

  // ACL SETUSER: the rules apply to a copy, assigned back (or created) only
  // when all of them did. `before` receives the user as it was (null when
  // created). Errors are Redis's text without "ERR ".
  bool SetUser(std::string_view name, std::span<const std::string_view> ops, std::string* err,
               std::shared_ptr<const User>* before = nullptr);
  // Removes a user (not "default"); returns it, or nullptr when unknown.
  std::shared_ptr<User> DeleteUser(std::string_view name);

  // `user` directives of the config file, in order: validated and created
  // at start-up. Errors name the directive.
  absl::Status LoadConfiguredUsers(const std::vector<std::vector<std::string>>& users);
  // ACL LOAD (and start-up with aclfile): replaces every user or nothing.
  // `dropped` receives the users replaced (their clients are closed). The
  // error is Redis's text without "ERR ".
  bool LoadFile(const std::string& path, std::string* err, std::vector<std::shared_ptr<User>>* dropped = nullptr);
  bool SaveFile(const std::string& path, std::string* err) const;
  // The `user ...` lines of CONFIG REWRITE / ACL SAVE / ACL LIST.
  std::vector<std::string> UserLines() const;

  // The permission check for `argv` (argv[0] the command's name) run as `u`.
  Verdict Check(const User& u, const CommandSpec& spec, std::span<const std::string_view> argv) const;
  // Check, passed by a selector that may also read every key (SORT BY / GET).
  bool CheckWithFullKeyRead(const User& u, const CommandSpec& spec, std::span<const std::string_view> argv) const;
  static bool ChannelAllowed(const User& u, std::string_view channel, bool is_pattern);
  // Whether `after` still allows every channel / pattern in the lists
  // (ACLKillPubsubClientsIfNeeded's test), with the shortcuts Redis takes:
  // true when `after` has allchannels or keeps all the channels `before` had.
  static bool KeepsChannelsOf(const User& before, const User& after);

  // ACL LOG.
  void Log(Denied reason, LogContext context, std::string object, std::string username, std::string client_info,
           int64_t now_ms);
  const std::deque<LogEntry>& log() const { return log_; }
  void ResetLog() { log_.clear(); }
  void set_log_max_len(size_t n);

  // Redis's texts for a refusal.
  static std::string NoPermError(Denied d, const CommandSpec& spec);
  static std::string DryRunError(Denied d, const CommandSpec& spec, std::string_view object);

 private:
  std::shared_ptr<User> NewDefaultUser() const;

  CommandIndex index_;
  UserMap users_;
  std::shared_ptr<User> default_;
  bool pubsub_all_ = false;
  std::deque<LogEntry> log_;
  size_t log_max_len_ = 128;
};

}  // namespace ringkv::server::acl

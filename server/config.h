// Config: every configuration parameter, its current value and its rules.
//
// Values are kept as the canonical text CONFIG GET shows (booleans "yes"/"no",
// memory sizes in bytes). The server reads typed values through Int()/Bool()
// /Str() when it needs them and registers an OnChange hook for the ones that
// must be pushed elsewhere when CONFIG SET changes them.
//
// Every Redis 7.0 directive is known (redis_directives.inc). Those ringkv acts
// on are "implemented"; the rest are accepted from a file with one warning
// saying they have no effect, and refused by CONFIG SET. Security-relevant
// directives that ringkv does not implement (rename-command, tls-*, ACL
// users, ...) are never silently ignored: a non-default value stops start-up.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace ringkv::server {

enum class Mutability : uint8_t { kMutable, kImmutable, kProtected };
enum class ConfigKind : uint8_t { kBool, kInt, kMemory, kString, kSpecial, kAlias };

struct ConfigParam {
  std::string name;
  std::string value;  // canonical, as CONFIG GET shows it
  std::string default_value;
  Mutability mutability = Mutability::kMutable;
  ConfigKind kind = ConfigKind::kString;
  std::string alias_of;  // non-empty: this name is another name of alias_of
  bool implemented = false;
  bool security = false;  // unimplemented and security-relevant: refuse non-default
  bool hidden = false;    // a test hook: CONFIG GET shows it only when asked by its exact name
  int64_t min = INT64_MIN;
  int64_t max = INT64_MAX;
  std::vector<std::string> enum_values;  // non-empty: value must be one of these
  bool multi_arg = false;                // takes several arguments on one line
};

class Config {
 public:
  Config();

  // Reads a redis.conf-style file (with `include`). On error the message is
  // the whole multi-line report printed before exiting.
  absl::Status LoadFile(const std::string& path);
  // Directives given as text (the command line's --name value pairs).
  absl::Status LoadString(std::string_view text);
  // Checks that hold once everything is loaded (security directives).
  absl::Status Validate() const;
  // Warnings collected while loading (directives without effect).
  const std::vector<std::string>& warnings() const { return warnings_; }

  // CONFIG SET: all-or-nothing. `error` receives Redis's exact error text.
  bool SetFromCommand(const std::vector<std::pair<std::string, std::string>>& pairs, std::string* error);
  // CONFIG GET: name/value pairs matching any of the glob patterns, once each.
  // A hidden parameter matches only a pattern without glob characters (its
  // exact name), as in Redis.
  std::vector<std::pair<std::string, std::string>> Match(const std::vector<std::string>& patterns) const;
  // CONFIG REWRITE: rewrites the file it was loaded from.
  absl::Status Rewrite() const;

  const std::string& Str(std::string_view name) const;
  int64_t Int(std::string_view name) const;
  bool Bool(std::string_view name) const;
  // client-output-buffer-limit for a class ("normal", "slave", "pubsub"):
  // 0 means no limit.
  struct OutputBufferLimit {
    uint64_t hard = 0;
    uint64_t soft = 0;
    int64_t soft_seconds = 0;
  };
  OutputBufferLimit OutputLimit(std::string_view client_class) const;
  const std::string& file() const { return file_; }

  // Called after CONFIG SET changed `name` (not while loading). A hook that
  // fails makes the whole CONFIG SET fail: every value it set is restored and
  // the hook's message becomes the error's reason.
  void OnChange(std::string name, std::function<absl::Status()> fn) { hooks_[std::move(name)] = std::move(fn); }

  // Programmatic set that bypasses mutability (used at start-up, tests).
  absl::Status SetValue(std::string_view name, const std::vector<std::string>& args);

  // Memory value parser shared with commands: "1gb", "100k", "42".
  static bool ParseMemory(std::string_view s, int64_t* out);

 private:
  ConfigParam* Find(std::string_view name);
  const ConfigParam* Find(std::string_view name) const;
  ConfigParam* Primary(ConfigParam* p);
  // Validates args for p and produces the canonical value; error text is the
  // reason only ("argument must be 'yes' or 'no'").
  bool Normalize(const ConfigParam& p, const std::vector<std::string>& args, std::string* value, std::string* reason);
  absl::Status LoadText(std::string_view text, const std::string& origin, int depth);

  std::map<std::string, ConfigParam, std::less<>> params_;
  std::map<std::string, std::function<absl::Status()>, std::less<>> hooks_;
  std::vector<std::string> warnings_;
  std::vector<std::string> set_in_file_;  // directive names in load order
  std::string file_;
  bool save_seen_ = false;  // the first `save` line replaces the default
  std::map<std::string, std::string, std::less<>> obuf_limits_;  // class -> "hard soft secs"
};

}  // namespace ringkv::server

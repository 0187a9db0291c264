// Config: every configuration parameter, its current value and its rules.
//
// Values are kept as the canonical text CONFIG GET shows (booleans "yes"/"no",
// memory sizes in bytes). Each parameter's row (config_params.h) carries the
// parser that checks and canonicalises its arguments and the writer CONFIG
// REWRITE uses. Code reads typed values through Int()/Bool()/Str(); a
// component that caches a value registers an apply callback next to that
// state, with Bind() (set now and after every CONFIG SET of it) or OnChange()
// (after CONFIG SET only; may fail, which undoes the CONFIG SET):
//
//   config.Bind("maxclients", &maxclients_);
//   config.Bind({"maxmemory", "maxmemory-clients"}, [this] { limit_ = ClientEvictionLimit(); });
//   config.OnChange("appendonly", [this] { return SetAppendOnly(config.Bool("appendonly")); });
//
// Every Redis 7.0 directive is known (redis_directives.inc). Those ringkv acts
// on are "implemented"; the rest are accepted from a file with one warning
// saying they have no effect, and refused by CONFIG SET. Security-relevant
// directives that ringkv does not implement (loadmodule) are
// never silently ignored: they stop start-up.
//
// Thread-safety: main thread only. A typed read is a lookup by name in a
// sorted map: code on the command path caches what it needs through Bind.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "server/config_params.h"

namespace ringkv::server {

class Config {
 public:
  Config();
  Config(const Config&) = delete;
  Config& operator=(const Config&) = delete;

  // Reads a redis.conf-style file (with `include`). On error the message is
  // the whole multi-line report printed before exiting.
  absl::Status LoadFile(const std::string& path);
  // Directives given as text (the command line's --name value pairs).
  absl::Status LoadString(std::string_view text);
  // Warnings collected while loading (directives without effect).
  const std::vector<std::string>& warnings() const { return warnings_; }

  // CONFIG SET: all-or-nothing, apply callbacks included. `error` receives
  // Redis's exact error text. `local_client`: the client is on loopback
  // (protected parameters with enable-protected-configs local).
  // `loading`: a dataset is loading; a parameter Redis marks DENY_LOADING
  // (dir, appendonly) is then refused with -LOADING, which wins over any
  // other error of the same CONFIG SET, as in Redis.
  bool SetFromCommand(const std::vector<std::pair<std::string, std::string>>& pairs, std::string* error,
                      bool local_client = false, bool loading = false);
  // CONFIG GET: name/value pairs matching any of the glob patterns, once each.
  // A hidden parameter matches only a pattern without glob characters (its
  // exact name), as in Redis.
  std::vector<std::pair<std::string, std::string>> Match(const std::vector<std::string>& patterns) const;
  // CONFIG REWRITE: rewrites the file it was loaded from. `force_all`
  // (DEBUG CONFIG-REWRITE-FORCE-ALL): every parameter gets a line, those at
  // their defaults too (Redis's test that every line written reads back).
  absl::Status Rewrite(bool force_all = false) const;

  // REQUIRES: `name` is a known parameter (or an alias of one).
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
  // The `user` directives, in order (name, then rules), for the ACL
  // component to load at start-up.
  const std::vector<std::vector<std::string>>& users() const { return users_; }
  // rename-command lines, in order: (command, new name; "" hides it). The
  // server applies them to its command table at start-up.
  const std::vector<std::pair<std::string, std::string>>& command_renames() const { return command_renames_; }
  // CONFIG REWRITE writes these lines in place of the file's `user` lines
  // (none when aclfile is set: the users live in that file).
  void set_user_lines(std::function<std::vector<std::string>()> fn) { user_lines_ = std::move(fn); }

  // ---- apply callbacks ---------------------------------------------------------
  // A CONFIG SET first stores every value, then runs the callbacks of the
  // parameters it changed, each callback once, in the order of its
  // arguments. When one fails, every value is restored, the callbacks that
  // already ran run again, and the failure's message becomes the error's
  // reason. Nothing runs while loading a file. Callbacks live as long as the
  // Config. REQUIRES: every name is a known parameter or alias.
  using ApplyFn = std::function<absl::Status()>;
  void OnChange(std::string_view name, ApplyFn fn) { OnChange({name}, std::move(fn)); }
  void OnChange(std::initializer_list<std::string_view> names, ApplyFn fn);
  // Runs `apply` now and after every CONFIG SET of any of `names`; for state
  // that follows a value and cannot fail to.
  void Bind(std::initializer_list<std::string_view> names, std::function<void()> apply);
  void Bind(std::string_view name, std::function<void()> apply) { Bind({name}, std::move(apply)); }
  // Keeps *target equal to the parameter's value (a bool for yes/no
  // parameters, an integer type otherwise).
  template <typename T>
    requires std::is_arithmetic_v<T>
  void Bind(std::string_view name, T* target) {
    Bind({name}, [this, param = FindOrDie(name), target] {
      if constexpr (std::is_same_v<T, bool>) {
        *target = param->value == "yes";
      } else {
        *target = static_cast<T>(IntValue(*param));
      }
    });
  }

  // For an apply callback whose owner applies another value than the one set
  // (hz above 500, a watchdog period under two cron ticks): stores what is
  // applied, as Redis writes its adjusted value back, so CONFIG GET, INFO and
  // CONFIG REWRITE show it. Runs no callback. REQUIRES: an integer parameter.
  void StoreAppliedInt(std::string_view name, int64_t applied);

  // Programmatic set that bypasses mutability and callbacks (start-up, CONFIG
  // REWRITE's replicaof, tests).
  absl::Status SetValue(std::string_view name, const std::vector<std::string>& args);

  // Memory value parser: "1gb", "100k", "42".
  static bool ParseMemory(std::string_view s, int64_t* out) { return ParseMemoryValue(s, out); }

 private:
  struct Staged;  // one parameter of a CONFIG SET: its new value, then its old one

  ConfigParam* Find(std::string_view name);
  const ConfigParam* Find(std::string_view name) const;
  // The primary parameter of a known name.
  const ConfigParam* FindOrDie(std::string_view name) const;
  static int64_t IntValue(const ConfigParam& p);
  // Checks the argument count and parses; `reason` is Redis's text alone.
  static bool Parse(const ConfigParam& p, std::span<const std::string> args, std::string* value,
                    std::string* reason);

  absl::Status LoadText(std::string_view text, const std::string& origin, int depth);
  absl::Status LoadDirective(std::string name, std::vector<std::string> args, const std::string& origin,
                             int lineno);
  void MergeSaveLines(const ConfigParam& save, std::vector<std::string>* args);

  bool StageSet(const std::vector<std::pair<std::string, std::string>>& pairs, bool local_client,
                std::vector<Staged>* staged, std::string* error);
  bool ApplyStaged(std::vector<Staged>& staged, std::string* error);
  bool ReloadFromShown(ConfigParam& p);
  void RunHooks(const ConfigParam& p);

  std::string RewrittenText(const std::string& original, bool force_all = false) const;

  ConfigParams params_;
  std::vector<ApplyFn> hooks_;  // ConfigParam::hooks index into this
  std::vector<std::string> warnings_;
  std::string file_;
  bool save_seen_ = false;  // the first `save` line replaces the default
  std::vector<std::vector<std::string>> users_;
  std::vector<std::pair<std::string, std::string>> command_renames_;
  std::function<std::vector<std::string>()> user_lines_;
};

}  // namespace ringkv::server

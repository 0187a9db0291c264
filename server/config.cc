#include "server/config.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/container/inlined_vector.h"
#include "absl/strings/numbers.h"
#include "core/glob.h"
#include "core/strings.h"
#include "io/resp_parser.h"
#include "server/errors.h"
#include "server/logging.h"
#include "server/version.h"

namespace ringkv::server {
namespace {

std::string FatalReport(const std::string& origin, int line, std::string_view text, std::string_view reason) {
  return StrCat("\n*** FATAL CONFIG FILE ERROR (ringkv ", kRingkvVersion, ") ***\n", "Reading the configuration file ",
                origin, ", at line ", line, "\n", ">>> '", text, "'\n", reason);
}

std::string SetError(std::string_view name, std::string_view reason) {
  return StrCat("ERR CONFIG SET failed (possibly related to argument '", name, "') - ", reason);
}

// A config line's words (redis.conf quoting); false on unbalanced quotes.
bool SplitLine(std::string_view line, std::vector<std::string>* words) {
  std::string storage;
  absl::InlinedVector<std::string_view, 8> argv;
  if (!io::SplitInlineArgs(line, &storage, &argv)) return false;
  words->assign(argv.begin(), argv.end());
  return true;
}

std::string ReadWhole(std::ifstream& in) {
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

// One parameter of a CONFIG SET.
struct Config::Staged {
  ConfigParam* param;  // the primary
  std::string value;   // the new value; once stored, the previous one
  std::string_view name;  // as the client spelled it, for the error text
};

Config::Config() : params_(BuildConfigParams()) {
  char cwd[4096];
  if (getcwd(cwd, sizeof(cwd)) != nullptr) params_.at("dir").value = params_.at("dir").default_value = cwd;
}

// ---- lookups and typed reads ---------------------------------------------------

ConfigParam* Config::Find(std::string_view name) {
  auto it = params_.find(name);
  if (it == params_.end()) it = params_.find(AsciiLower(name));
  return it == params_.end() ? nullptr : &it->second;
}

const ConfigParam* Config::Find(std::string_view name) const { return const_cast<Config*>(this)->Find(name); }

const ConfigParam* Config::FindOrDie(std::string_view name) const {
  const ConfigParam* p = Find(name);
  if (p == nullptr) {
    std::fprintf(stderr, "ringkv: unknown configuration parameter '%.*s'\n", static_cast<int>(name.size()),
                 name.data());
    std::abort();
  }
  return p->primary;
}

int64_t Config::IntValue(const ConfigParam& p) {
  int64_t v = 0;
  if (absl::SimpleAtoi(p.value, &v)) return v;
  uint64_t u = 0;  // an unsigned memory size past INT64_MAX (maxmemory): as good as unlimited
  return absl::SimpleAtoi(p.value, &u) ? INT64_MAX : 0;
}

const std::string& Config::Str(std::string_view name) const { return FindOrDie(name)->value; }
int64_t Config::Int(std::string_view name) const { return IntValue(*FindOrDie(name)); }
bool Config::Bool(std::string_view name) const { return FindOrDie(name)->value == "yes"; }

Config::OutputBufferLimit Config::OutputLimit(std::string_view client_class) const {
  OutputBufferLimit limit;
  // "normal H S T slave H S T pubsub H S T"
  std::vector<std::string_view> t = Split(Str("client-output-buffer-limit"), ' ', /*skip_empty=*/true);
  for (size_t i = 0; i + 3 < t.size(); i += 4) {
    if (t[i] != client_class) continue;
    (void)absl::SimpleAtoi(ToAbsl(t[i + 1]), &limit.hard);
    (void)absl::SimpleAtoi(ToAbsl(t[i + 2]), &limit.soft);
    (void)absl::SimpleAtoi(ToAbsl(t[i + 3]), &limit.soft_seconds);
  }
  return limit;
}

// ---- setting values ------------------------------------------------------------

bool Config::Parse(const ConfigParam& p, std::span<const std::string> args, std::string* value, std::string* reason) {
  if (!p.type->multi_arg && args.size() != 1) {
    *reason = "wrong number of arguments";
    return false;
  }
  return p.type->parse(p, args, value, reason);
}

absl::Status Config::SetValue(std::string_view name, const std::vector<std::string>& args) {
  ConfigParam* p = Find(name);
  if (p == nullptr) return absl::InvalidArgumentError("Bad directive or wrong number of arguments");
  std::string value, reason;
  if (!Parse(*p->primary, args, &value, &reason)) return absl::InvalidArgumentError(reason);
  p->primary->value = std::move(value);
  return absl::OkStatus();
}

void Config::StoreAppliedInt(std::string_view name, int64_t applied) {
  ConfigParam* p = FindOrDie(name)->primary;
  if (IntValue(*p) != applied) p->value = std::to_string(applied);
}

// ---- loading files -------------------------------------------------------------

absl::Status Config::LoadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(StrCat("Fatal error, can't open config file '", path, "': ", std::strerror(errno)));
  }
  if (file_.empty()) {
    char buf[4096];
    file_ = (path[0] == '/' || getcwd(buf, sizeof(buf)) == nullptr) ? path : StrCat(buf, "/", path);
  }
  return LoadText(ReadWhole(in), path, 0);
}

absl::Status Config::LoadString(std::string_view text) { return LoadText(text, "(command line)", 0); }

absl::Status Config::LoadText(std::string_view text, const std::string& origin, int depth) {
  int lineno = 0;
  for (std::string_view raw : Split(text, '\n')) {
    ++lineno;
    std::string_view line = StripWhitespace(raw);
    if (line.empty() || line[0] == '#') continue;
    auto fail = [&](std::string_view reason) {
      return absl::InvalidArgumentError(FatalReport(origin, lineno, line, reason));
    };
    std::vector<std::string> argv;
    if (!SplitLine(line, &argv)) return fail("Unbalanced quotes in configuration line");
    if (argv.empty()) continue;
    std::string name = AsciiLower(argv[0]);
    argv.erase(argv.begin());
    if (name == "include") {  // a nested file's error is already a whole report
      if (argv.size() != 1) return fail("Bad directive or wrong number of arguments");
      if (depth > 8) return fail("Too many nested includes");
      std::ifstream in(argv[0]);
      if (!in) return fail(StrCat("Fatal error, can't open config file '", argv[0], "'"));
      if (absl::Status s = LoadText(ReadWhole(in), argv[0], depth + 1); !s.ok()) return s;
      continue;
    }
    absl::Status s = LoadDirective(std::move(name), std::move(argv), origin, lineno);
    if (!s.ok()) return fail(ToStd(s.message()));
  }
  return absl::OkStatus();
}

// One directive of a file or the command line; the error is the reason alone.
absl::Status Config::LoadDirective(std::string name, std::vector<std::string> args, const std::string& origin,
                                   int lineno) {
  if (name == "user") {
    if (args.empty()) return absl::InvalidArgumentError("Bad directive or wrong number of arguments");
    for (const std::vector<std::string>& u : users_) {
      if (u[0] == args[0]) {
        return absl::InvalidArgumentError(
            "Error in user declaration 'user': Duplicate user found. A user can only be defined once in config files");
      }
    }
    users_.push_back(std::move(args));
    return absl::OkStatus();
  }
  if (name == "rename-command") {
    if (args.size() != 2) return absl::InvalidArgumentError("Bad directive or wrong number of arguments");
    command_renames_.emplace_back(std::move(args[0]), std::move(args[1]));
    return absl::OkStatus();
  }
  if (name == "loadmodule") {
    return absl::InvalidArgumentError(StrCat("'", name,
                                             "' is not supported by ringkv; refusing to start rather than ignore a "
                                             "security-relevant directive"));
  }
  if (name == "sentinel") return absl::InvalidArgumentError("sentinel directives are only valid in sentinel mode");
  ConfigParam* p = Find(name);
  // `save` alone (how Redis's test suite writes `save ""`) means no save
  // points; shutdown-on-sig* alone gets its own error, as Redis's
  // multi-argument check gives; every other directive needs an argument.
  const ParamType* type = p != nullptr ? p->primary->type : nullptr;
  if (p == nullptr || (args.empty() && type != &config_types::kSave && type != &config_types::kShutdownFlags)) {
    return absl::InvalidArgumentError("Bad directive or wrong number of arguments");
  }
  const ConfigParam& primary = *p->primary;
  if (primary.type == &config_types::kSave) MergeSaveLines(primary, &args);
  if (absl::Status s = SetValue(name, args); !s.ok()) return s;
  if (primary.implemented) return absl::OkStatus();
  if (origin != "(command line)") {
    warnings_.push_back(
        StrCat("Directive '", name, "' at ", origin, ":", lineno, " is accepted but has no effect in ringkv"));
  } else {
    warnings_.push_back(StrCat("Option --", name, " is accepted but has no effect in ringkv"));
  }
  return absl::OkStatus();
}

// The first `save` line replaces the default; later ones add to it (a
// later bare `save` or `save ""` adds nothing).
void Config::MergeSaveLines(const ConfigParam& save, std::vector<std::string>* args) {
  const bool adds = !(args->size() == 1 && (*args)[0].empty());
  if (save_seen_ && !save.value.empty() && adds) args->insert(args->begin(), save.value);
  save_seen_ = true;
}

// ---- apply callbacks -----------------------------------------------------------

void Config::OnChange(std::initializer_list<std::string_view> names, ApplyFn fn) {
  const auto index = static_cast<uint32_t>(hooks_.size());
  hooks_.push_back(std::move(fn));
  for (std::string_view name : names) const_cast<ConfigParam*>(FindOrDie(name))->hooks.push_back(index);
}

void Config::Bind(std::initializer_list<std::string_view> names, std::function<void()> apply) {
  apply();
  OnChange(names, [apply = std::move(apply)] {
    apply();
    return absl::OkStatus();
  });
}

// ---- CONFIG SET ----------------------------------------------------------------

bool Config::SetFromCommand(const std::vector<std::pair<std::string, std::string>>& pairs, std::string* error,
                            bool local_client, bool loading) {
  if (loading) {
    for (const auto& [name, arg] : pairs) {
      if (const ConfigParam* p = Find(name); p != nullptr && p->primary->deny_loading) {
        *error = errors::kLoading;
        return false;
      }
    }
  }
  std::vector<Staged> staged;
  if (!StageSet(pairs, local_client, &staged, error)) return false;
  for (Staged& s : staged) std::swap(s.param->value, s.value);
  return ApplyStaged(staged, error);
}

// Checks every pair, then parses them, before anything changes -- Redis's
// two passes, so that a name error anywhere wins over a value error.
bool Config::StageSet(const std::vector<std::pair<std::string, std::string>>& pairs, bool local_client,
                      std::vector<Staged>* staged, std::string* error) {
  const std::string& protected_configs = Str("enable-protected-configs");
  const bool protected_ok = protected_configs == "yes" || (protected_configs == "local" && local_client);
  std::vector<ConfigParam*> primaries;
  primaries.reserve(pairs.size());
  for (const auto& [name, arg] : pairs) {
    ConfigParam* p = Find(name);
    if (p == nullptr) {
      *error = StrCat("ERR Unknown option or number of arguments for CONFIG SET - '", errors::UpToNul(name), "'");
      return false;
    }
    ConfigParam* primary = p->primary;
    const char* reason = nullptr;
    if (std::find(primaries.begin(), primaries.end(), primary) != primaries.end()) {
      reason = "duplicate parameter";
    } else if (primary->mutability == Mutability::kImmutable) {
      reason = "can't set immutable config";
    } else if (primary->mutability == Mutability::kProtected && !protected_ok) {
      reason = "can't set protected config";
    } else if (!primary->implemented) {
      reason = "not supported by ringkv (the parameter has no effect here)";
    }
    if (reason != nullptr) {
      *error = SetError(name, reason);
      return false;
    }
    primaries.push_back(primary);
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto& [name, arg] = pairs[i];
    std::string value, reason;
    if (!Parse(*primaries[i], std::span<const std::string>(&arg, 1), &value, &reason)) {
      // Redis has set the ones before and restores them, and this one, from
      // the values CONFIG GET showed; where that shows less than the value
      // holds, the rest is lost, and so it is here.
      for (size_t j = 0; j <= i; ++j) {
        if (ReloadFromShown(*primaries[j])) RunHooks(*primaries[j]);
      }
      *error = SetError(name, reason);
      return false;
    }
    staged->push_back({primaries[i], std::move(value), name});
  }
  return true;
}

// A value that keeps more than CONFIG GET shows (notify-keyspace-events'
// 'n' beside 'A') becomes what the shown form parses to. Returns whether it
// changed.
bool Config::ReloadFromShown(ConfigParam& p) {
  if (p.type->shown == nullptr) return false;
  const std::string shown = p.type->shown(p.value);
  std::string value, reason;
  if (!Parse(p, std::span<const std::string>(&shown, 1), &value, &reason) || value == p.value) return false;
  p.value = std::move(value);
  return true;
}

void Config::RunHooks(const ConfigParam& p) {
  for (uint32_t hook : p.hooks) (void)hooks_[hook]();
}

// Runs the callbacks of the stored values, each once; on a failure restores
// the previous values (held in `staged`) and re-runs what already ran.
bool Config::ApplyStaged(std::vector<Staged>& staged, std::string* error) {
  std::vector<uint32_t> ran;
  for (const Staged& s : staged) {
    for (uint32_t hook : s.param->hooks) {
      if (std::find(ran.begin(), ran.end(), hook) != ran.end()) continue;
      absl::Status status = hooks_[hook]();
      if (status.ok()) {
        ran.push_back(hook);
        continue;
      }
      // Redis's words, which its operators grep for.
      Log(kWarning, StrCat("Failed applying new configuration. Possibly related to new ", s.name,
                           " setting. Restoring previous settings."));
      for (Staged& undo : staged) std::swap(undo.param->value, undo.value);
      // Restored, as Redis restores them, from the values CONFIG GET showed.
      for (Staged& undo : staged) {
        if (!ReloadFromShown(*undo.param)) continue;
        for (uint32_t hook : undo.param->hooks) {
          if (std::find(ran.begin(), ran.end(), hook) == ran.end()) ran.push_back(hook);
        }
      }
      for (uint32_t again : ran) (void)hooks_[again]();
      *error = SetError(s.name, ToStd(status.message()));
      return false;
    }
  }
  return true;
}

// ---- CONFIG GET ----------------------------------------------------------------

std::vector<std::pair<std::string, std::string>> Config::Match(const std::vector<std::string>& patterns) const {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string_view> added;
  for (const std::string& pattern : patterns) {
    const bool glob = pattern.find_first_of("*?[") != std::string::npos;
    for (const auto& [name, p] : params_) {
      if (added.count(name) || (p.hidden && glob)) continue;
      if (core::GlobMatch(pattern, name, /*nocase=*/true)) {
        const ConfigParam& primary = *p.primary;
        out.emplace_back(name, primary.type->shown ? primary.type->shown(primary.value) : primary.value);
        added.insert(name);
      }
    }
  }
  return out;
}

// ---- CONFIG REWRITE ------------------------------------------------------------

// The file's lines with each directive replaced by its current value (the
// first occurrence; later duplicates dropped), then the non-default values
// the file did not mention.
std::string Config::RewrittenText(const std::string& original, bool force_all) const {
  std::set<std::string_view> written;
  std::string out;
  std::vector<std::string_view> lines = Split(original, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  // `user` lines: the current users where the first one was (or at the end).
  const bool rewrite_users = static_cast<bool>(user_lines_);
  bool users_written = false;
  auto write_users = [&] {
    users_written = true;
    if (Str("aclfile").empty()) {
      for (const std::string& u : user_lines_()) StrAppend(&out, u, "\n");
    }
  };
  for (std::string_view raw : lines) {
    std::string_view line = StripWhitespace(raw);
    std::vector<std::string> argv;
    const ConfigParam* p = nullptr;
    if (!line.empty() && line[0] != '#' && SplitLine(line, &argv) && !argv.empty()) {
      if (rewrite_users && EqualsIgnoreCase(argv[0], "user")) {
        if (!users_written) write_users();
        continue;
      }
      p = Find(argv[0]);
    }
    if (p == nullptr) {  // comments, blank lines, include, unknown: kept as written
      StrAppend(&out, raw, "\n");
      continue;
    }
    p = p->primary;
    if (written.insert(p->name).second) p->type->rewrite(*p, &out);
  }
  bool header = false;
  for (const auto& [name, p] : params_) {
    if (p.primary != &p || written.count(name)) continue;
    // Not forced: only what differs from its default (dir: the working
    // directory at start-up is its default). Forced: all but the test hooks.
    if (force_all ? p.hidden : (p.value == p.default_value || name == "dir")) continue;
    if (!header) {
      StrAppend(&out, "# Generated by CONFIG REWRITE\n");
      header = true;
    }
    p.type->rewrite(p, &out);
  }
  if (rewrite_users && !users_written) {
    // Only users other than the stock default one need a line.
    std::vector<std::string> lines_now = Str("aclfile").empty() ? user_lines_() : std::vector<std::string>{};
    if (!(lines_now.size() == 1 && lines_now[0] == "user default on nopass ~* &* +@all")) {
      if (!header) StrAppend(&out, "# Generated by CONFIG REWRITE\n");
      for (const std::string& u : lines_now) StrAppend(&out, u, "\n");
    }
  }
  return out;
}

absl::Status Config::Rewrite(bool force_all) const {
  if (file_.empty()) return absl::FailedPreconditionError("ERR The server is running without a config file");
  std::ifstream in(file_);
  const std::string out = RewrittenText(in ? ReadWhole(in) : std::string(), force_all);
  const std::string tmp = StrCat(file_, ".tmp-", getpid());
  {
    std::ofstream o(tmp, std::ios::trunc);
    if (!o) return absl::InternalError(StrCat("ERR Rewriting config file: ", std::strerror(errno)));
    o << out;
    o.flush();
    if (!o) return absl::InternalError(StrCat("ERR Rewriting config file: ", std::strerror(errno)));
  }
  if (rename(tmp.c_str(), file_.c_str()) != 0) {
    unlink(tmp.c_str());
    return absl::InternalError(StrCat("ERR Rewriting config file: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace ringkv::server

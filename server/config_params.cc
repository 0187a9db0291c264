#include "server/config_params.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "core/strings.h"
#include "server/keyspace_events.h"
#include "server/latency_monitor.h"
#include "server/proc_title.h"

namespace ringkv::server {
namespace config_types {
// Declared here, not in config_params.h: only this file's rules use them.
extern const ParamType kReplicaof;       // "host port", "no one" or nothing (no primary)
extern const ParamType kOomScoreAdj;     // no, yes (= relative), absolute
extern const ParamType kOomScoreValues;  // three integers in [-2000, 2000]
extern const ParamType kHostname;        // cluster-announce-hostname: alphanumerics, '-' and '.'
}  // namespace config_types
namespace {

// ---- parsers: one per kind of parameter ------------------------------------

// Every argument split on spaces: `save "60 1" 300 10` reads as `save 60 1 300 10`.
std::vector<std::string> Words(std::span<const std::string> args) {
  std::vector<std::string> words;
  for (const std::string& a : args) {
    for (std::string_view w : Split(a, ' ', /*skip_empty=*/true)) words.emplace_back(w);
  }
  return words;
}

// Redis 7.0's memtoull: digits, then nothing or one unit of b, k, kb, m, mb,
// g, gb in any case. No sign (a leading '-' is an error), no spaces; no
// digits reads as 0 ("" and "k" are 0); digits past 2^64-1 saturate (as
// strtoull), a unit that overflows is an error.
bool MemToUll(std::string_view s, uint64_t* out) {
  if (!s.empty() && s[0] == '-') return false;
  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  const std::string unit = AsciiLower(s.substr(digits));
  static constexpr std::pair<const char*, uint64_t> kUnits[] = {
      {"", 1},       {"b", 1},          {"k", 1000}, {"kb", 1024}, {"m", 1000ULL * 1000}, {"mb", 1024ULL * 1024},
      {"g", 1000ULL * 1000 * 1000}, {"gb", 1024ULL * 1024 * 1024}};
  uint64_t mul = 0;
  for (auto [name, m] : kUnits) {
    if (unit == name) mul = m;
  }
  if (mul == 0 || digits >= 128) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < digits; ++i) {
    const uint64_t d = static_cast<uint64_t>(s[i] - '0');
    v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
  }
  if (v > UINT64_MAX / mul) return false;
  *out = v * mul;
  return true;
}

bool Fail(std::string* reason, std::string text) {
  *reason = std::move(text);
  return false;
}

bool InRange(const ConfigParam& p, int64_t v, std::string* value, std::string* reason) {
  if (v < p.min || v > p.max) return Fail(reason, StrCat("argument must be between ", p.min, " and ", p.max, " inclusive"));
  *value = StrCat(v);
  return true;
}

bool ParseBool(const ConfigParam&, std::span<const std::string> args, std::string* value, std::string* reason) {
  std::string v = AsciiLower(args[0]);
  if (v != "yes" && v != "no") return Fail(reason, "argument must be 'yes' or 'no'");
  *value = std::move(v);
  return true;
}

// activedefrag: Redis 7.0 built without its defragmenting jemalloc (as
// Debian's is) refuses `yes` with this text; ringkv's allocator, mimalloc,
// offers no defragmentation hints either.
bool ParseActiveDefrag(const ConfigParam& p, std::span<const std::string> args, std::string* value,
                       std::string* reason) {
  if (!ParseBool(p, args, value, reason)) return false;
  if (*value == "yes") {
    return Fail(reason,
                "Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified "
                "Jemalloc like the one shipped by default with the Redis source distribution");
  }
  return true;
}

bool ParseInt(const ConfigParam& p, std::span<const std::string> args, std::string* value, std::string* reason) {
  int64_t v;
  if (!absl::SimpleAtoi(args[0], &v)) return Fail(reason, "argument couldn't be parsed into an integer");
  return InRange(p, v, value, reason);
}

// Memory sizes are read as Redis's memtoull reads them (MemToUll): a value
// past INT64_MAX is a negative number to a signed parameter, so it fails the
// range check, as in Redis.
bool ParseMemory(const ConfigParam& p, std::span<const std::string> args, std::string* value, std::string* reason) {
  uint64_t v;
  if (!MemToUll(args[0], &v)) return Fail(reason, "argument must be a memory value");
  return InRange(p, static_cast<int64_t>(v), value, reason);
}

// Memory sizes Redis keeps in an unsigned long long (maxmemory,
// cluster-link-sendbuf-limit): any size up to 2^64-1, shown as given.
bool ParseUnsignedMemory(const ConfigParam&, std::span<const std::string> args, std::string* value,
                         std::string* reason) {
  uint64_t v;
  if (!MemToUll(args[0], &v)) return Fail(reason, "argument must be a memory value");
  *value = StrCat(v);
  return true;
}

// proc-title-template: Redis's {variables}, checked by expanding it with an
// empty title, which must leave something. {listen-addr}, {port} and
// {tls-port} are never empty; {server-mode} is empty without cluster mode;
// {unixsocket} and {config-file} are taken as empty (Redis uses the real
// ones, so "{config-file}" alone passes there when a file was given).
bool ParseProcTitle(const ConfigParam&, std::span<const std::string> args, std::string* value,
                    std::string* reason) {
  ProcTitleVars vars;
  vars.listen_addr = "*:0";
  vars.port = "0";
  vars.tls_port = "0";
  std::string title;
  if (!ExpandProcTitle(args[0], vars, &title) || title.empty()) {
    return Fail(reason, "template format is invalid or contains unknown variables");
  }
  *value = args[0];
  return true;
}

bool ParseString(const ConfigParam&, std::span<const std::string> args, std::string* value, std::string*) {
  *value = args[0];
  return true;
}

// cluster-announce-hostname: under 256 letters, digits, '-' and '.', or
// nothing (Redis's isValidAuxString checks, the length first).
bool ParseHostname(const ConfigParam&, std::span<const std::string> args, std::string* value, std::string* reason) {
  if (args[0].size() >= 256) return Fail(reason, "Hostnames must be less than 256 characters");
  for (char c : args[0]) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') {
      return Fail(reason, "Hostnames may only contain alphanumeric characters, hyphens or dots");
    }
  }
  *value = args[0];
  return true;
}

bool ParseEnum(const ConfigParam& p, std::span<const std::string> args, std::string* value, std::string* reason) {
  std::string v = AsciiLower(args[0]);
  for (const std::string& e : p.enum_values) {
    if (e == v) {
      *value = std::move(v);
      return true;
    }
  }
  return Fail(reason, StrCat("argument(s) must be one of the following: ", absl::StrJoin(p.enum_values, ", ")));
}

bool ParseFileName(const ConfigParam& p, std::span<const std::string> args, std::string* value, std::string* reason) {
  if (args[0].find('/') != std::string::npos) return Fail(reason, StrCat(p.name, " can't be a path, just a filename"));
  *value = args[0];
  return true;
}

bool ParseDirName(const ConfigParam& p, std::span<const std::string> args, std::string* value, std::string* reason) {
  if (args[0].find('/') != std::string::npos) return Fail(reason, StrCat(p.name, " can't be a path, just a dirname"));
  *value = args[0];
  return true;
}

bool ParseSave(const ConfigParam&, std::span<const std::string> args, std::string* value, std::string* reason) {
  std::vector<std::string> words = Words(args);
  if (words.size() % 2 != 0) return Fail(reason, "Invalid save parameters");
  for (const std::string& w : words) {
    int64_t v;
    if (!absl::SimpleAtoi(w, &v) || v < 0) return Fail(reason, "Invalid save parameters");
  }
  *value = absl::StrJoin(words, " ");
  return true;
}

// As Redis's setConfigBindOption: up to 16 addresses; an empty value is no
// address at all (no TCP listener: the Unix socket, if any, only).
bool ParseBind(const ConfigParam&, std::span<const std::string> args, std::string* value, std::string* reason) {
  std::vector<std::string> words = Words(args);
  if (words.size() > 16) return Fail(reason, "Too many bind addresses specified.");
  *value = absl::StrJoin(words, " ");
  return true;
}

// "normal H S T slave H S T pubsub H S T": the classes named are replaced,
// the others keep their current limits. Checked group by group, class
// first, as Redis: H and S as memory sizes (MemToUll), T as strtoll reads
// it into an int, the whole argument, not negative.
bool ParseOutputBufferLimit(const ConfigParam& p, std::span<const std::string> args, std::string* value,
                            std::string* reason) {
  std::vector<std::string> words = Words(args);
  if (words.empty() || words.size() % 4 != 0) {
    return Fail(reason, "Wrong number of arguments in buffer limit configuration.");
  }
  std::vector<std::string> limits = Words(std::span<const std::string>(&p.value, 1));
  for (size_t i = 0; i < words.size(); i += 4) {
    std::string cls = AsciiLower(words[i]);
    if (cls == "replica") cls = "slave";
    auto slot = std::find(limits.begin(), limits.end(), cls);
    if ((cls != "normal" && cls != "slave" && cls != "pubsub") || limits.end() - slot < 4) {
      return Fail(reason, "Invalid client class specified in buffer limit configuration.");
    }
    uint64_t hard, soft;
    const bool sizes_ok = MemToUll(words[i + 1], &hard) && MemToUll(words[i + 2], &soft);
    char* end = nullptr;
    const int secs = static_cast<int>(std::strtoll(words[i + 3].c_str(), &end, 10));
    if (!sizes_ok || secs < 0 || *end != '\0') {
      return Fail(reason, "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
    }
    slot[1] = StrCat(hard);
    slot[2] = StrCat(soft);
    slot[3] = StrCat(secs);
  }
  *value = absl::StrJoin(limits, " ");
  return true;
}

// Bytes, or a percentage of maxmemory (as Redis 7.0's maxmemory-clients).
bool ParseMemoryOrPercent(const ConfigParam&, std::span<const std::string> args, std::string* value,
                          std::string* reason) {
  const std::string& a = args[0];
  int64_t v = 0;
  if (a.ends_with('%')) {
    if (!absl::SimpleAtoi(ToAbsl(std::string_view(a).substr(0, a.size() - 1)), &v) || v < 0) {
      return Fail(reason, "argument must be a memory or percent value");
    }
    if (v > 100) return Fail(reason, "percentage argument must be less or equal to 100");
    *value = v == 0 ? "0" : StrCat(v, "%");
    return true;
  }
  if (!ParseMemoryValue(a, &v) || v < 0) return Fail(reason, "argument must be a memory or percent value");
  *value = StrCat(v);
  return true;
}

bool ParseNotifyEvents(const ConfigParam&, std::span<const std::string> args, std::string* value,
                       std::string* reason) {
  const int64_t flags = notify::ParseFlags(args[0]);
  if (flags < 0) return Fail(reason, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
  *value = notify::FlagsToString(static_cast<uint32_t>(flags));
  return true;
}

// latency-tracking-info-percentiles: numbers from 0 to 100 (as strtold
// reads them: "1e1", "0x10"), one space apart, shown as Redis prints them;
// "" for none. CONFIG SET's single value is split on each space, so "50  99"
// is refused, as Redis refuses it.
bool ParsePercentiles(const ConfigParam&, std::span<const std::string> args, std::string* value,
                      std::string* reason) {
  std::vector<std::string> words;
  if (args.size() == 1) {
    if (args[0].empty()) {
      value->clear();
      return true;
    }
    for (std::string_view w : Split(args[0], ' ')) words.emplace_back(w);
  } else {
    words.assign(args.begin(), args.end());
  }
  std::vector<std::string> shown;
  for (const std::string& w : words) {
    char* end = nullptr;
    errno = 0;
    const long double v = w.empty() || w.size() >= 5 * 1024 ? 0 : std::strtold(w.c_str(), &end);
    const bool range_error = errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || v == 0);
    if (w.empty() || w.size() >= 5 * 1024 || std::isspace(static_cast<unsigned char>(w[0])) || *end != '\0' ||
        range_error || errno == EINVAL || std::isnan(v)) {
      return Fail(reason, "Invalid latency-tracking-info-percentiles parameters");
    }
    if (v > 100.0 || v < 0.0) {
      return Fail(reason, "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
    }
    shown.push_back(FormatPercentile(static_cast<double>(v)));
  }
  *value = absl::StrJoin(shown, " ");
  return true;
}

// `name ""` when there are none, so a restart does not bring the default back.
void RewritePercentiles(const ConfigParam& p, std::string* out) {
  StrAppend(out, p.name, " ", p.value.empty() ? "\"\"" : p.value, "\n");
}

bool ParseWords(const ConfigParam&, std::span<const std::string> args, std::string* value, std::string*) {
  *value = absl::StrJoin(args, " ");
  return true;
}

// replicaof host port, checked as Redis's loader checks it ("no one", and
// no arguments -- what CONFIG REWRITE sets for a primary -- mean none).
bool ParseReplicaof(const ConfigParam&, std::span<const std::string> raw, std::string* value, std::string* reason) {
  value->clear();
  // "host port" in one argument too, as Redis splits a multi-argument
  // directive's one argument.
  const std::vector<std::string> args = Words(raw);
  if (args.empty()) return true;
  if (args.size() != 2) return Fail(reason, "wrong number of arguments");
  if (EqualsIgnoreCase(args[0], "no") && EqualsIgnoreCase(args[1], "one")) return true;
  int64_t port = 0;
  if (!core::StringToInt64(args[1], &port) || port < 0 || port > 65535) return Fail(reason, "Invalid master port");
  *value = StrCat(args[0], " ", args[1]);
  return true;
}

// shutdown-on-sigterm / shutdown-on-sigint: flags among save, nosave, now,
// force ("default" alone is none); shown in that order, as Redis shows them.
bool ParseShutdownFlags(const ConfigParam&, std::span<const std::string> args, std::string* value,
                        std::string* reason) {
  static constexpr const char* kFlags[] = {"save", "nosave", "now", "force"};
  std::vector<std::string> words = Words(args);
  bool set[4] = {};
  if (words.empty()) words.emplace_back();
  for (const std::string& w : words) {
    const std::string v = AsciiLower(w);
    if (v == "default") continue;
    auto it = std::find_if(std::begin(kFlags), std::end(kFlags), [&](const char* f) { return v == f; });
    if (it == std::end(kFlags)) {
      return Fail(reason, "argument(s) must be one of the following: default, save, nosave, now, force");
    }
    set[it - std::begin(kFlags)] = true;
  }
  if (set[0] && set[1]) return Fail(reason, "shutdown options SAVE and NOSAVE can't be used simultaneously");
  std::vector<std::string> shown;
  for (int i = 0; i < 4; ++i) {
    if (set[i]) shown.emplace_back(kFlags[i]);
  }
  *value = shown.empty() ? "default" : absl::StrJoin(shown, " ");
  return true;
}

// oom-score-adj: no, yes, relative (shown "yes", Redis's first name for it), absolute.
bool ParseOomScoreAdj(const ConfigParam&, std::span<const std::string> args, std::string* value,
                      std::string* reason) {
  std::string v = AsciiLower(args[0]);
  if (v == "relative") v = "yes";
  if (v != "no" && v != "yes" && v != "absolute") {
    return Fail(reason, "argument(s) must be one of the following: no, yes, relative, absolute");
  }
  *value = std::move(v);
  return true;
}

// oom-score-adj-values: three integers in [-2000, 2000] (primary, replica,
// background child).
bool ParseOomScoreValues(const ConfigParam&, std::span<const std::string> args, std::string* value,
                         std::string* reason) {
  std::vector<std::string> words = Words(args);
  if (words.size() != 3) return Fail(reason, "wrong number of arguments");
  std::vector<std::string> shown;
  for (const std::string& w : words) {
    int64_t v;
    if (!absl::SimpleAtoi(w, &v) || v < -2000 || v > 2000) {
      return Fail(reason, "Invalid oom-score-adj-values, elements must be between -2000 and 2000.");
    }
    shown.push_back(StrCat(v));
  }
  *value = absl::StrJoin(shown, " ");
  return true;
}

// ---- CONFIG REWRITE: the lines of one parameter ----------------------------

// Quotes a value for a config file when it needs it.
std::string QuoteIfNeeded(const std::string& v) {
  if (!v.empty() && v.find_first_of(" \t\"'\\") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

void RewriteQuoted(const ConfigParam& p, std::string* out) { StrAppend(out, p.name, " ", QuoteIfNeeded(p.value), "\n"); }

// The words unquoted; nothing when empty (replicaof of a primary: the line goes, as with Redis).
void RewriteWords(const ConfigParam& p, std::string* out) {
  if (!p.value.empty()) StrAppend(out, p.name, " ", p.value, "\n");
}

// Redis's rewriteConfigBindOption: the addresses, or `bind ""` for none.
void RewriteBind(const ConfigParam& p, std::string* out) {
  StrAppend(out, "bind ", p.value.empty() ? "\"\"" : p.value, "\n");
}

void RewriteSave(const ConfigParam& p, std::string* out) {
  if (p.value.empty()) {
    StrAppend(out, "save \"\"\n");
    return;
  }
  std::vector<std::string_view> t = Split(p.value, ' ');
  for (size_t i = 0; i + 1 < t.size(); i += 2) StrAppend(out, "save ", t[i], " ", t[i + 1], "\n");
}

void RewriteOutputBufferLimit(const ConfigParam& p, std::string* out) {
  std::vector<std::string_view> t = Split(p.value, ' ');
  for (size_t i = 0; i + 3 < t.size(); i += 4) {
    StrAppend(out, p.name, " ", t[i] == "slave" ? "replica" : t[i], " ", t[i + 1], " ", t[i + 2], " ", t[i + 3], "\n");
  }
}

// ---- the table -------------------------------------------------------------

struct DirectiveRow {
  const char* name;
  const char* default_value;
  Mutability mutability;
  ConfigKind kind;
  const char* alias_of;
};

constexpr DirectiveRow kRedisDirectives[] = {
#include "server/redis_directives.inc"
};

// Redis 7.0's hidden configs (HIDDEN_CONFIG): test hooks that CONFIG GET *
// does not list but CONFIG GET/SET accept by their exact name. Redis's test
// suite sets them in configuration files and with CONFIG SET.
constexpr DirectiveRow kHiddenDirectives[] = {
    {"key-load-delay", "0", Mutability::kMutable, ConfigKind::kInt, ""},
    {"loading-process-events-interval-bytes", "2097152", Mutability::kMutable, ConfigKind::kInt, ""},
    {"rdb-key-save-delay", "0", Mutability::kMutable, ConfigKind::kInt, ""},
    {"use-exit-on-panic", "no", Mutability::kMutable, ConfigKind::kBool, ""},
    {"watchdog-period", "0", Mutability::kMutable, ConfigKind::kInt, ""},
};

// ringkv's own parameters: hidden as Redis's test hooks are (CONFIG GET *
// lists only Redis's), read and set by their exact name.
constexpr DirectiveRow kRingkvDirectives[] = {
    // The I/O backend: auto (io_uring, or epoll where it is refused or lacks
    // a feature), io_uring (fail if it cannot be used), epoll.
    {"io-backend", "auto", Mutability::kImmutable, ConfigKind::kString, ""},
    // How BGSAVE, a full sync and BGREWRITEAOF take their
    // snapshot: yes = a forked child, as Redis; no = in this process, a step
    // per loop turn, each key written before it changes
    // (server/persistence/background_save.h).
    {"snapshot-fork", "yes", Mutability::kMutable, ConfigKind::kBool, ""},
};

// ringkv's rules for a parameter, with the ranges and values Redis 7.0
// applies. type nullptr: kEnum when enums are given, else by Redis's kind.
struct Rule {
  const char* name;
  const ParamType* type = nullptr;
  int64_t min = INT64_MIN;
  int64_t max = INT64_MAX;
  const char* enums = nullptr;  // comma-separated, in Redis's order
  Mutability mutability = Mutability::kMutable;
  bool implemented = true;  // false: only the type is special
  // Redis's SENSITIVE_CONFIG: a CONFIG SET of it shows its value as
  // "(redacted)" in SLOWLOG and MONITOR (IsSensitiveConfig).
  bool sensitive = false;
  // Redis's DENY_LOADING_CONFIG: CONFIG SET answers -LOADING while a
  // dataset loads (dir, appendonly).
  bool deny_loading = false;
};

constexpr int64_t kIntMax = 2147483647;
constexpr Mutability kImmutable = Mutability::kImmutable;
constexpr Mutability kProtected = Mutability::kProtected;
using namespace config_types;  // NOLINT: the ParamType names in the rows below

constexpr Rule kRules[] = {
    // Connections and the server.
    {.name = "port", .min = 0, .max = 65535},
    {.name = "bind", .type = &kBind},
    {.name = "protected-mode"},
    {.name = "io-threads", .min = 1, .max = 128},  // changes at runtime (Server::SetIoThreads)
    {.name = "io-backend", .enums = "auto,io_uring,epoll", .mutability = kImmutable},
    {.name = "unixsocket", .mutability = kImmutable},
    {.name = "unixsocketperm", .min = 0, .max = 777, .mutability = kImmutable},  // octal digits
    {.name = "databases", .min = 1, .max = kIntMax, .mutability = kImmutable},
    {.name = "maxclients", .min = 1, .max = 4294967295},  // an unsigned int in Redis
    {.name = "timeout", .min = 0, .max = kIntMax},
    {.name = "tcp-keepalive", .min = 0, .max = kIntMax},
    {.name = "tcp-backlog", .min = 0, .max = kIntMax, .mutability = kImmutable},
    {.name = "requirepass", .sensitive = true},
    // ACL (server/acl/): the users live in the Acl component, `user` lines
    // are kept apart (Config::users()).
    {.name = "aclfile", .mutability = kImmutable},
    {.name = "acl-pubsub-default", .enums = "allchannels,resetchannels"},
    {.name = "acllog-max-len", .min = 0},
    {.name = "loglevel", .enums = "debug,verbose,notice,warning"},
    {.name = "logfile", .mutability = kImmutable},
    {.name = "dir", .mutability = kProtected, .deny_loading = true},
    {.name = "pidfile", .mutability = kImmutable},
    {.name = "daemonize", .mutability = kImmutable},
    {.name = "always-show-logo", .mutability = kImmutable},
    {.name = "proto-max-bulk-len", .min = 1024 * 1024},
    {.name = "client-query-buffer-limit", .min = 1024 * 1024},
    {.name = "hz", .min = 0, .max = kIntMax},
    {.name = "enable-debug-command", .enums = "no,yes,local", .mutability = kImmutable},
    {.name = "enable-protected-configs", .enums = "no,yes,local", .mutability = kImmutable},
    {.name = "slowlog-log-slower-than", .min = -1},
    {.name = "slowlog-max-len", .min = 0},
    {.name = "supervised", .enums = "upstart,systemd,auto,no", .mutability = kImmutable},
    {.name = "busy-reply-threshold", .min = 0},  // alias lua-time-limit; read by scripting
    {.name = "client-output-buffer-limit", .type = &kOutputBufferLimit},
    {.name = "notify-keyspace-events", .type = &kNotifyEvents},
    {.name = "maxmemory-clients", .type = &kMemoryOrPercent},
    {.name = "tracking-table-max-keys", .min = 0},
    {.name = "latency-monitor-threshold", .min = 0},
    {.name = "latency-tracking"},
    {.name = "latency-tracking-info-percentiles", .type = &kPercentiles},
    // Memory and eviction.
    {.name = "maxmemory", .type = &kUnsignedMemory},
    {.name = "maxmemory-policy",
     .enums = "volatile-lru,volatile-lfu,volatile-random,volatile-ttl,allkeys-lru,allkeys-lfu,allkeys-random,"
              "noeviction"},
    {.name = "maxmemory-samples", .min = 1, .max = kIntMax},
    {.name = "lfu-log-factor", .min = 0, .max = kIntMax},
    {.name = "lfu-decay-time", .min = 0, .max = kIntMax},
    {.name = "lazyfree-lazy-user-flush"},
    {.name = "lazyfree-lazy-expire"},
    {.name = "lazyfree-lazy-user-del"},
    {.name = "lazyfree-lazy-server-del"},
    {.name = "lazyfree-lazy-eviction"},
    // Collection encodings.
    {.name = "hash-max-listpack-entries", .min = 0},
    {.name = "hash-max-listpack-value", .min = 0},
    {.name = "set-max-intset-entries", .min = 0},
    {.name = "list-max-listpack-size", .min = INT32_MIN, .max = kIntMax},
    {.name = "list-compress-depth", .min = 0, .max = kIntMax},
    {.name = "zset-max-listpack-entries", .min = 0},
    {.name = "zset-max-listpack-value", .min = 0},
    {.name = "stream-node-max-bytes", .min = 0},
    {.name = "stream-node-max-entries", .min = 0},
    {.name = "hll-sparse-max-bytes", .min = 0},  // CollectionLimits: PFADD / PFMERGE
    // Persistence.
    {.name = "rdbcompression"},
    {.name = "rdbchecksum", .mutability = kImmutable},
    {.name = "save", .type = &kSave},
    {.name = "dbfilename", .type = &kFileName, .mutability = kProtected},
    {.name = "stop-writes-on-bgsave-error"},
    {.name = "appendonly", .deny_loading = true},
    {.name = "appendfilename", .type = &kFileName, .mutability = kImmutable},
    {.name = "appenddirname", .type = &kDirName, .mutability = kImmutable},
    {.name = "appendfsync", .enums = "everysec,always,no"},
    {.name = "aof-use-rdb-preamble"},
    {.name = "aof-load-truncated"},
    {.name = "aof-disable-auto-gc"},
    {.name = "aof-timestamp-enabled"},
    {.name = "auto-aof-rewrite-percentage", .min = 0, .max = kIntMax},
    {.name = "auto-aof-rewrite-min-size", .min = 0},
    // ringkv validates every DUMP payload and RDB value deeply whatever the
    // mode (yes: always, as Redis; clients and no: still always, which only
    // ever refuses what Redis would accept unchecked and may crash on later).
    {.name = "sanitize-dump-payload", .enums = "no,yes,clients"},
    // Replication.
    {.name = "repl-backlog-size", .min = 1},
    {.name = "shutdown-timeout", .min = 0, .max = kIntMax},  // seconds SHUTDOWN waits for lagging replicas
    {.name = "replicaof", .type = &kReplicaof, .mutability = kImmutable},
    {.name = "masterauth", .sensitive = true},
    {.name = "masteruser", .sensitive = true},
    {.name = "replica-read-only"},
    {.name = "replica-announce-ip"},
    {.name = "replica-announce-port", .min = 0, .max = 65535},
    {.name = "replica-priority", .min = 0, .max = kIntMax},
    {.name = "replica-serve-stale-data"},
    {.name = "repl-backlog-ttl", .min = 0},
    {.name = "min-replicas-to-write", .min = 0, .max = kIntMax},
    {.name = "min-replicas-max-lag", .min = 0, .max = kIntMax},
    {.name = "repl-timeout", .min = 1, .max = kIntMax},
    {.name = "repl-ping-replica-period", .min = 1, .max = kIntMax},
    {.name = "repl-diskless-sync"},
    {.name = "repl-diskless-sync-delay", .min = 0, .max = kIntMax},
    {.name = "repl-diskless-sync-max-replicas", .min = 0, .max = kIntMax},
    {.name = "repl-diskless-load", .enums = "disabled,on-empty-db,swapdb"},
    {.name = "propagation-error-behavior", .enums = "ignore,panic,panic-on-replicas"},
    {.name = "replica-ignore-disk-write-errors"},
    // Test hooks (hidden): microseconds slept per key while saving / loading
    // an RDB; a negative value -N sleeps 1 microsecond once in N keys.
    {.name = "rdb-key-save-delay", .min = INT32_MIN, .max = kIntMax},
    {.name = "key-load-delay", .min = INT32_MIN, .max = kIntMax},
    // How often a start-up RDB load serves clients (Loading: its ServeWhileLoading hook);
    // a diskless replica load is parsed by a worker thread while the main
    // thread keeps serving, so it does not apply there.
    {.name = "loading-process-events-interval-bytes", .min = 1024, .max = kIntMax},
    // Accepted with nothing to act on: ringkv's cron runs at `hz` whatever
    // the number of clients.
    {.name = "dynamic-hz"},
    // The SIGALRM watchdog (server/watchdog.h).
    {.name = "watchdog-period", .min = 0, .max = kIntMax},
    // Active defragmentation is not built (see ParseActiveDefrag): the
    // switch stays `no`, and its tunables are kept, shown and rewritten with
    // Redis's ranges -- as Redis keeps them when it is built without it.
    {.name = "activedefrag", .type = &kActiveDefrag},
    {.name = "active-defrag-cycle-min", .min = 1, .max = 99},
    {.name = "active-defrag-cycle-max", .min = 1, .max = 99},
    {.name = "active-defrag-threshold-lower", .min = 0, .max = 1000},
    {.name = "active-defrag-threshold-upper", .min = 0, .max = 1000},
    {.name = "active-defrag-ignore-bytes", .min = 1},
    {.name = "active-defrag-max-scan-fields", .min = 1},
    // TLS (io/tls_context.h, server/tls_config.cc). tls-cluster, like
    // tls-replication, needs a CA; it makes the cluster bus and MIGRATE
    // speak TLS (docs/cluster.md, "TLS on the bus").
    {.name = "tls-port", .min = 0, .max = 65535},
    {.name = "tls-cert-file"},
    {.name = "tls-key-file"},
    {.name = "tls-key-file-pass"},
    {.name = "tls-client-cert-file"},
    {.name = "tls-client-key-file"},
    {.name = "tls-client-key-file-pass"},
    {.name = "tls-ca-cert-file"},
    {.name = "tls-ca-cert-dir"},
    {.name = "tls-auth-clients", .enums = "no,yes,optional"},
    {.name = "tls-replication"},
    {.name = "tls-cluster"},
    {.name = "tls-protocols"},
    {.name = "tls-ciphers"},
    {.name = "tls-ciphersuites"},
    {.name = "tls-prefer-server-ciphers"},
    {.name = "tls-session-caching"},
    {.name = "tls-session-cache-size", .min = 0, .max = kIntMax},
    {.name = "tls-session-cache-timeout", .min = 0, .max = kIntMax},
    {.name = "tls-dh-params-file"},
    // Process set-up (server/supervision.h, server/oom_score.h, logging.h).
    {.name = "oom-score-adj", .type = &kOomScoreAdj},
    {.name = "oom-score-adj-values", .type = &kOomScoreValues},
    {.name = "syslog-enabled", .mutability = kImmutable},
    {.name = "syslog-ident", .mutability = kImmutable},
    {.name = "syslog-facility", .enums = "user,local0,local1,local2,local3,local4,local5,local6,local7",
     .mutability = kImmutable},
    // What SIGTERM / SIGINT do (shutdown.cc).
    {.name = "shutdown-on-sigterm", .type = &kShutdownFlags},
    {.name = "shutdown-on-sigint", .type = &kShutdownFlags},
    // Expiry, eviction and the cron (Server::BindMemoryConfig, Server::Cron).
    {.name = "active-expire-effort", .min = 1, .max = 10},
    {.name = "maxmemory-eviction-tenacity", .min = 0, .max = 100},
    {.name = "replica-ignore-maxmemory"},
    {.name = "activerehashing"},
    // Persistence: fsync pacing of the fork child's files and of the AOF
    // while a child runs; replication-only RDB files.
    {.name = "rdb-save-incremental-fsync"},
    {.name = "snapshot-fork"},
    {.name = "aof-rewrite-incremental-fsync"},
    {.name = "no-appendfsync-on-rewrite"},
    {.name = "rdb-del-sync-files"},
    // Replication.
    {.name = "bind-source-addr"},
    {.name = "repl-disable-tcp-nodelay"},
    {.name = "replica-lazy-flush"},
    {.name = "replica-announced"},
    // The process.
    {.name = "crash-log-enabled"},
    {.name = "proc-title-template", .type = &kProcTitle},
    {.name = "set-proc-title", .mutability = kImmutable},  // no: the title is left alone
    // Kept, shown and rewritten, with nothing to act on -- as Redis 7.0
    // itself in the same situation: Redis built without jemalloc (ringkv
    // uses mimalloc) ignores jemalloc-bg-thread; ringkv has no memory test
    // to run after a crash (crash-memcheck-enabled); ignore-warnings names
    // start-up warnings to silence, and Redis 7.0's only one (ARM64-COW-BUG)
    // is never raised by ringkv.
    {.name = "jemalloc-bg-thread"},
    {.name = "crash-memcheck-enabled"},
    {.name = "ignore-warnings"},
    // Cluster mode (server/cluster/, docs/cluster.md): chosen at start-up
    // as in Redis; the rest are read by the cluster component and its bus.
    // Without cluster mode they are kept and shown, as Redis keeps them.
    {.name = "cluster-enabled", .mutability = kImmutable},
    {.name = "cluster-config-file", .mutability = kImmutable},
    {.name = "cluster-port", .min = 0, .max = 65535, .mutability = kImmutable},
    {.name = "cluster-allow-pubsubshard-when-down"},
    {.name = "cluster-allow-reads-when-down"},
    {.name = "cluster-allow-replica-migration"},
    {.name = "cluster-announce-bus-port", .min = 0, .max = 65535},
    {.name = "cluster-announce-hostname", .type = &kHostname},
    {.name = "cluster-announce-ip"},
    {.name = "cluster-announce-port", .min = 0, .max = 65535},
    {.name = "cluster-announce-tls-port", .min = 0, .max = 65535},
    {.name = "cluster-link-sendbuf-limit", .type = &kUnsignedMemory},
    {.name = "cluster-migration-barrier", .min = 0, .max = kIntMax},
    {.name = "cluster-node-timeout", .min = 0},
    {.name = "cluster-preferred-endpoint-type", .enums = "ip,hostname,unknown-endpoint"},
    {.name = "cluster-replica-no-failover"},
    {.name = "cluster-replica-validity-factor", .min = 0, .max = kIntMax},
    {.name = "cluster-require-full-coverage"},
};

const ParamType* TypeOfKind(ConfigKind kind) {
  switch (kind) {
    case ConfigKind::kBool:
      return &kBool;
    case ConfigKind::kInt:
      return &kInt;
    case ConfigKind::kMemory:
      return &kMemory;
    default:
      return &kString;
  }
}

void AddRow(const DirectiveRow& row, bool hidden, ConfigParams* params) {
  ConfigParam& p = (*params)[row.name];
  p.name = row.name;
  p.value = p.default_value = row.default_value;
  p.mutability = row.mutability;
  p.type = TypeOfKind(row.kind);
  p.hidden = hidden;
}

void ApplyRule(const Rule& r, ConfigParam* p) {
  p->implemented = r.implemented;
  p->min = r.min;
  p->max = r.max;
  if (r.implemented) p->mutability = r.mutability;
  if (r.enums != nullptr) p->enum_values = absl::StrSplit(r.enums, ',');
  p->type = r.enums != nullptr ? &kEnum : r.type != nullptr ? r.type : p->type;
  p->sensitive = r.sensitive;
  p->deny_loading = r.deny_loading;
}

}  // namespace

namespace config_types {
const ParamType kBool{ParseBool, RewriteQuoted, false};
const ParamType kActiveDefrag{ParseActiveDefrag, RewriteQuoted, false};
const ParamType kInt{ParseInt, RewriteQuoted, false};
const ParamType kMemory{ParseMemory, RewriteQuoted, false};
const ParamType kString{ParseString, RewriteQuoted, false};
const ParamType kEnum{ParseEnum, RewriteQuoted, false};
const ParamType kFileName{ParseFileName, RewriteQuoted, false};
const ParamType kDirName{ParseDirName, RewriteQuoted, false};
const ParamType kSave{ParseSave, RewriteSave, true};
const ParamType kBind{ParseBind, RewriteBind, true};
const ParamType kOutputBufferLimit{ParseOutputBufferLimit, RewriteOutputBufferLimit, true};
const ParamType kMemoryOrPercent{ParseMemoryOrPercent, RewriteQuoted, false};
const ParamType kNotifyEvents{ParseNotifyEvents, RewriteQuoted, false};
const ParamType kWords{ParseWords, RewriteWords, true};
const ParamType kPercentiles{ParsePercentiles, RewritePercentiles, true};
const ParamType kShutdownFlags{ParseShutdownFlags, RewriteWords, true};
const ParamType kReplicaof{ParseReplicaof, RewriteWords, true};
const ParamType kOomScoreAdj{ParseOomScoreAdj, RewriteQuoted, false};
const ParamType kOomScoreValues{ParseOomScoreValues, RewriteWords, true};
const ParamType kUnsignedMemory{ParseUnsignedMemory, RewriteQuoted, false};
const ParamType kProcTitle{ParseProcTitle, RewriteQuoted, false};
const ParamType kHostname{ParseHostname, RewriteQuoted, false};
}  // namespace config_types

ConfigParams BuildConfigParams() {
  ConfigParams params;
  for (const DirectiveRow& row : kRedisDirectives) AddRow(row, /*hidden=*/false, &params);
  for (const DirectiveRow& row : kHiddenDirectives) AddRow(row, /*hidden=*/true, &params);
  for (const DirectiveRow& row : kRingkvDirectives) AddRow(row, /*hidden=*/true, &params);
  for (const Rule& r : kRules) ApplyRule(r, &params.at(r.name));
  for (const DirectiveRow& row : kRedisDirectives) {
    ConfigParam& p = params.at(row.name);
    p.primary = row.alias_of[0] == '\0' ? &p : &params.at(row.alias_of);
    p.type = p.primary->type;
  }
  for (const DirectiveRow& row : kHiddenDirectives) params.at(row.name).primary = &params.at(row.name);
  for (const DirectiveRow& row : kRingkvDirectives) params.at(row.name).primary = &params.at(row.name);
  return params;
}

bool IsSensitiveConfig(std::string_view name) {
  // The rules are few and CONFIG SET is rare on the paths that ask (a slow
  // log entry, a monitored command): a scan beats building an index.
  return std::any_of(std::begin(kRules), std::end(kRules),
                     [name](const Rule& r) { return r.sensitive && EqualsIgnoreCase(name, r.name); });
}

bool ParseMemoryValue(std::string_view s, int64_t* out) {
  const std::string lower = AsciiLower(s);
  std::string_view number = lower;
  int64_t mul = 1;
  static constexpr std::pair<std::string_view, int64_t> kUnits[] = {
      {"gb", 1024LL * 1024 * 1024}, {"mb", 1024LL * 1024}, {"kb", 1024}, {"g", 1000LL * 1000 * 1000},
      {"m", 1000LL * 1000},         {"k", 1000},           {"b", 1}};
  for (auto [suffix, m] : kUnits) {
    if (number.ends_with(suffix)) {
      number.remove_suffix(suffix.size());
      mul = m;
      break;
    }
  }
  int64_t v;
  if (number.empty() || !absl::SimpleAtoi(ToAbsl(number), &v)) return false;
  if (v != 0 && (v > INT64_MAX / mul || v < INT64_MIN / mul)) return false;
  *out = v * mul;
  return true;
}


}  // namespace ringkv::server

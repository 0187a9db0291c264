// The kinds of configuration parameter (config_types::k*): how each parses
// a value given in the file, on the command line or by CONFIG SET, and how
// CONFIG REWRITE writes it back. The table of parameters that uses them is
// config_params.cc.
#include "server/config_params.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "core/string_value.h"
#include "core/strings.h"
#include "server/keyspace_events.h"
#include "server/latency_monitor.h"
#include "server/proc_title.h"

namespace ringkv::server {
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
  *value = notify::FlagsToStoredString(static_cast<uint32_t>(flags));
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

void RewriteNotifyEvents(const ConfigParam& p, std::string* out) {
  StrAppend(out, p.name, " ", QuoteIfNeeded(notify::StoredToShown(p.value)), "\n");
}

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
const ParamType kNotifyEvents{ParseNotifyEvents, RewriteNotifyEvents, false, notify::StoredToShown};
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

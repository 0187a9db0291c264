// The parameter table behind Config: every parameter, the rules that check
// its arguments, and how CONFIG REWRITE writes it back.
//
// A parameter's ParamType is the whole of its special behaviour: `save`,
// `bind`, `client-output-buffer-limit`, `notify-keyspace-events`, ... each
// have a small named parser in config_params.cc instead of a branch in a
// chain of name comparisons. The table is built once (BuildConfigParams)
// from Redis 7.0's list (redis_directives.inc), Redis's hidden test
// parameters and ringkv's rules for the parameters it implements.
//
// Example: config_types::kInt.parse(param, args, &value, &reason).
//
// Config and its tests use this header; redaction asks IsSensitiveConfig. Thread-safety: none (the table
// is main-thread state of a Config).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace ringkv::server {

enum class Mutability : uint8_t { kMutable, kImmutable, kProtected };
// A parameter's kind as Redis 7.0 reports it (the column of redis_directives.inc).
enum class ConfigKind : uint8_t { kBool, kInt, kMemory, kString, kSpecial, kAlias };

struct ConfigParam;

// How one kind of parameter turns arguments into its value and back.
struct ParamType {
  // Turns a directive's arguments into the canonical value CONFIG GET shows,
  // or sets `reason` to Redis's words for what is wrong. REQUIRES: exactly
  // one argument unless multi_arg (Config checks the count first). `p` is
  // the primary parameter; its current value is what a partial update
  // (client-output-buffer-limit of one class) merges into.
  bool (*parse)(const ConfigParam& p, std::span<const std::string> args, std::string* value, std::string* reason);
  // Appends the line(s) CONFIG REWRITE writes for p (maybe none).
  void (*rewrite)(const ConfigParam& p, std::string* out);
  bool multi_arg;  // takes several arguments on one line
  // What CONFIG GET shows of a value that keeps more than Redis prints
  // (notify-keyspace-events); nullptr: the value itself.
  std::string (*shown)(const std::string& value) = nullptr;
};

namespace config_types {
extern const ParamType kActiveDefrag;  // yes / no, where yes is refused (no defragmenter)
extern const ParamType kBool;    // yes / no, any case; shown lower-case
extern const ParamType kInt;     // an integer within [min, max]
extern const ParamType kMemory;  // "1gb", "100k", "42" within [min, max]; shown in bytes
extern const ParamType kString;  // any single argument, as given
extern const ParamType kEnum;    // one of enum_values, any case; shown lower-case
extern const ParamType kFileName;         // a file name, not a path (dbfilename, appendfilename)
extern const ParamType kDirName;          // a directory name, not a path (appenddirname)
extern const ParamType kSave;             // "seconds changes" pairs; "" for none
extern const ParamType kBind;             // 1 to 16 addresses
extern const ParamType kOutputBufferLimit;  // "class hard soft seconds" groups, merged per class
extern const ParamType kMemoryOrPercent;  // bytes or "N%" of maxmemory (maxmemory-clients)
extern const ParamType kNotifyEvents;     // keyspace event classes, shown canonical
extern const ParamType kWords;            // several words kept as given (replicaof, oom-score-adj-values)
extern const ParamType kPercentiles;      // latency-tracking-info-percentiles: numbers in [0, 100]
extern const ParamType kUnsignedMemory;   // a memory size, never negative (cluster-link-sendbuf-limit)
extern const ParamType kProcTitle;        // proc-title-template: {variables} Redis knows
extern const ParamType kShutdownFlags;    // shutdown-on-sig*: "default" or save|nosave, now, force
extern const ParamType kReplicaof;        // "host port", "no one" or nothing (no primary)
extern const ParamType kOomScoreAdj;      // no, yes (= relative), absolute
extern const ParamType kOomScoreValues;   // three integers in [-2000, 2000]
extern const ParamType kHostname;         // cluster-announce-hostname: alphanumerics, '-' and '.'
}  // namespace config_types

// One parameter: its rules, and its value when it is a primary name.
struct ConfigParam {
  std::string name;
  std::string value;  // canonical, as CONFIG GET shows it; an alias reads its primary's
  std::string default_value;
  const ParamType* type = &config_types::kString;
  ConfigParam* primary = nullptr;  // itself, or the parameter this name is an alias of
  Mutability mutability = Mutability::kMutable;
  bool implemented = false;
  bool hidden = false;    // a test hook: CONFIG GET shows it only when asked by its exact name
  bool sensitive = false;  // Redis's SENSITIVE_CONFIG: CONFIG SET's value is redacted
  bool deny_loading = false;  // Redis's DENY_LOADING_CONFIG: CONFIG SET answers -LOADING while loading
  int64_t min = INT64_MIN;
  int64_t max = INT64_MAX;
  std::vector<std::string> enum_values;  // kEnum: the accepted values, in Redis's order
  std::vector<uint32_t> hooks;           // apply callbacks (Config::hooks_ indices), primaries only
};

using ConfigParams = std::map<std::string, ConfigParam, std::less<>>;

// Every parameter with its default value; `primary` points into the map.
ConfigParams BuildConfigParams();

// Whether `name` (any case) is a parameter whose CONFIG SET value SLOWLOG and
// MONITOR show as "(redacted)": requirepass, masteruser, masterauth, as
// Redis 7.0 marks them (its TLS key passphrases are not).
bool IsSensitiveConfig(std::string_view name);

// Memory sizes as Redis reads them: "1gb", "100k", "42".
bool ParseMemoryValue(std::string_view s, int64_t* out);

}  // namespace ringkv::server

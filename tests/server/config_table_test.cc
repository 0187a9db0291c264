// The parameter table row by row: every default round-trips through CONFIG
// GET and CONFIG SET, every range and enum refuses with Redis 7.0's words,
// and memory sizes read as Redis's memtoull reads them. The texts were taken
// from redis-server 7.0 (CONFIG SET of the same values).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/strings.h"
#include "server/config.h"
#include "server/config_params.h"

namespace ringkv::server::config_table_test {
namespace {

std::string Failed(const std::string& name, const std::string& reason) {
  return StrCat("ERR CONFIG SET failed (possibly related to argument '", name, "') - ", reason);
}

// The value CONFIG GET shows for one parameter asked by its exact name.
std::string Get(const Config& c, const std::string& name) {
  auto got = c.Match({name});
  EXPECT_EQ(got.size(), 1u) << name;
  return got.empty() ? "" : got[0].second;
}

// CONFIG SET of one parameter: "" when accepted, else the error.
std::string Set(Config& c, const std::string& name, const std::string& value) {
  std::string err;
  return c.SetFromCommand({{name, value}}, &err) ? "" : err;
}

// The primary parameters CONFIG SET may change (what a test can set back).
std::vector<ConfigParam> SettableRows() {
  std::vector<ConfigParam> rows;
  for (const auto& [name, p] : BuildConfigParams()) {
    if (p.primary->name == name && p.implemented && p.mutability == Mutability::kMutable) rows.push_back(p);
  }
  return rows;
}

TEST(ConfigTableTest, EveryDefaultRoundTripsThroughGetAndSet) {
  Config c;
  size_t settable = 0;
  for (const auto& [name, p] : BuildConfigParams()) {
    SCOPED_TRACE(name);
    if (p.primary->name != name) continue;  // aliases: ConfigTest.AliasesShareOneValueAndOneCallbackList
    const std::string shown = Get(c, name);
    EXPECT_EQ(shown, name == "dir" ? shown : p.default_value);  // dir: the working directory at start-up
    const std::string error = Set(c, name, p.default_value);
    if (p.mutability == Mutability::kImmutable) {
      EXPECT_EQ(error, Failed(name, "can't set immutable config"));
    } else if (p.mutability == Mutability::kProtected) {
      EXPECT_EQ(error, Failed(name, "can't set protected config"));
    } else if (!p.implemented) {
      EXPECT_EQ(error, Failed(name, "not supported by ringkv (the parameter has no effect here)"));
    } else {
      EXPECT_EQ(error, "");
      ++settable;
    }
    EXPECT_EQ(Get(c, name), shown);
  }
  EXPECT_GT(settable, 100u);
}

TEST(ConfigTableTest, EveryIntegerRangeRefusesWithRedisWords) {
  for (const ConfigParam& p : SettableRows()) {
    const bool is_int = p.type == &config_types::kInt;
    const bool is_memory = p.type == &config_types::kMemory;
    if (!is_int && !is_memory) continue;
    SCOPED_TRACE(p.name);
    Config c;
    const std::string range = StrCat("argument must be between ", p.min, " and ", p.max, " inclusive");
    EXPECT_EQ(Set(c, p.name, StrCat(p.min)), "");
    EXPECT_EQ(Get(c, p.name), StrCat(p.min));
    EXPECT_EQ(Set(c, p.name, StrCat(p.max)), "");
    EXPECT_EQ(Get(c, p.name), StrCat(p.max));
    if (p.min > 0 || (p.min > INT64_MIN && is_int)) {
      EXPECT_EQ(Set(c, p.name, StrCat(p.min - 1)), Failed(p.name, range));
    }
    if (p.max < INT64_MAX) {
      EXPECT_EQ(Set(c, p.name, StrCat(p.max + 1)), Failed(p.name, range));
    }
    if (is_int) {
      EXPECT_EQ(Set(c, p.name, "abc"), Failed(p.name, "argument couldn't be parsed into an integer"));
      EXPECT_EQ(Set(c, p.name, "1k"), Failed(p.name, "argument couldn't be parsed into an integer"));
    } else {
      // Redis's memtoull: no sign, "" is 0, 2^63 is negative to a signed parameter.
      EXPECT_EQ(Set(c, p.name, "abc"), Failed(p.name, "argument must be a memory value"));
      EXPECT_EQ(Set(c, p.name, "-1"), Failed(p.name, "argument must be a memory value"));
      EXPECT_EQ(Set(c, p.name, "9223372036854775808"), Failed(p.name, range));
      EXPECT_EQ(Set(c, p.name, ""), p.min > 0 ? Failed(p.name, range) : "");
    }
  }
}

TEST(ConfigTableTest, RangesRedisKeepsInOtherTypes) {
  Config c;
  EXPECT_EQ(Set(c, "maxclients", "0"), Failed("maxclients", "argument must be between 1 and 4294967295 inclusive"));
  EXPECT_EQ(Set(c, "maxclients", "4294967295"), "");
  EXPECT_EQ(Set(c, "acllog-max-len", "-1"),
            Failed("acllog-max-len", "argument must be between 0 and 9223372036854775807 inclusive"));
  EXPECT_EQ(Set(c, "repl-backlog-ttl", "-1"),
            Failed("repl-backlog-ttl", "argument must be between 0 and 9223372036854775807 inclusive"));
  EXPECT_EQ(Set(c, "proto-max-bulk-len", ""),
            Failed("proto-max-bulk-len", "argument must be between 1048576 and 9223372036854775807 inclusive"));
}

TEST(ConfigTableTest, EveryEnumRefusesWithItsValuesAndTakesAnyCase) {
  size_t enums = 0;
  for (const ConfigParam& p : SettableRows()) {
    if (p.type != &config_types::kEnum) continue;
    SCOPED_TRACE(p.name);
    ++enums;
    Config c;
    std::string listed;
    for (const std::string& v : p.enum_values) StrAppend(&listed, listed.empty() ? "" : ", ", v);
    EXPECT_EQ(Set(c, p.name, "no-such-value"),
              Failed(p.name, StrCat("argument(s) must be one of the following: ", listed)));
    EXPECT_EQ(Set(c, p.name, ""), Failed(p.name, StrCat("argument(s) must be one of the following: ", listed)));
    for (const std::string& v : p.enum_values) {
      EXPECT_EQ(Set(c, p.name, AsciiUpper(v)), "");
      EXPECT_EQ(Get(c, p.name), v);
    }
  }
  EXPECT_GE(enums, 8u);
  Config c;
  EXPECT_EQ(Set(c, "maxmemory-policy", "foo"),
            Failed("maxmemory-policy",
                   "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, "
                   "volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"));
}

TEST(ConfigTableTest, EveryBooleanTakesYesAndNoInAnyCase) {
  for (const ConfigParam& p : SettableRows()) {
    if (p.type != &config_types::kBool) continue;
    SCOPED_TRACE(p.name);
    Config c;
    EXPECT_EQ(Set(c, p.name, "YES"), "");
    EXPECT_EQ(Get(c, p.name), "yes");
    EXPECT_EQ(Set(c, p.name, "No"), "");
    EXPECT_EQ(Get(c, p.name), "no");
    EXPECT_EQ(Set(c, p.name, "1"), Failed(p.name, "argument must be 'yes' or 'no'"));
  }
}

TEST(ConfigTableTest, MemorySizesReadAsRedisMemtoull) {
  Config c;
  for (auto [given, shown] : std::vector<std::pair<const char*, const char*>>{
           {"", "0"}, {"k", "0"}, {"1KB", "1024"}, {"2gb", "2147483648"}, {"3m", "3000000"}, {"7b", "7"},
           {"99999999999999999999", "18446744073709551615"}}) {  // saturates, as strtoull
    EXPECT_EQ(Set(c, "maxmemory", given), "") << given;
    EXPECT_EQ(Get(c, "maxmemory"), shown) << given;
  }
  for (const char* bad : {"-1", "-0", " 1", "+1", "1 ", "0x10", "1kbb", "1t", "20000000000gb", "abc"}) {
    EXPECT_EQ(Set(c, "maxmemory", bad), Failed("maxmemory", "argument must be a memory value")) << bad;
  }
}

TEST(ConfigTableTest, UnsignedMemoryParametersTakeTheWholeRange) {
  Config c;
  EXPECT_EQ(Set(c, "maxmemory", "18446744073709551615"), "");
  EXPECT_EQ(Get(c, "maxmemory"), "18446744073709551615");
  EXPECT_EQ(c.Int("maxmemory"), INT64_MAX);  // as good as no limit to the code that reads it
  EXPECT_EQ(Set(c, "maxmemory", "99999999999999999999"), "");
  EXPECT_EQ(Get(c, "maxmemory"), "18446744073709551615");
  EXPECT_EQ(Set(c, "maxmemory", ""), "");
  EXPECT_EQ(Get(c, "maxmemory"), "0");
  EXPECT_EQ(Set(c, "maxmemory", "abc"), Failed("maxmemory", "argument must be a memory value"));
  EXPECT_EQ(Set(c, "maxmemory", "-1"), Failed("maxmemory", "argument must be a memory value"));
  EXPECT_EQ(Set(c, "cluster-link-sendbuf-limit", "9223372036854775808"), "");
  EXPECT_EQ(Get(c, "cluster-link-sendbuf-limit"), "9223372036854775808");
}

TEST(ConfigTableTest, OutputBufferLimitErrorsGroupByGroup) {
  Config c;
  const std::string before = Get(c, "client-output-buffer-limit");
  const std::string bad_class = Failed("client-output-buffer-limit",
                                       "Invalid client class specified in buffer limit configuration.");
  const std::string bad_number = Failed("client-output-buffer-limit",
                                        "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
  EXPECT_EQ(Set(c, "client-output-buffer-limit", "normal 1 1 1 foo 1 1 1"), bad_class);
  EXPECT_EQ(Set(c, "client-output-buffer-limit", "normal x 1 1 foo 1 1 1"), bad_number);
  EXPECT_EQ(Set(c, "client-output-buffer-limit", "foo x 1 1"), bad_class);
  EXPECT_EQ(Set(c, "client-output-buffer-limit", "master 1 1 1"), bad_class);
  for (const char* v : {"normal 1 1 1x", "normal -0 1 1", "normal 1 1 -1", "normal 1 1 2k", "normal 1 1 99999999999999999999",
                        "normal 0 0 0 pubsub -1 0 0"}) {
    EXPECT_EQ(Set(c, "client-output-buffer-limit", v), bad_number) << v;
  }
  EXPECT_EQ(Get(c, "client-output-buffer-limit"), before);
  EXPECT_EQ(Set(c, "client-output-buffer-limit", "normal 1mb 1kb 1"), "");
  EXPECT_EQ(Get(c, "client-output-buffer-limit"),
            "normal 1048576 1024 1 slave 268435456 67108864 60 pubsub 33554432 8388608 60");
}

TEST(ConfigTableTest, AnnouncedHostnameIsCheckedAsRedisChecksIt) {
  Config c;
  for (const char* ok : {"a-b.c", "-", "", "A9"}) EXPECT_EQ(Set(c, "cluster-announce-hostname", ok), "") << ok;
  EXPECT_EQ(Set(c, "cluster-announce-hostname", std::string(255, 'x')), "");
  EXPECT_EQ(Set(c, "cluster-announce-hostname", std::string(256, 'x')),
            Failed("cluster-announce-hostname", "Hostnames must be less than 256 characters"));
  for (const char* bad : {"a_b", "a:b", "a/b", "a,b", "a b", "50%"}) {
    EXPECT_EQ(Set(c, "cluster-announce-hostname", bad),
              Failed("cluster-announce-hostname", "Hostnames may only contain alphanumeric characters, hyphens or dots"))
        << bad;
  }
}

TEST(ConfigTableTest, MultiParameterSetIsAtomic) {
  Config c;
  std::string err;
  EXPECT_FALSE(c.SetFromCommand({{"maxmemory", "10mb"}, {"hz", "abc"}}, &err));
  EXPECT_EQ(err, Failed("hz", "argument couldn't be parsed into an integer"));
  EXPECT_EQ(Get(c, "maxmemory"), "0");
  EXPECT_FALSE(c.SetFromCommand({{"maxmemory", "1"}, {"maxmemory-policy", "foo"}}, &err));
  EXPECT_EQ(Get(c, "maxmemory"), "0");
  EXPECT_TRUE(c.SetFromCommand({{"maxmemory", "10mb"}, {"hz", "20"}}, &err)) << err;
  EXPECT_EQ(Get(c, "maxmemory"), "10485760");
  EXPECT_EQ(Get(c, "hz"), "20");
}

TEST(ConfigTableTest, SensitiveParametersAreRedisSensitiveConfigs) {
  for (const char* name : {"requirepass", "masterauth", "masteruser", "MasterAuth"}) {
    EXPECT_TRUE(IsSensitiveConfig(name)) << name;
  }
  for (const char* name : {"tls-key-file-pass", "tls-client-key-file-pass", "maxmemory", "dbfilename", ""}) {
    EXPECT_FALSE(IsSensitiveConfig(name)) << name;
  }
}

TEST(ConfigTableTest, StoreAppliedIntIsWhatGetShowsAndRunsNoCallback) {
  Config c;
  int calls = 0;
  c.OnChange("hz", [&] {
    ++calls;
    return absl::OkStatus();
  });
  c.StoreAppliedInt("hz", 500);
  EXPECT_EQ(Get(c, "hz"), "500");
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace ringkv::server::config_table_test

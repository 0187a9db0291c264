#include "server/slowlog.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "server/config.h"

namespace ringkv::server {
namespace {

TEST(SlowLogTest, FollowsItsSettings) {
  Config config;
  SlowLog log(config);
  EXPECT_EQ(log.threshold_us(), 10000);
  EXPECT_FALSE(log.ShouldRecord(9999));
  EXPECT_TRUE(log.ShouldRecord(10000));
  std::string error;
  ASSERT_TRUE(config.SetFromCommand({{"slowlog-log-slower-than", "-1"}}, &error)) << error;
  EXPECT_FALSE(log.ShouldRecord(1000000));  // negative: off
}

TEST(SlowLogTest, TrimsArgumentsAsRedis) {
  Config config;
  SlowLog log(config);
  std::vector<std::string> args(40, "x");
  args[1] = std::string(130, 'y');
  std::vector<std::string_view> argv(args.begin(), args.end());
  log.Record(argv, 20000, 5000, "127.0.0.1:1", "name");
  ASSERT_EQ(log.entries().size(), 1u);
  const SlowlogEntry& e = log.entries().front();
  EXPECT_EQ(e.id, 0u);
  EXPECT_EQ(e.time_s, 5);
  ASSERT_EQ(e.argv.size(), 32u);
  EXPECT_EQ(e.argv[1], std::string(128, 'y') + "... (2 more bytes)");
  EXPECT_EQ(e.argv[31], "... (9 more arguments)");
  EXPECT_EQ(e.peer, "127.0.0.1:1");
  EXPECT_EQ(e.name, "name");
}

TEST(SlowLogTest, KeepsTheNewestUpToMaxLen) {
  Config config;
  SlowLog log(config);
  std::string error;
  ASSERT_TRUE(config.SetFromCommand({{"slowlog-max-len", "2"}}, &error)) << error;
  const std::vector<std::string_view> argv{"get", "k"};
  for (int i = 0; i < 3; ++i) log.Record(argv, 1, 0, "", "");
  ASSERT_EQ(log.entries().size(), 2u);
  EXPECT_EQ(log.entries().front().id, 2u);
  EXPECT_EQ(log.entries().back().id, 1u);
  ASSERT_TRUE(config.SetFromCommand({{"slowlog-max-len", "1"}}, &error)) << error;
  EXPECT_EQ(log.entries().size(), 1u);
  log.Reset();
  EXPECT_TRUE(log.entries().empty());
}

}  // namespace
}  // namespace ringkv::server

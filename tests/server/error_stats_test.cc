#include "server/error_stats.h"

#include <gtest/gtest.h>

#include <string>

namespace ringkv::server {
namespace {

// Redis 7.0's rule: the code is the text before the first space, looked for
// only in the first 31 characters; otherwise the error counts as ERR.
TEST(ErrorStatsTest, CodeIsTheFirstWordWithinThirtyOneCharacters) {
  EXPECT_EQ(ErrorStats::Code("WRONGTYPE Operation against a key"), "WRONGTYPE");
  EXPECT_EQ(ErrorStats::Code("ERR syntax error"), "ERR");
  EXPECT_EQ(ErrorStats::Code("-FOO bar"), "-FOO");
  EXPECT_EQ(ErrorStats::Code(" leading"), "");
  EXPECT_EQ(ErrorStats::Code("NOSPACE"), "ERR");
  EXPECT_EQ(ErrorStats::Code(""), "ERR");
  const std::string thirty(30, 'A');
  EXPECT_EQ(ErrorStats::Code(thirty + " x"), thirty);            // space at index 30: found
  EXPECT_EQ(ErrorStats::Code(thirty + "B x"), "ERR");            // at index 31: not looked at
}

TEST(ErrorStatsTest, CountsByCodeInByteOrderAndResets) {
  ErrorStats stats;
  stats.Count("WRONGTYPE Operation against a key");
  stats.Count("ERR unknown command 'x'");
  stats.Count("NOSPACE");
  stats.Count("EXECABORT Transaction discarded");
  std::string info;
  stats.AppendInfo(&info);
  EXPECT_EQ(info,
            "errorstat_ERR:count=2\r\nerrorstat_EXECABORT:count=1\r\nerrorstat_WRONGTYPE:count=1\r\n");
  stats.Reset();
  info.clear();
  stats.AppendInfo(&info);
  EXPECT_EQ(info, "");
}

}  // namespace
}  // namespace ringkv::server

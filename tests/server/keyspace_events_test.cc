#include "server/keyspace_events.h"

#include <gtest/gtest.h>

namespace ringkv::server::notify {
namespace {

// The canonical forms redis-server 7.0.15 answers to CONFIG GET after
// CONFIG SET notify-keyspace-events <input>.
TEST(KeyspaceEventsTest, CanonicalFormsMatchRedis) {
  const std::pair<const char*, const char*> kCases[] = {
      {"", ""},       {"A", "A"},       {"KEA", "AKE"},  {"Kx", "xK"},        {"Ex", "xE"},
      {"gn", "gn"},   {"An", "A"},      {"m", "m"},      {"KAm", "AKm"},      {"lshz$gxetd", "A"},
      {"K", "K"},     {"Kl$", "$lK"},   {"Eeh", "heE"},  {"nm", "nm"},
  };
  for (auto [in, want] : kCases) {
    const int64_t flags = ParseFlags(in);
    ASSERT_GE(flags, 0) << in;
    EXPECT_EQ(FlagsToString(static_cast<uint32_t>(flags)), want) << in;
  }
}

TEST(KeyspaceEventsTest, UnknownClassesAreRefused) {
  EXPECT_EQ(ParseFlags("Z"), -1);
  EXPECT_EQ(ParseFlags("KEA "), -1);
  EXPECT_EQ(ParseFlags("k"), -1);
}

TEST(KeyspaceEventsTest, AllExcludesKeyMissAndNew) {
  const int64_t all = ParseFlags("A");
  EXPECT_EQ(all & kKeyMiss, 0);
  EXPECT_EQ(all & kNew, 0);
  EXPECT_NE(all & kList, 0);
  EXPECT_EQ(all & (kKeyspace | kKeyevent), 0);
}

}  // namespace
}  // namespace ringkv::server::notify

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

// With A, Redis prints no n but still honours it: the kept value gives n
// back, and shows as Redis prints it.
TEST(KeyspaceEventsTest, TheStoredValueKeepsNewWithAll) {
  const std::pair<const char*, const char*> kCases[] = {
      {"KEAn", "AKE"}, {"KEAnm", "AKEm"}, {"An", "A"}, {"gn", "gn"}, {"nm", "nm"}, {"KEA", "AKE"}, {"", ""}};
  for (auto [in, shown] : kCases) {
    const int64_t flags = ParseFlags(in);
    const std::string stored = FlagsToStoredString(static_cast<uint32_t>(flags));
    EXPECT_EQ(ParseFlags(stored), flags) << in;
    EXPECT_EQ(StoredToShown(stored), shown) << in;
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

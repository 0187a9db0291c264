#include "core/key_slot.h"

#include <gtest/gtest.h>

namespace ringkv::core {
namespace {

TEST(KeySlot, Crc16CheckValue) { EXPECT_EQ(Crc16("123456789"), 0x31C3); }

TEST(KeySlot, SlotsAsRedisComputesThem) {
  // Values from redis-server 7.0's CLUSTER KEYSLOT.
  EXPECT_EQ(KeyHashSlot("foo"), 12182);
  EXPECT_EQ(KeyHashSlot("a"), 15495);
  EXPECT_EQ(KeyHashSlot("b"), 3300);
  EXPECT_EQ(KeyHashSlot("z"), 8157);
  EXPECT_EQ(KeyHashSlot("1"), 9842);
  EXPECT_EQ(KeyHashSlot(""), 0);
}

TEST(KeySlot, HashTags) {
  EXPECT_EQ(KeyHashSlot("{user1000}.following"), KeyHashSlot("user1000"));
  EXPECT_EQ(KeyHashSlot("{user1000}.followers"), KeyHashSlot("{user1000}.following"));
  EXPECT_EQ(KeyHashSlot("foo{b}bar"), KeyHashSlot("b"));
  // The first '{' and the first '}' after it.
  EXPECT_EQ(KeyHashSlot("foo{{bar}}zap"), KeyHashSlot("{bar"));
  EXPECT_EQ(KeyHashSlot("foo{bar}{zap}"), KeyHashSlot("bar"));
  // An empty tag or no closing brace: the whole key.
  EXPECT_EQ(KeyHashSlot("{}x"), Crc16("{}x") & 16383);
  EXPECT_EQ(KeyHashSlot("x{"), Crc16("x{") & 16383);
  EXPECT_EQ(KeyHashSlot("x}{"), Crc16("x}{") & 16383);
}

}  // namespace
}  // namespace ringkv::core

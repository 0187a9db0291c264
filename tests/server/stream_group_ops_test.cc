#include "server/commands/stream_group_ops.h"

#include <gtest/gtest.h>

namespace ringkv::server {
namespace {

// The command's timestamp (1000) trails the system clock (1002), as the TSC
// clock may: a TIME that is the system's now, or before it, is kept.
TEST(ClaimedDeliveryTime, AFutureTimeIsJudgedByTheSystemClock) {
  EXPECT_EQ(ClaimedDeliveryTime(1002, 1000, 1002), 1002);  // a primary's now, on its replica
  EXPECT_EQ(ClaimedDeliveryTime(1001, 1000, 1002), 1001);
  EXPECT_EQ(ClaimedDeliveryTime(1003, 1000, 1002), 1002);  // in the future: now
  EXPECT_EQ(ClaimedDeliveryTime(500, 1000, 1002), 500);    // in the past: kept
  EXPECT_EQ(ClaimedDeliveryTime(-1, 1000, 1002), 1002);    // neither TIME nor IDLE: now
  EXPECT_EQ(ClaimedDeliveryTime(-5, 1000, 1002), 1002);    // IDLE past the epoch: now
}

// The system clock behind the command's timestamp changes nothing: now is
// the later of the two.
TEST(ClaimedDeliveryTime, NowIsTheLaterOfTheTwoClocks) {
  EXPECT_EQ(ClaimedDeliveryTime(1002, 1002, 1000), 1002);
  EXPECT_EQ(ClaimedDeliveryTime(1003, 1002, 1000), 1002);
  EXPECT_EQ(ClaimedDeliveryTime(0, 1002, 1000), 0);
}

}  // namespace
}  // namespace ringkv::server

#include "core/geohash.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "core/string_ops.h"

namespace ringkv::core::geo {
namespace {

// Reference values from redis-server 7.0 (GEOADD, GEOPOS, GEOHASH, GEODIST).
TEST(GeohashTest, ScoresPositionsAndHashesAsRedis) {
  EXPECT_EQ(EncodeScore(13.361389, 38.115556), 3479099956230698u);
  EXPECT_EQ(EncodeScore(15.087269, 37.502669), 3479447370796909u);
  double xy[2];
  DecodeScore(3479099956230698.0, xy);
  EXPECT_EQ(FormatLongDouble(xy[0]), "13.36138933897018433");
  EXPECT_EQ(FormatLongDouble(xy[1]), "38.11555639549629859");
  EXPECT_EQ(StandardHash(3479099956230698.0), "sqc8b49rny0");
  EXPECT_EQ(StandardHash(3479447370796909.0), "sqdtr74hyu0");
  double a[2], b[2];
  DecodeScore(3479099956230698.0, a);
  DecodeScore(3479447370796909.0, b);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.4f", Distance(a[0], a[1], b[0], b[1]));
  EXPECT_STREQ(buf, "166274.1516");
}

TEST(GeohashTest, RangeAndUnits) {
  EXPECT_TRUE(ValidLongLat(-180, 85.05112878));
  EXPECT_FALSE(ValidLongLat(-180.0000001, 0));
  EXPECT_FALSE(ValidLongLat(0, 85.06));
  EXPECT_EQ(UnitToMeters("KM"), 1000);
  EXPECT_EQ(UnitToMeters("mi"), 1609.34);
  EXPECT_EQ(UnitToMeters("Ft"), 0.3048);
  EXPECT_EQ(UnitToMeters("m"), 1);
  EXPECT_EQ(UnitToMeters("yd"), -1);
  // Corners decode inside the range.
  double xy[2];
  DecodeScore(static_cast<double>(EncodeScore(180, 85.05112878)), xy);
  EXPECT_LE(xy[0], 180);
  EXPECT_LE(xy[1], kLatMax);
}

}  // namespace
}  // namespace ringkv::core::geo

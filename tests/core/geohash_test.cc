#include "core/geohash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
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

// ShapeFilter answers exactly as WithinShape -- same verdict, same position,
// the same distance to the last bit -- for circles and boxes of every size,
// on points near their edges and far away.
TEST(GeohashTest, ShapeFilterAnswersExactlyAsWithinShape) {
  std::mt19937_64 rng(22);
  std::uniform_real_distribution<double> lon(-180, 180), lat(-85, 85), unit(0, 1);
  int inside = 0, outside = 0;
  for (int s = 0; s < 400; ++s) {
    Shape shape;
    shape.longitude = lon(rng);
    shape.latitude = s % 10 == 0 ? 84.9 * (s % 20 == 0 ? 1 : -1) : lat(rng);
    shape.box = s % 2 == 1;
    shape.to_meters = s % 3 == 0 ? 1000 : 1;
    const double size = std::pow(10.0, 1 + 6 * unit(rng)) / shape.to_meters;  // 10 m .. 10,000 km
    shape.radius = size;
    shape.width = size * (0.5 + unit(rng));
    shape.height = size * (0.5 + unit(rng));
    const ShapeFilter filter(shape);
    for (int i = 0; i < 500; ++i) {
      // Half the points near the centre (within a few sizes), half anywhere.
      double plon, plat;
      if (i % 2 == 0) {
        const double spread = size * shape.to_meters * 3 / 111000.0;
        plon = std::clamp(shape.longitude + spread * (2 * unit(rng) - 1), -180.0, 180.0);
        plat = std::clamp(shape.latitude + spread * (2 * unit(rng) - 1), -85.0, 85.0);
      } else {
        plon = lon(rng);
        plat = lat(rng);
      }
      const double score = static_cast<double>(EncodeScore(plon, plat));
      double xy1[2], xy2[2], m1 = -1, m2 = -1;
      const bool a = WithinShape(shape, score, xy1, &m1);
      const bool b = filter.Contains(score, xy2, &m2);
      ASSERT_EQ(a, b) << "shape " << s << " point " << i;
      ASSERT_EQ(xy1[0], xy2[0]);
      ASSERT_EQ(xy1[1], xy2[1]);
      if (a) {
        ASSERT_EQ(m1, m2) << "shape " << s << " point " << i;  // bit for bit
        ++inside;
      } else {
        ++outside;
      }
    }
    // A point exactly at the centre's cell, and a circle of radius 0.
    Shape dot = shape;
    dot.box = false;
    dot.radius = 0;
    const double centre = static_cast<double>(EncodeScore(shape.longitude, shape.latitude));
    double xy1[2], xy2[2], m1, m2;
    ASSERT_EQ(WithinShape(dot, centre, xy1, &m1), ShapeFilter(dot).Contains(centre, xy2, &m2));
  }
  EXPECT_GT(inside, 1000);
  EXPECT_GT(outside, 1000);
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

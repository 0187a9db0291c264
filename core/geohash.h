// Geohash as Redis's geo commands use it: a longitude/latitude pair becomes
// a 52-bit interleaved integer (26 bits each, longitude in the odd bits),
// stored as a sorted-set score. Latitudes are limited to +-85.05112878 (the
// Web Mercator range), so GEOHASH re-encodes with the standard +-90 range to
// print a standard 11-character geohash.
//
// Pure functions (no state); the arithmetic follows Redis's geohash.c and
// geohash_helper.c step for step so that positions, distances and printed
// digits are the same.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringkv::core::geo {

inline constexpr double kLongMin = -180;
inline constexpr double kLongMax = 180;
inline constexpr double kLatMin = -85.05112878;
inline constexpr double kLatMax = 85.05112878;
inline constexpr int kStepMax = 26;  // bits per coordinate

// Whether (longitude, latitude) lies in the range GEOADD accepts.
bool ValidLongLat(double longitude, double latitude);

// The 52-bit score of a position (REQUIRES: ValidLongLat).
uint64_t EncodeScore(double longitude, double latitude);

// The centre of the cell a score names, clamped to the valid range:
// xy[0] longitude, xy[1] latitude.
void DecodeScore(double score, double xy[2]);

// The 11-character standard geohash of a score (GEOHASH).
std::string StandardHash(double score);

// Great-circle distance in meters (Redis's haversine, earth radius
// 6372797.560856 m).
double Distance(double lon1, double lat1, double lon2, double lat2);

// Meters per unit for "m", "km", "ft", "mi" (any case); -1 for another.
double UnitToMeters(std::string_view unit);

// A search area (GEOSEARCH & co.): a circle of `radius`, or a box of
// `width` x `height`, in units of `to_meters` meters, around a centre.
struct Shape {
  bool box = false;
  double longitude = 0, latitude = 0;
  double radius = 0, width = 0, height = 0;
  double to_meters = 1;
};

// A score range [min, max) holding one geohash cell.
struct ScoreBox {
  uint64_t min, max;
};

// The cells to scan for `shape`, in Redis's order (centre, N, S, E, W, NE,
// NW, SE, SW), leaving out those that cannot intersect it and a cell equal
// to the one scanned before it, with the cell size Redis estimates.
std::vector<ScoreBox> SearchBoxes(const Shape& shape);

// Whether the position of `score` lies in `shape`: *xy its position,
// *meters its distance from the centre.
bool WithinShape(const Shape& shape, double score, double xy[2], double* meters);

// WithinShape for one shape and many candidates (a search's scan): the
// centre's trigonometry computed once, and a latitude check -- the distance
// along the meridian never exceeds the great-circle one -- that rejects the
// points plainly outside a circle before the haversine. Answers exactly as
// WithinShape (the check keeps a margin for rounding; what passes it gets
// the very same arithmetic).
class ShapeFilter {
 public:
  explicit ShapeFilter(const Shape& shape);
  bool Contains(double score, double xy[2], double* meters) const;

 private:
  // Distance(shape.longitude, shape.latitude, lon, lat), step for step.
  double DistanceFromCentre(double lon, double lat) const;

  Shape shape_;
  double lat_r_, lon_r_, cos_lat_;
  double radius_m_;        // circle: radius in meters
  double lat_reject_m_;    // circle: a meridian distance past this is outside
  double half_height_m_, half_width_m_;  // box
};

}  // namespace ringkv::core::geo

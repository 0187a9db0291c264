#include "core/geohash.h"

#include <cmath>

namespace ringkv::core::geo {
namespace {

constexpr double kEarthRadiusMeters = 6372797.560856;
constexpr double kDegToRad = M_PI / 180.0;

// Spreads the 32 bits of v to the even bits of a 64-bit word.
uint64_t Spread(uint32_t v) {
  uint64_t x = v;
  x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x << 2)) & 0x3333333333333333ULL;
  x = (x | (x << 1)) & 0x5555555555555555ULL;
  return x;
}

// The even bits of v, packed.
uint32_t Squash(uint64_t x) {
  x &= 0x5555555555555555ULL;
  x = (x | (x >> 1)) & 0x3333333333333333ULL;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
  return static_cast<uint32_t>(x);
}

// Interleaves (latitude in the even bits, longitude in the odd ones) the
// fixed-point offsets of a position within the given ranges, `step` bits
// each.
uint64_t Encode(double long_min, double long_max, double lat_min, double lat_max, double longitude, double latitude,
                int step) {
  double lat_offset = (latitude - lat_min) / (lat_max - lat_min);
  double long_offset = (longitude - long_min) / (long_max - long_min);
  lat_offset *= static_cast<double>(1ULL << step);
  long_offset *= static_cast<double>(1ULL << step);
  return Spread(static_cast<uint32_t>(lat_offset)) | (Spread(static_cast<uint32_t>(long_offset)) << 1);
}

double Clamp(double v, double lo, double hi) { return v > hi ? hi : v < lo ? lo : v; }

}  // namespace

bool ValidLongLat(double longitude, double latitude) {
  return !(longitude < kLongMin || longitude > kLongMax || latitude < kLatMin || latitude > kLatMax);
}

uint64_t EncodeScore(double longitude, double latitude) {
  return Encode(kLongMin, kLongMax, kLatMin, kLatMax, longitude, latitude, kStepMax);
}

void DecodeScore(double score, double xy[2]) {
  const auto bits = static_cast<uint64_t>(score);
  const uint32_t ilat = Squash(bits), ilong = Squash(bits >> 1);
  const double lat_scale = kLatMax - kLatMin, long_scale = kLongMax - kLongMin;
  const double cells = static_cast<double>(1ULL << kStepMax);
  const double lat_min = kLatMin + (ilat * 1.0 / cells) * lat_scale;
  const double lat_max = kLatMin + ((ilat + 1) * 1.0 / cells) * lat_scale;
  const double long_min = kLongMin + (ilong * 1.0 / cells) * long_scale;
  const double long_max = kLongMin + ((ilong + 1) * 1.0 / cells) * long_scale;
  xy[0] = Clamp((long_min + long_max) / 2, kLongMin, kLongMax);
  xy[1] = Clamp((lat_min + lat_max) / 2, kLatMin, kLatMax);
}

std::string StandardHash(double score) {
  static constexpr char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  double xy[2];
  DecodeScore(score, xy);
  // Positions outside the standard range cannot happen: the score's range
  // is narrower. Re-encoded with latitudes +-90.
  const uint64_t bits = Encode(-180, 180, -90, 90, xy[0], xy[1], kStepMax);
  std::string out(11, '0');
  for (int i = 0; i < 10; ++i) out[i] = kAlphabet[(bits >> (52 - (i + 1) * 5)) & 0x1f];
  return out;  // the 11th character: 52 bits make 10.4 characters; Redis pads with '0'
}

double Distance(double lon1, double lat1, double lon2, double lat2) {
  const double lat1r = lat1 * kDegToRad, lon1r = lon1 * kDegToRad;
  const double lat2r = lat2 * kDegToRad, lon2r = lon2 * kDegToRad;
  const double u = std::sin((lat2r - lat1r) / 2);
  const double v = std::sin((lon2r - lon1r) / 2);
  // Same longitude: the latitude difference alone, as Redis shortcuts it.
  if (v == 0.0) return kEarthRadiusMeters * std::fabs(lat2r - lat1r);
  const double a = u * u + std::cos(lat1r) * std::cos(lat2r) * v * v;
  return 2.0 * kEarthRadiusMeters * std::asin(std::sqrt(a));
}

namespace {

constexpr double kMercatorMax = 20037726.37;

// A cell at a given step: its bits and the ranges it covers.
struct Cell {
  uint64_t bits = 0;
  int step = 0;  // 0 with bits 0: left out
};
struct Area {
  double lat_min, lat_max, long_min, long_max;
};

Area DecodeCell(const Cell& c) {
  const uint32_t ilat = Squash(c.bits), ilong = Squash(c.bits >> 1);
  const double cells = static_cast<double>(1ULL << c.step);
  const double lat_scale = kLatMax - kLatMin, long_scale = kLongMax - kLongMin;
  return Area{kLatMin + (ilat * 1.0 / cells) * lat_scale, kLatMin + ((ilat + 1) * 1.0 / cells) * lat_scale,
              kLongMin + (ilong * 1.0 / cells) * long_scale, kLongMin + ((ilong + 1) * 1.0 / cells) * long_scale};
}

// Moves a cell by one along longitude (odd bits) or latitude (even bits).
Cell Move(Cell c, int dx, int dy) {
  const unsigned shift = 64 - static_cast<unsigned>(c.step) * 2;
  if (dx != 0) {
    uint64_t x = c.bits & 0xaaaaaaaaaaaaaaaaULL, y = c.bits & 0x5555555555555555ULL;
    const uint64_t zz = 0x5555555555555555ULL >> shift;
    if (dx > 0) {
      x = x + (zz + 1);
    } else {
      x = x | zz;
      x = x - (zz + 1);
    }
    x &= (0xaaaaaaaaaaaaaaaaULL >> shift);
    c.bits = x | y;
  }
  if (dy != 0) {
    uint64_t x = c.bits & 0xaaaaaaaaaaaaaaaaULL, y = c.bits & 0x5555555555555555ULL;
    const uint64_t zz = 0xaaaaaaaaaaaaaaaaULL >> shift;
    if (dy > 0) {
      y = y + (zz + 1);
    } else {
      y = y | zz;
      y = y - (zz + 1);
    }
    y &= (0x5555555555555555ULL >> shift);
    c.bits = x | y;
  }
  return c;
}

int EstimateSteps(double range_meters, double lat) {
  if (range_meters == 0) return 26;
  int step = 1;
  while (range_meters < kMercatorMax) {
    range_meters *= 2;
    step++;
  }
  step -= 2;  // make sure the range is included in most cases
  if (lat > 66 || lat < -66) {
    step--;
    if (lat > 80 || lat < -80) step--;
  }
  return step < 1 ? 1 : step > 26 ? 26 : step;
}

double LatDistance(double lat1, double lat2) {
  return kEarthRadiusMeters * std::fabs(lat2 * kDegToRad - lat1 * kDegToRad);
}

}  // namespace

std::vector<ScoreBox> SearchBoxes(const Shape& shape) {
  const double lon = shape.longitude, lat = shape.latitude;
  // The bounding box of the shape.
  const double height = shape.to_meters * (shape.box ? shape.height / 2 : shape.radius);
  const double width = shape.to_meters * (shape.box ? shape.width / 2 : shape.radius);
  const double lat_delta = (height / kEarthRadiusMeters) / kDegToRad;
  const double long_delta_top = (width / kEarthRadiusMeters / std::cos((lat + lat_delta) * kDegToRad)) / kDegToRad;
  const double long_delta_bottom = (width / kEarthRadiusMeters / std::cos((lat - lat_delta) * kDegToRad)) / kDegToRad;
  const bool south = lat < 0;
  const double min_lon = south ? lon - long_delta_bottom : lon - long_delta_top;
  const double max_lon = south ? lon + long_delta_bottom : lon + long_delta_top;
  const double min_lat = lat - lat_delta, max_lat = lat + lat_delta;

  double radius_meters = shape.box ? std::sqrt((shape.width / 2) * (shape.width / 2) +
                                               (shape.height / 2) * (shape.height / 2))
                                   : shape.radius;
  radius_meters *= shape.to_meters;
  int steps = EstimateSteps(radius_meters, lat);

  Cell centre, n, s, e, w;
  auto compute = [&] {
    centre = Cell{Encode(kLongMin, kLongMax, kLatMin, kLatMax, lon, lat, steps), steps};
    n = Move(centre, 0, 1);
    s = Move(centre, 0, -1);
    e = Move(centre, 1, 0);
    w = Move(centre, -1, 0);
  };
  compute();
  // A step too coarse at the edges of the covered area: one finer.
  const bool decrease = DecodeCell(n).lat_max < max_lat || DecodeCell(s).lat_min > min_lat ||
                        DecodeCell(e).long_max < max_lon || DecodeCell(w).long_min > min_lon;
  if (steps > 1 && decrease) {
    steps--;
    compute();
  }
  const Area area = DecodeCell(centre);
  Cell cells[9] = {centre, n, s, e, w, Move(centre, 1, 1), Move(centre, -1, 1), Move(centre, 1, -1),
                   Move(centre, -1, -1)};
  enum { kC, kN, kS, kE, kW, kNE, kNW, kSE, kSW };
  if (steps >= 2) {
    const Cell zero{};
    if (area.lat_min < min_lat) cells[kS] = cells[kSW] = cells[kSE] = zero;
    if (area.lat_max > max_lat) cells[kN] = cells[kNE] = cells[kNW] = zero;
    if (area.long_min < min_lon) cells[kW] = cells[kSW] = cells[kNW] = zero;
    if (area.long_max > max_lon) cells[kE] = cells[kSE] = cells[kNE] = zero;
  }
  std::vector<ScoreBox> out;
  int last = 0;
  for (int i = 0; i < 9; ++i) {
    if (cells[i].bits == 0 && cells[i].step == 0) continue;
    // Huge radii make neighbours coincide: skip a repeat of the last cell
    // scanned (but never compare with the centre, as Redis).
    if (last != 0 && cells[i].bits == cells[last].bits && cells[i].step == cells[last].step) continue;
    const unsigned shift = 52 - static_cast<unsigned>(cells[i].step) * 2;
    out.push_back(ScoreBox{cells[i].bits << shift, (cells[i].bits + 1) << shift});
    last = i;
  }
  return out;
}

bool WithinShape(const Shape& shape, double score, double xy[2], double* meters) {
  DecodeScore(score, xy);
  if (!shape.box) {
    *meters = Distance(shape.longitude, shape.latitude, xy[0], xy[1]);
    return *meters <= shape.radius * shape.to_meters;
  }
  // Latitude first: cheaper.
  if (LatDistance(xy[1], shape.latitude) > shape.height * shape.to_meters / 2) return false;
  if (Distance(xy[0], xy[1], shape.longitude, xy[1]) > shape.width * shape.to_meters / 2) return false;
  *meters = Distance(shape.longitude, shape.latitude, xy[0], xy[1]);
  return true;
}

ShapeFilter::ShapeFilter(const Shape& shape)
    : shape_(shape),
      lat_r_(shape.latitude * kDegToRad),
      lon_r_(shape.longitude * kDegToRad),
      cos_lat_(std::cos(shape.latitude * kDegToRad)),
      radius_m_(shape.radius * shape.to_meters),
      // Relative and absolute slack far above the rounding of either formula.
      lat_reject_m_(shape.radius * shape.to_meters * (1 + 1e-9) + 1e-6),
      half_height_m_(shape.height * shape.to_meters / 2),
      half_width_m_(shape.width * shape.to_meters / 2) {}

double ShapeFilter::DistanceFromCentre(double lon, double lat) const {
  const double lat2r = lat * kDegToRad, lon2r = lon * kDegToRad;
  const double u = std::sin((lat2r - lat_r_) / 2);
  const double v = std::sin((lon2r - lon_r_) / 2);
  if (v == 0.0) return kEarthRadiusMeters * std::fabs(lat2r - lat_r_);
  const double a = u * u + cos_lat_ * std::cos(lat2r) * v * v;
  return 2.0 * kEarthRadiusMeters * std::asin(std::sqrt(a));
}

bool ShapeFilter::Contains(double score, double xy[2], double* meters) const {
  DecodeScore(score, xy);
  if (!shape_.box) {
    if (LatDistance(xy[1], shape_.latitude) > lat_reject_m_) return false;
    *meters = DistanceFromCentre(xy[0], xy[1]);
    return *meters <= radius_m_;
  }
  if (LatDistance(xy[1], shape_.latitude) > half_height_m_) return false;
  if (Distance(xy[0], xy[1], shape_.longitude, xy[1]) > half_width_m_) return false;
  *meters = DistanceFromCentre(xy[0], xy[1]);
  return true;
}

double UnitToMeters(std::string_view unit) {
  auto is = [&](std::string_view name) {
    if (unit.size() != name.size()) return false;
    for (size_t i = 0; i < unit.size(); ++i) {
      if ((unit[i] | 0x20) != name[i]) return false;
    }
    return true;
  };
  if (is("m")) return 1;
  if (is("km")) return 1000;
  if (is("ft")) return 0.3048;
  if (is("mi")) return 1609.34;
  return -1;
}

}  // namespace ringkv::core::geo

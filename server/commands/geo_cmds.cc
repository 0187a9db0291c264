// The geo family on sorted sets: GEOADD, GEOPOS, GEODIST, GEOHASH,
// GEOSEARCH, GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER and their _RO
// forms. A
// position is a member whose score is its 52-bit geohash (core/geohash.h);
// GEOADD is a ZADD of those scores, reported ("zadd") and propagated as the
// ZADD it amounts to, as Redis 7.0 does. Checks, their order and error
// texts follow Redis 7.0's geo.c.
//
// REQUIRES: main thread.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/geohash.h"
#include "core/string_ops.h"
#include "core/strings.h"
#include "core/zset_value.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/commands/zset_ops.h"
#include "server/errors.h"

namespace ringkv::server {
namespace {

namespace geo = core::geo;
using core::ZSetValue;

// GEOADD key [NX|XX] [CH] longitude latitude member [...].
void CmdGeoadd(CommandContext& ctx) {
  core::ZAddFlags flags;
  bool ch = false;
  size_t first = 2;  // the first longitude
  for (; first < ctx.argv.size(); ++first) {
    std::string_view opt = ctx.argv[first];
    if (Is(opt, "NX")) {
      flags.nx = true;
    } else if (Is(opt, "XX")) {
      flags.xx = true;
    } else if (Is(opt, "CH")) {
      ch = true;
    } else {
      break;
    }
  }
  const size_t left = ctx.argv.size() - first;
  if (left % 3 != 0 || left == 0 || (flags.nx && flags.xx)) return ctx.reply.Error(errors::kSyntax);
  const size_t n = left / 3;
  std::vector<double> scores(n);
  std::vector<std::string> score_texts(n);
  std::vector<std::string_view> elements(2 * n);
  for (size_t i = 0; i < n; ++i) {
    double xy[2];
    for (int j = 0; j < 2; ++j) {
      if (!ParseDouble(ctx.argv[first + 3 * i + j], &xy[j])) return ctx.reply.Error(errors::kNotFloat);
    }
    if (!geo::ValidLongLat(xy[0], xy[1])) {
      char buf[160];
      std::snprintf(buf, sizeof(buf), "ERR invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
      return ctx.reply.Error(buf);
    }
    const uint64_t bits = geo::EncodeScore(xy[0], xy[1]);
    scores[i] = static_cast<double>(bits);
    score_texts[i] = StrCat(bits);
  }
  for (size_t i = 0; i < n; ++i) {
    elements[2 * i] = score_texts[i];
    elements[2 * i + 1] = ctx.argv[first + 3 * i + 2];
  }
  auto r = OpZadd(OpArgsOf(ctx), ctx.argv[1], flags, scores, elements);
  if (!r.ok()) return ReplyOpError(ctx, r.status());
  // Replayed as the ZADD it is: ZADD key [options as given] score member ...
  std::vector<std::string> zadd = {"zadd", std::string(ctx.argv[1])};
  for (size_t i = 2; i < first; ++i) zadd.emplace_back(ctx.argv[i]);
  for (std::string_view e : elements) zadd.emplace_back(e);
  ctx.effects.PropagateAs(std::move(zadd));
  ctx.reply.Integer(ch ? r->added + r->updated : r->added);
}

// A coordinate as Redis's addReplyHumanLongDouble: a bulk string in RESP2,
// a double in RESP3, "%.17Lf" with trailing zeros removed.
void ReplyCoordinate(CommandContext& ctx, double v) {
  const std::string text = core::FormatLongDouble(v);
  if (ctx.reply.resp() >= 3) {
    ctx.reply.Raw(StrCat(",", text, "\r\n"));
  } else {
    ctx.reply.Bulk(text);
  }
}

// GEOPOS key [member ...]: [longitude, latitude] or a null array each.
void CmdGeopos(CommandContext& ctx) {
  ZSetValue* z;
  if (!LookupForRead(ctx, ctx.argv[1], &z)) return;
  ctx.reply.ArrayHeader(static_cast<int64_t>(ctx.argv.size() - 2));
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    double score;
    if (z == nullptr || !z->Score(ctx.argv[i], &score)) {
      ctx.reply.NullArray();
      continue;
    }
    double xy[2];
    geo::DecodeScore(score, xy);
    ctx.reply.ArrayHeader(2);
    ReplyCoordinate(ctx, xy[0]);
    ReplyCoordinate(ctx, xy[1]);
  }
}

// GEODIST key member1 member2 [M|KM|FT|MI]: "%.4f" in the unit, or nil.
void CmdGeodist(CommandContext& ctx) {
  double to_meters = 1;
  if (ctx.argv.size() == 5) {
    to_meters = geo::UnitToMeters(ctx.argv[4]);
    if (to_meters < 0) return ctx.reply.Error("ERR unsupported unit provided. please use M, KM, FT, MI");
  } else if (ctx.argv.size() > 5) {
    return ctx.reply.Error(errors::kSyntax);
  }
  ZSetValue* z;
  if (!LookupForRead(ctx, ctx.argv[1], &z)) return;
  double s1, s2;
  if (z == nullptr || !z->Score(ctx.argv[2], &s1) || !z->Score(ctx.argv[3], &s2)) return ctx.reply.Null();
  double a[2], b[2];
  geo::DecodeScore(s1, a);
  geo::DecodeScore(s2, b);
  char buf[128];
  const int len = std::snprintf(buf, sizeof(buf), "%.4f", geo::Distance(a[0], a[1], b[0], b[1]) / to_meters);
  ctx.reply.Bulk(std::string_view(buf, static_cast<size_t>(len)));
}

// GEOHASH key [member ...]: the 11-character standard geohash or nil each.
void CmdGeohash(CommandContext& ctx) {
  ZSetValue* z;
  if (!LookupForRead(ctx, ctx.argv[1], &z)) return;
  ctx.reply.ArrayHeader(static_cast<int64_t>(ctx.argv.size() - 2));
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    double score;
    if (z == nullptr || !z->Score(ctx.argv[i], &score)) {
      ctx.reply.Null();
    } else {
      ctx.reply.Bulk(geo::StandardHash(score));
    }
  }
}

// ---- GEOSEARCH & co. ----

// Which command runs the search (Redis's georadiusGeneric flags).
enum class SearchKind : uint8_t {
  kRadius,          // GEORADIUS key lon lat radius unit ...
  kRadiusRo,        // GEORADIUS_RO
  kByMember,        // GEORADIUSBYMEMBER key member radius unit ...
  kByMemberRo,      // GEORADIUSBYMEMBER_RO
  kSearch,          // GEOSEARCH key FROMMEMBER|FROMLONLAT BYRADIUS|BYBOX ...
  kSearchStore,     // GEOSEARCHSTORE dest key ...
};

// Longitude, latitude at argv[i], argv[i+1] (as GEOADD checks them).
bool ParseLongLat(CommandContext& ctx, size_t i, double* lon, double* lat) {
  double xy[2];
  for (int j = 0; j < 2; ++j) {
    if (!ParseDouble(ctx.argv[i + j], &xy[j])) {
      ctx.reply.Error(errors::kNotFloat);
      return false;
    }
  }
  if (!geo::ValidLongLat(xy[0], xy[1])) {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "ERR invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
    ctx.reply.Error(buf);
    return false;
  }
  *lon = xy[0];
  *lat = xy[1];
  return true;
}

// A unit at argv[i]: meters per unit, or replies the error.
bool ParseDistanceUnit(CommandContext& ctx, size_t i, double* to_meters) {
  *to_meters = geo::UnitToMeters(ctx.argv[i]);
  if (*to_meters >= 0) return true;
  ctx.reply.Error("ERR unsupported unit provided. please use M, KM, FT, MI");
  return false;
}

// radius unit at argv[i].
bool ParseRadius(CommandContext& ctx, size_t i, geo::Shape* shape) {
  double r;
  if (!ParseDouble(ctx.argv[i], &r)) {
    ctx.reply.Error("ERR need numeric radius");
    return false;
  }
  if (r < 0) {
    ctx.reply.Error("ERR radius cannot be negative");
    return false;
  }
  shape->radius = r;
  shape->box = false;
  return ParseDistanceUnit(ctx, i + 1, &shape->to_meters);
}

// width height unit at argv[i].
bool ParseBox(CommandContext& ctx, size_t i, geo::Shape* shape) {
  double w, h;
  if (!ParseDouble(ctx.argv[i], &w)) {
    ctx.reply.Error("ERR need numeric width");
    return false;
  }
  if (!ParseDouble(ctx.argv[i + 1], &h)) {
    ctx.reply.Error("ERR need numeric height");
    return false;
  }
  if (h < 0 || w < 0) {
    ctx.reply.Error("ERR height or width cannot be negative");
    return false;
  }
  shape->width = w;
  shape->height = h;
  shape->box = true;
  return ParseDistanceUnit(ctx, i + 2, &shape->to_meters);
}

// The position of `member` in z.
bool MemberPosition(const ZSetValue* z, std::string_view member, geo::Shape* shape) {
  double score;
  if (z == nullptr || !z->Score(member, &score)) return false;
  double xy[2];
  geo::DecodeScore(score, xy);
  shape->longitude = xy[0];
  shape->latitude = xy[1];
  return true;
}

// One member found by a search. The member's bytes are viewed in the sorted
// set where they live there (valid while it is unchanged: until the reply or
// the STORE copy is made); an integer-encoded listpack member has no bytes
// there, so its text is copied into `digits`. Trivially copyable, for the
// sorts; member() reads whichever holds it.
struct GeoPoint {
  const char* data;  // nullptr: the text is in digits
  uint32_t size;
  char digits[20];   // an int64's decimal text: at most 20 bytes
  double score;      // its geohash
  double meters;     // from the centre
  double xy[2];
  std::string_view member() const { return std::string_view(data != nullptr ? data : digits, size); }
};

// Orders v[lo, lo + n) by `cmp` (negative, zero, positive) only as far as
// positions [want_lo, want_hi] need: the partial quicksort Redis runs for a
// COUNT below the number of members found (pqsort.c, NetBSD's qsort after
// Bentley & McIlroy, skipping parts outside the positions returned). Members
// at equal distances are left where this algorithm leaves them, which a
// different sort would not reproduce, so it is the same algorithm: median of
// three (of three medians above 40 elements) as pivot, equal keys gathered
// at both ends and swapped to the middle, insertion sort below 7 elements.
template <typename T, typename Cmp>
void PartialQuicksort(std::vector<T>& v, size_t lo, size_t n, const Cmp& cmp, size_t want_lo, size_t want_hi) {
  auto overlaps = [&](size_t from, size_t count) { return want_lo < from + count && want_hi >= from; };
  for (;;) {
    auto at = [&](size_t i) -> T& { return v[lo + i]; };
    auto med3 = [&](size_t a, size_t b, size_t c) {
      return cmp(at(a), at(b)) < 0 ? (cmp(at(b), at(c)) < 0 ? b : (cmp(at(a), at(c)) < 0 ? c : a))
                                   : (cmp(at(b), at(c)) > 0 ? b : (cmp(at(a), at(c)) < 0 ? a : c));
    };
    auto swap_runs = [&](size_t a, size_t b, size_t count) {
      for (size_t i = 0; i < count; ++i) std::swap(at(a + i), at(b + i));
    };
    if (n < 7) {
      for (size_t m = 1; m < n; ++m) {
        for (size_t l = m; l > 0 && cmp(at(l - 1), at(l)) > 0; --l) std::swap(at(l), at(l - 1));
      }
      return;
    }
    size_t pm = n / 2;
    if (n > 7) {
      size_t pl = 0, pn = n - 1;
      if (n > 40) {
        const size_t d = n / 8;
        pl = med3(pl, pl + d, pl + 2 * d);
        pm = med3(pm - d, pm, pm + d);
        pn = med3(pn - 2 * d, pn - d, pn);
      }
      pm = med3(pl, pm, pn);
    }
    std::swap(at(0), at(pm));  // the pivot, at 0
    size_t pa = 1, pb = 1, pc = n - 1, pd = n - 1;
    for (;;) {
      int r;
      while (pb <= pc && (r = cmp(at(pb), at(0))) <= 0) {
        if (r == 0) std::swap(at(pa++), at(pb));
        ++pb;
      }
      while (pb <= pc && (r = cmp(at(pc), at(0))) >= 0) {
        if (r == 0) std::swap(at(pc), at(pd--));
        --pc;
      }
      if (pb > pc) break;
      std::swap(at(pb++), at(pc--));
    }
    size_t r = std::min(pa, pb - pa);
    swap_runs(0, pb - r, r);
    r = std::min(pd - pc, n - pd - 1);
    swap_runs(pb, n - r, r);
    if ((r = pb - pa) > 1 && overlaps(lo, r)) PartialQuicksort(v, lo, r, cmp, want_lo, want_hi);
    if ((r = pd - pc) <= 1) return;
    lo += n - r;
    n = r;
    if (!overlaps(lo, n)) return;
  }
}

// The members of z inside `shape`, cell by cell in Redis's order; with
// `limit` (ANY), stops once that many were found.
// The members are walked straight from the set (ZSetValue::WalkRange), and
// each candidate goes through one ShapeFilter.
std::vector<GeoPoint> FindInShape(const ZSetValue& z, const geo::Shape& shape, size_t limit) {
  std::vector<GeoPoint> found;
  const geo::ShapeFilter filter(shape);
  for (const geo::ScoreBox& box : geo::SearchBoxes(shape)) {
    if (limit != 0 && found.size() >= limit) break;
    core::ScoreRange range;
    range.min = static_cast<double>(box.min);
    range.max = static_cast<double>(box.max);
    range.max_exclusive = true;
    z.WalkRange(range, [&](std::string_view member, double score, bool stable) {
      double xy[2], meters;
      if (!filter.Contains(score, xy, &meters)) return true;
      GeoPoint p{};
      p.xy[0] = xy[0];
      p.xy[1] = xy[1];
      p.meters = meters;
      p.size = static_cast<uint32_t>(member.size());
      if (stable) {
        p.data = member.data();
      } else {
        // Formatted into WalkRange's buffer: copied (an int64's text fits).
        p.data = nullptr;
        std::memcpy(p.digits, member.data(), std::min(member.size(), sizeof(p.digits)));
      }
      p.score = score;
      found.push_back(p);
      return limit == 0 || found.size() < limit;
    });
  }
  return found;
}

void GeoSearch(CommandContext& ctx, SearchKind kind) {
  const bool search = kind == SearchKind::kSearch || kind == SearchKind::kSearchStore;
  const bool by_coords = kind == SearchKind::kRadius || kind == SearchKind::kRadiusRo;
  const bool by_member = kind == SearchKind::kByMember || kind == SearchKind::kByMemberRo;
  const bool no_store = kind == SearchKind::kRadiusRo || kind == SearchKind::kByMemberRo;
  const size_t src = kind == SearchKind::kSearchStore ? 2 : 1;
  ZSetValue* z;
  if (!LookupForRead(ctx, ctx.argv[src], &z)) return;

  geo::Shape shape;
  size_t base;
  std::string_view store_key;
  bool has_store = false, store_dist = false;
  if (by_coords) {
    base = 6;
    if (!ParseLongLat(ctx, 2, &shape.longitude, &shape.latitude) || !ParseRadius(ctx, 4, &shape)) return;
  } else if (by_member) {
    base = 5;
    if (z != nullptr) {
      if (!MemberPosition(z, ctx.argv[2], &shape)) return ctx.reply.Error("ERR could not decode requested zset member");
      if (!ParseRadius(ctx, 3, &shape)) return;
    }
  } else {
    base = 2;
    if (kind == SearchKind::kSearchStore) {
      base = 3;
      store_key = ctx.argv[1];
      has_store = true;
    }
  }

  bool with_dist = false, with_hash = false, with_coord = false, any = false;
  bool from_member = false, from_lonlat = false, by_radius = false, by_box = false;
  int sort = 0;  // 0 none, 1 ASC, -1 DESC
  int64_t count = 0;
  const size_t argc = ctx.argv.size();
  for (size_t i = base; i < argc; ++i) {
    std::string_view a = ctx.argv[i];
    const size_t left = argc - i - 1;  // arguments after this one
    if (Is(a, "WITHDIST")) {
      with_dist = true;
    } else if (Is(a, "WITHHASH")) {
      with_hash = true;
    } else if (Is(a, "WITHCOORD")) {
      with_coord = true;
    } else if (Is(a, "ANY")) {
      any = true;
    } else if (Is(a, "ASC")) {
      sort = 1;
    } else if (Is(a, "DESC")) {
      sort = -1;
    } else if (Is(a, "COUNT") && left >= 1) {
      if (!ParseInt(ctx, ctx.argv[i + 1], &count)) return;
      if (count <= 0) return ctx.reply.Error("ERR COUNT must be > 0");
      ++i;
    } else if ((Is(a, "STORE") || Is(a, "STOREDIST")) && left >= 1 && !no_store && !search) {
      store_key = ctx.argv[i + 1];
      has_store = true;
      store_dist = Is(a, "STOREDIST");
      ++i;
    } else if (Is(a, "STOREDIST") && kind == SearchKind::kSearchStore) {
      store_dist = true;
    } else if (Is(a, "FROMMEMBER") && left >= 1 && search && !from_lonlat) {
      if (z != nullptr && !MemberPosition(z, ctx.argv[i + 1], &shape)) {
        return ctx.reply.Error("ERR could not decode requested zset member");
      }
      from_member = true;
      ++i;
    } else if (Is(a, "FROMLONLAT") && left >= 2 && search && !from_member) {
      if (!ParseLongLat(ctx, i + 1, &shape.longitude, &shape.latitude)) return;
      from_lonlat = true;
      i += 2;
    } else if (Is(a, "BYRADIUS") && left >= 2 && search && !by_box) {
      if (!ParseRadius(ctx, i + 1, &shape)) return;
      by_radius = true;
      i += 2;
    } else if (Is(a, "BYBOX") && left >= 3 && search && !by_radius) {
      if (!ParseBox(ctx, i + 1, &shape)) return;
      by_box = true;
      i += 3;
    } else {
      return ctx.reply.Error(errors::kSyntax);
    }
  }
  if (has_store && (with_dist || with_hash || with_coord)) {
    return ctx.reply.Error(StrCat("ERR ", kind == SearchKind::kSearchStore ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS",
                                  " is not compatible with WITHDIST, WITHHASH and WITHCOORD options"));
  }
  if (search && !(from_member || from_lonlat)) {
    return ctx.reply.Error(StrCat("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for ", ctx.argv[0]));
  }
  if (search && !(by_radius || by_box)) {
    return ctx.reply.Error(StrCat("ERR exactly one of BYRADIUS and BYBOX can be specified for ", ctx.argv[0]));
  }
  if (any && count == 0) return ctx.reply.Error("ERR the ANY argument requires COUNT argument");

  const OpArgs op = OpArgsOf(ctx);
  if (z == nullptr) {
    if (!has_store) return ctx.reply.ArrayHeader(0);
    if (op.effects.DeleteKey(op.db, store_key, op.now_ms, op.effects.lazy_server_del())) {
      op.Changed(notify::kGeneric, "del", store_key, 1);
    }
    return ctx.reply.Integer(0);
  }
  // COUNT without an order returns the nearest: ascending (not with ANY).
  if (count != 0 && sort == 0 && !any) sort = 1;
  std::vector<GeoPoint> found = FindInShape(*z, shape, any ? static_cast<size_t>(count) : 0);
  if (found.empty() && !has_store) return ctx.reply.ArrayHeader(0);
  const size_t returned = count == 0 ? found.size() : std::min(found.size(), static_cast<size_t>(count));
  if (sort != 0) {
    // As Redis: everything found is returned -> qsort, which is glibc's
    // merge sort (stable); fewer -> its partial quicksort.
    if (returned == found.size()) {
      std::stable_sort(found.begin(), found.end(), [&](const GeoPoint& a, const GeoPoint& b) {
        return sort > 0 ? a.meters < b.meters : a.meters > b.meters;
      });
    } else {
      auto cmp = [&](const GeoPoint& a, const GeoPoint& b) {
        const int r = a.meters == b.meters ? 0 : (a.meters > b.meters ? 1 : -1);
        return sort > 0 ? r : -r;
      };
      PartialQuicksort(found, 0, found.size(), cmp, 0, returned - 1);
    }
  }
  if (!has_store) {
    const int options = (with_dist ? 1 : 0) + (with_hash ? 1 : 0) + (with_coord ? 1 : 0);
    ctx.reply.ArrayHeader(static_cast<int64_t>(returned));
    for (size_t i = 0; i < returned; ++i) {
      const GeoPoint& p = found[i];
      if (options != 0) ctx.reply.ArrayHeader(options + 1);
      ctx.reply.Bulk(p.member());
      if (with_dist) {
        char buf[128];
        const int len = std::snprintf(buf, sizeof(buf), "%.4f", p.meters / shape.to_meters);
        ctx.reply.Bulk(std::string_view(buf, static_cast<size_t>(len)));
      }
      if (with_hash) ctx.reply.Integer(static_cast<int64_t>(p.score));
      if (with_coord) {
        ctx.reply.ArrayHeader(2);
        ReplyCoordinate(ctx, p.xy[0]);
        ReplyCoordinate(ctx, p.xy[1]);
      }
    }
    return;
  }
  std::vector<std::pair<std::string, double>> elements;
  elements.reserve(returned);
  for (size_t i = 0; i < returned; ++i) {
    elements.emplace_back(std::string(found[i].member()), store_dist ? found[i].meters / shape.to_meters : found[i].score);
  }
  std::sort(elements.begin(), elements.end(),
            [](const auto& a, const auto& b) { return a.second != b.second ? a.second < b.second : a.first < b.first; });
  ZSetValue result = ZSetValue::FromSorted(elements, op.limits().zset);
  const int64_t n = StoreValue(op, store_key, core::Value(std::move(result)), elements.size(), notify::kZSet,
                               search ? "geosearchstore" : "georadiusstore", elements.size());
  ctx.reply.Integer(n);
}

void CmdGeoradius(CommandContext& ctx) { GeoSearch(ctx, SearchKind::kRadius); }
void CmdGeoradiusRo(CommandContext& ctx) { GeoSearch(ctx, SearchKind::kRadiusRo); }
void CmdGeoradiusbymember(CommandContext& ctx) { GeoSearch(ctx, SearchKind::kByMember); }
void CmdGeoradiusbymemberRo(CommandContext& ctx) { GeoSearch(ctx, SearchKind::kByMemberRo); }
void CmdGeosearch(CommandContext& ctx) { GeoSearch(ctx, SearchKind::kSearch); }
void CmdGeosearchstore(CommandContext& ctx) { GeoSearch(ctx, SearchKind::kSearchStore); }

// GEORADIUS / GEORADIUSBYMEMBER's keys as their key specs find them: the
// source, then the key after the first STORE and the one after the first
// STOREDIST, searched from the first optional argument (`from`).
bool GeoradiusKeysFrom(std::span<const std::string_view> argv, size_t from, std::vector<std::string_view>* keys) {
  if (argv.size() < 2) return false;
  keys->push_back(argv[1]);
  for (std::string_view keyword : {"STORE", "STOREDIST"}) {
    for (size_t i = from; i + 1 < argv.size(); ++i) {
      if (Is(argv[i], keyword)) {
        keys->push_back(argv[i + 1]);
        break;
      }
    }
  }
  return true;
}
bool GeoradiusKeys(std::span<const std::string_view> argv, std::vector<std::string_view>* keys) {
  return GeoradiusKeysFrom(argv, 6, keys);
}
bool GeoradiusByMemberKeys(std::span<const std::string_view> argv, std::vector<std::string_view>* keys) {
  return GeoradiusKeysFrom(argv, 5, keys);
}

}  // namespace

void RegisterGeoCommands(CommandTable& t) {
  using namespace cmd;
  t.Add(Cmd("geoadd", -5, kWrite | kDenyOom, 1, 1, 1, "@write @geo @slow", "geo", "Add one or more geospatial items in the geospatial index represented using a sorted set", "3.2.0", CmdGeoadd));
  t.Add(Cmd("geopos", -2, kReadonly, 1, 1, 1, "@read @geo @slow", "geo", "Returns longitude and latitude of members of a geospatial index", "3.2.0", CmdGeopos));
  t.Add(Cmd("geodist", -4, kReadonly, 1, 1, 1, "@read @geo @slow", "geo", "Returns the distance between two members of a geospatial index", "3.2.0", CmdGeodist));
  t.Add(Cmd("geohash", -2, kReadonly, 1, 1, 1, "@read @geo @slow", "geo", "Returns members of a geospatial index as standard geohash strings", "3.2.0", CmdGeohash));
  t.Add(MovableKeys(Cmd("georadius", -6, kWrite | kDenyOom, 1, 1, 1, "@write @geo @slow", "geo", "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point", "3.2.0", CmdGeoradius), GeoradiusKeys));
  t.Add(Cmd("georadius_ro", -6, kReadonly, 1, 1, 1, "@read @geo @slow", "geo", "A read-only variant for GEORADIUS", "3.2.10", CmdGeoradiusRo));
  t.Add(MovableKeys(Cmd("georadiusbymember", -5, kWrite | kDenyOom, 1, 1, 1, "@write @geo @slow", "geo", "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member", "3.2.0", CmdGeoradiusbymember), GeoradiusByMemberKeys));
  t.Add(Cmd("georadiusbymember_ro", -5, kReadonly, 1, 1, 1, "@read @geo @slow", "geo", "A read-only variant for GEORADIUSBYMEMBER", "3.2.10", CmdGeoradiusbymemberRo));
  t.Add(Cmd("geosearch", -7, kReadonly, 1, 1, 1, "@read @geo @slow", "geo", "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.", "6.2.0", CmdGeosearch));
  t.Add(Cmd("geosearchstore", -8, kWrite | kDenyOom, 1, 2, 1, "@write @geo @slow", "geo", "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.", "6.2.0", CmdGeosearchstore));
}

}  // namespace ringkv::server

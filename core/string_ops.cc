#include "core/string_ops.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ringkv::core {
namespace {

bool ValueAsInt(const StringValue& v, int64_t* out) {
  if (v.is_int()) {
    *out = v.int_value();
    return true;
  }
  char scratch[24];
  return StringToInt64(v.View(scratch), out);
}

}  // namespace

bool StringToLongDouble(std::string_view s, long double* out) {
  if (s.empty() || s.size() > 5000 || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  const std::string buf(s);
  errno = 0;
  char* end;
  const long double v = strtold(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size() || std::isnan(v)) return false;
  if (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || std::fpclassify(v) == FP_ZERO)) return false;
  *out = v;
  return true;
}

std::string FormatLongDouble(long double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[5200];
  int n = snprintf(buf, sizeof(buf), "%.17Lf", v);
  if (n <= 0 || n >= static_cast<int>(sizeof(buf))) return "0";
  std::string s(buf, n);
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

OpResult<SetResult> OpSet(Database& db, std::string_view key, std::string_view value, const SetOptions& opts,
                          int64_t now_ms) {
  SetResult result;
  Entry* e;
  bool created;
  if (opts.condition == SetOptions::Condition::kAlways && !opts.get) {
    e = db.FindOrInsert(key, now_ms, &created);  // the common SET: one probe
  } else {
    e = db.Find(key, now_ms);
    if (opts.get && e != nullptr) {
      if (!e->value.is_string()) return OpStatus::kWrongType;
      result.previous = e->value.str().ToString();
    }
    if ((opts.condition == SetOptions::Condition::kIfMissing && e != nullptr) ||
        (opts.condition == SetOptions::Condition::kIfExists && e == nullptr)) {
      return result;
    }
    if (e == nullptr) e = db.FindOrInsert(key, now_ms, &created);
  }
  e->value = StringValue(value);
  if (!opts.keep_ttl) db.SetExpire(key, e, -1);
  // A deadline already past is set all the same (Redis 7.0): the key expires
  // on its next access or in the active cycle, and its DEL is propagated then.
  if (opts.expire_at_ms >= 0) db.SetExpire(key, e, opts.expire_at_ms);
  result.written = true;
  return result;
}

OpResult<std::string> OpGet(Database& db, std::string_view key, int64_t now_ms) {
  Entry* e = db.Find(key, now_ms);
  if (e == nullptr) return OpStatus::kNotFound;
  if (!e->value.is_string()) return OpStatus::kWrongType;
  return e->value.str().ToString();
}

OpResult<int64_t> OpIncrBy(Database& db, std::string_view key, int64_t delta, int64_t now_ms) {
  bool created;
  Entry* e = db.Find(key, now_ms);
  int64_t cur = 0;
  if (e != nullptr && !e->value.is_string()) return OpStatus::kWrongType;
  if (e != nullptr && !ValueAsInt(e->value.str(), &cur)) return OpStatus::kNotInteger;
  if ((delta < 0 && cur < 0 && delta < INT64_MIN - cur) || (delta > 0 && cur > 0 && delta > INT64_MAX - cur)) {
    return OpStatus::kOverflow;
  }
  int64_t next = cur + delta;
  if (e == nullptr) e = db.FindOrInsert(key, now_ms, &created);
  e->value = StringValue::FromInt(next);
  return next;
}

OpResult<long double> OpIncrByFloat(Database& db, std::string_view key, std::string_view delta_text, int64_t now_ms) {
  Entry* e = db.Find(key, now_ms);
  long double cur = 0, delta;
  if (e != nullptr && !e->value.is_string()) return OpStatus::kWrongType;
  char scratch[24];
  if (e != nullptr && !StringToLongDouble(e->value.str().View(scratch), &cur)) return OpStatus::kNotFloat;
  if (!StringToLongDouble(delta_text, &delta)) return OpStatus::kNotFloat;
  long double next = cur + delta;
  if (std::isnan(next) || std::isinf(next)) return OpStatus::kNanOrInf;
  bool created;
  if (e == nullptr) e = db.FindOrInsert(key, now_ms, &created);
  // Not int-encoded even when integral: Redis keeps the text it formatted
  // (OBJECT ENCODING embstr), without tryObjectEncoding.
  e->value = StringValue::Text(FormatLongDouble(next));
  return next;
}

OpResult<int64_t> OpAppend(Database& db, std::string_view key, std::string_view value, int64_t max_len,
                           int64_t now_ms) {
  Entry* e = db.Find(key, now_ms);
  if (e == nullptr) {
    bool created;
    e = db.FindOrInsert(key, now_ms, &created);
    e->value = StringValue(value);
    return static_cast<int64_t>(value.size());
  }
  if (!e->value.is_string()) return OpStatus::kWrongType;
  int64_t total = static_cast<int64_t>(e->value.str().size() + value.size());
  if (total > max_len) return OpStatus::kTooBig;
  e->value.str().Append(value);
  return total;
}

OpResult<int64_t> OpSetRange(Database& db, std::string_view key, int64_t offset, std::string_view value,
                             int64_t max_len, int64_t now_ms) {
  // offset + size without overflow: offset may be up to INT64_MAX.
  const bool too_big = static_cast<int64_t>(value.size()) > max_len || offset > max_len - static_cast<int64_t>(value.size());
  Entry* e = db.Find(key, now_ms);
  if (e == nullptr) {
    if (value.empty()) return int64_t{0};
    if (too_big) return OpStatus::kTooBig;
    bool created;
    e = db.FindOrInsert(key, now_ms, &created);
    e->value = StringValue::Raw("");
  } else {
    if (!e->value.is_string()) return OpStatus::kWrongType;
    int64_t len = static_cast<int64_t>(e->value.str().size());
    if (value.empty()) return len;
    if (too_big) return OpStatus::kTooBig;
  }
  e->value.str().SetRange(static_cast<size_t>(offset), value);
  return static_cast<int64_t>(e->value.str().size());
}

std::string_view SliceRange(std::string_view s, int64_t start, int64_t end) {
  int64_t len = static_cast<int64_t>(s.size());
  if (start < 0 && end < 0 && start > end) return {};
  if (start < 0) start = len + start;
  if (end < 0) end = len + end;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= len) end = len - 1;
  if (start > end || len == 0) return {};
  return s.substr(static_cast<size_t>(start), static_cast<size_t>(end - start + 1));
}

LcsResult ComputeLcs(std::string_view a, std::string_view b, bool want_ranges, uint32_t min_match_len) {
  const uint32_t alen = static_cast<uint32_t>(a.size()), blen = static_cast<uint32_t>(b.size());
  // dp[i][j] = LCS length of a[0..i) and b[0..j), row-major in one block.
  std::vector<uint32_t> dp(static_cast<size_t>(alen + 1) * (blen + 1));
  auto at = [&](uint32_t i, uint32_t j) -> uint32_t& { return dp[static_cast<size_t>(j) * (alen + 1) + i]; };
  for (uint32_t i = 0; i <= alen; ++i) {
    for (uint32_t j = 0; j <= blen; ++j) {
      if (i == 0 || j == 0) {
        at(i, j) = 0;
      } else if (a[i - 1] == b[j - 1]) {
        at(i, j) = at(i - 1, j - 1) + 1;
      } else {
        at(i, j) = std::max(at(i - 1, j), at(i, j - 1));
      }
    }
  }
  LcsResult r;
  r.length = at(alen, blen);
  r.lcs.assign(r.length, '\0');
  uint32_t idx = r.length;
  // Walk back from the end, recording contiguous ranges exactly as Redis
  // 7.0 does (including which ranges it reports).
  uint32_t arange_start = alen, arange_end = 0, brange_start = 0, brange_end = 0;
  uint32_t i = alen, j = blen;
  while (i > 0 && j > 0) {
    bool emit = false;
    if (a[i - 1] == b[j - 1]) {
      r.lcs[idx - 1] = a[i - 1];
      if (arange_start == alen) {
        arange_start = i - 1;
        arange_end = i - 1;
        brange_start = j - 1;
        brange_end = j - 1;
      } else if (arange_start == i && brange_start == j) {
        --arange_start;
        --brange_start;
      } else {
        emit = true;
      }
      if (arange_start == 0 || brange_start == 0) emit = true;
      --idx;
      --i;
      --j;
    } else {
      if (at(i - 1, j) > at(i, j - 1)) {
        --i;
      } else {
        --j;
      }
      if (arange_start != alen) emit = true;
    }
    const uint32_t match_len = arange_end - arange_start + 1;
    if (emit) {
      if (want_ranges && (min_match_len == 0 || match_len >= min_match_len)) {
        r.matches.push_back({arange_start, arange_end, brange_start, brange_end, match_len});
      }
      arange_start = alen;
    }
  }
  return r;
}

}  // namespace ringkv::core

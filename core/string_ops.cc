#include "core/string_ops.h"

#include <cmath>
#include <cstdio>
#include <cerrno>
#include <cctype>
#include <cstdlib>

namespace ringkv::core {

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
  // dp[i][j] = LCS length of a[0..i) and b[0..j), row after row in one
  // block (row 0 and column 0 are zero): the inner loop walks a row and the
  // one before it in order, so a table of hundreds of MB is read once, in
  // sequence, rather than a cache line per cell.
  const size_t row = static_cast<size_t>(blen) + 1;
  std::vector<uint32_t> dp(static_cast<size_t>(alen + 1) * row);
  auto at = [&](uint32_t i, uint32_t j) -> uint32_t { return dp[i * row + j]; };
  for (uint32_t i = 1; i <= alen; ++i) {
    const uint32_t* prev = &dp[(i - 1) * row];
    uint32_t* cur = &dp[i * row];
    const char ai = a[i - 1];
    for (uint32_t j = 1; j <= blen; ++j) {
      cur[j] = ai == b[j - 1] ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
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

#include "core/string_ops.h"

#include <array>
#include <bit>
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

namespace {

// The bit-parallel LCS count (Allison and Dix; Hyyrö's form). Row i of the
// table is a bit vector over b: bit j is 0 where LCS(a[0..i), b[0..j+1))
// is one more than LCS(a[0..i), b[0..j)), so LCS(a[0..i), b) is the row's
// count of zero bits. Each character of
// a turns one row into the next with a few word operations per 64 columns:
//   U = V & Match[a[i]],  V' = (V + U) | (V - U)
// where V - U is V & ~U (U lies inside V) and only the addition carries.
// Bits past b's end stay 1 (U is 0 there; a carry into them goes out of the
// top), so they never count as zeros.
class LcsRows {
 public:
  // keep_rows: every row is kept (the walk back reads them); otherwise only
  // the last. Memory: a match mask per distinct character of a and the rows,
  // each ceil(|b| / 64) words.
  LcsRows(std::string_view a, std::string_view b, bool keep_rows)
      : words_((b.size() + 63) / 64), keep_rows_(keep_rows) {
    std::array<int32_t, 256> slot;
    slot.fill(-1);
    int32_t distinct = 0;
    for (unsigned char c : a) {
      if (slot[c] < 0) slot[c] = distinct++;
    }
    std::vector<uint64_t> masks(static_cast<size_t>(distinct) * words_);
    for (size_t j = 0; j < b.size(); ++j) {
      const int32_t k = slot[static_cast<unsigned char>(b[j])];
      if (k >= 0) masks[static_cast<size_t>(k) * words_ + j / 64] |= uint64_t{1} << (j % 64);
    }
    rows_.assign((keep_rows ? a.size() + 1 : 2) * words_, ~uint64_t{0});
    for (size_t i = 1; i <= a.size(); ++i) {
      const uint64_t* match = masks.data() + static_cast<size_t>(slot[static_cast<unsigned char>(a[i - 1])]) * words_;
      const uint64_t* prev = Row(i - 1);
      uint64_t* cur = Row(i);
      uint64_t carry = 0;
      for (size_t w = 0; w < words_; ++w) {
        const uint64_t v = prev[w], u = v & match[w];
        const uint64_t sum = v + u;
        const uint64_t total = sum + carry;
        carry = (sum < v) | (total < sum);
        cur[w] = total | (v & ~u);
      }
    }
    last_ = a.size();
  }

  // LCS(a, b): the zero bits of the last row.
  uint32_t Length() const {
    const uint64_t* row = Row(last_);
    size_t ones = 0;
    for (size_t w = 0; w < words_; ++w) ones += static_cast<size_t>(std::popcount(row[w]));
    return static_cast<uint32_t>(words_ * 64 - ones);
  }

  // REQUIRES: keep_rows, i <= |a|, j < |b|. Whether LCS(a[0..i), b[0..j+1))
  // is one more than LCS(a[0..i), b[0..j)).
  bool GrowsAt(size_t i, size_t j) const { return ((Row(i)[j / 64] >> (j % 64)) & 1) == 0; }

 private:
  const uint64_t* Row(size_t i) const { return rows_.data() + (keep_rows_ ? i : i & 1) * words_; }
  uint64_t* Row(size_t i) { return rows_.data() + (keep_rows_ ? i : i & 1) * words_; }

  size_t words_;
  bool keep_rows_;
  size_t last_ = 0;
  std::vector<uint64_t> rows_;
};

}  // namespace

uint32_t LcsLength(std::string_view a, std::string_view b) { return LcsRows(a, b, /*keep_rows=*/false).Length(); }

LcsResult ComputeLcs(std::string_view a, std::string_view b, bool want_ranges, uint32_t min_match_len) {
  const uint32_t alen = static_cast<uint32_t>(a.size()), blen = static_cast<uint32_t>(b.size());
  const LcsRows table(a, b, /*keep_rows=*/true);
  LcsResult r;
  r.length = table.Length();
  r.lcs.assign(r.length, '\0');
  uint32_t idx = r.length;
  // Walk back from the end, recording contiguous ranges exactly as Redis
  // 7.0 does (including which ranges it reports). Off a match Redis goes up
  // when cell(i-1, j) > cell(i, j-1). There cell(i, j) is the larger of the
  // two and each is cell(i, j) or one less, so that is cell(i, j-1) being
  // one less: a zero bit of row i, no count needed.
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
      if (table.GrowsAt(i, j - 1)) {
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

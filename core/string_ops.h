// The string family's computations that need no keyspace: GETRANGE's
// slicing, LCS, and INCRBYFLOAT's number parsing and formatting. The
// keyspace operations are in server/commands/string_ops.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringkv::core {

// Redis's GETRANGE index rules.
std::string_view SliceRange(std::string_view s, int64_t start, int64_t end);

// LCS of two strings, Redis 7.0's algorithm and match ranges.
struct LcsMatch {
  uint32_t a_start, a_end, b_start, b_end, len;
};
struct LcsResult {
  std::string lcs;                  // the subsequence (when requested)
  uint32_t length = 0;              // its length
  std::vector<LcsMatch> matches;    // ranges, from the end of the strings backwards
};
// Bit-parallel: the table is |a| + 1 rows of ceil(|b| / 64) words, a 32nd
// of Redis's (callers still refuse what Redis's table would make exceed
// proto-max-bulk-len, with Redis's error). min_match_len filters ranges; the
// lcs, the length and the ranges are Redis's, ties broken as it breaks them.
LcsResult ComputeLcs(std::string_view a, std::string_view b, bool want_ranges, uint32_t min_match_len);
// LCS's length alone (LCS ... LEN): two rows, no walk back.
uint32_t LcsLength(std::string_view a, std::string_view b);

// Formats a long double the way INCRBYFLOAT replies ("%.17Lf", trailing zeros
// removed).
std::string FormatLongDouble(long double v);
// Parses s as Redis's string2ld: the whole text, no leading space, at most
// 5,000 bytes; NaN, overflow and underflow to zero are refused.
bool StringToLongDouble(std::string_view s, long double* out);

}  // namespace ringkv::core

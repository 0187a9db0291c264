// Operations of the string family on one Database. They return results and
// statuses; they never format replies (server/commands/string_cmds.cc does).
//
// REQUIRES: main thread (they mutate the keyspace).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/keyspace.h"
#include "core/op_result.h"

namespace ringkv::core {

struct SetOptions {
  enum class Condition : uint8_t { kAlways, kIfMissing, kIfExists } condition = Condition::kAlways;
  bool keep_ttl = false;
  bool get = false;          // return the previous value
  int64_t expire_at_ms = -1; // absolute deadline, -1 = none
};

struct SetResult {
  bool written = false;
  std::optional<std::string> previous;  // when SetOptions::get
};

OpResult<SetResult> OpSet(Database& db, std::string_view key, std::string_view value, const SetOptions& opts,
                          int64_t now_ms);
// The value as text, kNotFound when missing.
OpResult<std::string> OpGet(Database& db, std::string_view key, int64_t now_ms);
// Adds delta to the integer value (0 when missing).
OpResult<int64_t> OpIncrBy(Database& db, std::string_view key, int64_t delta, int64_t now_ms);
// Adds the increment, given as text, to the float value (0 when missing).
// As Redis checks them: the key's type, its value, then the increment.
OpResult<long double> OpIncrByFloat(Database& db, std::string_view key, std::string_view delta_text, int64_t now_ms);
// New length. max_len is proto-max-bulk-len.
OpResult<int64_t> OpAppend(Database& db, std::string_view key, std::string_view value, int64_t max_len,
                           int64_t now_ms);
OpResult<int64_t> OpSetRange(Database& db, std::string_view key, int64_t offset, std::string_view value,
                             int64_t max_len, int64_t now_ms);
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
// REQUIRES: (a.size()+1)*(b.size()+1) cells fit in memory (callers check the
// transient size against proto-max-bulk-len first). min_match_len filters ranges.
LcsResult ComputeLcs(std::string_view a, std::string_view b, bool want_ranges, uint32_t min_match_len);

// Formats a long double the way INCRBYFLOAT replies ("%.17Lf", trailing zeros
// removed).
std::string FormatLongDouble(long double v);
// Parses s as Redis's string2ld: the whole text, no leading space, at most
// 5,000 bytes; NaN, overflow and underflow to zero are refused.
bool StringToLongDouble(std::string_view s, long double* out);

}  // namespace ringkv::core

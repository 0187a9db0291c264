// ZSetValue: a Redis sorted set in Redis 7.0's two encodings: a listpack of
// member, score pairs kept in (score, member) order while small (OBJECT
// ENCODING "listpack"), and a skiplist plus a member -> score hash table once
// it has more than zset-max-listpack-entries members or a member longer than
// zset-max-listpack-value bytes ("skiplist"). One way, as in Redis.
//
// Scores in the listpack are written as Redis writes them (ZScoreToString):
// an integral score as an integer, others as "%.17g" text -- so the listpack
// bytes, which an RDB file stores verbatim, are Redis's.
//
// Thread-safety: none; a value of the keyspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/listpack.h"
#include "core/skiplist.h"
#include "core/string_hash.h"

namespace ringkv::core {

// zset-max-listpack-entries / zset-max-listpack-value.
struct ZSetLimits {
  size_t max_listpack_entries = 128;
  size_t max_listpack_value = 64;
};

// ZADD's options.
struct ZAddFlags {
  bool nx = false, xx = false, gt = false, lt = false, incr = false;
};

enum class ZAddOutcome : uint8_t {
  kAdded,      // a new member
  kUpdated,    // an existing member got another score
  kUnchanged,  // existing, same score
  kSkipped,    // NX / XX / GT / LT said no
  kNaN,        // INCR produced NaN (inf + -inf): nothing changed
};

// Redis's d2string: integral scores within +-2^52 as integers, "inf",
// "-inf", "-0", otherwise "%.17g".
std::string ZScoreToString(double score);

class ZSetValue {
 public:
  enum class Encoding : uint8_t { kListpack, kSkiplist };

  ZSetValue() = default;
  // A sorted set read from an RDB listpack (REQUIRES: pairs in order,
  // distinct members, valid scores -- the loader checks).
  explicit ZSetValue(Listpack packed) : packed_(std::move(packed)) {}
  ~ZSetValue();
  ZSetValue(ZSetValue&&) noexcept;
  ZSetValue& operator=(ZSetValue&&) noexcept;

  Encoding encoding() const { return encoding_; }
  const char* encoding_name() const { return encoding_ == Encoding::kListpack ? "listpack" : "skiplist"; }
  size_t size() const;

  bool Score(std::string_view member, double* score) const;
  // ZADD / ZINCRBY for one member. *new_score receives the resulting score
  // (the incremented one with INCR) unless kSkipped / kNaN.
  ZAddOutcome Add(std::string_view member, double score, const ZAddFlags& flags, const ZSetLimits& limits,
                  double* new_score);
  bool Remove(std::string_view member);
  // 0-based rank (from the highest with `reverse`), or -1 when absent.
  int64_t Rank(std::string_view member, bool reverse) const;
  // Calls fn for ranks start..end (0-based, inclusive, already clipped to
  // the set), lowest first or, with `reverse`, highest first.
  void RangeByRank(size_t start, size_t end, bool reverse,
                   const std::function<void(std::string_view member, double score)>& fn) const;

  // The listpack itself. REQUIRES: encoding() == kListpack.
  const Listpack& packed() const { return packed_; }
  void ConvertToSkiplist();
  std::unique_ptr<ZSetValue> Clone() const;
  size_t heap_bytes() const;

 private:
  size_t FindPacked(std::string_view member) const;  // position of the member entry
  double PackedScore(size_t member_pos) const;
  void InsertPacked(std::string_view member, double score);

  Encoding encoding_ = Encoding::kListpack;
  Listpack packed_;
  std::unique_ptr<Skiplist> skiplist_;  // kSkiplist: order
  StringMap<double> scores_;            // kSkiplist: member -> score
};

}  // namespace ringkv::core

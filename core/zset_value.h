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
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/listpack.h"
#include "core/skiplist.h"
#include "absl/random/random.h"
#include "core/dict.h"
#include "core/packed_or_table.h"

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

// How Redis writes a score into a listpack: integral scores within +-2^52
// as integers (-0 included, which becomes 0), "inf", "-inf", otherwise
// "%.17g".
std::string ZScoreToString(double score);

class ZSetValue {
 public:
  enum class Encoding : uint8_t { kListpack, kSkiplist };

  ZSetValue() = default;
  // A sorted set read from an RDB listpack (REQUIRES: pairs in order,
  // distinct members, valid scores -- the loader checks).
  explicit ZSetValue(Listpack packed) : rep_(std::move(packed)) {}
  ~ZSetValue();
  // A sorted set of `elements` -- REQUIRES: in (score, member) order, members
  // distinct -- packed when they fit `limits`, a skiplist otherwise. O(n) for
  // a listpack (no search per insert), as Redis builds a STORE result.
  static ZSetValue FromSorted(const std::vector<std::pair<std::string, double>>& elements, const ZSetLimits& limits);
  ZSetValue(ZSetValue&&) noexcept;
  ZSetValue& operator=(ZSetValue&&) noexcept;

  Encoding encoding() const { return rep_.is_table() ? Encoding::kSkiplist : Encoding::kListpack; }
  const char* encoding_name() const { return rep_.is_table() ? "skiplist" : "listpack"; }
  size_t size() const;
  // DEBUG HTSTATS-KEY: its member -> score table's report, as Redis reports
  // its zset's dict (core/hash_table_stats.h); empty while a listpack.
  std::string TableStatsText() const {
    return rep_.is_table() ? DictStatsText(rep_.table()->scores) : std::string();
  }

  bool Score(std::string_view member, double* score) const;
  // ZADD / ZINCRBY for one member. *new_score receives the resulting score
  // (the incremented one with INCR) unless kSkipped / kNaN.
  ZAddOutcome Add(std::string_view member, double score, const ZAddFlags& flags, const ZSetLimits& limits,
                  double* new_score);
  bool Remove(std::string_view member);
  // 0-based rank (from the highest with `reverse`), or -1 when absent.
  int64_t Rank(std::string_view member, bool reverse) const;
  // The listpack itself. REQUIRES: encoding() == kListpack.
  const Listpack& packed() const { return rep_.packed(); }
  void ConvertToSkiplist();

  // Calls fn(member, score) from rank `start` (0-based, counted from the
  // lowest -- or from the highest with `reverse`) onwards in that direction,
  // until fn returns false or the set ends. Views are valid during the call.
  void Walk(size_t start, bool reverse, const std::function<bool(std::string_view, double)>& fn) const;
  // Calls fn(member, score, stable) for the elements whose score is inside
  // `range`, lowest first, until fn returns false -- without ranks: the
  // skiplist is entered at the range's first node (O(log n)), a listpack
  // scanned from its start. `stable` says whether member's bytes live in the
  // set itself (valid until the set changes): true for the skiplist and for
  // a listpack's string entries, false for an integer-encoded listpack
  // entry, whose text is formatted into a buffer valid only during the call
  // (copy it to keep it).
  template <typename Fn>
  void WalkRange(const ScoreRange& range, Fn&& fn) const {
    if (range.Empty()) return;
    if (const Table* t = rep_.table()) {
      for (const Skiplist::Node* node = t->list.FirstInRange(range); node != nullptr && range.BelowMax(node->score);
           node = node->next()) {
        if (!fn(node->member(), node->score, true)) return;
      }
      return;
    }
    const Listpack& lp = rep_.packed();
    char scratch[24];
    for (size_t pos = lp.First(); pos != Listpack::kEnd; pos = lp.Next(lp.Next(pos))) {
      const double score = PackedScore(pos);
      if (!range.AboveMin(score)) continue;
      if (!range.BelowMax(score)) return;
      const ListpackValue v = lp.Get(pos);
      if (!v.is_int) {
        if (!fn(v.str, score, true)) return;
        continue;
      }
      const int len = std::snprintf(scratch, sizeof(scratch), "%lld", static_cast<long long>(v.int_value));
      if (!fn(std::string_view(scratch, static_cast<size_t>(len)), score, false)) return;
    }
  }
  // The rank (as Walk counts it) of the first element inside the range, or
  // size() when the range holds none. O(log n) for a skiplist. As in Redis,
  // a lex range holds none unless the last member is at least its min and
  // the first at most its max.
  size_t RankOfFirstIn(const ScoreRange& range, bool reverse) const;
  size_t RankOfFirstIn(const LexRange& range, bool reverse) const;
  // Elements inside the range (ZCOUNT, ZLEXCOUNT).
  size_t Count(const ScoreRange& range) const;
  size_t Count(const LexRange& range) const;
  // How many elements, from rank `start` on in the walk's direction, are on
  // the inner side of the range's far bound (at most max walking up, at
  // least min walking down): the run stops at the first that is not, or
  // after `limit`. Lex ranges are taken as such runs from the first element
  // in range, as Redis walks them, not by counting ranks: members are in
  // lexicographic order only when all scores are equal, and this is what
  // Redis answers for a set whose scores differ.
  size_t LexRun(const LexRange& range, size_t start, bool reverse, size_t limit) const;
  // Removes ascending ranks [start, end]. REQUIRES: start <= end < size().
  void RemoveRanks(size_t start, size_t end);
  // A uniformly random element (ZRANDMEMBER). REQUIRES: size() > 0.
  void RandomElement(absl::BitGen& rng, std::string* member, double* score) const;
  // One step of ZSCAN over the skiplist encoding's table (see
  // HashValue::ScanTable); scores as ZScoreToString writes them.
  uint64_t ScanTable(uint64_t cursor, const std::function<void(std::string_view, double)>& fn) const;

  ZSetValue Clone() const;
  size_t heap_bytes() const;

 private:
  size_t FindPacked(std::string_view member) const;  // position of the member entry
  double PackedScore(size_t member_pos) const;
  void InsertPacked(std::string_view member, double score);

  // kSkiplist: the order and the member -> score table, in one allocation
  // made only on conversion (a small sorted set is just its listpack).
  struct Table {
    Skiplist list;
    Dict<double> scores;
  };
  PackedOrTable<Listpack, Table> rep_;
};
// 16 bytes, so that a sorted set lives inside its core::Value.
static_assert(sizeof(ZSetValue) == 16);

}  // namespace ringkv::core

// Skiplist: the ordered half of a large sorted set (OBJECT ENCODING
// "skiplist"), as Redis's zskiplist: elements ordered by (score, member) --
// members compared as bytes -- with each forward link carrying its span, so
// rank lookups and rank-addressed access are O(log n), and a backward link
// for reverse iteration. The member -> score half is a hash table owned by
// the sorted set built on this.
//
// Example:
//   Skiplist zsl;
//   zsl.Insert(1.5, "a");
//   uint64_t rank = zsl.Rank(1.5, "a");            // 1
//   for (const Skiplist::Node* n = zsl.First(); n; n = n->next()) Use(n->member(), n->score);
//
// Thread-safety: none; a value of the keyspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace ringkv::core {

// A score interval, ends included unless *_exclusive (ZRANGEBYSCORE's "(").
struct ScoreRange {
  double min = 0, max = 0;
  bool min_exclusive = false, max_exclusive = false;
  bool AboveMin(double v) const { return min_exclusive ? v > min : v >= min; }
  bool BelowMax(double v) const { return max_exclusive ? v < max : v <= max; }
  bool Empty() const { return min > max || (min == max && (min_exclusive || max_exclusive)); }
};

// A member interval for the lex commands: "-" and "+" are the unbounded
// ends; otherwise "[" includes and "(" excludes the bound.
struct LexRange {
  std::string min, max;
  bool min_exclusive = false, max_exclusive = false;
  bool min_unbounded = false;  // "-"
  bool max_unbounded = false;  // "+"
  bool nothing = false;        // min "+" or max "-": no member can be inside
  bool AboveMin(std::string_view m) const;
  bool BelowMax(std::string_view m) const;
  bool Empty() const;
};

class Skiplist {
 public:
  static constexpr int kMaxLevel = 32;

  class Node {
   public:
    std::string_view member() const {
      return {reinterpret_cast<const char*>(levels() + height_), member_len_};
    }
    double score = 0;
    const Node* next() const { return levels()[0].forward; }
    const Node* prev() const { return backward_; }

   private:
    friend class Skiplist;
    struct Level {
      Node* forward;
      uint64_t span;  // elements skipped by this link (rank distance)
    };
    // The node's height_ links live right after it, then the member's
    // bytes -- one allocation, no string object per element.
    Level* levels() { return reinterpret_cast<Level*>(this + 1); }
    const Level* levels() const { return reinterpret_cast<const Level*>(this + 1); }
    Node* backward_ = nullptr;
    int height_ = 0;
    uint32_t member_len_ = 0;
  };

  Skiplist();
  ~Skiplist();
  Skiplist(const Skiplist&) = delete;
  Skiplist& operator=(const Skiplist&) = delete;

  size_t size() const { return length_; }
  const Node* First() const { return header_->levels()[0].forward; }
  const Node* Last() const { return tail_; }

  // REQUIRES: (score, member) is not present (the caller's hash knows).
  const Node* Insert(double score, std::string_view member);
  // False when absent.
  bool Delete(double score, std::string_view member);
  // Moves an element to a new score; returns its node. REQUIRES: present.
  const Node* UpdateScore(double score, std::string_view member, double new_score);

  // 1-based rank of the element, 0 when absent.
  uint64_t Rank(double score, std::string_view member) const;
  // The element of 1-based rank, or nullptr.
  const Node* ByRank(uint64_t rank) const;

  // First / last element inside the range, or nullptr.
  const Node* FirstInRange(const ScoreRange& range) const;
  const Node* LastInRange(const ScoreRange& range) const;
  const Node* FirstInLexRange(const LexRange& range) const;
  const Node* LastInLexRange(const LexRange& range) const;

  // Remove every element in the range (ZREMRANGEBY*), calling `removed` for
  // each before it goes (the sorted set drops it from its hash). Returns how
  // many were removed.
  using RemovedFn = std::function<void(std::string_view member)>;
  size_t DeleteRangeByScore(const ScoreRange& range, const RemovedFn& removed);
  size_t DeleteRangeByLex(const LexRange& range, const RemovedFn& removed);
  // Ranks are 1-based and inclusive.
  size_t DeleteRangeByRank(uint64_t start, uint64_t end, const RemovedFn& removed);

 private:
  static Node* NewNode(int height, double score, std::string_view member);
  static void FreeNode(Node* n);
  int RandomHeight();
  // The first / last element inside a score or lex range; `key` gives the
  // node's score or member.
  template <typename Range, typename Key>
  const Node* FirstIn(const Range& range, Key key) const;
  template <typename Range, typename Key>
  const Node* LastIn(const Range& range, Key key) const;
  // Removes the elements from the first one `above_min` while `below_max`.
  template <typename AboveMin, typename BelowMax>
  size_t DeleteBetween(AboveMin above_min, BelowMax below_max, const RemovedFn& removed);
  // The first node not before (score, member), filling update[i] with the
  // rightmost node before it at each level.
  Node* FindWithPath(double score, std::string_view member, Node** update);
  // Unlinks x; update[i] is the rightmost node before x at level i.
  void Unlink(Node* x, Node** update);

  Node* header_;
  Node* tail_ = nullptr;
  size_t length_ = 0;
  int height_ = 1;
  uint64_t rng_state_ = 0x9E3779B97F4A7C15ull;
};

// Redis's element order: by score, then by member bytes.
inline bool ElementLess(double a_score, std::string_view a, double b_score, std::string_view b) {
  return a_score < b_score || (a_score == b_score && a.compare(b) < 0);
}

}  // namespace ringkv::core

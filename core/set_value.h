// SetValue: a Redis set in Redis 7.0's two encodings: an intset while every
// member is an integer and there are at most set-max-intset-entries of them
// (OBJECT ENCODING "intset"), a hash table otherwise ("hashtable"). As in
// Redis 7.0 the conversion goes one way while the set lives.
//
// Example:
//   SetValue s = SetValue::ForFirstMember("42");  // intset, as SADD creates it
//   s.Add("42", limits);                          // true: a new member
//   s.Add("x", limits);                           // true; now a hash table
//
// Thread-safety: none; a value of the keyspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/random/random.h"
#include "core/dict.h"
#include "core/intset.h"
#include "core/packed_or_table.h"

namespace ringkv::core {

// set-max-intset-entries.
struct SetLimits {
  size_t max_intset_entries = 512;
};

class SetValue {
 public:
  enum class Encoding : uint8_t { kIntset, kHashtable };

  // An empty set in the encoding Redis's setTypeCreate picks for a set whose
  // first member is `member`: an intset when it is an integer.
  static SetValue ForFirstMember(std::string_view member);

  SetValue() = default;  // an empty intset
  // A set read from an RDB intset (REQUIRES: Intset::Validate passed).
  explicit SetValue(Intset ints) : rep_(std::move(ints)) {}

  Encoding encoding() const { return rep_.is_table() ? Encoding::kHashtable : Encoding::kIntset; }
  const char* encoding_name() const { return rep_.is_table() ? "hashtable" : "intset"; }
  size_t size() const { return rep_.is_table() ? rep_.table()->size() : rep_.packed().size(); }
  // DEBUG HTSTATS-KEY: its hash table's report (core/hash_table_stats.h);
  // empty while an intset.
  std::string TableStatsText() const { return rep_.is_table() ? DictStatsText(*rep_.table()) : std::string(); }
  bool empty() const { return size() == 0; }

  bool Contains(std::string_view member) const;
  // True when the member is new. Converts to a hash table first when the
  // member is not an integer or the intset would pass the limit.
  bool Add(std::string_view member, const SetLimits& limits);
  // False when the member was absent.
  bool Remove(std::string_view member);
  // Every member, in the encoding's order (ascending for an intset). fn
  // must not modify the set.
  void ForEach(const std::function<void(std::string_view member)>& fn) const;
  // One step of SSCAN over the table encoding (see HashValue::ScanTable).
  uint64_t ScanTable(uint64_t cursor, const std::function<void(std::string_view member)>& fn) const;
  // A uniformly random member. REQUIRES: !empty().
  std::string RandomMember(absl::BitGen& rng) const;
  // Removes and returns a random member. REQUIRES: !empty().
  std::string PopRandom(absl::BitGen& rng);

  // The intset itself (RDB, DUMP). REQUIRES: encoding() == kIntset.
  const Intset& intset() const { return rep_.packed(); }
  // Forces the table encoding, sized for `expected` members.
  void ConvertToTable(size_t expected = 0);
  SetValue Clone() const;
  size_t heap_bytes() const;

 private:
  struct Member {};  // a set is a table of keys with no values

  // The intset, or -- once converted -- the table (allocated only then).
  PackedOrTable<Intset, Dict<Member>> rep_;
};
// 16 bytes, so that a set lives inside its core::Value.
static_assert(sizeof(SetValue) == 16);

}  // namespace ringkv::core

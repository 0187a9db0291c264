// HashValue: a Redis hash -- field/value pairs -- in Redis 7.0's two
// encodings: a listpack of alternating field and value while the hash is
// small (OBJECT ENCODING "listpack"), a hash table once it has more than
// hash-max-listpack-entries fields or a field or value longer than
// hash-max-listpack-value bytes ("hashtable"). As in Redis the conversion
// goes one way: a hash table never turns back into a listpack while it lives
// (a reload may pack it again).
//
// Example:
//   HashValue h;
//   h.Set("name", "ringkv", limits);            // true: a new field
//   std::string v;
//   if (h.Get("name", &v)) Use(v);
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
#include "absl/random/random.h"
#include "core/dict.h"
#include "core/packed_or_table.h"

namespace ringkv::core {

// hash-max-listpack-entries / hash-max-listpack-value.
struct HashLimits {
  size_t max_listpack_entries = 512;
  size_t max_listpack_value = 64;
};

class HashValue {
 public:
  enum class Encoding : uint8_t { kListpack, kHashtable };

  HashValue() = default;
  // A hash read from an RDB listpack (REQUIRES: an even number of entries,
  // distinct fields -- the loader checks).
  explicit HashValue(Listpack packed) : rep_(std::move(packed)) {}

  Encoding encoding() const { return rep_.is_table() ? Encoding::kHashtable : Encoding::kListpack; }
  // "listpack" / "hashtable", as OBJECT ENCODING shows it.
  const char* encoding_name() const { return rep_.is_table() ? "hashtable" : "listpack"; }
  size_t size() const { return rep_.is_table() ? rep_.table()->size() : rep_.packed().size() / 2; }
  // DEBUG HTSTATS-KEY: its hash table's report (core/hash_table_stats.h);
  // empty while a listpack.
  std::string TableStatsText() const { return rep_.is_table() ? DictStatsText(*rep_.table()) : std::string(); }
  bool empty() const { return size() == 0; }

  bool Contains(std::string_view field) const;
  // False when the field is absent.
  bool Get(std::string_view field, std::string* value) const;
  // As Get, without a copy: *value views the hash's bytes (or `scratch`, at
  // least 21 bytes, for a packed integer) until the hash is modified.
  bool GetView(std::string_view field, char* scratch, std::string_view* value) const;
  // Sets field to value; true when the field is new. Converts to a hash
  // table first when the result would pass `limits`.
  bool Set(std::string_view field, std::string_view value, const HashLimits& limits);
  // False when the field was absent.
  bool Delete(std::string_view field);

  // Calls fn for every pair, in the encoding's order (insertion order for a
  // listpack, table order otherwise). fn must not modify the hash.
  void ForEach(const std::function<void(std::string_view field, std::string_view value)>& fn) const;

  // One step of HSCAN over the table encoding: the pairs of the buckets at
  // `cursor`, and the next cursor (0: done). A listpack has no cursor: HSCAN
  // returns it whole (callers check encoding()).
  uint64_t ScanTable(uint64_t cursor, const std::function<void(std::string_view, std::string_view)>& fn) const;
  // A uniformly random pair (HRANDFIELD). REQUIRES: !empty().
  void RandomPair(absl::BitGen& rng, std::string* field, std::string* value) const;
  // The pair at index i in ForEach order (HRANDFIELD with a count, on a
  // listpack). REQUIRES: encoding() == kListpack, i < size().
  void PackedPair(size_t i, std::string* field, std::string* value) const;
  HashValue Clone() const;
  // Heap bytes held (MEMORY USAGE).
  size_t heap_bytes() const;

  // The listpack itself (RDB, DUMP). REQUIRES: encoding() == kListpack.
  const Listpack& packed() const { return rep_.packed(); }
  // Forces the hash-table encoding (a load of a big hash, DEBUG).
  void ConvertToTable();

 private:
  // Position of the field's entry in packed_, or Listpack::kEnd.
  size_t FindPacked(std::string_view field) const;

  // The listpack, or -- once converted -- the table (allocated only then).
  PackedOrTable<Listpack, Dict<std::string>> rep_;
};
// 16 bytes, so that a hash lives inside its core::Value.
static_assert(sizeof(HashValue) == 16);

}  // namespace ringkv::core

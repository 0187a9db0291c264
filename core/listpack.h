// Listpack: a packed sequence of strings and integers in one contiguous
// buffer, byte-compatible with Redis 7.0's listpack. It is the compact
// encoding of small hashes, sorted sets and lists (and of every quicklist
// node), and it is what an RDB file stores for them verbatim -- so the bytes
// here must be exactly Redis's.
//
// Layout (all little-endian):
//   <total bytes: u32> <count: u16, 65535 = "count the entries"> entry... 0xFF
//   entry = <encoding + data> <backlen: 1..5 bytes, the size of the first part>
// Encodings: 7-bit uint (0xxxxxxx), 6-bit string length (10xxxxxx), 13-bit
// int (110xxxxx), 12-bit string length (1110xxxx), then 0xF0 32-bit string
// length, 0xF1/0xF2/0xF3/0xF4 16/24/32/64-bit ints. A string that is the
// exact decimal text of an int64 is stored as an integer (as Redis does).
//
// Positions are byte offsets of entries (stable until the next mutation).
// Example:
//   Listpack lp;
//   lp.Append("field"); lp.Append("42");
//   for (size_t p = lp.First(); p != Listpack::kEnd; p = lp.Next(p)) Use(lp.Get(p));
//
// Thread-safety: none; a value of the keyspace (main thread), or of a fork
// child's copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "core/packed_buffer.h"

namespace ringkv::core {

// One element as read back: an integer, or a view of string bytes inside the
// listpack (valid until it is modified).
struct ListpackValue {
  bool is_int = false;
  int64_t int_value = 0;
  std::string_view str;
  // The element as text (integers in decimal).
  std::string ToString() const { return is_int ? std::to_string(int_value) : std::string(str); }
  bool Equals(std::string_view s) const;
};

class Listpack {
 public:
  static constexpr size_t kEnd = SIZE_MAX;  // "no such entry"
  static constexpr size_t kHeaderSize = 6;

  Listpack();
  // Adopts bytes read from an RDB file or a DUMP payload.
  // REQUIRES: Validate(bytes) succeeded.
  static Listpack FromBytes(std::string bytes);
  // Checks that `bytes` is a well-formed listpack: header, every entry's
  // encoding, back-length and bounds, the terminator, and the count. Never
  // reads outside `bytes` (the input may be hostile).
  static absl::Status Validate(std::string_view bytes);

  std::string_view bytes() const { return buf_.view(); }
  size_t byte_size() const { return buf_.size(); }
  size_t size() const { return buf_.aux(); }  // the count lives in the buffer's spare word
  bool empty() const { return buf_.aux() == 0; }

  // Entry positions; kEnd past either end.
  size_t First() const;
  size_t Last() const;
  size_t Next(size_t pos) const;
  size_t Prev(size_t pos) const;
  // The entry at `index` (negative: from the end, -1 is the last), or kEnd.
  size_t Seek(int64_t index) const;
  ListpackValue Get(size_t pos) const;
  // The first entry at or after `pos` equal to `s`, looking at every
  // `skip + 1`-th entry (skip 1 walks the fields of field/value pairs), or kEnd.
  size_t Find(size_t pos, std::string_view s, size_t skip = 0) const;

  void Append(std::string_view s);
  void AppendInt(int64_t v);
  void Prepend(std::string_view s);
  // Inserts s before the entry at pos (pos == kEnd: appends). Returns the
  // position of the new entry.
  size_t InsertBefore(size_t pos, std::string_view s);
  // Replaces the entry at pos; returns its (new) position.
  size_t Replace(size_t pos, std::string_view s);
  // Deletes `n` consecutive entries from pos; returns the position of the
  // entry that followed them (or kEnd).
  size_t Delete(size_t pos, size_t n = 1);
  // Deletes entries [start, start + n) by index (both clipped).
  void DeleteRange(int64_t start, size_t n);

 private:
  size_t EntrySize(size_t pos) const;  // encoding + data + backlen
  void SetHeader();
  size_t InsertEncoded(size_t pos, std::string_view encoded);

  PackedBuffer buf_;
};

// Encodes one element as listpack bytes (encoding + data + backlen), storing
// int64 text as an integer. Exposed for tests.
std::string ListpackEncode(std::string_view s);
std::string ListpackEncodeInt(int64_t v);

}  // namespace ringkv::core

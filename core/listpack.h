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
  // Bytes allocated (MEMORY USAGE).
  size_t capacity() const { return buf_.capacity(); }
  // Keeps the bytes at their exact size from now on (PackedBuffer::MakeExact):
  // for a listpack that will rarely change again, a stream's sealed node.
  void MakeExact() { buf_.MakeExact(); }
  bool exact() const { return buf_.exact(); }

  // Entry positions; kEnd past either end. Next and Get are inline: a
  // stream node is walked element by element on every read.
  size_t First() const;
  size_t Last() const;
  inline size_t Next(size_t pos) const;
  size_t Prev(size_t pos) const;
  // The entry at `index` (negative: from the end, -1 is the last), or kEnd.
  size_t Seek(int64_t index) const;
  inline ListpackValue Get(size_t pos) const;
  // The first entry at or after `pos` equal to `s`, looking at every
  // `skip + 1`-th entry (skip 1 walks the fields of field/value pairs), or kEnd.
  size_t Find(size_t pos, std::string_view s, size_t skip = 0) const;

  void Append(std::string_view s);
  void AppendInt(int64_t v);
  // Appends `count` elements already encoded back to back (ListpackEncodeTo):
  // one move of the bytes for a whole group of elements (a stream entry).
  void AppendEncoded(std::string_view encoded, uint32_t count);
  void Prepend(std::string_view s);
  // Inserts s before the entry at pos (pos == kEnd: appends). Returns the
  // position of the new entry.
  size_t InsertBefore(size_t pos, std::string_view s);
  // Replaces the entry at pos; returns its (new) position.
  size_t Replace(size_t pos, std::string_view s);
  // Replaces the entry at pos with the integer v, in place when its encoding
  // keeps the entry's size (a stream node's counters).
  void ReplaceInt(size_t pos, int64_t v);
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

// The same, appended to *out (no temporary string per element).
void ListpackEncodeTo(std::string_view s, std::string* out);
void ListpackEncodeIntTo(int64_t v, std::string* out);

namespace listpack_internal {

// Size in bytes of the back-length that records an entry part of `len` bytes.
inline size_t BacklenSize(uint64_t len) {
  if (len <= 127) return 1;
  if (len < 16383) return 2;
  if (len < 2097151) return 3;
  if (len < 268435455) return 4;
  return 5;
}

inline uint64_t ReadLe(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// Two's complement of a `bits`-wide field back to int64.
inline int64_t SignExtend(uint64_t v, int bits) {
  if (bits == 64) return static_cast<int64_t>(v);
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return v >= sign ? static_cast<int64_t>(v) - static_cast<int64_t>(uint64_t{1} << bits) : static_cast<int64_t>(v);
}

// Length of an entry's encoding + data, from its first bytes; 0 when the
// encoding byte is invalid. `avail` bounds what may be read.
inline size_t EncodedPartSize(const uint8_t* p, size_t avail) {
  if (avail == 0) return 0;
  const uint8_t b = p[0];
  if ((b & 0x80) == 0) return 1;                  // 7-bit uint
  if ((b & 0xC0) == 0x80) return 1 + (b & 0x3F);  // 6-bit string
  if ((b & 0xE0) == 0xC0) return 2;               // 13-bit int
  if ((b & 0xF0) == 0xE0) {                       // 12-bit string
    if (avail < 2) return 0;
    return 2 + ((static_cast<size_t>(b & 0x0F) << 8) | p[1]);
  }
  switch (b) {
    case 0xF0:
      if (avail < 5) return 0;
      return 5 + static_cast<size_t>(ReadLe(p + 1, 4));
    case 0xF1: return 3;
    case 0xF2: return 4;
    case 0xF3: return 5;
    case 0xF4: return 9;
    default: return 0;  // 0xF5..0xFE unused; 0xFF is the terminator
  }
}

inline ListpackValue Decode(const uint8_t* p) {
  ListpackValue v;
  const uint8_t b = p[0];
  auto as_int = [&v](int64_t x) {
    v.is_int = true;
    v.int_value = x;
  };
  if ((b & 0x80) == 0) {
    as_int(b & 0x7F);
  } else if ((b & 0xC0) == 0x80) {
    v.str = std::string_view(reinterpret_cast<const char*>(p + 1), b & 0x3F);
  } else if ((b & 0xE0) == 0xC0) {
    as_int(SignExtend((static_cast<uint64_t>(b & 0x1F) << 8) | p[1], 13));
  } else if ((b & 0xF0) == 0xE0) {
    v.str = std::string_view(reinterpret_cast<const char*>(p + 2), (static_cast<size_t>(b & 0x0F) << 8) | p[1]);
  } else if (b == 0xF0) {
    v.str = std::string_view(reinterpret_cast<const char*>(p + 5), static_cast<size_t>(ReadLe(p + 1, 4)));
  } else if (b == 0xF1) {
    as_int(SignExtend(ReadLe(p + 1, 2), 16));
  } else if (b == 0xF2) {
    as_int(SignExtend(ReadLe(p + 1, 3), 24));
  } else if (b == 0xF3) {
    as_int(SignExtend(ReadLe(p + 1, 4), 32));
  } else {
    as_int(static_cast<int64_t>(ReadLe(p + 1, 8)));
  }
  return v;
}

}  // namespace listpack_internal

inline size_t Listpack::Next(size_t pos) const {
  const auto* p = reinterpret_cast<const uint8_t*>(buf_.data()) + pos;
  const size_t part = listpack_internal::EncodedPartSize(p, buf_.size() - pos);
  const size_t next = pos + part + listpack_internal::BacklenSize(part);
  return next >= buf_.size() - 1 ? kEnd : next;
}

inline ListpackValue Listpack::Get(size_t pos) const {
  return listpack_internal::Decode(reinterpret_cast<const uint8_t*>(buf_.data()) + pos);
}

}  // namespace ringkv::core

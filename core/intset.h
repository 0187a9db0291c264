// Intset: a sorted array of distinct integers, byte-compatible with Redis's
// intset -- the encoding of small all-integer sets (OBJECT ENCODING "intset",
// set-max-intset-entries) and what an RDB file stores for them verbatim
// (RDB_TYPE_SET_INTSET).
//
// Layout (little-endian): <encoding: u32 = 2, 4 or 8, the bytes per element>
// <length: u32> <elements ascending, each `encoding` bytes>. The encoding is
// the narrowest that holds every element; adding a wider one upgrades the
// whole array (it never narrows again, as in Redis).
//
// Thread-safety: none; a value of the keyspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "core/packed_buffer.h"

namespace ringkv::core {

class Intset {
 public:
  static constexpr size_t kHeaderSize = 8;

  Intset();
  // Adopts bytes from an RDB file or DUMP payload. REQUIRES: Validate ok.
  static Intset FromBytes(std::string bytes);
  // Checks the header, the size, and that elements ascend strictly. Never
  // reads outside `bytes`.
  static absl::Status Validate(std::string_view bytes);

  std::string_view bytes() const { return buf_.view(); }
  size_t size() const;
  // Bytes per element: 2, 4 or 8.
  uint32_t encoding() const;

  // The element at index i (ascending). REQUIRES: i < size().
  int64_t Get(size_t i) const;
  bool Contains(int64_t v) const;
  // False when v was already present.
  bool Add(int64_t v);
  // False when v was absent.
  bool Remove(int64_t v);

 private:
  // Index of v, or of where it would go (*found tells).
  size_t Search(int64_t v, bool* found) const;
  void Set(size_t i, int64_t v);
  void Upgrade(uint32_t encoding);

  PackedBuffer buf_;
};

}  // namespace ringkv::core

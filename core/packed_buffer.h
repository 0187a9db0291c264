// PackedBuffer: the owned bytes of a packed encoding (a listpack, an intset),
// sized the way Redis sizes them -- to the byte, within one of eight steps
// per power of two -- rather than with std::string's doubling, whose slack
// would be most of the memory of the many small packed values a keyspace
// holds. 16 bytes; an empty buffer allocates nothing.
//
// The 31 bits the layout leaves over are the owner's (aux(), below 2^31): a
// listpack keeps its element count there (each element takes at least 2
// bytes of a buffer below 4 GiB), so it stays 16 bytes too.
//
// Capacity is not stored: it is a function of the size (RoundUp), so a
// change that stays within the same step reallocates nothing, and one that
// leaves it moves the bytes to a buffer of the new step (as a realloc would).
//
// Exact buffers (MakeExact): a buffer that will no longer grow -- a stream's
// sealed node -- moves to ExactSizeSlabs (core/exact_size_slabs.h), its
// capacity its size rounded up to 8 bytes. It stays exact through every later
// change, copy and move (each change of its 8-byte step moves the bytes, so
// growing one byte by byte costs a copy per 8 bytes); the spare word's top
// bit says which storage it is in.
//
// Thread-safety: none (an exact buffer's storage may be freed on any thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/exact_size_slabs.h"

namespace ringkv::core {

class PackedBuffer {
 public:
  PackedBuffer() = default;
  explicit PackedBuffer(std::string_view bytes) { Assign(bytes); }
  PackedBuffer(const PackedBuffer& o) : aux_(o.aux_) { Assign(o.view()); }  // exact if o is
  PackedBuffer& operator=(const PackedBuffer& o) {
    if (this != &o) {
      Release();
      p_ = nullptr;
      size_ = 0;
      aux_ = o.aux_;
      Assign(o.view());
    }
    return *this;
  }
  PackedBuffer(PackedBuffer&& o) noexcept : p_(o.p_), size_(o.size_), aux_(o.aux_) {
    o.p_ = nullptr;
    o.size_ = 0;
    o.aux_ = 0;
  }
  PackedBuffer& operator=(PackedBuffer&& o) noexcept {
    if (this != &o) {
      Release();
      p_ = o.p_;
      size_ = o.size_;
      aux_ = o.aux_;
      o.p_ = nullptr;
      o.size_ = 0;
      o.aux_ = 0;
    }
    return *this;
  }
  ~PackedBuffer() {
    static_assert(offsetof(PackedBuffer, size_) == kSizeOffset);
    Release();
  }

  // Where the size lives: PackedOrTable (core/packed_or_table.h) marks its
  // table form with a size no buffer has, at this offset.
  static constexpr size_t kSizeOffset = 8;

  const char* data() const { return p_; }
  char* data() { return p_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::string_view view() const { return {p_, size_}; }
  uint32_t aux() const { return aux_ & ~kExactBit; }
  // REQUIRES: v < 2^31.
  void set_aux(uint32_t v) { aux_ = (aux_ & kExactBit) | v; }
  // Bytes allocated (MEMORY USAGE).
  size_t capacity() const { return p_ ? Capacity(size_) : 0; }

  bool exact() const { return aux_ & kExactBit; }
  // Moves the bytes to exact storage (see above); no-op when already there.
  void MakeExact() {
    if (exact()) return;
    char* q = p_ == nullptr ? nullptr : static_cast<char*>(ExactSizeSlabs::Global().Allocate(size_));
    if (q != nullptr) std::memcpy(q, p_, size_);
    delete[] p_;
    p_ = q;
    aux_ |= kExactBit;
  }

  void Assign(std::string_view s) { Replace(0, size_, s); }
  // Inserts s before byte pos (pos == size(): appends).
  void Insert(size_t pos, std::string_view s) { Replace(pos, 0, s); }
  void Erase(size_t pos, size_t len) { Replace(pos, len, {}); }
  // Replaces bytes [pos, pos + len) with s.
  void Replace(size_t pos, size_t len, std::string_view s) {
    const size_t tail = size_ - pos - len;
    const size_t new_size = size_ - len + s.size();
    if (p_ != nullptr && Capacity(new_size) == Capacity(size_)) {
      std::memmove(p_ + pos + s.size(), p_ + pos + len, tail);
    } else if (new_size == 0) {
      Release();
      p_ = nullptr;
    } else {
      char* q = exact() ? static_cast<char*>(ExactSizeSlabs::Global().Allocate(new_size)) : new char[RoundUp(new_size)];
      if (p_ != nullptr) {
        std::memcpy(q, p_, pos);
        std::memcpy(q + pos + s.size(), p_ + pos + len, tail);
      }
      Release();
      p_ = q;
    }
    if (!s.empty()) std::memcpy(p_ + pos, s.data(), s.size());
    size_ = static_cast<uint32_t>(new_size);
  }

  // Capacity for n bytes: multiples of 8 up to 64, then eight steps per
  // power of two (at most 1/8 unused), like the allocator's size classes.
  static size_t RoundUp(size_t n) {
    if (n <= 64) return (n + 7) & ~size_t{7};
    const int top = 63 - __builtin_clzll(n - 1);  // n - 1 < 2^(top+1)
    const size_t step = size_t{1} << (top - 3);
    return (n + step - 1) & ~(step - 1);
  }

 private:
  static constexpr uint32_t kExactBit = uint32_t{1} << 31;

  size_t Capacity(size_t n) const { return exact() ? ExactSizeSlabs::RoundUp(n) : RoundUp(n); }
  // Frees the bytes (p_ dangles until reassigned).
  void Release() {
    if (p_ == nullptr) return;
    if (exact()) {
      ExactSizeSlabs::Global().Free(p_, size_);
    } else {
      delete[] p_;
    }
  }

  char* p_ = nullptr;
  uint32_t size_ = 0;
  uint32_t aux_ = 0;
};
static_assert(sizeof(PackedBuffer) == 16);

}  // namespace ringkv::core

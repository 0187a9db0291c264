// PackedBuffer: the owned bytes of a packed encoding (a listpack, an intset),
// sized the way Redis sizes them -- to the byte, within one of eight steps
// per power of two -- rather than with std::string's doubling, whose slack
// would be most of the memory of the many small packed values a keyspace
// holds. 16 bytes; an empty buffer allocates nothing.
//
// The 4 bytes the layout leaves over are the owner's (aux()): a listpack
// keeps its element count there, so it stays 16 bytes too.
//
// Capacity is not stored: it is a function of the size (RoundUp), so a
// change that stays within the same step reallocates nothing, and one that
// leaves it moves the bytes to a buffer of the new step (as a realloc would).
//
// Thread-safety: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace ringkv::core {

class PackedBuffer {
 public:
  PackedBuffer() = default;
  explicit PackedBuffer(std::string_view bytes) { Assign(bytes); }
  PackedBuffer(const PackedBuffer& o) : aux_(o.aux_) { Assign(o.view()); }
  PackedBuffer& operator=(const PackedBuffer& o) {
    if (this != &o) {
      Assign(o.view());
      aux_ = o.aux_;
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
      delete[] p_;
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
    delete[] p_;
  }

  // Where the size lives: PackedOrTable (core/packed_or_table.h) marks its
  // table form with a size no buffer has, at this offset.
  static constexpr size_t kSizeOffset = 8;

  const char* data() const { return p_; }
  char* data() { return p_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::string_view view() const { return {p_, size_}; }
  uint32_t aux() const { return aux_; }
  void set_aux(uint32_t v) { aux_ = v; }
  // Bytes allocated (MEMORY USAGE).
  size_t capacity() const { return p_ ? RoundUp(size_) : 0; }

  void Assign(std::string_view s) { Replace(0, size_, s); }
  // Inserts s before byte pos (pos == size(): appends).
  void Insert(size_t pos, std::string_view s) { Replace(pos, 0, s); }
  void Erase(size_t pos, size_t len) { Replace(pos, len, {}); }
  // Replaces bytes [pos, pos + len) with s.
  void Replace(size_t pos, size_t len, std::string_view s) {
    const size_t tail = size_ - pos - len;
    const size_t new_size = size_ - len + s.size();
    if (p_ != nullptr && RoundUp(new_size) == RoundUp(size_)) {
      std::memmove(p_ + pos + s.size(), p_ + pos + len, tail);
    } else if (new_size == 0) {
      delete[] p_;
      p_ = nullptr;
    } else {
      char* q = new char[RoundUp(new_size)];
      if (p_ != nullptr) {
        std::memcpy(q, p_, pos);
        std::memcpy(q + pos + s.size(), p_ + pos + len, tail);
      }
      delete[] p_;
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
  char* p_ = nullptr;
  uint32_t size_ = 0;
  uint32_t aux_ = 0;
};
static_assert(sizeof(PackedBuffer) == 16);

}  // namespace ringkv::core

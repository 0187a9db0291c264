// Key: a keyspace key in 24 bytes, stored inline up to 23 bytes.
//
// std::string keeps only 15 bytes inline, so typical keys ("key:000000012345",
// "user:1000:session") live on the heap and every lookup pays a second cache
// miss to compare them. Key keeps up to 23 bytes in the hash slot itself.
//
// Layout: for inline keys, byte 23 holds (23 - size) so that a 23-byte key's
// terminator doubles as its length; heap keys set byte 23 to 0xFF and keep a
// pointer and size.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>


namespace ringkv::core {

// a[0, n) == b[0, n) for a short key, with overlapping word loads and no
// call to memcmp: a hash chain's compare on every lookup, where a call cost
// more than the compare. REQUIRES: n <= 24.
inline bool ShortBytesEqual(const char* a, const char* b, size_t n) {
  auto load8 = [](const char* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  };
  auto load4 = [](const char* p) {
    uint32_t w;
    std::memcpy(&w, p, 4);
    return w;
  };
  // Overlapping word loads, none past either end.
  if (n >= 8) {
    if (load8(a) != load8(b) || load8(a + n - 8) != load8(b + n - 8)) return false;
    return n <= 16 || load8(a + 8) == load8(b + 8);
  }
  if (n >= 4) return load4(a) == load4(b) && load4(a + n - 4) == load4(b + n - 4);
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

class Key {
 public:
  static constexpr size_t kInlineMax = 23;

  Key() { SetInline({}); }
  explicit Key(std::string_view s) {
    if (s.size() <= kInlineMax) {
      SetInline(s);
    } else {
      char* p = new char[s.size()];
      std::memcpy(p, s.data(), s.size());
      heap_.data = p;
      heap_.size = s.size();
      bytes_[23] = static_cast<char>(0xFF);
    }
  }
  Key(const Key& o) : Key(o.view()) {}
  Key(Key&& o) noexcept {
    std::memcpy(bytes_, o.bytes_, sizeof(bytes_));
    o.SetInline({});
  }
  Key& operator=(Key o) noexcept {
    Free();
    std::memcpy(bytes_, o.bytes_, sizeof(bytes_));
    o.SetInline({});
    return *this;
  }
  ~Key() { Free(); }

  std::string_view view() const {
    if (is_heap()) return {heap_.data, heap_.size};
    return {bytes_, static_cast<size_t>(kInlineMax - static_cast<uint8_t>(bytes_[23]))};
  }
  operator std::string_view() const { return view(); }  // NOLINT: keys compare as views
  // view() == k, without a call to memcmp for an inline key: a hash
  // chain's compare on every lookup (a call cost more than the compare).
  bool Equals(std::string_view k) const {
    if (is_heap()) return k.size() == heap_.size && std::memcmp(heap_.data, k.data(), k.size()) == 0;
    const size_t n = kInlineMax - static_cast<uint8_t>(bytes_[23]);
    return n == k.size() && ShortBytesEqual(bytes_, k.data(), n);
  }
  size_t heap_bytes() const { return is_heap() ? heap_.size : 0; }

 private:
  bool is_heap() const { return static_cast<uint8_t>(bytes_[23]) == 0xFF; }
  void SetInline(std::string_view s) {
    if (!s.empty()) std::memcpy(bytes_, s.data(), s.size());  // an empty view may have a null data()
    bytes_[23] = static_cast<char>(kInlineMax - s.size());
  }
  void Free() {
    if (is_heap()) delete[] heap_.data;
  }

  union {
    char bytes_[24];
    struct {
      const char* data;
      size_t size;
    } heap_;
  };
};
static_assert(sizeof(Key) == 24);

}  // namespace ringkv::core

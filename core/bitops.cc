#include "core/bitops.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace ringkv::core {
namespace {

inline uint64_t LoadWord(const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof(w));
  return w;
}
inline void StoreWord(uint8_t* p, uint64_t w) { std::memcpy(p, &w, sizeof(w)); }

// The word at p with byte 0 as its most significant byte: bit positions
// then count from the top, as the bitmap's do.
inline uint64_t LoadBigEndian(const uint8_t* p) {
  uint64_t w = LoadWord(p);
  if constexpr (std::endian::native == std::endian::little) w = __builtin_bswap64(w);
  return w;
}

inline bool BitAt(const uint8_t* p, uint64_t pos) { return (p[pos >> 3] >> (7 - (pos & 7))) & 1; }

}  // namespace

namespace {

// The word loop, compiled twice: for the POPCNT instruction, and for the
// baseline x86-64 target (where __builtin_popcountll is a bit-twiddling
// sequence several times slower). PopCount picks one at run time.
#define RINGKV_POPCOUNT_BODY                                                                                  \
  uint64_t count = 0;                                                                                         \
  size_t i = 0;                                                                                               \
  /* Four independent words per round keep the popcnt units busy. */                                          \
  for (; i + 32 <= n; i += 32) {                                                                              \
    count += __builtin_popcountll(LoadWord(p + i)) + __builtin_popcountll(LoadWord(p + i + 8)) +             \
             __builtin_popcountll(LoadWord(p + i + 16)) + __builtin_popcountll(LoadWord(p + i + 24));         \
  }                                                                                                           \
  for (; i + 8 <= n; i += 8) count += __builtin_popcountll(LoadWord(p + i));                                  \
  for (; i < n; ++i) count += __builtin_popcount(p[i]);                                                       \
  return count;

uint64_t PopCountPortable(const uint8_t* p, size_t n) { RINGKV_POPCOUNT_BODY }

#if defined(__x86_64__)
__attribute__((target("popcnt"))) uint64_t PopCountHardware(const uint8_t* p, size_t n) { RINGKV_POPCOUNT_BODY }
#endif

}  // namespace

uint64_t PopCount(const uint8_t* p, size_t n) {
#if defined(__x86_64__)
  static const bool has_popcnt = __builtin_cpu_supports("popcnt");
  if (has_popcnt) return PopCountHardware(p, n);
#endif
  return PopCountPortable(p, n);
}

uint64_t PopCountBits(const uint8_t* p, size_t n, uint64_t first_bit, uint64_t last_bit) {
  (void)n;
  const uint64_t first_byte = first_bit >> 3, last_byte = last_bit >> 3;
  // Bits of the edge bytes outside the range: the top (first_bit & 7) bits
  // of the first byte, the low 7 - (last_bit & 7) bits of the last one.
  const unsigned before = static_cast<unsigned>(0xFF00u >> (first_bit & 7)) & 0xFF;
  const unsigned after = (1u << (7 - (last_bit & 7))) - 1;
  uint64_t count = PopCount(p + first_byte, last_byte - first_byte + 1);
  count -= std::popcount(static_cast<unsigned>(p[first_byte]) & before);
  count -= std::popcount(static_cast<unsigned>(p[last_byte]) & after);
  // In a range within one byte both masks come from that byte; they never
  // overlap when first_bit <= last_bit.
  return count;
}

int64_t FindBit(const uint8_t* p, size_t n, bool bit, uint64_t first_bit, uint64_t last_bit) {
  (void)n;
  const uint64_t end = last_bit + 1;  // one past the range
  uint64_t pos = first_bit;
  for (; pos < end && (pos & 7) != 0; ++pos) {
    if (BitAt(p, pos) == bit) return static_cast<int64_t>(pos);
  }
  for (; pos + 64 <= end; pos += 64) {
    uint64_t w = LoadBigEndian(p + (pos >> 3));
    if (!bit) w = ~w;
    if (w != 0) return static_cast<int64_t>(pos + std::countl_zero(w));
  }
  for (; pos + 8 <= end; pos += 8) {
    uint8_t b = p[pos >> 3];
    if (!bit) b = static_cast<uint8_t>(~b);
    if (b != 0) return static_cast<int64_t>(pos + std::countl_zero(b));
  }
  for (; pos < end; ++pos) {
    if (BitAt(p, pos) == bit) return static_cast<int64_t>(pos);
  }
  return -1;
}

std::string BitOp(BitOpKind op, std::span<const std::string_view> sources) {
  size_t max_len = 0;
  for (std::string_view s : sources) max_len = std::max(max_len, s.size());
  std::string out(max_len, '\0');
  if (max_len == 0 || sources.empty()) return out;
  auto* r = reinterpret_cast<uint8_t*>(out.data());
  // A missing key is an empty view, maybe with a null data(): nothing to copy.
  if (!sources[0].empty()) std::memcpy(r, sources[0].data(), sources[0].size());
  if (op == BitOpKind::kNot) {
    size_t i = 0;
    for (; i + 8 <= max_len; i += 8) StoreWord(r + i, ~LoadWord(r + i));
    for (; i < max_len; ++i) r[i] = static_cast<uint8_t>(~r[i]);
    return out;
  }
  for (size_t k = 1; k < sources.size(); ++k) {
    const auto* s = reinterpret_cast<const uint8_t*>(sources[k].data());
    const size_t len = sources[k].size();
    size_t i = 0;
    switch (op) {
      case BitOpKind::kAnd:
        for (; i + 8 <= len; i += 8) StoreWord(r + i, LoadWord(r + i) & LoadWord(s + i));
        for (; i < len; ++i) r[i] &= s[i];
        // Past its end a source reads as zeros.
        std::memset(r + len, 0, max_len - len);
        break;
      case BitOpKind::kOr:
        for (; i + 8 <= len; i += 8) StoreWord(r + i, LoadWord(r + i) | LoadWord(s + i));
        for (; i < len; ++i) r[i] |= s[i];
        break;
      case BitOpKind::kXor:
        for (; i + 8 <= len; i += 8) StoreWord(r + i, LoadWord(r + i) ^ LoadWord(s + i));
        for (; i < len; ++i) r[i] ^= s[i];
        break;
      case BitOpKind::kNot:
        break;
    }
  }
  return out;
}

uint64_t GetUnsignedField(const uint8_t* p, uint64_t offset, unsigned bits) {
  uint64_t value = 0;
  for (unsigned j = 0; j < bits; ++j) value = (value << 1) | (BitAt(p, offset + j) ? 1 : 0);
  return value;
}

int64_t GetSignedField(const uint8_t* p, uint64_t offset, unsigned bits) {
  uint64_t u = GetUnsignedField(p, offset, bits);
  if (bits < 64 && (u & (uint64_t{1} << (bits - 1)))) u |= ~uint64_t{0} << bits;
  return static_cast<int64_t>(u);
}

void SetField(uint8_t* p, uint64_t offset, unsigned bits, uint64_t value) {
  for (unsigned j = 0; j < bits; ++j) {
    const uint64_t pos = offset + j;
    const uint8_t mask = static_cast<uint8_t>(1u << (7 - (pos & 7)));
    if ((value >> (bits - 1 - j)) & 1) {
      p[pos >> 3] |= mask;
    } else {
      p[pos >> 3] &= static_cast<uint8_t>(~mask);
    }
  }
}

bool UnsignedFieldOverflows(uint64_t value, int64_t incr, unsigned bits, Overflow how, uint64_t* result) {
  const uint64_t max = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
  const int64_t max_incr = static_cast<int64_t>(max - value);
  const int64_t min_incr = static_cast<int64_t>(0 - value);
  bool up;
  if (value > max || (incr > 0 && incr > max_incr)) {
    up = true;
  } else if (incr < 0 && incr < min_incr) {
    up = false;
  } else {
    return false;
  }
  if (how == Overflow::kWrap) {
    const uint64_t sum = value + static_cast<uint64_t>(incr);
    *result = bits == 64 ? sum : sum & ~(~uint64_t{0} << bits);
  } else if (how == Overflow::kSat) {
    *result = up ? max : 0;
  }
  return true;
}

bool SignedFieldOverflows(int64_t value, int64_t incr, unsigned bits, Overflow how, int64_t* result) {
  const int64_t max = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  const int64_t min = -max - 1;
  // May wrap; only read once `value` is known to be in range (as Redis).
  const int64_t max_incr = static_cast<int64_t>(static_cast<uint64_t>(max) - static_cast<uint64_t>(value));
  const int64_t min_incr = static_cast<int64_t>(static_cast<uint64_t>(min) - static_cast<uint64_t>(value));
  bool up;
  if (value > max || (bits != 64 && incr > max_incr) || (value >= 0 && incr > 0 && incr > max_incr)) {
    up = true;
  } else if (value < min || (bits != 64 && incr < min_incr) || (value < 0 && incr < 0 && incr < min_incr)) {
    up = false;
  } else {
    return false;
  }
  if (how == Overflow::kWrap) {
    uint64_t c = static_cast<uint64_t>(value) + static_cast<uint64_t>(incr);
    if (bits < 64) {
      const uint64_t high = ~uint64_t{0} << bits;
      c = (c & (uint64_t{1} << (bits - 1))) ? (c | high) : (c & ~high);
    }
    *result = static_cast<int64_t>(c);
  } else if (how == Overflow::kSat) {
    *result = up ? max : min;
  }
  return true;
}

}  // namespace ringkv::core

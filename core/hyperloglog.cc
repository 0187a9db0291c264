#include "core/hyperloglog.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace ringkv::core::hll {
namespace {

constexpr int kP = 14;
constexpr int kQ = 64 - kP;  // bits left for the zero run
constexpr uint64_t kIndexMask = kRegisters - 1;
constexpr uint8_t kRegisterMax = 63;
constexpr size_t kDenseBytes = kDenseSize - kHeaderSize;
constexpr int kValMaxValue = 32;
constexpr int kValMaxLen = 4;
constexpr int kZeroMaxLen = 64;
constexpr int kXZeroMaxLen = 16384;
constexpr double kAlphaInf = 0.721347520444481703680;  // 0.5 / ln(2)

// ---- sparse opcodes ----
inline bool IsZero(uint8_t b) { return (b & 0xc0) == 0; }
inline bool IsXZero(uint8_t b) { return (b & 0xc0) == 0x40; }
inline bool IsVal(uint8_t b) { return (b & 0x80) != 0; }
inline int ZeroLen(uint8_t b) { return (b & 0x3f) + 1; }
inline int XZeroLen(uint8_t b0, uint8_t b1) { return (((b0 & 0x3f) << 8) | b1) + 1; }
inline int ValValue(uint8_t b) { return ((b >> 2) & 0x1f) + 1; }
inline int ValLen(uint8_t b) { return (b & 0x3) + 1; }
inline uint8_t Val(int value, int len) { return static_cast<uint8_t>(((value - 1) << 2 | (len - 1)) | 0x80); }

// The sparse opcodes of s from the header on: visit(kind, run, value, pos)
// for each, kind 'z', 'Z' or 'v'. An XZERO cut short by the end reads its
// second byte as 0 (Redis reads the string's terminator there).
template <typename Visit>
void ForEachOpcode(std::string_view s, Visit visit) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  size_t i = kHeaderSize;
  while (i < s.size()) {
    const uint8_t b = p[i];
    if (IsZero(b)) {
      if (!visit('z', ZeroLen(b), 0)) return;
      i += 1;
    } else if (IsXZero(b)) {
      if (!visit('Z', XZeroLen(b, i + 1 < s.size() ? p[i + 1] : 0), 0)) return;
      i += 2;
    } else {
      if (!visit('v', ValLen(b), ValValue(b))) return;
      i += 1;
    }
  }
}

// Appends a run of `len` zero registers (1..16384) to seq.
uint8_t* PutZeros(uint8_t* seq, int len) {
  if (len > kZeroMaxLen) {
    const int l = len - 1;
    seq[0] = static_cast<uint8_t>((l >> 8) | 0x40);
    seq[1] = static_cast<uint8_t>(l & 0xff);
    return seq + 2;
  }
  seq[0] = static_cast<uint8_t>(len - 1);
  return seq + 1;
}

double Sigma(double x) {
  if (x == 1.) return INFINITY;
  double z_prev, y = 1, z = x;
  do {
    x *= x;
    z_prev = z;
    z += x * y;
    y += y;
  } while (z_prev != z);
  return z;
}

double Tau(double x) {
  if (x == 0. || x == 1.) return 0.;
  double z_prev, y = 1.0, z = 1 - x;
  do {
    x = std::sqrt(x);
    z_prev = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (z_prev != z);
  return z / 3;
}

// Ertl's estimator over a histogram of register values.
uint64_t Estimate(const int* histogram) {
  const double m = kRegisters;
  double z = m * Tau((m - histogram[kQ + 1]) / m);
  for (int j = kQ; j >= 1; --j) {
    z += histogram[j];
    z *= 0.5;
  }
  z += m * Sigma(histogram[0] / m);
  return static_cast<uint64_t>(std::llround(kAlphaInf * m * m / z));
}

// MurmurHash64A's body, inlined into PFADD's per-element path (a call per
// element showed in its profile).
[[gnu::always_inline]] inline uint64_t Murmur64A(const void* key, size_t len, uint64_t seed) {
  const uint64_t m = 0xc6a4a7935bd1e995ULL;
  const int r = 47;
  uint64_t h = seed ^ (static_cast<uint64_t>(len) * m);
  const auto* data = static_cast<const uint8_t*>(key);
  const uint8_t* end = data + (len - (len & 7));
  for (; data != end; data += 8) {
    uint64_t k;
    std::memcpy(&k, data, sizeof(k));
    if constexpr (std::endian::native == std::endian::big) k = __builtin_bswap64(k);
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  const size_t tail = len & 7;
  if (tail != 0) {
    for (size_t i = tail; i-- > 0;) h ^= static_cast<uint64_t>(data[i]) << (8 * i);
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

}  // namespace

uint64_t MurmurHash64A(const void* key, size_t len, uint64_t seed) { return Murmur64A(key, len, seed); }

uint8_t PatternLength(std::string_view element, uint32_t* index) {
  uint64_t hash = Murmur64A(element.data(), element.size(), 0xadc83b19ULL);
  *index = static_cast<uint32_t>(hash & kIndexMask);
  hash >>= kP;
  hash |= uint64_t{1} << kQ;  // the run ends by bit kQ at the latest
  return static_cast<uint8_t>(std::countr_zero(hash) + 1);
}

std::string NewSparse() {
  std::string s(kHeaderSize, '\0');
  std::memcpy(s.data(), "HYLL", 4);
  s[4] = static_cast<char>(kSparse);
  uint8_t seq[2];
  PutZeros(seq, kXZeroMaxLen);
  s.append(reinterpret_cast<const char*>(seq), 2);
  return s;
}

bool LooksValid(std::string_view s) {
  if (s.size() < kHeaderSize || s.substr(0, 4) != "HYLL") return false;
  const uint8_t enc = EncodingOf(s);
  if (enc > kSparse) return false;
  return enc != kDense || s.size() == kDenseSize;
}

bool CachedCardinality(std::string_view s, uint64_t* card) {
  const auto* c = reinterpret_cast<const uint8_t*>(s.data()) + 8;
  if (c[7] & 0x80) return false;
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | c[i];
  *card = v;
  return true;
}

void StoreCardinality(char* s, uint64_t card) {
  for (int i = 0; i < 8; ++i) s[8 + i] = static_cast<char>((card >> (8 * i)) & 0xff);
}

uint8_t DenseGet(const uint8_t* registers, uint32_t index) {
  const size_t byte = index * 6 / 8;
  const unsigned fb = (index * 6) & 7, fb8 = 8 - fb;
  const unsigned b0 = registers[byte];
  const unsigned b1 = byte + 1 < kDenseBytes ? registers[byte + 1] : 0;
  return static_cast<uint8_t>(((b0 >> fb) | (b1 << fb8)) & kRegisterMax);
}

void DenseSet(uint8_t* registers, uint32_t index, uint8_t value) {
  const size_t byte = index * 6 / 8;
  const unsigned fb = (index * 6) & 7, fb8 = 8 - fb;
  const unsigned v = value;
  registers[byte] = static_cast<uint8_t>((registers[byte] & ~(kRegisterMax << fb)) | (v << fb));
  if (byte + 1 < kDenseBytes) {
    registers[byte + 1] = static_cast<uint8_t>((registers[byte + 1] & ~(kRegisterMax >> fb8)) | (v >> fb8));
  }
}

bool DenseAdd(uint8_t* registers, std::string_view element) {
  uint32_t index;
  const uint8_t count = PatternLength(element, &index);
  if (count <= DenseGet(registers, index)) return false;
  DenseSet(registers, index, count);
  return true;
}

bool SparseToDense(std::string* s) {
  if (EncodingOf(*s) == kDense) return true;
  std::string dense(kDenseSize, '\0');
  std::memcpy(dense.data(), s->data(), kHeaderSize);
  dense[4] = static_cast<char>(kDense);
  auto* regs = reinterpret_cast<uint8_t*>(dense.data() + kHeaderSize);
  long idx = 0;
  bool overflow = false;
  ForEachOpcode(*s, [&](char kind, int run, int value) {
    if (kind != 'v') {
      idx += run;
      return true;
    }
    overflow = idx + run > kRegisters;
    if (overflow) return false;
    for (int i = 0; i < run; ++i) DenseSet(regs, static_cast<uint32_t>(idx++), static_cast<uint8_t>(value));
    return true;
  });
  if (overflow || idx != kRegisters) return false;
  *s = std::move(dense);
  return true;
}

namespace {

// Set() on a dense HLL.
int DenseRaise(std::string* s, uint32_t index, uint8_t value) {
  auto* regs = reinterpret_cast<uint8_t*>(s->data() + kHeaderSize);
  if (value <= DenseGet(regs, index)) return 0;
  DenseSet(regs, index, value);
  InvalidateCache(s->data());
  return 1;
}

int Promote(std::string* s, uint32_t index, uint8_t value) {
  if (!SparseToDense(s)) return -1;
  return DenseRaise(s, index, value);
}

// After an update at the opcode after `from`: merges adjacent VAL opcodes
// of one value while their runs fit one opcode, scanning up to 5 opcodes.
void MergeAdjacentVals(std::string* s, size_t from) {
  size_t p = from, end = s->size();
  auto at = [&](size_t i) { return static_cast<uint8_t>((*s)[i]); };
  for (int scan = 5; p < end && scan-- > 0;) {
    if (IsXZero(at(p))) {
      p += 2;
      continue;
    }
    if (IsZero(at(p))) {
      p += 1;
      continue;
    }
    if (p + 1 < end && IsVal(at(p + 1)) && ValValue(at(p)) == ValValue(at(p + 1))) {
      const int len = ValLen(at(p)) + ValLen(at(p + 1));
      if (len <= kValMaxLen) {
        (*s)[p + 1] = static_cast<char>(Val(ValValue(at(p)), len));
        s->erase(p, 1);
        --end;
        continue;  // try the merged run with the next one
      }
    }
    p += 1;
  }
}

}  // namespace

int Set(std::string* s, uint32_t index, uint8_t value, size_t sparse_max_bytes) {
  if (EncodingOf(*s) == kDense) return DenseRaise(s, index, value);
  if (value > kValMaxValue) return Promote(s, index, value);
  // Step 1: the opcode covering `index`.
  const auto at = [&](size_t i) { return i < s->size() ? static_cast<uint8_t>((*s)[i]) : uint8_t{0}; };
  const size_t end = s->size();
  size_t p = kHeaderSize, prev = 0;
  bool has_prev = false;
  long first = 0, span = 0;
  while (p < end) {
    size_t oplen = 1;
    const uint8_t b = at(p);
    if (IsZero(b)) {
      span = ZeroLen(b);
    } else if (IsVal(b)) {
      span = ValLen(b);
    } else {
      span = XZeroLen(b, at(p + 1));
      oplen = 2;
    }
    if (index <= first + span - 1) break;
    prev = p;
    has_prev = true;
    p += oplen;
    first += span;
  }
  if (span == 0 || p >= end) return -1;
  const uint8_t op = at(p);
  const bool is_zero = IsZero(op), is_xzero = IsXZero(op), is_val = IsVal(op);
  const long run = is_zero ? ZeroLen(op) : is_xzero ? XZeroLen(op, at(p + 1)) : ValLen(op);
  const size_t merge_from = has_prev ? prev : kHeaderSize;
  // Step 2: the trivial cases, updated in place.
  if (is_val) {
    if (ValValue(op) >= value) return 0;
    if (run == 1) {
      (*s)[p] = static_cast<char>(Val(value, 1));
      MergeAdjacentVals(s, merge_from);
      InvalidateCache(s->data());
      return 1;
    }
  }
  if (is_zero && run == 1) {
    (*s)[p] = static_cast<char>(Val(value, 1));
    MergeAdjacentVals(s, merge_from);
    InvalidateCache(s->data());
    return 1;
  }
  // Step 3: split the run into (before) VAL (after): at most 5 bytes.
  uint8_t seq[5], *n = seq;
  const long last = first + span - 1;
  if (is_zero || is_xzero) {
    if (index != first) n = PutZeros(n, static_cast<int>(index - first));
    *n++ = Val(value, 1);
    if (index != last) n = PutZeros(n, static_cast<int>(last - index));
  } else {
    const int current = ValValue(op);
    if (index != first) *n++ = Val(current, static_cast<int>(index - first));
    *n++ = Val(value, 1);
    if (index != last) *n++ = Val(current, static_cast<int>(last - index));
  }
  const size_t seq_len = static_cast<size_t>(n - seq);
  const size_t old_len = is_xzero ? 2 : 1;
  if (seq_len > old_len && s->size() + (seq_len - old_len) > sparse_max_bytes) return Promote(s, index, value);
  s->replace(p, std::min(old_len, end - p), reinterpret_cast<const char*>(seq), seq_len);
  MergeAdjacentVals(s, merge_from);
  InvalidateCache(s->data());
  return 1;
}

int Add(std::string* s, std::string_view element, size_t sparse_max_bytes) {
  uint32_t index;
  const uint8_t count = PatternLength(element, &index);
  return Set(s, index, count, sparse_max_bytes);
}

bool MergeInto(uint8_t* max, std::string_view s) {
  if (EncodingOf(s) == kDense) {
    const auto* regs = reinterpret_cast<const uint8_t*>(s.data() + kHeaderSize);
    for (uint32_t i = 0; i < kRegisters; ++i) max[i] = std::max(max[i], DenseGet(regs, i));
    return true;
  }
  long i = 0;
  bool overflow = false;
  ForEachOpcode(s, [&](char kind, int run, int value) {
    if (kind != 'v') {
      i += run;
      return true;
    }
    overflow = i + run > kRegisters;
    if (overflow) return false;
    for (int k = 0; k < run; ++k, ++i) max[i] = std::max<uint8_t>(max[i], static_cast<uint8_t>(value));
    return true;
  });
  return !overflow && i == kRegisters;
}

uint64_t Count(std::string_view s, bool* invalid) {
  int histogram[64] = {};
  if (EncodingOf(s) == kDense) {
    const auto* regs = reinterpret_cast<const uint8_t*>(s.data() + kHeaderSize);
    for (uint32_t i = 0; i < kRegisters; ++i) ++histogram[DenseGet(regs, i)];
  } else {
    long idx = 0;
    ForEachOpcode(s, [&](char kind, int run, int value) {
      idx += run;
      histogram[kind == 'v' ? value : 0] += run;
      return true;
    });
    if (idx != kRegisters) *invalid = true;
  }
  return Estimate(histogram);
}

uint64_t CountRegisters(const uint8_t* registers) {
  int histogram[64] = {};
  for (uint32_t i = 0; i < kRegisters; ++i) ++histogram[registers[i] & 63];
  return Estimate(histogram);
}

std::string DecodeSparse(std::string_view s) {
  std::string out;
  ForEachOpcode(s, [&](char kind, int run, int value) {
    if (!out.empty()) out += ' ';
    out += kind;
    out += ':';
    if (kind == 'v') {
      out += std::to_string(value);
      out += ',';
    }
    out += std::to_string(run);
    return true;
  });
  return out;
}

bool SelfTest(std::string* error) {
  // 1) Register packing: every register holds what was written, for random
  //    values, without disturbing its neighbours.
  std::mt19937_64 rng(0x5eed);
  std::string dense(kDenseBytes, '\0');
  auto* regs = reinterpret_cast<uint8_t*>(dense.data());
  std::vector<uint8_t> want(kRegisters);
  for (int round = 0; round < 100; ++round) {
    for (uint32_t i = 0; i < kRegisters; ++i) {
      want[i] = static_cast<uint8_t>(rng() & kRegisterMax);
      DenseSet(regs, i, want[i]);
    }
    for (uint32_t i = 0; i < kRegisters; ++i) {
      if (DenseGet(regs, i) != want[i]) {
        *error = "TESTFAILED Register error at register " + std::to_string(i);
        return false;
      }
    }
  }
  // 2) The estimate, sparse and dense alike, within 5 standard errors of
  //    the true cardinality as it grows.
  std::string sparse = NewSparse(), full = NewSparse();
  if (!SparseToDense(&full)) {
    *error = "TESTFAILED Corrupted HLL object detected";
    return false;
  }
  const double relerr = 1.04 / std::sqrt(static_cast<double>(kRegisters));
  uint64_t checkpoint = 1;
  for (uint64_t j = 1; j <= 1000000; ++j) {
    const uint64_t element = rng();
    const std::string_view e(reinterpret_cast<const char*>(&element), sizeof(element));
    Add(&sparse, e, 3000);
    Add(&full, e, 3000);
    if (j != checkpoint) continue;
    checkpoint = checkpoint * 10;
    bool invalid = false;
    const uint64_t a = Count(sparse, &invalid), b = Count(full, &invalid);
    if (invalid || a != b) {
      *error = "TESTFAILED sparse and dense estimates differ at cardinality " + std::to_string(j);
      return false;
    }
    const double max_error = j < 10 ? 1 : relerr * 5 * static_cast<double>(j);
    if (std::fabs(static_cast<double>(j) - static_cast<double>(a)) > max_error) {
      *error = "TESTFAILED Too big error. card:" + std::to_string(j) + " abserr:" +
               std::to_string(std::fabs(static_cast<double>(j) - static_cast<double>(a)));
      return false;
    }
  }
  return true;
}

}  // namespace ringkv::core::hll

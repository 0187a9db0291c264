// HyperLogLog in Redis's byte format, so that an HLL written by redis-server
// is read and extended here and the other way round (RDB, DUMP/RESTORE,
// replication carry it as a plain string).
//
// Layout (Redis's hyperloglog.c): a 16-byte header -- "HYLL", the encoding
// (0 dense, 1 sparse), 3 unused bytes, the cached cardinality as 8 bytes
// little endian whose top bit set means "stale" -- then the registers:
//   dense   16384 registers of 6 bits, packed from the low bits of each
//           byte up (12288 bytes);
//   sparse  run-length opcodes: ZERO 00xxxxxx (1..64 zero registers),
//           XZERO 01xxxxxx yyyyyyyy (1..16384 zero registers), VAL 1vvvvvxx
//           (1..4 registers of value 1..32).
// A sparse HLL turns dense when a register needs a value over 32 or its
// size would pass hll-sparse-max-bytes.
//
// Elements hash with MurmurHash64A (seed 0xadc83b19): the low 14 bits pick
// the register, the run of zeros after them (plus one) is its candidate
// value. The estimate is Ertl's improved estimator, as Redis 7.0 computes it.
//
// Corrupted input (a sparse HLL whose opcodes do not cover exactly 16384
// registers, ...) is reported, never read out of bounds.
//
// Thread-safety: none needed (functions on caller-owned bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ringkv::core::hll {

inline constexpr int kRegisters = 16384;
inline constexpr size_t kHeaderSize = 16;
inline constexpr size_t kDenseSize = kHeaderSize + (kRegisters * 6 + 7) / 8;
inline constexpr uint8_t kDense = 0;
inline constexpr uint8_t kSparse = 1;

// MurmurHash64A as Redis uses it (little-endian word reads).
uint64_t MurmurHash64A(const void* key, size_t len, uint64_t seed);

// The register an element lands in (*index) and its candidate value (1..51).
uint8_t PatternLength(std::string_view element, uint32_t* index);

// An empty HLL: sparse, one XZERO run of 16384 registers, cache valid at 0.
std::string NewSparse();

// Redis's isHLLObjectOrReply's checks on a string value: long enough for the
// header, the magic, a known encoding, a dense one of the exact size.
bool LooksValid(std::string_view s);
inline uint8_t EncodingOf(std::string_view s) { return static_cast<uint8_t>(s[4]); }

// The cached cardinality; false when it is marked stale.
bool CachedCardinality(std::string_view s, uint64_t* card);
void StoreCardinality(char* s, uint64_t card);
inline void InvalidateCache(char* s) { s[15] = static_cast<char>(static_cast<uint8_t>(s[15]) | 0x80); }

// Dense registers (the bytes after the header).
uint8_t DenseGet(const uint8_t* registers, uint32_t index);
void DenseSet(uint8_t* registers, uint32_t index, uint8_t value);

// PFADD of one element into a dense HLL's registers: true when a register
// grew.
bool DenseAdd(uint8_t* registers, std::string_view element);

// Raises register `index` to `value` in the HLL *s (sparse or dense),
// turning it dense when needed (see above). 1: changed, 0: it already held
// as much, -1: corrupted. The cache is invalidated when changed.
int Set(std::string* s, uint32_t index, uint8_t value, size_t sparse_max_bytes);
// Set() for an element.
int Add(std::string* s, std::string_view element, size_t sparse_max_bytes);

// Rewrites a sparse *s as dense (header copied, encoding changed); a dense
// one is left alone. False, leaving *s unchanged, when it is corrupted.
bool SparseToDense(std::string* s);

// max[i] = MAX(max[i], register i of s) for every register; false when s is
// corrupted. REQUIRES: LooksValid(s).
bool MergeInto(uint8_t* max, std::string_view s);

// The estimated cardinality of s (REQUIRES: LooksValid(s)); *invalid set
// when a sparse s is corrupted.
uint64_t Count(std::string_view s, bool* invalid);
// The estimate for kRegisters raw register values (PFCOUNT of many keys).
uint64_t CountRegisters(const uint8_t* registers);

// PFDEBUG DECODE's text of a sparse s: "z:N", "Z:N", "v:V,N" separated by
// spaces.
std::string DecodeSparse(std::string_view s);

// PFSELFTEST: checks the register packing and the estimator's error bound;
// on failure *error says what broke.
bool SelfTest(std::string* error);

}  // namespace ringkv::core::hll

// Bit algorithms on byte strings, as Redis's bitmap commands see them: bit 0
// is the most significant bit of byte 0 (SETBIT k 0 1 stores "\x80").
//
// Pure functions on borrowed bytes: no allocation except BitOp's result, no
// keyspace. Used by server/commands/bitmap_cmds.cc (SETBIT, GETBIT, BITCOUNT,
// BITPOS, BITOP, BITFIELD).
//
// Thread-safety: none needed (no state).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ringkv::core {

// The number of set bits in p[0..n), counted a 64-bit word at a time.
uint64_t PopCount(const uint8_t* p, size_t n);

// The set bits among bits [first_bit, last_bit] of p (REQUIRES:
// first_bit <= last_bit < n * 8).
uint64_t PopCountBits(const uint8_t* p, size_t n, uint64_t first_bit, uint64_t last_bit);

// The first bit equal to `bit` among bits [first_bit, last_bit] of p (an
// absolute bit position), or -1 when there is none (REQUIRES: first_bit <=
// last_bit < n * 8). Scans a word at a time.
int64_t FindBit(const uint8_t* p, size_t n, bool bit, uint64_t first_bit, uint64_t last_bit);

// BITOP's operations.
enum class BitOpKind : uint8_t { kAnd, kOr, kXor, kNot };

// BITOP over `sources` (missing keys given as empty strings): a result as
// long as the longest source, shorter ones read as zero bytes past their
// end. kNot takes one source. Works a word at a time.
std::string BitOp(BitOpKind op, std::span<const std::string_view> sources);

// ---- BITFIELD ----

// The unsigned integer of `bits` bits (1..64) at bit `offset` of p, most
// significant bit first (REQUIRES: the bits lie inside p).
uint64_t GetUnsignedField(const uint8_t* p, uint64_t offset, unsigned bits);
// As GetUnsignedField, sign-extended from bit `bits - 1`.
int64_t GetSignedField(const uint8_t* p, uint64_t offset, unsigned bits);
// Writes the low `bits` bits of value at bit `offset` (REQUIRES: inside p).
void SetField(uint8_t* p, uint64_t offset, unsigned bits, uint64_t value);

// BITFIELD's OVERFLOW behaviours.
enum class Overflow : uint8_t { kWrap, kSat, kFail };

// Whether value + incr leaves the range of an unsigned (u1..u63) or signed
// (i1..i64) field of `bits` bits; when it does and `how` is kWrap or kSat,
// *result is the wrapped or saturated value (untouched for kFail). Exactly
// Redis's checkUnsignedBitfieldOverflow / checkSignedBitfieldOverflow,
// including how a SET's out-of-range value (incr 0) is treated.
bool UnsignedFieldOverflows(uint64_t value, int64_t incr, unsigned bits, Overflow how, uint64_t* result);
bool SignedFieldOverflows(int64_t value, int64_t incr, unsigned bits, Overflow how, int64_t* result);

}  // namespace ringkv::core

// The constants of Redis's RDB format, version 10 (Redis 7.0): opcodes, value
// type bytes and special string encodings. Shared by the writer, the reader
// and DUMP/RESTORE.
#pragma once

#include <cstdint>
#include <string_view>

namespace ringkv::core::rdb {

inline constexpr int kVersion = 10;            // what ringkv writes
inline constexpr std::string_view kMagic = "REDIS";
// RESIZEDB size hints above this (16M keys, 128 MiB of buckets) are passed
// on capped: a hint is no reason to trust a length from the input.
inline constexpr uint64_t kMaxSizeHint = uint64_t{1} << 24;

// Opcodes that precede the records of an RDB file.
enum Opcode : uint8_t {
  kOpFunction2 = 245,  // Redis 7.0 function library
  kOpFunctionPreGa = 246,  // a 7.0 release candidate's format, refused as Redis does
  kOpModuleAux = 247,
  kOpIdle = 248,       // LRU idle seconds of the next key
  kOpFreq = 249,       // LFU counter of the next key
  kOpAux = 250,
  kOpResizeDb = 251,
  kOpExpireMs = 252,
  kOpExpireSec = 253,  // pre-3.0 files
  kOpSelectDb = 254,
  kOpEof = 255,
};

// Value type bytes (what follows a key).
enum ValueType : uint8_t {
  kTypeString = 0,
  kTypeList = 1,
  kTypeSet = 2,
  kTypeZset = 3,
  kTypeHash = 4,
  kTypeZset2 = 5,
  kTypeModule = 6,
  kTypeModule2 = 7,
  kTypeHashZipmap = 9,
  kTypeListZiplist = 10,
  kTypeSetIntset = 11,
  kTypeZsetZiplist = 12,
  kTypeHashZiplist = 13,
  kTypeListQuicklist = 14,
  kTypeStreamListpacks = 15,
  kTypeHashListpack = 16,
  kTypeZsetListpack = 17,
  kTypeListQuicklist2 = 18,
  kTypeStreamListpacks2 = 19,
};

// Special string encodings (length byte 0b11xxxxxx).
enum StringEnc : uint8_t { kEncInt8 = 0, kEncInt16 = 1, kEncInt32 = 2, kEncLzf = 3 };

// The Redis type name of a value type byte, for error messages.
std::string_view TypeName(uint8_t type);

}  // namespace ringkv::core::rdb

namespace ringkv::core {

// Access metadata saved with a key when the eviction policy uses it.
struct KeyMeta {
  int64_t idle_s = -1;  // LRU policies: seconds since last access
  int freq = -1;        // LFU policies: the 8-bit counter
};

}  // namespace ringkv::core

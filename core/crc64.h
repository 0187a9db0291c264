// CRC-64 as Redis computes it for RDB files and DUMP payloads: the "Jones"
// polynomial (0xad93d23594c935a9), reflected input and output, initial value
// 0, no final xor. Check value: Crc64(0, "123456789") == 0xe9c6d914c4b8d9ca.
//
// Thread-safety: the tables are built once (thread-safe static init); the
// function is pure.
#pragma once

#include <cstdint>
#include <string_view>

namespace ringkv::core {

// Extends `crc` over `data` (pass 0 to start). Slice-by-8: about 8 bytes per
// table round, so checksumming never dominates an RDB save or load.
uint64_t Crc64(uint64_t crc, std::string_view data);

}  // namespace ringkv::core

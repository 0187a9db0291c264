#include "core/crc64.h"

#include <array>
#include <cstring>

namespace ringkv::core {
namespace {

constexpr uint64_t kPolyReflected = 0x95ac9329ac4bc9b5ULL;  // 0xad93d23594c935a9 bit-reversed

struct Tables {
  std::array<std::array<uint64_t, 256>, 8> t;
  Tables() {
    for (uint64_t i = 0; i < 256; ++i) {
      uint64_t crc = i;
      for (int b = 0; b < 8; ++b) crc = (crc & 1) ? (crc >> 1) ^ kPolyReflected : crc >> 1;
      t[0][i] = crc;
    }
    for (int k = 1; k < 8; ++k) {
      for (int i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
    }
  }
};

const Tables& GetTables() {
  static const Tables tables;
  return tables;
}

}  // namespace

uint64_t Crc64(uint64_t crc, std::string_view data) {
  const auto& t = GetTables().t;
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);  // little-endian host (x86-64, aarch64)
    crc ^= word;
    crc = t[7][crc & 0xff] ^ t[6][(crc >> 8) & 0xff] ^ t[5][(crc >> 16) & 0xff] ^ t[4][(crc >> 24) & 0xff] ^
          t[3][(crc >> 32) & 0xff] ^ t[2][(crc >> 40) & 0xff] ^ t[1][(crc >> 48) & 0xff] ^ t[0][crc >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

}  // namespace ringkv::core

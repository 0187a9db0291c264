#include "core/key_slot.h"

#include <array>

namespace ringkv::core {
namespace {

constexpr std::array<uint16_t, 256> MakeTable() {
  std::array<uint16_t, 256> t{};
  for (int i = 0; i < 256; ++i) {
    uint16_t crc = static_cast<uint16_t>(i << 8);
    for (int b = 0; b < 8; ++b) crc = static_cast<uint16_t>((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
    t[i] = crc;
  }
  return t;
}

constexpr std::array<uint16_t, 256> kTable = MakeTable();

}  // namespace

uint16_t Crc16(std::string_view data) {
  uint16_t crc = 0;
  for (unsigned char c : data) crc = static_cast<uint16_t>((crc << 8) ^ kTable[((crc >> 8) ^ c) & 0xff]);
  return crc;
}

int KeyHashSlot(std::string_view key) {
  const size_t open = key.find('{');
  if (open != std::string_view::npos) {
    const size_t close = key.find('}', open + 1);
    // An empty tag ("{}") hashes the whole key, as Redis does.
    if (close != std::string_view::npos && close != open + 1) key = key.substr(open + 1, close - open - 1);
  }
  return Crc16(key) & (kClusterSlots - 1);
}

}  // namespace ringkv::core

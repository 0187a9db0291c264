// Cluster hash slots: CRC16 (XMODEM, as Redis's crc16.c) of a key, or of its
// hash tag, modulo 16384 -- Redis's keyHashSlot, so keys land in the slots a
// Redis cluster puts them in.
//
// Hash tag: the bytes between the first '{' and the first '}' after it, when
// there is at least one of them ("{user1000}.following" and
// "{user1000}.followers" share a slot; "{}x" and "x{" hash whole).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace ringkv::core {

inline constexpr int kClusterSlots = 16384;

// CRC16/XMODEM (poly 0x1021, init 0): Crc16("123456789") == 0x31C3.
uint16_t Crc16(std::string_view data);

// The slot of `key`, 0..16383.
int KeyHashSlot(std::string_view key);

}  // namespace ringkv::core

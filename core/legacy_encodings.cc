#include "core/legacy_encodings.h"

#include <cstdint>

#include "absl/status/status.h"
#include "core/strings.h"

namespace ringkv::core {
namespace {

uint64_t Le(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

uint64_t Be(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

absl::Status Bad(std::string_view what, size_t at) {
  return absl::DataLossError(StrCat("bad ", what, " at byte ", at));
}

}  // namespace

absl::StatusOr<std::vector<std::string>> DecodeZiplist(std::string_view bytes) {
  // <zlbytes u32> <zltail u32> <zllen u16> entry... 0xFF
  constexpr size_t kHeader = 10;
  if (bytes.size() < kHeader + 1) return Bad("ziplist header", 0);
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (Le(p, 4) != bytes.size()) return Bad("ziplist size", 0);
  if (p[bytes.size() - 1] != 0xFF) return Bad("ziplist terminator", bytes.size() - 1);
  const size_t end = bytes.size() - 1;
  std::vector<std::string> out;
  size_t pos = kHeader;
  while (pos < end) {
    // prevlen: 1 byte, or 0xFE and 4 bytes.
    pos += p[pos] == 0xFE ? 5 : 1;
    if (pos >= end) return Bad("ziplist entry", pos);
    const uint8_t enc = p[pos];
    auto need = [&](size_t n) { return n <= end - pos; };
    if ((enc >> 6) < 3) {  // a string
      size_t header, len;
      if ((enc >> 6) == 0) {
        header = 1;
        len = enc & 0x3F;
      } else if ((enc >> 6) == 1) {
        if (!need(2)) return Bad("ziplist string length", pos);
        header = 2;
        len = ((enc & 0x3F) << 8) | p[pos + 1];
      } else {
        if (!need(5)) return Bad("ziplist string length", pos);
        header = 5;
        len = Be(p + pos + 1, 4);
      }
      if (!need(header) || len > end - pos - header) return Bad("ziplist string", pos);
      out.emplace_back(bytes.substr(pos + header, len));
      pos += header + len;
      continue;
    }
    int64_t v;
    size_t size;
    switch (enc) {
      case 0xC0: size = 2; break;
      case 0xD0: size = 4; break;
      case 0xE0: size = 8; break;
      case 0xF0: size = 3; break;
      case 0xFE: size = 1; break;
      default:
        if (enc >= 0xF1 && enc <= 0xFD) {
          out.push_back(StrCat(static_cast<int>(enc & 0x0F) - 1));
          pos += 1;
          continue;
        }
        return Bad("ziplist encoding", pos);
    }
    if (!need(1 + size)) return Bad("ziplist integer", pos);
    const uint64_t raw = Le(p + pos + 1, size);
    switch (size) {
      case 1: v = static_cast<int8_t>(raw); break;
      case 2: v = static_cast<int16_t>(raw); break;
      case 3: v = static_cast<int32_t>(static_cast<uint32_t>(raw << 8)) >> 8; break;
      case 4: v = static_cast<int32_t>(raw); break;
      default: v = static_cast<int64_t>(raw); break;
    }
    out.push_back(StrCat(v));
    pos += 1 + size;
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> DecodeZipmap(std::string_view bytes) {
  // <zmlen u8> (<len>key <len><free>value <free bytes>)... 0xFF, where <len>
  // is one byte below 254, or 254 and a 4-byte little-endian length.
  if (bytes.empty()) return Bad("zipmap header", 0);
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t n = bytes.size();
  size_t pos = 1;
  std::vector<std::string> out;
  auto length = [&](size_t* len) {
    if (pos >= n) return false;
    if (p[pos] < 254) {
      *len = p[pos++];
      return true;
    }
    if (p[pos] == 255 || n - pos < 5) return false;
    *len = Le(p + pos + 1, 4);
    pos += 5;
    return true;
  };
  while (true) {
    if (pos >= n) return Bad("zipmap terminator", pos);
    if (p[pos] == 0xFF) break;
    size_t klen, vlen;
    if (!length(&klen) || klen > n - pos) return Bad("zipmap key", pos);
    out.emplace_back(bytes.substr(pos, klen));
    pos += klen;
    if (!length(&vlen) || pos >= n) return Bad("zipmap value", pos);
    const size_t free = p[pos++];
    if (vlen > n - pos || free > n - pos - vlen) return Bad("zipmap value", pos);
    out.emplace_back(bytes.substr(pos, vlen));
    pos += vlen + free;
  }
  if (pos + 1 != n) return Bad("zipmap trailing bytes", pos);
  return out;
}

}  // namespace ringkv::core

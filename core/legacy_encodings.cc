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
  // <zlbytes u32> <zltail u32> <zllen u16> entry... 0xFF, each entry
  // <prevlen> <encoding> <data>. Checked as Redis's deep
  // ziplistValidateIntegrity: sizes, each prevlen against the entry before,
  // the tail offset against the last entry, the count (unless 0xFFFF).
  constexpr size_t kHeader = 10;
  if (bytes.size() < kHeader + 1) return Bad("ziplist header", 0);
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (Le(p, 4) != bytes.size()) return Bad("ziplist size", 0);
  if (p[bytes.size() - 1] != 0xFF) return Bad("ziplist terminator", bytes.size() - 1);
  const size_t end = bytes.size() - 1;
  const uint64_t tail = Le(p + 4, 4);
  const uint64_t header_count = Le(p + 8, 2);
  if (tail > end) return Bad("ziplist tail offset", 4);
  std::vector<std::string> out;
  size_t pos = kHeader;
  size_t prev_entry = 0, prev_size = 0;  // the entry before: offset and size (0: none)
  while (pos < end && p[pos] != 0xFF) {
    const size_t entry = pos;
    // prevlen: 1 byte below 0xFE, else 0xFE and 4 bytes.
    const bool big_prevlen = p[pos] >= 0xFE;
    if (big_prevlen && end - pos < 5) return Bad("ziplist prevlen", pos);
    const uint64_t prevlen = big_prevlen ? Le(p + pos + 1, 4) : p[pos];
    if (prevlen != prev_size) return Bad("ziplist prevlen", pos);
    pos += big_prevlen ? 5 : 1;
    if (pos >= end) return Bad("ziplist entry", pos);
    prev_entry = entry;
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
      prev_size = pos - entry;
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
          prev_size = pos - entry;
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
    prev_size = pos - entry;
  }
  if (pos != end) return Bad("ziplist terminator", pos);  // an 0xFF before the end
  if (!out.empty() && tail != prev_entry) return Bad("ziplist tail offset", 4);
  if (header_count != 0xFFFF && header_count != out.size()) return Bad("ziplist entry count", 8);
  return out;
}

absl::StatusOr<std::vector<std::string>> DecodeZipmap(std::string_view bytes) {
  // <zmlen u8> (<len>key <len><free>value <free bytes>)... 0xFF, where <len>
  // is one byte below 254, or 254 and a 4-byte little-endian length. As
  // Redis's zipmapValidateIntegrity, an empty zipmap is malformed and zmlen
  // must be the count unless 254 (too many to count).
  if (bytes.size() < 2) return Bad("zipmap header", 0);
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
  if (out.empty()) return Bad("zipmap with no entries", 0);
  if (p[0] != 254 && p[0] != out.size() / 2) return Bad("zipmap entry count", 0);
  return out;
}

}  // namespace ringkv::core

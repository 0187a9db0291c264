// Test helper: bytes from a hex string ("0a0b" -> "\x0a\x0b"), for comparing
// encodings with bytes taken from redis-server.
#pragma once

#include <string>
#include <string_view>

namespace ringkv::core {

inline std::string Unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

}  // namespace ringkv::core

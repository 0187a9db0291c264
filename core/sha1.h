// SHA-1 (FIPS 180-1), for Redis-compatible dataset digests (DEBUG DIGEST).
// Not for security. None of the project's allowed dependencies exposes SHA-1
// (Abseil has no cryptographic hashes), hence this small implementation.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace ringkv::core {

class Sha1 {
 public:
  Sha1();
  void Update(const void* data, size_t len);
  void Update(std::string_view s) { Update(s.data(), s.size()); }
  std::array<uint8_t, 20> Final();

 private:
  void Block(const uint8_t* p);
  uint32_t h_[5];
  uint8_t buf_[64];
  uint64_t total_ = 0;
  size_t used_ = 0;
};

}  // namespace ringkv::core

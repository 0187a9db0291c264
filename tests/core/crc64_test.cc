#include "core/crc64.h"

#include <gtest/gtest.h>

#include <string>

namespace ringkv::core {
namespace {

TEST(Crc64, RedisCheckValue) {
  // The value Redis's crc64.c self-test expects.
  EXPECT_EQ(Crc64(0, "123456789"), 0xe9c6d914c4b8d9caULL);
}

TEST(Crc64, EmptyInputKeepsTheCrc) {
  EXPECT_EQ(Crc64(0, ""), 0u);
  EXPECT_EQ(Crc64(42, ""), 42u);
}

TEST(Crc64, IncrementalEqualsWhole) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(static_cast<char>(i * 7 + 3));
  const uint64_t whole = Crc64(0, data);
  for (size_t cut : {1u, 7u, 8u, 9u, 500u, 999u}) {
    uint64_t crc = Crc64(0, std::string_view(data).substr(0, cut));
    crc = Crc64(crc, std::string_view(data).substr(cut));
    EXPECT_EQ(crc, whole) << "cut at " << cut;
  }
}

TEST(Crc64, MatchesARedisDumpPayload) {
  // DUMP of the value "1" from redis-server 7.0.15: type, int8 1, version 10,
  // then the CRC of those bytes, little endian.
  const std::string body("\x00\xc0\x01\x0a\x00", 5);
  const std::string crc_le("\x26\x78\xe7\xb6\xd1\x01\x11\xfc", 8);
  uint64_t expected = 0;
  for (int i = 7; i >= 0; --i) expected = (expected << 8) | static_cast<unsigned char>(crc_le[i]);
  EXPECT_EQ(Crc64(0, body), expected);
}

}  // namespace
}  // namespace ringkv::core

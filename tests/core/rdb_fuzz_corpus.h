// The RDB fuzzer's corpus (tests/core/rdb_fuzz_test.cc): every type and
// encoding ringkv reads, as value bodies, DUMP payloads and whole RDB files,
// including the Redis 2.6-6.2 ziplist and zipmap forms, built by small
// encoders here (the project writes none of them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ringkv::core::fuzz {

// One value as its RDB type byte and body (what follows the type byte).
struct Encoded {
  std::string name;
  uint8_t type;
  std::string body;
};

// Appends v's low `bytes` bytes, little-endian.
void PutLe(uint64_t v, int bytes, std::string* out);
// Every value of the corpus.
std::vector<Encoded> BuildValues();
// A value as a DUMP payload (type, body, RDB version, CRC-64).
std::string Payload(const Encoded& e);
// Whole RDB files holding the values over several databases, with AUX
// fields, RESIZEDB, expiries, IDLE and FREQ records, and an old version.
std::vector<std::string> BuildFiles(const std::vector<Encoded>& values);

}  // namespace ringkv::core::fuzz

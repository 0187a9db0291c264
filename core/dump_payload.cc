#include "core/dump_payload.h"

#include "absl/status/status.h"
#include "core/crc64.h"
#include "core/rdb_format.h"
#include "core/rdb_reader.h"
#include "core/rdb_writer.h"
#include "core/strings.h"

namespace ringkv::core {
namespace {

// The 8-byte little-endian CRC-64 that ends a DUMP payload.
void AppendCrcTrailer(uint64_t v, std::string* out) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

}  // namespace

std::string DumpPayload(const Value& value, bool compress) {
  std::string out;
  RdbAppendValue(value, compress, &out);
  out.push_back(static_cast<char>(rdb::kVersion & 0xFF));
  out.push_back(static_cast<char>((rdb::kVersion >> 8) & 0xFF));
  AppendCrcTrailer(Crc64(0, out), &out);
  return out;
}

absl::StatusOr<Value> ParseDumpPayload(std::string_view payload, const CollectionLimits& limits,
                                       std::string* reason, uint64_t* packed_blobs) {
  // type byte + at least one byte of value + 2 version bytes + 8 CRC bytes.
  if (payload.size() < 10) return absl::InvalidArgumentError("DUMP payload version or checksum are wrong");
  const auto* p = reinterpret_cast<const unsigned char*>(payload.data());
  const size_t footer = payload.size() - 10;
  const int version = p[footer] | (p[footer + 1] << 8);
  uint64_t crc = 0;
  for (int i = 7; i >= 0; --i) crc = (crc << 8) | p[footer + 2 + i];
  // Unlike an RDB file, a DUMP payload's CRC is always checked (as Redis).
  if (version > rdb::kVersion || (!SkipChecksumValidation() && Crc64(0, payload.substr(0, footer + 2)) != crc)) {
    return absl::InvalidArgumentError("DUMP payload version or checksum are wrong");
  }
  MemorySource src(payload.substr(0, footer));
  absl::StatusOr<Value> value = ReadRdbValue(&src, limits, packed_blobs);
  if (!value.ok() || src.remaining() != 0) {
    if (reason != nullptr) {
      *reason = value.ok() ? StrCat(src.remaining(), " bytes after the value") : std::string(value.status().message());
    }
    return absl::InvalidArgumentError("Bad data format");
  }
  return value;
}

}  // namespace ringkv::core

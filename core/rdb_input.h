// RdbInput: the low-level reader shared by the RDB loader and the value
// decoders (core/rdb_reader.cc, core/rdb_collections.cc): lengths, strings
// in every RDB encoding, a running CRC-64, and errors that name the byte
// offset. Internal to core/.
//
// Thread-safety: none; one reader per input.
#pragma once

#include <liblzf/lzf.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/crc64.h"
#include "core/rdb_format.h"
#include "core/rdb_reader.h"
#include "core/strings.h"

namespace ringkv::core {

// Reads through a source, keeping the running CRC-64 and naming offsets in
// errors.
class RdbInput {
 public:
  explicit RdbInput(ByteSource* src) : src_(src) {}

  absl::Status Error(std::string_view what) const {
    return absl::DataLossError(StrCat(what, " at offset ", src_->offset()));
  }
  absl::Status ShortRead() const { return Error("Short read or unexpected end of file"); }
  // Packed blobs (listpacks, ziplists, zipmaps, intsets) validated so far:
  // what Redis counts as dump_payload_sanitizations.
  void CountPackedBlob() { ++packed_blobs_; }
  uint64_t packed_blobs() const { return packed_blobs_; }

  bool Bytes(char* dst, size_t n) {
    if (!src_->Read(dst, n)) return false;
    crc_ = Crc64(crc_, std::string_view(dst, n));
    return true;
  }
  bool Byte(uint8_t* b) { return Bytes(reinterpret_cast<char*>(b), 1); }

  // A length field; *special says it was an encoding marker (11xxxxxx).
  absl::Status Length(uint64_t* len, bool* special = nullptr) {
    uint8_t b;
    if (!Byte(&b)) return ShortRead();
    if (special) *special = false;
    switch (b >> 6) {
      case 0:
        *len = b & 0x3F;
        return absl::OkStatus();
      case 1: {
        uint8_t b2;
        if (!Byte(&b2)) return ShortRead();
        *len = (static_cast<uint64_t>(b & 0x3F) << 8) | b2;
        return absl::OkStatus();
      }
      case 2: {
        int n = b == 0x80 ? 4 : b == 0x81 ? 8 : 0;
        if (n == 0) return Error(absl::StrFormat("Unknown length encoding 0x%02x", b));
        unsigned char raw[8];
        if (!Bytes(reinterpret_cast<char*>(raw), n)) return ShortRead();
        uint64_t v = 0;
        for (int i = 0; i < n; ++i) v = (v << 8) | raw[i];  // big endian
        *len = v;
        return absl::OkStatus();
      }
      default:
        if (special == nullptr) return Error("Unexpected string encoding where a length was expected");
        *special = true;
        *len = b & 0x3F;
        return absl::OkStatus();
    }
  }

  absl::Status String(std::string* out) {
    uint64_t len;
    bool special;
    if (absl::Status s = Length(&len, &special); !s.ok()) return s;
    if (special) {
      switch (len) {
        case rdb::kEncInt8:
        case rdb::kEncInt16:
        case rdb::kEncInt32: {
          const int n = len == rdb::kEncInt8 ? 1 : len == rdb::kEncInt16 ? 2 : 4;
          unsigned char raw[4];
          if (!Bytes(reinterpret_cast<char*>(raw), n)) return ShortRead();
          uint32_t u = 0;
          for (int i = n - 1; i >= 0; --i) u = (u << 8) | raw[i];  // little endian
          int64_t v = n == 1 ? static_cast<int8_t>(u) : n == 2 ? static_cast<int16_t>(u) : static_cast<int32_t>(u);
          *out = StrCat(v);
          return absl::OkStatus();
        }
        case rdb::kEncLzf:
          return Lzf(out);
        default:
          return Error(StrCat("Unknown string encoding ", len));
      }
    }
    return Raw(len, out);
  }

  // len bytes, read in pieces so a corrupt length cannot make us allocate
  // more than the input really holds.
  absl::Status Raw(uint64_t len, std::string* out) {
    out->clear();
    constexpr uint64_t kPiece = 16 << 20;
    while (out->size() < len) {
      size_t take = static_cast<size_t>(std::min<uint64_t>(kPiece, len - out->size()));
      size_t at = out->size();
      out->resize(at + take);
      if (!Bytes(out->data() + at, take)) return ShortRead();
    }
    return absl::OkStatus();
  }

  absl::Status Lzf(std::string* out) {
    uint64_t clen, len;
    if (absl::Status s = Length(&clen); !s.ok()) return s;
    if (absl::Status s = Length(&len); !s.ok()) return s;
    std::string compressed;
    if (absl::Status s = Raw(clen, &compressed); !s.ok()) return s;
    // LZF expands at most 88 times (a 3-byte back reference yields 264
    // bytes): a longer declared length is corrupt, and refusing it keeps a
    // few bytes of input from making us allocate gigabytes.
    if (len > (1ULL << 32) || len == 0 || len / kLzfMaxRatio > clen) return Error("Invalid LZF length");
    out->resize(static_cast<size_t>(len));
    unsigned int got = lzf_decompress(compressed.data(), static_cast<unsigned int>(clen), out->data(),
                                      static_cast<unsigned int>(len));
    if (got != len) return Error("Invalid LZF compressed string");
    return absl::OkStatus();
  }

  static constexpr uint64_t kLzfMaxRatio = 88;

  uint64_t crc() const { return crc_; }
  ByteSource* src() { return src_; }

 private:
  uint64_t packed_blobs_ = 0;
  ByteSource* src_;
  uint64_t crc_ = 0;
};

// Decodes a value of RDB type `type` (string or collection, any encoding
// Redis 7.0 loads). Defined in core/rdb_collections.cc.
absl::StatusOr<Value> ReadRdbValueOfType(RdbInput& in, uint8_t type, const CollectionLimits& limits);
// True for ReadRdbValueOfType's error for an empty collection: an RDB file
// loader skips such a key (as Redis does); a DUMP payload is refused.
bool IsEmptyKeyError(const absl::Status& status);

}  // namespace ringkv::core

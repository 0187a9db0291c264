// DUMP / RESTORE payloads: one value in its RDB encoding, followed by the RDB
// version (2 bytes, little endian) and a CRC-64 of everything before it, the
// format Redis 7.0 exchanges with DUMP, RESTORE and MIGRATE.
//
// Thread-safety: none needed; pure functions.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/collection_limits.h"
#include "core/value.h"

namespace ringkv::core {

// DUMP's serialization of one value.
std::string DumpPayload(const Value& value, bool compress);
// Checks a DUMP payload's version and checksum (unless SkipChecksumValidation)
// and decodes its value, validated deeply whatever sanitize-dump-payload
// says. Errors
// carry Redis's RESTORE error text ("DUMP payload version or checksum are
// wrong", "Bad data format").
// `reason` (optional) receives why a payload is "Bad data format" (Redis's
// "... integrity check failed" and the like), for the log.
// `packed_blobs` (optional) receives the number of packed blobs validated
// (see ReadRdbValue).
absl::StatusOr<Value> ParseDumpPayload(std::string_view payload, const CollectionLimits& limits = {},
                                       std::string* reason = nullptr, uint64_t* packed_blobs = nullptr);

}  // namespace ringkv::core

// RDB string encoding (Redis 7.0, RDB version 10): how a string value is
// written in an RDB file -- integer encodings for short decimal strings, LZF
// compression for longer ones when rdbcompression is on, raw otherwise.
// Used by the RDB writer, DUMP and DEBUG OBJECT (serializedlength).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/string_value.h"

namespace ringkv::core {

// Bytes of an RDB length field for n (1, 2, 5 or 9).
size_t RdbLengthSize(uint64_t n);
// Appends the RDB length field for n (6-bit, 14-bit, 32-bit or 64-bit form).
void RdbAppendLength(uint64_t n, std::string* out);
// Appends the RDB encoding of a string to *out; returns the bytes appended.
size_t RdbEncodeString(std::string_view s, bool compress, std::string* out);
// The RDB encoding size of a stored value (int-encoded values as integers).
size_t RdbStringSize(const StringValue& v, bool compress);

}  // namespace ringkv::core

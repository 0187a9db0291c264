// Decoders for the packed encodings of RDB files older than Redis 7.0:
// ziplists (hashes, sorted sets and list nodes in Redis 2.6 to 6.2) and
// zipmaps (hashes before Redis 2.6). ringkv never writes them; the loader
// turns them into listpacks, as Redis 7.0 does.
//
// Contract: the input may be hostile. Every length and offset is checked
// against the buffer; a malformed blob gives an error, never a read outside.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace ringkv::core {

// The elements of a ziplist, in order (integers as decimal text).
absl::StatusOr<std::vector<std::string>> DecodeZiplist(std::string_view bytes);
// A zipmap's key/value pairs, flattened (key, value, key, value, ...).
absl::StatusOr<std::vector<std::string>> DecodeZipmap(std::string_view bytes);

}  // namespace ringkv::core

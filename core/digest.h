// Dataset digests with Redis's algorithm (DEBUG DIGEST, DEBUG DIGEST-VALUE),
// so that the same data gives the same 40-hex digest on ringkv and Redis:
// replicas and migrations can be verified across the two.
//
// Per key: digest = mix(key) then, for the value, mix(type) and the type's
// content mix; "!!expire!!" is xored in when the key has a TTL. Keys are
// combined with XOR (order-independent); each database mixes its index first.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "core/keyspace.h"

namespace ringkv::core {

using Digest = std::array<uint8_t, 20>;

// The digest of one key's value (DEBUG DIGEST-VALUE); all zeros when missing.
Digest ValueDigest(Database& db, std::string_view key, int64_t now_ms);
// The digest of every database (DEBUG DIGEST); all zeros when empty.
Digest DatasetDigest(Keyspace& ks, int64_t now_ms);
std::string DigestHex(const Digest& d);

}  // namespace ringkv::core

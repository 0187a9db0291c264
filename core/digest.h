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
// A key whose deadline passed still counts until it is deleted, as in Redis
// (a debug command sees the stored data: nothing is expired here).
Digest ValueDigest(Database& db, std::string_view key);
// The digest of every database (DEBUG DIGEST), expired-but-stored keys
// included as in Redis; all zeros when empty.
Digest DatasetDigest(Keyspace& ks);
std::string DigestHex(const Digest& d);

}  // namespace ringkv::core

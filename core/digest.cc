#include "core/digest.h"

#include <arpa/inet.h>

#include "core/sha1.h"

namespace ringkv::core {
namespace {

// xor SHA1(data) into digest.
void XorDigest(Digest& digest, const void* data, size_t len) {
  Sha1 s;
  s.Update(data, len);
  Digest h = s.Final();
  for (int i = 0; i < 20; ++i) digest[i] ^= h[i];
}

// xor SHA1(data) into digest, then digest = SHA1(digest): order-dependent.
void MixDigest(Digest& digest, const void* data, size_t len) {
  XorDigest(digest, data, len);
  Sha1 s;
  s.Update(digest.data(), digest.size());
  digest = s.Final();
}

void XorValueDigest(Digest& digest, const Entry& e, bool has_ttl) {
  const uint32_t type = htonl(0);  // OBJ_STRING
  MixDigest(digest, &type, sizeof(type));
  char scratch[24];
  std::string_view v = e.value.View(scratch);
  MixDigest(digest, v.data(), v.size());
  if (has_ttl) XorDigest(digest, "!!expire!!", 10);
}

}  // namespace

Digest ValueDigest(Database& db, std::string_view key, int64_t now_ms) {
  Digest d{};
  if (Entry* e = db.Find(key, now_ms)) XorValueDigest(d, *e, db.GetExpire(e) >= 0);
  return d;
}

Digest DatasetDigest(Keyspace& ks, int64_t now_ms) {
  Digest final{};
  for (int i = 0; i < ks.count(); ++i) {
    Database& db = ks.db(i);
    if (db.size() == 0) continue;
    const uint32_t index = htonl(static_cast<uint32_t>(i));
    MixDigest(final, &index, sizeof(index));
    db.ForEach(now_ms, [&](std::string_view key, const Entry& e) {
      Digest d{};
      MixDigest(d, key.data(), key.size());
      XorValueDigest(d, e, db.GetExpire(&e) >= 0);
      XorDigest(final, d.data(), d.size());  // xor in SHA1(key digest), as Redis
    });
  }
  return final;
}

std::string DigestHex(const Digest& d) {
  static const char kHex[] = "0123456789abcdef";
  std::string out(40, '0');
  for (int i = 0; i < 20; ++i) {
    out[2 * i] = kHex[d[i] >> 4];
    out[2 * i + 1] = kHex[d[i] & 15];
  }
  return out;
}

}  // namespace ringkv::core

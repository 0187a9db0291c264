#include "core/digest.h"

#include <arpa/inet.h>

#include <cstdio>

#include "core/hash_value.h"
#include "core/list_value.h"
#include "core/set_value.h"
#include "core/sha1.h"
#include "core/stream_value.h"
#include "core/zset_value.h"

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

// A field/value or member/score pair's digest, xored into `digest` (order
// independent, as Redis digests hashes and sorted sets).
void XorPairDigest(Digest& digest, std::string_view a, std::string_view b) {
  Digest pair{};
  MixDigest(pair, a.data(), a.size());
  MixDigest(pair, b.data(), b.size());
  XorDigest(digest, pair.data(), pair.size());
}

void XorValueDigest(Digest& digest, const Entry& e, bool has_ttl) {
  const uint32_t type = htonl(static_cast<uint32_t>(e.value.type()));
  MixDigest(digest, &type, sizeof(type));
  switch (e.value.type()) {
    case ValueType::kString: {
      char scratch[24];
      std::string_view v = e.value.str().View(scratch);
      MixDigest(digest, v.data(), v.size());
      break;
    }
    case ValueType::kSet:
      e.value.set().ForEach([&](std::string_view m) { XorDigest(digest, m.data(), m.size()); });
      break;
    case ValueType::kHash:
      e.value.hash().ForEach([&](std::string_view f, std::string_view v) { XorPairDigest(digest, f, v); });
      break;
    case ValueType::kZSet: {
      const ZSetValue& z = e.value.zset();
      z.Walk(0, false, [&](std::string_view m, double score) {
        char buf[64];
        const int n = std::snprintf(buf, sizeof(buf), "%.17g", score);
        XorPairDigest(digest, m, std::string_view(buf, static_cast<size_t>(n)));
        return true;
      });
      break;
    }
    case ValueType::kStream:
      // Each entry as "<ms>.<seq>" then its fields and values, as Redis mixes it.
      e.value.stream().Range(StreamId::Min(), StreamId::Max(), false, [&](StreamId id, FieldValues fv) {
        const std::string text = std::to_string(id.ms) + "." + std::to_string(id.seq);
        MixDigest(digest, text.data(), text.size());
        for (std::string_view s : fv) MixDigest(digest, s.data(), s.size());
        return true;
      });
      break;
    case ValueType::kList:
      e.value.list().Walk(0, false, [&](std::string_view v) {
        MixDigest(digest, v.data(), v.size());
        return true;
      });
      break;
  }
  if (has_ttl) XorDigest(digest, "!!expire!!", 10);
}

}  // namespace

Digest ValueDigest(Database& db, std::string_view key) {
  Digest d{};
  if (const Entry* e = db.Peek(key)) XorValueDigest(d, *e, db.GetExpire(e) >= 0);
  return d;
}

Digest DatasetDigest(Keyspace& ks) {
  Digest final{};
  for (int i = 0; i < ks.count(); ++i) {
    Database& db = ks.db(i);
    if (db.size() == 0) continue;
    const uint32_t index = htonl(static_cast<uint32_t>(i));
    MixDigest(final, &index, sizeof(index));
    db.ForEachIncludingExpired([&](std::string_view key, const Entry& e) {
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

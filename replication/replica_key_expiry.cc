#include "replication/replica_key_expiry.h"

#include <vector>

namespace ringkv::repl {

void ReplicaKeyExpiry::RememberIfVolatile(core::Database& db, std::string_view key) {
  const core::Entry* e = db.Peek(key);
  if (e != nullptr && db.GetExpire(e) >= 0) keys_.emplace(db.index(), std::string(key));
}

int ReplicaKeyExpiry::ExpireDue(core::Keyspace& ks, int64_t now_ms,
                                const std::function<void(int, std::string_view)>& on_expired) {
  std::vector<std::pair<int, std::string>> done;
  int deleted = 0;
  for (const auto& [index, key] : keys_) {
    core::Database& db = ks.db(index);
    const core::Entry* e = db.Peek(key);
    const int64_t when = e != nullptr ? db.GetExpire(e) : -1;
    if (when < 0) {  // deleted, or made persistent, meanwhile
      done.emplace_back(index, key);
      continue;
    }
    if (when > now_ms) continue;
    on_expired(index, key);
    db.Erase(key);
    ++ks.stats().expired_keys;
    ++deleted;
    done.emplace_back(index, key);
  }
  for (const auto& k : done) keys_.erase(k);
  return deleted;
}

}  // namespace ringkv::repl

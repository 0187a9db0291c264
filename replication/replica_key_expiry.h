// ReplicaKeyExpiry: the keys a writable replica's own clients gave a time to
// live (Redis's slaveKeysWithExpire).
//
// A replica never expires its primary's keys: they stay until the primary's
// DEL arrives (core::ExpiryMode::kHide). Keys that the replica's own clients
// wrote (replica-read-only no) have no primary to delete them, so they are
// remembered here and deleted by the replica itself once their deadline
// passes. Created on the first such write: a read-only replica allocates
// nothing.
//
// Thread-safety: none; main thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "core/keyspace.h"

namespace ringkv::repl {

class ReplicaKeyExpiry {
 public:
  // Remembers `key` of database `db` if it now has a deadline.
  void RememberIfVolatile(core::Database& db, std::string_view key);
  // Deletes the remembered keys whose deadline is at or before now_ms,
  // calling on_expired(db, key) before each goes; forgets keys that are gone
  // or no longer have a deadline. Returns how many it deleted.
  int ExpireDue(core::Keyspace& ks, int64_t now_ms, const std::function<void(int, std::string_view)>& on_expired);
  size_t size() const { return keys_.size(); }

 private:
  absl::flat_hash_set<std::pair<int, std::string>> keys_;
};

}  // namespace ringkv::repl

// OpArgs: what an Op* function works on -- one database, the keyspace's
// limits and random generator, the command's clock -- and where it reports
// what it changed (server/effects.h).
//
// The families split each command in two: Op* functions (<family>_ops.h)
// look keys up through core/typed_lookup.h, change the keyspace, report the
// changes and return an OpResult; they never see a client or a reply. Cmd*
// handlers (<family>_cmds.cc) parse arguments, call the Op* functions and
// write the reply. Unit tests call the Op* functions on a core::Keyspace
// with an unbound Effects (tests/server/*_ops_test.cc).
//
// REQUIRES: main thread.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/keyspace.h"
#include "core/typed_lookup.h"
#include "server/effects.h"
#include "server/keyspace_events.h"

namespace ringkv::server {

struct OpArgs {
  core::Database& db;
  core::Keyspace& keyspace;  // encoding limits, the random generator
  int64_t now_ms;
  Effects& effects;

  const core::CollectionLimits& limits() const { return keyspace.limits(); }
  // `key` (in this database) changed: event `event` of class `type`,
  // `dirty` changes counted.
  void Changed(uint32_t type, std::string_view event, std::string_view key, uint64_t dirty) const {
    effects.Changed(db.index(), type, event, key, dirty);
  }
  // Changed's halves, and the reply's place among them (server/effects.h).
  void Notified(uint32_t type, std::string_view event, std::string_view key, uint64_t dirty) const {
    effects.Notified(db.index(), type, event, key, dirty);
  }
  void Signaled(std::string_view key) const { effects.Signaled(db.index(), key); }
  void KeyReady(std::string_view key) const { effects.KeyReady(db.index(), key); }
  void ReplyPoint() const { effects.ReplyPoint(); }
};

// Erases `key` once the collection it holds is empty, reporting "del"
// (the event only: the change that emptied it signals the key, before or
// after, as each command's Redis code does); true when it did.
template <typename T>
bool DeleteIfEmpty(const OpArgs& op, std::string_view key, const T& value) {
  if (!core::DeleteIfEmpty(op.db, key, value)) return false;
  op.Notified(notify::kGeneric, "del", key, 0);
  return true;
}

// LMPOP, BLPOP, ZMPOP, BZPOPMIN & co.: the T at the first of `keys` that
// holds one (*value) and that key's index; kNotFound when none does,
// kWrongType when a key before it holds another type.
template <typename T>
core::OpResult<size_t> FindFirst(const OpArgs& op, std::span<const std::string_view> keys, T** value) {
  for (size_t i = 0; i < keys.size(); ++i) {
    core::OpResult<T*> found = core::FindTyped<T>(op.db, keys[i], op.now_ms);
    if (found.status() == core::OpStatus::kNotFound) continue;
    if (!found.ok()) return found.status();
    *value = found.value();
    return i;
  }
  return core::OpStatus::kNotFound;
}

// HDEL / SREM / ZREM: removes each of `items` from the T at `key` with
// (value.*remove)(item), stopping once it is empty; reports `event` (class
// `type`) counting the removals, then deletes the emptied key. The key is
// signaled before the events, or after them with `signal_last` (ZREM).
// Returns how many went: 0 for a missing key, kWrongType for another type.
template <typename T>
core::OpResult<int64_t> RemoveItems(const OpArgs& op, std::string_view key, std::span<const std::string_view> items,
                                    bool (T::*remove)(std::string_view), uint32_t type, std::string_view event,
                                    bool signal_last = false) {
  core::OpResult<T*> found = core::FindTyped<T>(op.db, key, op.now_ms);
  if (found.status() == core::OpStatus::kNotFound) return int64_t{0};
  if (!found.ok()) return found.status();
  T& value = *found.value();
  int64_t removed = 0;
  for (size_t i = 0; i < items.size() && value.size() != 0; ++i) removed += (value.*remove)(items[i]);
  if (removed > 0) {
    if (!signal_last) op.Signaled(key);
    op.Notified(type, event, key, static_cast<uint64_t>(removed));
    DeleteIfEmpty(op, key, value);
    if (signal_last) op.Signaled(key);
  }
  return removed;
}

// The STORE commands' write: stores `value` (holding `size` elements) at
// `dst`, overwriting what was there (not a new key: no "new" event), TTL
// included -- or, when size is 0, deletes `dst`. A replaced value is freed
// as lazyfree-lazy-server-del says.
// Reports `event` (class `type`) counting `dirty` changes, or "del" when an
// existing `dst` went; returns `size`. Where Redis's code writes the reply:
// kAfter, after everything (SORT, GEOSEARCHSTORE); kBetween, after the key
// is signaled and before its event, and before an emptied key's "del"
// (SUNIONSTORE, ZUNIONSTORE & co.); kBetweenDelFirst, as kBetween but
// after the "del" (SINTERSTORE).
enum class StoreReply { kAfter, kBetween, kBetweenDelFirst };
int64_t StoreValue(const OpArgs& op, std::string_view dst, core::Value value, size_t size, uint32_t type,
                   std::string_view event, uint64_t dirty = 1, StoreReply reply = StoreReply::kAfter);

}  // namespace ringkv::server

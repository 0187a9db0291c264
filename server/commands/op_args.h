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
};

// Erases `key` once the collection it holds is empty, reporting "del";
// true when it did.
template <typename T>
bool DeleteIfEmpty(const OpArgs& op, std::string_view key, const T& value) {
  if (!core::DeleteIfEmpty(op.db, key, value)) return false;
  op.Changed(notify::kGeneric, "del", key, 0);
  return true;
}

}  // namespace ringkv::server

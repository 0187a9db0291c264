// A fixture for unit tests of the Op* functions: a keyspace, an unbound
// Effects record and the OpArgs on database 0 -- no server, no socket.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/keyspace.h"
#include "core/string_value.h"
#include "server/commands/op_args.h"
#include "server/effects.h"

namespace ringkv::server {

using Strings = std::vector<std::string>;

class OpsTest : public ::testing::Test {
 protected:
  static constexpr int64_t kNow = 1'000'000;

  OpArgs op() { return OpArgs{keyspace_.db(0), keyspace_, kNow, effects_}; }
  core::Database& db() { return keyspace_.db(0); }
  // Stores a string at `key` (to collide types with), reporting nothing.
  void SetString(std::string_view key, std::string_view value) {
    bool created;
    db().FindOrInsert(key, kNow, &created)->value = core::StringValue(value);
  }
  bool Exists(std::string_view key) { return db().FindNoTouch(key, kNow) != nullptr; }
  // The reported events, as "event key" (database 0) or "event key @db".
  std::vector<std::string> Events() const {
    std::vector<std::string> out;
    for (const KeyChange& c : effects_.changes()) {
      out.push_back(std::string(c.event) + " " + std::string(c.key) + (c.db == 0 ? "" : " @" + std::to_string(c.db)));
    }
    return out;
  }
  // What was reported since the last call, in order: "<event> <key>",
  // "signal <key>", "ready <key>", and "reply" where the Op put Redis's
  // reply (Effects::sequence).
  Strings NewSequence() {
    const std::vector<std::string>& all = effects_.sequence();
    Strings out(all.begin() + static_cast<std::ptrdiff_t>(sequence_seen_), all.end());
    sequence_seen_ = all.size();
    return out;
  }
  uint64_t Dirty() const { return effects_.dirty(); }
  const std::vector<std::string>& PropagatedAs() const { return effects_.propagated_as(); }

  core::Keyspace keyspace_{16};
  Effects effects_{nullptr};
  size_t sequence_seen_ = 0;
};

}  // namespace ringkv::server

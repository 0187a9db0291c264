#include "replication/replica_key_expiry.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/string_value.h"

namespace ringkv::repl {
namespace {

core::Entry* Put(core::Database& db, std::string_view key, int64_t when_ms) {
  bool created;
  core::Entry* e = db.FindOrInsert(key, 0, &created);
  e->value = core::Value(core::StringValue("v"));
  if (when_ms >= 0) db.SetExpire(key, e, when_ms);
  return e;
}

TEST(ReplicaKeyExpiryTest, DeletesOnlyRememberedKeysPastTheirDeadline) {
  core::Keyspace ks(16);
  ks.set_expiry_mode(core::ExpiryMode::kHide);  // as on a replica
  core::Database& db = ks.db(5);
  Put(db, "own", 1000);
  Put(db, "own-later", 5000);
  Put(db, "primarys", 1000);  // the primary's key: never remembered
  Put(db, "persistent", -1);
  ReplicaKeyExpiry expiry;
  for (const char* k : {"own", "own-later", "persistent"}) expiry.RememberIfVolatile(db, k);
  EXPECT_EQ(expiry.size(), 2u);  // "persistent" has no deadline

  std::vector<std::string> told;
  auto tell = [&](int index, std::string_view key) { told.push_back(std::to_string(index) + ":" + std::string(key)); };
  EXPECT_EQ(expiry.ExpireDue(ks, 2000, tell), 1);
  EXPECT_EQ(told, std::vector<std::string>{"5:own"});
  EXPECT_EQ(db.Peek("own"), nullptr);
  EXPECT_NE(db.Peek("primarys"), nullptr);  // waits for the primary's DEL
  EXPECT_EQ(ks.stats().expired_keys, 1u);
  EXPECT_EQ(expiry.size(), 1u);

  EXPECT_EQ(expiry.ExpireDue(ks, 6000, tell), 1);
  EXPECT_EQ(db.Peek("own-later"), nullptr);
  EXPECT_EQ(expiry.size(), 0u);
}

TEST(ReplicaKeyExpiryTest, ForgetsKeysDeletedOrMadePersistent) {
  core::Keyspace ks(16);
  core::Database& db = ks.db(0);
  Put(db, "deleted", 1000);
  core::Entry* persisted = Put(db, "persisted", 1000);
  ReplicaKeyExpiry expiry;
  expiry.RememberIfVolatile(db, "deleted");
  expiry.RememberIfVolatile(db, "persisted");
  db.Erase("deleted");
  db.SetExpire("persisted", persisted, -1);
  int calls = 0;
  EXPECT_EQ(expiry.ExpireDue(ks, 2000, [&](int, std::string_view) { ++calls; }), 0);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(expiry.size(), 0u);
  EXPECT_NE(db.Peek("persisted"), nullptr);
}

}  // namespace
}  // namespace ringkv::repl

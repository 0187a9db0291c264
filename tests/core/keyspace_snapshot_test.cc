// KeyspaceSnapshot: the file written while the keyspace changes is the
// keyspace as it was at the start -- every key of that instant once, with
// its value and deadline then, and nothing created after.
#include "core/keyspace_snapshot.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/access_policy.h"
#include "core/rdb_reader.h"
#include "core/rdb_writer.h"
#include "core/string_value.h"

namespace ringkv::core {
namespace {

using KeyId = std::pair<int, std::string>;  // database number, key
struct Held {
  std::string value;
  int64_t expire_ms;
  bool operator==(const Held&) const = default;
};
using Image = std::map<KeyId, Held>;

constexpr int64_t kNow = 1'000'000;

class Collector : public RdbVisitor {
 public:
  absl::Status OnEntry(int db, std::string key, Value value, int64_t expire_ms, KeyMeta) override {
    auto [it, inserted] = image.emplace(KeyId{db, key}, Held{value.str().ToString(), expire_ms});
    if (!inserted) ++duplicates;
    return absl::OkStatus();
  }
  Image image;
  int duplicates = 0;
};

Image ImageOf(Keyspace& ks) {
  Image out;
  for (int i = 0; i < ks.count(); ++i) {
    Database& db = ks.db(i);
    db.ForEachIncludingExpired([&](std::string_view key, const Entry& e) {
      out[{i, std::string(key)}] = Held{const_cast<Entry&>(e).value.str().ToString(), db.GetExpire(&e)};
    });
  }
  return out;
}

void Put(Database& db, const std::string& key, const std::string& value, int64_t expire_ms = -1) {
  bool created;
  Entry* e = db.FindOrInsert(key, kNow, &created);
  e->value = StringValue(value);
  db.SetExpire(key, e, expire_ms);
}

Collector Load(const std::string& data) {
  Collector c;
  MemorySource src(data);
  RdbLoadOptions o;
  o.databases = 16;
  const absl::Status s = LoadRdb(&src, &c, o);
  EXPECT_TRUE(s.ok()) << s;
  return c;
}

// An RDB image in memory: the header, then a snapshot of `ks` started now
// writes into it; Finish() ends the file and loads it back.
class InMemorySnapshot {
 public:
  explicit InMemorySnapshot(Keyspace& ks) : writer_(&sink_, /*compress=*/true, /*checksum=*/true), records_(&writer_) {
    writer_.Header();
    snapshot_.emplace(ks, &records_, kNow);
  }
  KeyspaceSnapshot& operator*() { return *snapshot_; }
  KeyspaceSnapshot* operator->() { return &*snapshot_; }
  void WalkToTheEnd(size_t step) {
    while (!snapshot_->Step(step)) {
    }
  }
  // Lets go of the keyspace, ends the file and loads it.
  Collector Finish() {
    snapshot_.reset();
    EXPECT_TRUE(writer_.Finish().ok());
    return Load(sink_.data);
  }

 private:
  StringSink sink_;
  RdbWriter writer_;
  RdbRecordSink records_;
  std::optional<KeyspaceSnapshot> snapshot_;
};

// One random change of the kinds the server makes, through the keyspace's
// own entry points.
void RandomChange(Keyspace& ks, std::mt19937_64& rng, int* serial) {
  Database& db = ks.db(static_cast<int>(rng() % 4));
  const std::string key = "k" + std::to_string(rng() % 3000);
  switch (rng() % 16) {
    case 0:
    case 1:  // SET: a new value (or a new key)
      Put(db, key, "new" + std::to_string((*serial)++));
      break;
    case 2: {  // APPEND: the value changed in place through a lookup
      if (Entry* e = db.Find(key, kNow)) e->value = StringValue(e->value.str().ToString() + "+");
      break;
    }
    case 3:  // DEL
      db.Erase(key);
      break;
    case 4:  // EXPIRE / PERSIST
      if (Entry* e = db.Find(key, kNow)) db.SetExpire(key, e, rng() % 2 ? kNow + 50'000 : -1);
      break;
    case 5: {  // a lookup that finds the key past its deadline deletes it
      if (Entry* e = db.FindNoTouch(key, kNow); e != nullptr && db.GetExpire(e) >= 0) {
        db.SetExpire(key, e, kNow - 1);
        (void)db.Find(key, kNow);
      }
      break;
    }
    case 6: {  // RENAME: the value moves to another key
      Entry* from = db.Find(key, kNow);
      if (from == nullptr) break;
      std::string value = from->value.str().ToString();
      db.Erase(key);
      Put(db, key + "r", value);
      break;
    }
    case 7:  // a burst of inserts and deletes: the table grows and shrinks under the walk
      for (int i = 0; i < 400; ++i) Put(db, "burst" + std::to_string(rng() % 100000), "b");
      for (int i = 0; i < 400; ++i) db.Erase("burst" + std::to_string(rng() % 100000));
      break;
    case 8:  // a read
      (void)db.FindForRead(key, kNow);
      break;
    case 9:
      if (rng() % 40 == 0) ks.SwapDb(static_cast<int>(rng() % 4), rng() % 3 == 0 ? 7 : static_cast<int>(rng() % 4));
      break;
    case 10:
      if (rng() % 60 == 0) db.Clear();  // FLUSHDB
      break;
    case 11:
      if (rng() % 60 == 0) {  // a staging database swapped in (DEBUG RELOAD, a full sync's load)
        Keyspace staging(1);
        Put(staging.db(0), "staged", "s");
        db.Swap(staging.db(0));
      }
      break;
    case 12:
      if (rng() % 60 == 0) (void)db.Detach();  // FLUSHDB ASYNC: the table handed away
      break;
    case 13:  // eviction
      if (db.Peek(key) != nullptr) db.Evict(key);
      break;
    case 14:  // the active expiry cycle, late enough for every deadline
      if (rng() % 80 == 0) ks.ActiveExpireCycle(kNow + 200'000, 100'000);
      break;
    case 15: {  // MOVE into database 7, empty at the start (not in the snapshot)
      Entry* from = db.Find(key, kNow);
      if (from == nullptr) break;
      std::string value = from->value.str().ToString();
      db.Erase(key);
      Put(ks.db(7), key, value);
      break;
    }
  }
}

void Fill(Keyspace& ks, std::mt19937_64& rng) {
  for (int d = 0; d < 4; ++d) {
    for (int i = 0; i < 2000; ++i) {
      const int64_t expire = rng() % 4 == 0 ? kNow + 100'000 : (rng() % 50 == 0 ? kNow - 5 : -1);
      Put(ks.db(d), "k" + std::to_string(rng() % 3000), "v" + std::to_string(i), expire);
    }
  }
}

class SnapshotPointInTime : public ::testing::TestWithParam<int> {};

TEST_P(SnapshotPointInTime, TheFileIsTheKeyspaceAtTheStart) {
  std::mt19937_64 rng(static_cast<uint64_t>(GetParam()));
  Keyspace ks(16);
  Fill(ks, rng);
  const Image at_start = ImageOf(ks);

  int serial = 0;
  InMemorySnapshot snap(ks);
  EXPECT_EQ(snap->keys_total(), at_start.size());
  const size_t step = GetParam() % 3 == 0 ? 1 : 1 + rng() % 60;
  while (!snap->Step(step)) {
    for (int i = 0, n = static_cast<int>(rng() % 6); i < n; ++i) RandomChange(ks, rng, &serial);
  }
  EXPECT_EQ(snap->keys_written(), at_start.size());
  for (int d = 0; d < 16; ++d) EXPECT_FALSE(ks.db(d).snapshot_attached());
  const Collector loaded = snap.Finish();
  EXPECT_EQ(loaded.duplicates, 0);
  EXPECT_EQ(loaded.image.size(), at_start.size());
  EXPECT_TRUE(loaded.image == at_start);
  // The keyspace went on: a second snapshot, without changes, is its image now.
  InMemorySnapshot again(ks);
  again.WalkToTheEnd(1000);
  EXPECT_TRUE(again.Finish().image == ImageOf(ks));
}

INSTANTIATE_TEST_SUITE_P(Seeds, SnapshotPointInTime, ::testing::Range(1, 61));

TEST(KeyspaceSnapshotTest, CapturedEntriesAreWrittenBeforeTheyChange) {
  Keyspace ks(16);
  Put(ks.db(0), "a", "old");
  Put(ks.db(0), "b", "gone", kNow + 1000);
  Put(ks.db(2), "c", "other-db");
  InMemorySnapshot snap(ks);
  Put(ks.db(0), "a", "new");     // overwritten before the walk came
  ks.db(0).Erase("b");           // deleted
  Put(ks.db(0), "later", "x");   // created after the start
  EXPECT_EQ(snap->keys_captured(), 2u);
  EXPECT_GT(snap->bytes_captured(), 0u);
  snap.WalkToTheEnd(1);
  EXPECT_EQ(snap->keys_written(), 3u);
  const Image expected = {{{0, "a"}, {"old", -1}}, {{0, "b"}, {"gone", kNow + 1000}}, {{2, "c"}, {"other-db", -1}}};
  EXPECT_TRUE(snap.Finish().image == expected);
}

TEST(KeyspaceSnapshotTest, SwapDbKeepsEachKeyUnderItsNumberAtTheStart) {
  Keyspace ks(16);
  Put(ks.db(0), "zero", "0");
  Put(ks.db(1), "one", "1");
  InMemorySnapshot snap(ks);
  ks.SwapDb(0, 1);
  Put(ks.db(0), "one", "changed");  // db 0 now is the former db 1
  snap.WalkToTheEnd(10);
  const Image expected = {{{0, "zero"}, {"0", -1}}, {{1, "one"}, {"1", -1}}};
  EXPECT_TRUE(snap.Finish().image == expected);
}

// A FLUSHDB during the snapshot writes nothing at the command: the table
// goes to the snapshot in O(1), the walk goes on over it, and it is given to
// the keyspace's release (the server's lazy-free thread) once walked. Keys
// made after the flush are not in the file; the database is usable at once.
TEST(KeyspaceSnapshotTest, FlushDbHandsTheTableToTheWalk) {
  for (const bool async : {false, true}) {
    Keyspace ks(16);
    std::vector<std::unique_ptr<DetachedData>> released;
    ks.set_table_release([&](std::unique_ptr<DetachedData> t) { released.push_back(std::move(t)); });
    for (int i = 0; i < 500; ++i) Put(ks.db(0), "k" + std::to_string(i), "v" + std::to_string(i), i % 3 ? -1 : kNow + i);
    Put(ks.db(1), "other", "db");
    const Image at_start = ImageOf(ks);
    InMemorySnapshot snap(ks);
    snap->Step(50);                      // part of db 0 walked
    Put(ks.db(0), "k7", "changed");      // one captured before the flush
    Put(ks.db(0), "made-after-start", "x", kNow + 5);  // neither before nor after the flush
    const uint64_t captured = snap->keys_captured();
    EXPECT_EQ(snap->taken_bytes(), 0u);
    if (async) {
      std::unique_ptr<DetachedData> detached = ks.db(0).Detach();
      EXPECT_EQ(detached->dict.size(), 0u) << "the snapshot has the table";
    } else {
      ks.db(0).Clear();
    }
    EXPECT_EQ(snap->keys_captured(), captured) << "nothing written at the flush";
    EXPECT_EQ(ks.db(0).size(), 0u);
    EXPECT_EQ(ks.db(0).expires(), 0u);
    // 501 keys of at least a node and a bucket slot each, not yet released.
    EXPECT_GE(snap->taken_bytes(), 501 * (sizeof(KeyspaceNode) + sizeof(void*)));
    EXPECT_FALSE(ks.db(0).snapshot_attached());
    Put(ks.db(0), "k1", "after");        // not in the file
    Put(ks.db(0), "new", "after");
    EXPECT_TRUE(released.empty());
    snap.WalkToTheEnd(7);
    ASSERT_EQ(released.size(), 1u);
    EXPECT_EQ(released[0]->dict.size(), 501u);  // the 500 and the one made after the start
    EXPECT_EQ(snap->taken_bytes(), 0u);
    const Collector loaded = snap.Finish();
    EXPECT_EQ(loaded.duplicates, 0);
    EXPECT_TRUE(loaded.image == at_start) << "async " << async;
  }
}

// An abandoned snapshot gives back a table it took.
TEST(KeyspaceSnapshotTest, AnAbandonedSnapshotReleasesATakenTable) {
  Keyspace ks(16);
  int released = 0;
  ks.set_table_release([&](std::unique_ptr<DetachedData>) { ++released; });
  for (int i = 0; i < 100; ++i) Put(ks.db(0), "k" + std::to_string(i), "v");
  {
    InMemorySnapshot snap(ks);
    snap->Step(10);
    ks.db(0).Clear();
    EXPECT_EQ(released, 0);
  }
  EXPECT_EQ(released, 1);
  // The next snapshot sees the keyspace as it is.
  Put(ks.db(0), "x", "y");
  InMemorySnapshot again(ks);
  again.WalkToTheEnd(10);
  const Image expected = {{{0, "x"}, {"y", -1}}};
  EXPECT_TRUE(again.Finish().image == expected);
}

TEST(KeyspaceSnapshotTest, AbandonedSnapshotsNeverHideAKeyFromALaterOne) {
  Keyspace ks(16);
  for (int i = 0; i < 100; ++i) Put(ks.db(0), "k" + std::to_string(i), "v");
  // Far more abandoned snapshots than the 8-bit epoch has values, each
  // writing a few keys before it is dropped.
  for (int round = 0; round < 600; ++round) {
    InMemorySnapshot abandoned(ks);
    abandoned->Step(static_cast<size_t>(round % 7));
  }
  InMemorySnapshot snap(ks);
  snap.WalkToTheEnd(3);
  EXPECT_EQ(snap->keys_written(), 100u);
  EXPECT_EQ(snap.Finish().image.size(), 100u);
}

TEST(KeyspaceSnapshotTest, LruClockWrapsAs24BitsAsRedisDoes) {
  AccessPolicy lru;
  lru.policy = EvictionPolicy::kAllKeysLru;
  absl::BitGen rng;
  const int64_t t0 = (int64_t{1} << 24) * 1000 - 5000;  // 5 s before the clock wraps
  Entry e;
  e.set_lru(InitialAccess(lru, t0));
  EXPECT_EQ(IdleSeconds(e.lru(), t0 + 12'000), 12);  // across the wrap
  e.set_lru(RecordAccess(lru, e.lru(), t0 + 20'000, rng));
  EXPECT_EQ(IdleSeconds(e.lru(), t0 + 21'000), 1);
  e.set_lru(RestoredAccess(lru, 3600, -1, t0, e.lru()));
  EXPECT_EQ(IdleSeconds(e.lru(), t0), 3600);
}

TEST(KeyspaceSnapshotTest, AWriteCommandsReadLookupsPassTheBarrierOtherReadsDoNot) {
  Keyspace ks(16);
  Put(ks.db(0), "read", "r");
  Put(ks.db(0), "acked", "a");
  InMemorySnapshot snap(ks);
  ASSERT_NE(ks.db(0).FindForRead("read", kNow), nullptr);  // a read command's lookup
  EXPECT_EQ(snap->keys_captured(), 0u);
  const bool outer = ks.set_in_write_command(true);   // XACK: a write command's read lookup
  Entry* e = ks.db(0).FindForRead("acked", kNow);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(snap->keys_captured(), 1u);
  e->value = StringValue("changed after the start");
  ks.set_in_write_command(outer);
  snap.WalkToTheEnd(10);
  const Image expected = {{{0, "read"}, {"r", -1}}, {{0, "acked"}, {"a", -1}}};
  EXPECT_TRUE(snap.Finish().image == expected);
}

TEST(KeyspaceSnapshotTest, KeysReadAfterTheClockWasTakenCountAsJustAccessed) {
  absl::BitGen rng;
  AccessPolicy lru;
  lru.policy = EvictionPolicy::kAllKeysLru;
  Entry e;
  e.set_lru(InitialAccess(lru, kNow + 2'000));  // read 2 s after the time the walk holds
  EXPECT_EQ(SnapshotKeyMeta(lru, e, kNow).idle_s, 0);
  e.set_lru(InitialAccess(lru, kNow - 7'000'000));  // idle 7,000 s
  EXPECT_EQ(SnapshotKeyMeta(lru, e, kNow).idle_s, 7000);
  AccessPolicy lfu;
  lfu.policy = EvictionPolicy::kAllKeysLfu;
  e.set_lru(RecordAccess(lfu, InitialAccess(lfu, kNow + 120'000), kNow + 120'000, rng));  // two minutes ahead
  EXPECT_GE(SnapshotKeyMeta(lfu, e, kNow).freq, int{kLfuInitValue});  // not decayed to 0 by a wrap
}

}  // namespace
}  // namespace ringkv::core

#include "core/keyspace_snapshot.h"

#include <algorithm>
#include <cassert>

#include "core/access_policy.h"

namespace ringkv::core {

KeyMeta SnapshotKeyMeta(const AccessPolicy& access, const Entry& e, int64_t now_ms) {
  // A key read after `now_ms` was taken carries a later stamp: it counts as
  // accessed now (not as wrapped around the clock), up to an hour ahead.
  constexpr uint32_t kAheadSeconds = 3600;
  KeyMeta meta;
  if (access.lfu()) {
    const uint32_t lru = e.lru();
    const uint32_t stamp_min = lru >> 8;
    const uint32_t now_min = static_cast<uint32_t>(now_ms / 60000) & 0xFFFF;
    const uint32_t ahead = (stamp_min - now_min) & 0xFFFF;
    meta.freq = ahead > 0 && ahead <= kAheadSeconds / 60 ? static_cast<int>(lru & 0xFF)
                                                           : static_cast<int>(LfuFrequency(access, lru, now_ms));
  } else if (access.policy == EvictionPolicy::kAllKeysLru || access.policy == EvictionPolicy::kVolatileLru) {
    const int64_t idle = IdleSeconds(e.lru(), now_ms);
    meta.idle_s = idle > int64_t{kAccessMask} - kAheadSeconds ? 0 : idle;
  }
  return meta;
}

namespace {

// A table's bytes: per key, its node, its bucket slot and the heap bytes of
// its value, averaged over a sample of entries; plus the expiry index. O(sample), not O(keys): it runs in the FLUSHDB.
uint64_t EstimateTableBytes(DetachedData& t, absl::BitGen& rng) {
  const size_t keys = t.dict.size();
  if (keys == 0) return 0;
  constexpr int kSamples = 32;
  uint64_t sampled = 0;
  int n = 0;
  for (; n < kSamples; ++n) {
    KeyspaceNode* node = t.dict.RandomNode(rng);
    if (node == nullptr) break;
    sampled += node->allocated_bytes() + node->value.value.heap_bytes();
  }
  const uint64_t per_key = sizeof(void*) + (n > 0 ? sampled / static_cast<uint64_t>(n) : 0);
  return keys * per_key + t.expires.bytes();
}

}  // namespace

KeyspaceSnapshot::KeyspaceSnapshot(Keyspace& ks, SnapshotRecordSink* sink, int64_t now_ms)
    : ks_(ks), sink_(sink), now_ms_(now_ms) {
  dbs_.reserve(static_cast<size_t>(ks.count()));
  for (int i = 0; i < ks.count(); ++i) {
    Database& db = ks.db(i);
    if (db.size() == 0) continue;  // an insert there is after the start
    assert(!db.snapshot_attached());  // one snapshot at a time (ChildProcess runs one job)
    dbs_.push_back(DbState{.db = &db, .number = i, .keys_at_start = db.size(), .expires_at_start = db.expires()});
    keys_total_ += db.size();
    db.AttachSnapshot(this);
  }
}

KeyspaceSnapshot::~KeyspaceSnapshot() {
  for (DbState& s : dbs_) {
    if (s.attached) s.db->DetachSnapshot(/*walked_all=*/false);
    ReleaseTable(s);
  }
}

bool KeyspaceSnapshot::Step(size_t max_keys) {
  const uint64_t stop_at = keys_written_ + max_keys;
  size_t buckets_left = 16 * std::max<size_t>(max_keys, 1);
  while (current_ < dbs_.size() && keys_written_ < stop_at && buckets_left-- > 0) {
    DbState& s = dbs_[current_];
    if (!s.walking) {
      ++current_;
      continue;
    }
    if (s.table != nullptr) {  // taken from a FLUSHDB: nobody changes it any more
      s.cursor = s.table->dict.Scan(s.cursor, [&](NodeKey key, Entry& e) {
        if (e.snap() == s.table_epoch) return;  // written before the FLUSHDB, or a SCAN duplicate
        Write(s, key.view(), e);
        e.set_snap(s.table_epoch);
      });
    } else {
      s.cursor = s.db->SnapshotScan(s.cursor, [&](std::string_view key, Entry& e) {
        if (s.db->Snapshotted(e)) return;  // created after the start, captured, or a SCAN duplicate
        Write(s, key, e);
        s.db->MarkSnapshotted(e);
      });
    }
    if (s.cursor == 0) Finish(s);
  }
  return done();
}

void KeyspaceSnapshot::Capture(Database& db, std::string_view key, const Entry& e) {
  const uint64_t before = sink_->bytes();
  Write(StateOf(db), key, e);
  ++keys_captured_;
  bytes_captured_ += sink_->bytes() - before;
}

void KeyspaceSnapshot::CaptureRest(Database& db) {
  DbState& s = StateOf(db);
  const uint64_t before = sink_->bytes();
  db.ForEachEntry([&](std::string_view key, Entry& e) {
    if (db.Snapshotted(e)) return;
    Write(s, key, e);
    db.MarkSnapshotted(e);
    ++keys_captured_;
  });
  bytes_captured_ += sink_->bytes() - before;
  Finish(s);
}

void KeyspaceSnapshot::TakeRest(Database& db, std::unique_ptr<DetachedData> table, uint8_t epoch) {
  DbState& s = StateOf(db);
  s.table = std::move(table);
  s.table_epoch = epoch;
  s.table_bytes = EstimateTableBytes(*s.table, ks_.rng());
  taken_bytes_ += s.table_bytes;
  s.attached = false;
  db.DetachSnapshot(/*walked_all=*/true);  // empty now: no entry carries an old mark
}

KeyspaceSnapshot::DbState& KeyspaceSnapshot::StateOf(Database& db) {
  // A database is attached only while its state is: it is in the list.
  for (DbState& s : dbs_) {
    if (s.db == &db) return s;
  }
  __builtin_unreachable();
}

void KeyspaceSnapshot::Write(DbState& s, std::string_view key, const Entry& e) {
  if (selected_ != s.number) {
    sink_->SelectDb(s.number, !s.selected_before, s.keys_at_start, s.expires_at_start);
    s.selected_before = true;
    selected_ = s.number;
  }
  int64_t expire_ms;
  if (s.table == nullptr) {
    expire_ms = s.db->GetExpire(&e);
  } else {
    expire_ms = e.has_expire() ? s.table->expires.When(e) : -1;
  }
  sink_->Key(key, e.value, expire_ms, SnapshotKeyMeta(ks_.access_policy(), e, now_ms_));
  ++keys_written_;
}

void KeyspaceSnapshot::Finish(DbState& s) {
  s.walking = false;
  if (s.attached) {
    s.attached = false;
    s.db->DetachSnapshot(/*walked_all=*/true);
  }
  ReleaseTable(s);
}

void KeyspaceSnapshot::ReleaseTable(DbState& s) {
  if (s.table == nullptr) return;
  taken_bytes_ -= s.table_bytes;
  s.table_bytes = 0;
  ks_.ReleaseTable(std::move(s.table));
}

}  // namespace ringkv::core

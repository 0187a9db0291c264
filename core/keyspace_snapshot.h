// KeyspaceSnapshot: a point-in-time RDB image of a keyspace, written while
// the keyspace keeps changing -- a snapshot without fork().
//
// Start (the constructor) fixes the instant. From then on the snapshot
// writes every key as it was at that instant exactly once:
//  * the walk (Step) visits each database with the SCAN cursor, a bounded
//    number of keys at a time, and writes the entries not yet written;
//  * before an entry not yet written changes or goes (any lookup, insert
//    over it, Erase, SetExpire; a swap of the whole table), the database
//    hands it over (SnapshotCapture) and it is written first, out of the
//    walk's order;
//  * a FLUSHDB hands the whole table over in O(1) (TakeRest): the walk goes
//    on over it, detached from the database, and gives it to
//    Keyspace::ReleaseTable at its end (the server's lazy-free thread), so
//    an emptied database costs no write at the command;
//  * an entry created after the start is marked written at birth, so it is
//    never part of this snapshot.
// A mark per entry (Entry::snap against the database's epoch) says which is
// which: it also drops the duplicates SCAN may return across resizes. The
// cost while no snapshot runs is one test per lookup.
//
// The records go to the caller's SnapshotRecordSink -- an RDB writer that
// holds the header and AUX fields already (RdbRecordSink), or an AOF base of
// commands -- in whatever database order they come: SelectDb precedes each
// run of one database's keys (the RDB loader takes SELECTDB any number of
// times, an AOF replays SELECT as it comes). Databases are known by the object, not their number,
// so a SWAPDB during the snapshot changes nothing: each key is written under
// the number its database had at the start.
//
// A captured entry is serialized whole, so the first change of a very large
// collection during a snapshot pays for writing it (a fork pays with copied
// pages instead).
//
// Thread-safety: none; the keyspace's thread. The keyspace and its
// databases must outlive the snapshot, or the snapshot be destroyed (which
// detaches it: an abandoned snapshot) first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/keyspace.h"
#include "core/rdb_writer.h"

namespace ringkv::core {

// The LRU idle time / LFU counter a snapshot records for `e` under the
// keyspace's maxmemory policy (none for other policies), as Redis's rdbSave.
// A stamp up to an hour later than `now_ms` counts as an access at `now_ms`.
KeyMeta SnapshotKeyMeta(const AccessPolicy& access, const Entry& e, int64_t now_ms);

// Where a snapshot's records go.
class SnapshotRecordSink {
 public:
  virtual ~SnapshotRecordSink() = default;
  // The records that follow are database `db`'s. `first`: its first run;
  // `keys` / `expires`: its size at the start (a hint).
  virtual void SelectDb(int db, bool first, uint64_t keys, uint64_t expires) = 0;
  virtual void Key(std::string_view key, const Value& value, int64_t expire_ms, const KeyMeta& meta) = 0;
  // Bytes produced so far.
  virtual uint64_t bytes() const = 0;
};

// The records as RDB: SELECTDB (RESIZEDB the first time), then the entries.
class RdbRecordSink final : public SnapshotRecordSink {
 public:
  explicit RdbRecordSink(RdbWriter* writer) : writer_(writer) {}
  void SelectDb(int db, bool first, uint64_t keys, uint64_t expires) override {
    writer_->SelectDb(db);
    if (first) writer_->ResizeDb(keys, expires);
  }
  void Key(std::string_view key, const Value& value, int64_t expire_ms, const KeyMeta& meta) override {
    writer_->Entry(key, value, expire_ms, meta);
  }
  uint64_t bytes() const override { return writer_->bytes(); }

 private:
  RdbWriter* writer_;
};

class KeyspaceSnapshot final : public SnapshotCapture {
 public:
  // Starts the snapshot of every database of `ks` now (nothing is written
  // yet). `sink` must outlive it. `now_ms`: the start, for LRU/LFU meta.
  KeyspaceSnapshot(Keyspace& ks, SnapshotRecordSink* sink, int64_t now_ms);
  ~KeyspaceSnapshot() override;
  KeyspaceSnapshot(const KeyspaceSnapshot&) = delete;
  KeyspaceSnapshot& operator=(const KeyspaceSnapshot&) = delete;

  // Walks on until `max_keys` more keys were written by the walk, or
  // 16 x `max_keys` buckets were visited (buckets of keys already written
  // or empty ones cost the walk too), or every database is done; returns
  // done(). Once done, every key of the instant is in the sink (the caller
  // then ends the file) and the databases are let go.
  bool Step(size_t max_keys);
  bool done() const { return current_ == dbs_.size(); }
  // The time LRU idle times and LFU counters are written against from now
  // on (the caller keeps it current: keys read meanwhile carry newer stamps).
  void set_now(int64_t now_ms) { now_ms_ = now_ms; }

  uint64_t keys_total() const { return keys_total_; }        // at the start
  uint64_t keys_written() const { return keys_written_; }    // by the walk and captures
  uint64_t keys_captured() const { return keys_captured_; }  // written ahead of the walk
  uint64_t bytes_captured() const { return bytes_captured_; }
  // What the tables taken from emptied databases (TakeRest) hold until
  // walked, estimated from a sample of their entries at the hand-over: memory
  // that is no longer the dataset's (maxmemory leaves it out, as a fork's
  // copy is never the parent's).
  uint64_t taken_bytes() const { return taken_bytes_; }

 private:
  struct DbState {
    Database* db;
    int number;             // the database's number at the start
    uint64_t keys_at_start;
    uint64_t expires_at_start;
    uint64_t cursor = 0;
    bool walking = true;    // false once walked whole (or captured whole)
    bool attached = true;   // the database's barrier reports to this snapshot
    bool selected_before = false;  // a run of its records was begun
    // After a FLUSHDB: its entries at that moment, walked from here with
    // the same cursor; `table_epoch` marks the ones written.
    std::unique_ptr<DetachedData> table = nullptr;
    uint8_t table_epoch = 0;
    uint64_t table_bytes = 0;  // its estimate, in taken_bytes_
  };

  void Capture(Database& db, std::string_view key, const Entry& e) override;
  void CaptureRest(Database& db) override;
  void TakeRest(Database& db, std::unique_ptr<DetachedData> table, uint8_t epoch) override;
  DbState& StateOf(Database& db);
  void Write(DbState& s, std::string_view key, const Entry& e);
  void Finish(DbState& s);
  void ReleaseTable(DbState& s);

  Keyspace& ks_;
  SnapshotRecordSink* sink_;
  int64_t now_ms_;
  std::vector<DbState> dbs_;
  size_t current_ = 0;  // the database the walk is in
  int selected_ = -1;   // the number the last SELECTDB named
  uint64_t keys_total_ = 0;
  uint64_t keys_written_ = 0;
  uint64_t keys_captured_ = 0;
  uint64_t bytes_captured_ = 0;
  uint64_t taken_bytes_ = 0;
};

}  // namespace ringkv::core

// Database and Keyspace: the data, owned by the main command thread.
//
// A Database maps keys to entries in a Dict of KeyspaceNodes (incremental
// rehashing, a SCAN cursor that survives resizes; a node holds key, entry
// and a short string value together, core/keyspace_node.h); keys with a
// time to live also sit in its ExpireIndex (entry + deadline) so the active
// expiry cycle can sample them uniformly at random in O(1), as Redis
// samples its expires dict.
// What lookups do with a key whose deadline has passed is the keyspace's
// ExpiryMode: a primary deletes it (lazily in Find, actively in
// ActiveExpireCycle); a replica hides it from its clients but keeps it until
// its primary's DEL arrives, and applies its primary's stream (or an AOF being
// loaded) as if the key were live -- the primary decided it was.
//
// Thread-safety: none. REQUIRES: used only by the thread that owns the
// keyspace (the main command thread).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "core/collection_limits.h"
#include "core/dict.h"
#include "core/expire_index.h"
#include "core/key.h"
#include "core/keyspace_node.h"
#include "core/slot_index.h"
#include "core/value.h"

namespace ringkv::core {
struct AccessPolicy;
}

namespace ringkv::core {

// A database's table: variable-size nodes holding key, entry and a short
// string value together (core/keyspace_node.h).
// Counts its removals: a lookup may take an entry a prefetch found (KnownEntry).
using KeyTable = Dict<Entry, KeyspaceNode, /*kCountRemovals=*/true>;

class Database;
struct DetachedData;

// What a database tells a running snapshot (core/keyspace_snapshot.h) before
// it changes: the snapshot writes the old state first.
class SnapshotCapture {
 public:
  virtual ~SnapshotCapture() = default;
  // `e` of `db` is about to change or go and the snapshot has not written it.
  virtual void Capture(Database& db, std::string_view key, const Entry& e) = 0;
  // The whole table of `db` is about to be replaced (a swap): the snapshot
  // writes what it still lacks of it and lets go of it.
  virtual void CaptureRest(Database& db) = 0;
  // `db` was just emptied (FLUSHDB, sync or async): the snapshot takes its
  // entries, `table`, and writes those it lacks from there as it walks on
  // (an entry marked `epoch` is written); it has let go of `db`.
  virtual void TakeRest(Database& db, std::unique_ptr<DetachedData> table, uint8_t epoch) = 0;
};

struct KeyspaceStats {
  uint64_t expired_keys = 0;
  uint64_t expired_stale_perc_x100 = 0;  // of the last active cycle, x100
  uint64_t keyspace_hits = 0;
  uint64_t keyspace_misses = 0;
};

// Told about keys the keyspace deletes on its own -- expired (lazily or by the
// active cycle) or evicted -- before they go, so the server can propagate
// them as DEL to the AOF and to replicas, as Redis does; and, when it asks,
// about keys created.
class KeyspaceObserver {
 public:
  virtual ~KeyspaceObserver() = default;
  virtual void OnKeyExpired(int db, std::string_view key) = 0;
  virtual void OnKeyEvicted(int db, std::string_view key) = 0;
  // A key was created (Redis's dbAdd: keyspace notifications' "new", a key
  // clients block on readied); called only while created_key_watchers is
  // nonzero, so that creating keys costs one test otherwise. Each reason to
  // watch is a bit of the observer's choosing, set and cleared by its
  // owner (WatchCreatedKeys).
  virtual void OnKeyCreated(int /*db*/, std::string_view /*key*/) {}
  uint8_t created_key_watchers = 0;
  void WatchCreatedKeys(uint8_t reason, bool on) {
    created_key_watchers = static_cast<uint8_t>(on ? created_key_watchers | reason : created_key_watchers & ~reason);
  }
  // A read lookup found nothing ("keymiss"); only while wants_key_misses.
  virtual void OnKeyMiss(int /*db*/, std::string_view /*key*/) {}
  bool wants_key_misses = false;
};

// How lookups treat keys whose deadline has passed (Redis's expireIfNeeded).
enum class ExpiryMode : uint8_t {
  kDelete,  // a primary: an expired key is deleted on access (and the observer told)
  kHide,    // a replica serving its clients: looks missing, stays stored
  kKeep,    // applying the primary's stream or loading: looks live
};

// A key whose hash (Dict::Hash) is already known: a pipelined batch's
// prefetch hashed the command's first key before the command ran. Lookups
// of exactly these bytes -- the same view, not an equal key elsewhere in
// memory -- use the hash instead of hashing again. Set for one command by
// whoever runs it (Keyspace::KnownKeyHashScope).
//
// The prefetch may also have found the key's entry (KnownEntry): then a
// lookup of the key in that database takes it as found, without walking
// the bucket again, as long as no node left that database's table since
// (Dict::removals): a node never moves, so the entry is still the key's.
struct KnownEntry {
  const Database* db = nullptr;  // the database it was found in
  uint64_t removals = 0;         // that table's removals() then
  const Entry* entry = nullptr;  // nullptr: none known
};
struct KnownKeyHash {
  const char* data = nullptr;
  // No view is this long: with no scope open, not even an empty view with
  // a null data() (std::string_view{}) matches.
  size_t size = SIZE_MAX;
  uint64_t hash = 0;
  KnownEntry found;
};

// A database's data detached in O(1) so it can be freed elsewhere (FLUSHALL
// ASYNC hands it to a background thread).
struct DetachedData {
  KeyTable dict;
  ExpireIndex expires;
};

class Database {
 public:
  Database(int index, KeyspaceStats* stats, const AccessPolicy* access, absl::BitGen* rng,
           KeyspaceObserver* const* observer, const ExpiryMode* expiry_mode, const bool* in_write_command,
           const KnownKeyHash* const* known_hash)
      : index_(index),
        stats_(stats),
        access_(access),
        rng_(rng),
        observer_(observer),
        expiry_mode_(expiry_mode),
        in_write_command_(in_write_command),
        known_hash_(known_hash) {}
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // The live entry for key, or nullptr. An expired key is deleted here
  // (kDelete), looks missing (kHide) or is returned (kKeep). Records an
  // access (LRU clock / LFU counter) on a hit. The lookup of a write: the
  // entry may be changed through the pointer (a running snapshot has it
  // first).
  Entry* Find(std::string_view key, int64_t now_ms);
  // As Find, without recording an access (Redis's LOOKUP_NOTOUCH: OBJECT,
  // TYPE, TTL, EXISTS), for reading: outside a write command (the
  // keyspace's in_write_command) a change through the pointer must call
  // PrepareChange first.
  Entry* FindNoTouch(std::string_view key, int64_t now_ms);
  // The lookups of read commands: as FindNoTouch (for reading; a write
  // command's read lookups pass the snapshot barrier too), recording
  // an access unless `touch` is false, and counted in keyspace_hits /
  // keyspace_misses (write lookups are not, as in Redis).
  // A miss is announced ("keymiss") unless `notify_miss` is false (Redis's
  // LOOKUP_NONOTIFY: OBJECT, MEMORY USAGE).
  Entry* FindForRead(std::string_view key, int64_t now_ms, bool touch = true, bool notify_miss = true) {
    Entry* e = FindForReadLookUp(key, now_ms, touch);
    CountReadLookUp(key, e != nullptr, notify_miss);
    return e;
  }
  // As FindForRead, counting nothing and announcing no miss (Redis's
  // LOOKUP_NOSTATS | LOOKUP_NONOTIFY): a blocked reader served, whose first
  // run counted its lookups already.
  Entry* FindForReadUncounted(std::string_view key, int64_t now_ms) {
    return FindForReadLookUp(key, now_ms, /*touch=*/true);
  }
  // Counts a lookup as FindForRead does, for a command whose lookup Redis
  // makes as a read while ringkv's looks up for writing (GETDEL, GETEX,
  // SET ... GET, the S*STORE sources): keyspace_hits or keyspace_misses,
  // and "keymiss".
  void CountReadLookUp(std::string_view key, bool found, bool notify_miss = true) {
    ++(found ? stats_->keyspace_hits : stats_->keyspace_misses);
    if (!found && notify_miss && *observer_ != nullptr && (*observer_)->wants_key_misses) {
      (*observer_)->OnKeyMiss(index_, key);
    }
  }
  // A read lookup's entry is about to change after all (PFCOUNT's cached
  // cardinality): a running snapshot gets it first.
  void PrepareChange(std::string_view key, Entry& e) { BeforeChange(key, e); }
  // Inserts an empty entry or returns the existing live one; *created tells.
  // One probe of the table (an expired entry found there is reset in place,
  // except in kKeep, where it counts as live).
  // A node created here has room for `slot_bytes` bytes of a string value
  // past 16 (StringValue::SlotBytesFor of the value about to be stored).
  Entry* FindOrInsert(std::string_view key, int64_t now_ms, bool* created, size_t slot_bytes = 0);
  bool Erase(std::string_view key);
  // Sets or clears (when_ms < 0) the deadline of a live entry. Clearing
  // the deadline of a persistent entry changes nothing (SET's common case):
  // tested inline.
  void SetExpire(std::string_view key, Entry* e, int64_t when_ms) {
    if (when_ms >= 0 || e->has_expire()) ChangeExpire(key, e, when_ms);
  }
  // Deadline in unix ms, or -1.
  int64_t GetExpire(const Entry* e) const { return e->has_expire() ? expires_.When(*e) : -1; }

  size_t size() const { return dict_.size(); }
  size_t expires() const { return expires_.size(); }
  // Sum of remaining TTLs of a sample, for INFO keyspace avg_ttl.
  int64_t AverageTtl(int64_t now_ms) const;
  // Empties the database. While a snapshot runs, its table goes to the
  // snapshot (SnapshotCapture::TakeRest), which frees it once walked.
  void Clear();
  void Swap(Database& other);
  // Empties the database in O(1), returning what it held (empty while a
  // snapshot runs: the snapshot took the table, as in Clear).
  std::unique_ptr<DetachedData> Detach();

  // Calls fn for every live key (KEYS). fn must not modify the database.
  void ForEach(int64_t now_ms, const std::function<void(std::string_view, const Entry&)>& fn);

  // Calls fn for every key, expired or not (snapshots). fn must not modify
  // the database.
  template <typename Fn>
  void ForEachIncludingExpired(Fn&& fn) {
    dict_.ForEach([&](NodeKey key, Entry& entry) { fn(key.view(), static_cast<const Entry&>(entry)); });
  }

  // One step of SCAN: calls fn for the live keys of the buckets at `cursor`
  // (and `expired`, when given, for the expired ones) and returns the next
  // cursor (0 when the scan is complete). Every key present for the whole
  // scan is returned at least once.
  uint64_t Scan(uint64_t cursor, int64_t now_ms, const std::function<void(std::string_view, const Entry&)>& fn,
                const std::function<void(std::string_view)>& expired = nullptr);
  // A random live key ("" and false when empty). Expired keys met on the way
  // are deleted (kDelete only), as Redis's RANDOMKEY does.
  bool RandomKey(int64_t now_ms, absl::BitGen& rng, std::string* key);
  // A lookup of `key` prefetched in rounds (Dict::PrefetchBucket): its
  // bucket, the bucket's first node, then its entry (expired or not, no
  // access counted) without hashing again. The bucket is valid until the
  // next change. Changes nothing.
  using PrefetchedBucket = KeyTable::Bucket;
  PrefetchedBucket PrefetchBucket(std::string_view key) const { return dict_.PrefetchBucket(key); }
  // As PrefetchBucket, for the key whose KeyHash is `hash`.
  PrefetchedBucket PrefetchBucketHashed(uint64_t hash) const { return dict_.PrefetchBucketHashed(hash); }
  // The hash lookups use for `key` (the same in every database).
  static uint64_t KeyHash(std::string_view key) { return KeyTable::Hash(key); }
  static bool PrefetchChain(PrefetchedBucket b) { return KeyTable::PrefetchChain(b); }
  static const Entry* PeekPrefetched(PrefetchedBucket b, std::string_view key) {
    return KeyTable::FindInBucket(b, key);
  }
  // What a lookup of `key` in this database may take as found later
  // (KnownKeyHashScope): `e`, from PeekPrefetched of this database's bucket
  // for it, the table unchanged since.
  KnownEntry Found(const Entry* e) const { return KnownEntry{this, dict_.removals(), e}; }
  // Random sampling for eviction: a random node of the whole table, or a
  // random key with a TTL (nullptr / empty when there is none).
  KeyTable::Node* SampleAny(absl::BitGen& rng) { return dict_.RandomNode(rng); }
  bool SampleVolatile(absl::BitGen& rng, std::string* key, int64_t* when_ms) const {
    if (expires_.empty()) return false;
    const ExpireRecord r = expires_[absl::Uniform<size_t>(rng, 0, expires_.size())];
    *key = r.key();
    *when_ms = r.when_ms;
    return true;
  }
  // Looks an entry up without expiring it or counting an access (eviction).
  Entry* Peek(std::string_view key) { return dict_.Find(key); }
  // What the entry of `key` holds, as MEMORY USAGE reports it: its node
  // (the key and the inline value), its bucket pointer, the value's heap
  // bytes and its TTL record.
  static size_t EntryMemory(std::string_view key, const Entry& e) {
    return KeyspaceNode::AllocationSize(e.value.slot_words(), key.size()) + sizeof(void*) + e.value.heap_bytes() +
           (e.has_expire() ? ExpireIndex::kBytesPerRecord : 0);
  }
  // True when `key` is still stored but its TTL has passed (WATCH).
  bool IsLogicallyExpired(std::string_view key, int64_t now_ms) {
    const Entry* e = dict_.Find(key);
    return e != nullptr && IsExpired(*e, now_ms);
  }
  // Incremental rehashing from the cron: moves buckets for up to budget_us.
  void RehashFor(int64_t budget_us);
  size_t bucket_bytes() const { return dict_.bucket_bytes(); }
  // DEBUG HTSTATS: the key table's report (core/hash_table_stats.h), and
  // the expiry index's, whose map has one entry per slot.
  std::string KeyTableStatsText() const { return DictStatsText(dict_); }
  std::string ExpireTableStatsText() const { return FormatHashTableStats(0, expires_.TableStats()); }
  // Sizes an empty database for n keys (RDB load).
  void Reserve(size_t n) { dict_.Reserve(n); }
  void set_resize_allowed(bool allowed) { dict_.set_resize_allowed(allowed); }

  // One round of active expiry: samples up to `samples` keys with a TTL and
  // deletes the expired ones. Returns how many were expired.
  int ExpireSample(int64_t now_ms, int samples, absl::BitGen& rng);
  // Deletes a key chosen for eviction, telling the observer first.
  void Evict(std::string_view key);

  int index() const { return index_; }
  void set_index(int index) { index_ = index; }

  // Cluster mode: keys indexed by hash slot from now on (the keys present
  // are indexed here). Without it (standalone) slot_index() is null.
  void EnableSlotIndex();
  const SlotIndex* slot_index() const { return slot_index_.get(); }

  // Snapshots without fork (KeyspaceSnapshot). Attach starts a new snapshot
  // epoch: every entry is then "not written" until the snapshot writes it
  // (Snapshotted), and every change to an entry -- through Find*, Erase,
  // SetExpire, or the whole table -- first gives `capture` the old state.
  // Entries created meanwhile belong to the next snapshot. One snapshot at
  // a time; Detach before the capture object goes.
  void AttachSnapshot(SnapshotCapture* capture);
  // `walked_all`: every entry was written (or the table emptied) by it.
  void DetachSnapshot(bool walked_all);
  bool snapshot_attached() const { return capture_ != nullptr; }
  bool Snapshotted(const Entry& e) const { return e.snap() == epoch_; }
  void MarkSnapshotted(Entry& e) const { e.set_snap(epoch_); }
  // One SCAN step over every entry, expired ones included (the walk).
  template <typename Fn>
  uint64_t SnapshotScan(uint64_t cursor, Fn&& fn) {
    return dict_.Scan(cursor, [&](NodeKey key, Entry& entry) { fn(key.view(), entry); });
  }
  // Every entry, expired ones included (CaptureRest).
  template <typename Fn>
  void ForEachEntry(Fn&& fn) {
    dict_.ForEach([&](NodeKey key, Entry& entry) { fn(key.view(), entry); });
  }

 private:
  // The write barrier of a running snapshot: one test when none runs.
  void BeforeChange(std::string_view key, Entry& e) {
    if (capture_ != nullptr && e.snap() != epoch_) [[unlikely]] CaptureForSnapshot(key, e);
  }
  Entry* FindForReadLookUp(std::string_view key, int64_t now_ms, bool touch);
  // Dict::Hash(key), or the known one when `key` is the known key's view.
  uint64_t HashOf(std::string_view key) const {
    const KnownKeyHash& k = **known_hash_;
    return key.data() == k.data && key.size() == k.size ? k.hash : KeyTable::Hash(key);
  }
  // The known key's entry when `key` is the known key's view, the entry was
  // found in this database and no node left the table since; nullptr
  // otherwise (look the key up).
  Entry* KnownEntryOf(std::string_view key) const {
    const KnownKeyHash& k = **known_hash_;
    if (k.found.entry != nullptr && key.data() == k.data && key.size() == k.size && k.found.db == this &&
        k.found.removals == dict_.removals()) {
      // This database's own entry, still in its table: the lookups that
      // take it (LookUp, FindOrInsert) hand it out for writing as they
      // would the one they found.
      return const_cast<Entry*>(k.found.entry);
    }
    return nullptr;
  }
  // SetExpire's change.
  void ChangeExpire(std::string_view key, Entry* e, int64_t when_ms);
  // Records an access (LRU clock / LFU counter) on e.
  inline void Touch(Entry& e, int64_t now_ms);
  // FindNoTouch's body, inlined into Find too (keyspace.cc).
  [[gnu::always_inline]] inline Entry* LookUp(std::string_view key, int64_t now_ms);
  // Out of line and cold, so the lookups that call BeforeChange stay small.
  [[gnu::noinline, gnu::cold]] void CaptureForSnapshot(std::string_view key, Entry& e);
  void BeforeTableChange() {
    if (capture_ != nullptr) [[unlikely]] capture_->CaptureRest(*this);
  }
  // Clear / Detach while a snapshot runs: the table goes to it in O(1).
  void GiveTableToSnapshot();
  // Removes an expired key, telling the observer first.
  void DeleteExpired(std::string_view key);
  bool IsExpired(const Entry& e, int64_t now_ms) const { return e.has_expire() && expires_.When(e) <= now_ms; }

  KeyTable dict_;
  ExpireIndex expires_;
  int index_;
  KeyspaceStats* stats_;
  const AccessPolicy* access_;
  absl::BitGen* rng_;
  KeyspaceObserver* const* observer_;  // the keyspace's observer slot
  const ExpiryMode* expiry_mode_;      // the keyspace's mode
  const bool* in_write_command_;       // the keyspace's flag
  const KnownKeyHash* const* known_hash_;  // the keyspace's (the open scope's, or none)
  std::unique_ptr<SlotIndex> slot_index_;  // cluster mode only
  SnapshotCapture* capture_ = nullptr;     // the running snapshot's, if any
  // The snapshot epoch, and how many snapshots started since the last one
  // that wrote every entry: while that stays under 255, an entry's mark is
  // one of the last few epochs and never mistaken for the current one.
  uint8_t epoch_ = 0;
  uint8_t epochs_since_full_walk_ = 0;
};

class Keyspace {
 public:
  explicit Keyspace(int databases);
  ~Keyspace();
  // How accesses are recorded (maxmemory-policy & co.); set by the server.
  AccessPolicy& access_policy() { return *access_; }
  int count() const { return static_cast<int>(dbs_.size()); }
  // Where a table a running snapshot took from an emptied database goes
  // once walked (Database::Clear / Detach): the server's lazy-free thread;
  // unset, it is freed here.
  using TableRelease = std::function<void(std::unique_ptr<DetachedData>)>;
  void set_table_release(TableRelease release) { table_release_ = std::move(release); }
  void ReleaseTable(std::unique_ptr<DetachedData> table) {
    if (table_release_) table_release_(std::move(table));
  }
  Database& db(int index) { return *dbs_[index]; }
  KeyspaceStats& stats() { return stats_; }
  void SwapDb(int a, int b) {
    std::swap(dbs_[a], dbs_[b]);
    dbs_[a]->set_index(a);
    dbs_[b]->set_index(b);
  }
  // A fork child shares the keyspace copy-on-write while `active`: no access
  // stats are recorded, tables are not resized and the cron does not rehash,
  // so the parent dirties as few shared pages as it can (Redis's policy).
  void SetForkChildActive(bool active);
  // Receives expired and evicted keys (nullptr: nobody is told).
  void set_observer(KeyspaceObserver* observer) { observer_ = observer; }
  // Cluster mode: every database keeps a SlotIndex (Database::EnableSlotIndex).
  void EnableSlotIndexes() {
    for (auto& db : dbs_) db->EnableSlotIndex();
  }
  // A write command runs (the server says so around each command): then
  // even its read lookups (XACK's, XCLAIM's) pass a running snapshot's
  // barrier, so no command flagged write can change an entry the snapshot
  // has not written. Returns the previous value (commands nest: EXEC,
  // scripts).
  bool set_in_write_command(bool on) { return std::exchange(in_write_command_, on); }
  // While it lives, lookups of `key` -- that very view -- in any database
  // use `hash` (== Database::KeyHash(key)) instead of hashing it again
  // (KnownKeyHash); in the database `found` was found in (Database::Found),
  // and only while no node left its table since, they take `found.entry`
  // as the key's instead of walking the bucket (KnownEntry). The view must
  // stay valid and unchanged meanwhile. A nested command's scope puts back
  // the outer one's on its way out.
  class KnownKeyHashScope {
   public:
    // The scope holds what is known; the keyspace points at it, so that
    // opening and closing one copies a pointer, not the record.
    KnownKeyHashScope(Keyspace& ks, std::string_view key, uint64_t hash, KnownEntry found = {})
        : known_{key.data(), key.size(), hash, found}, slot_(ks.known_hash_), outer_(std::exchange(slot_, &known_)) {}
    ~KnownKeyHashScope() { slot_ = outer_; }
    KnownKeyHashScope(const KnownKeyHashScope&) = delete;
    KnownKeyHashScope& operator=(const KnownKeyHashScope&) = delete;

   private:
    const KnownKeyHash known_;
    const KnownKeyHash*& slot_;
    const KnownKeyHash* outer_;
  };
  // What lookups do with expired keys (kDelete until the server says otherwise).
  ExpiryMode expiry_mode() const { return expiry_mode_; }
  void set_expiry_mode(ExpiryMode mode) { expiry_mode_ = mode; }

  // Active expiry across all databases within `budget_us` microseconds, as
  // Redis's activeExpireCycle: sample 20 keys per database, repeat while more
  // than 10% of a sample was stale. `effort` (active-expire-effort less one,
  // 0 to 9) samples 5 more keys per step and accepts 1% less staleness per
  // unit; the caller scales the budget.
  void ActiveExpireCycle(int64_t now_ms, int64_t budget_us, int effort = 0);
  // Incremental rehashing of every database within budget_us (the cron's share).
  void RehashCron(int64_t budget_us);
  absl::BitGen& rng() { return rng_; }
  // The collection encoding thresholds (hash-max-listpack-entries & co.),
  // kept here by the server's config: commands and loaders read them.
  CollectionLimits& limits() { return limits_; }
  const CollectionLimits& limits() const { return limits_; }

 private:
  KeyspaceStats stats_;
  CollectionLimits limits_;
  KeyspaceObserver* observer_ = nullptr;
  ExpiryMode expiry_mode_ = ExpiryMode::kDelete;
  bool in_write_command_ = false;
  bool fork_child_active_ = false;
  const KnownKeyHash no_known_hash_;  // with no scope open
  const KnownKeyHash* known_hash_ = &no_known_hash_;
  std::unique_ptr<AccessPolicy> access_;
  absl::BitGen rng_;
  std::vector<std::unique_ptr<Database>> dbs_;
  TableRelease table_release_;
};

}  // namespace ringkv::core

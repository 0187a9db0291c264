// Dict<V>: the keyspace's hash table. Chained, incrementally rehashed, with a
// SCAN cursor that survives resizes -- the properties Redis's dict has and
// that open-addressing tables (absl::flat_hash_map) cannot offer:
//
//  * No operation pauses for a full rehash. Growing or shrinking allocates
//    the new bucket array and then moves buckets a few at a time: one step
//    per Find/Insert/Erase, plus RehashFor(budget) from the cron.
//  * Scan(cursor) returns every key present for the whole scan at least once,
//    whatever resizes happen between calls. The cursor is Redis's
//    reverse-binary counter: it walks bucket indices with their bits
//    reversed, so the buckets a key can move to on a resize (same low bits,
//    one more high bit) come after the bucket already visited.
//  * RandomNode() picks a random key in O(1) expected time (RANDOMKEY,
//    eviction sampling).
//
// Nodes hold the key inline next to the value: one allocation per key. The
// node type is a parameter: DictNode (a core::Key and the value) by
// default; the keyspace's KeyspaceNode (core/keyspace_node.h) sizes each
// node to its key. A node type has `next` and `value` members, a key()
// with view() and Equals(), and Create(key, value_hint) / Destroy(node).
// Pointers to values stay valid until that key is erased (rehashing moves
// nodes, never values).
//
// Thread-safety: none; owned by one thread.
#pragma once

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>
#include <type_traits>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/random/random.h"
#include "core/alloc_stats.h"
#include "core/hash_table_stats.h"
#include "core/key.h"

namespace ringkv::core {

// The default node: the key in a core::Key (inline up to 23 bytes) and a
// value-initialized V.
template <typename V>
class DictNode {
 public:
  V value{};
  DictNode* next = nullptr;

  const Key& key() const { return key_; }
  static DictNode* Create(std::string_view key, size_t /*value_hint*/) { return new DictNode(key); }
  static void Destroy(DictNode* n) noexcept { delete n; }

 private:
  explicit DictNode(std::string_view key) : key_(key) {}
  Key key_;
};

// kCountRemovals: the Dict counts the times nodes leave it (removals()),
// which the keyspace's lookups need (core::KnownEntry); the collections'
// tables do without it and stay 48 bytes.
template <typename V, typename NodeT = DictNode<V>, bool kCountRemovals = false>
class Dict {
 public:
  using Node = NodeT;

  Dict() = default;
  Dict(const Dict&) = delete;
  Dict& operator=(const Dict&) = delete;
  Dict(Dict&& o) noexcept { Swap(o); }
  Dict& operator=(Dict&& o) noexcept {
    if (this != &o) {
      Clear();
      Swap(o);
    }
    return *this;
  }
  ~Dict() { Clear(); }

  size_t size() const { return t_[0].used + t_[1].used; }
  // Counts the times nodes left this table (Erase, Clear, Swap -- and so
  // moves): a node found while removals() was s is still this table's, at
  // the same address, while removals() == s (nodes never move otherwise).
  uint64_t removals() const
    requires kCountRemovals
  {
    return removals_.count;
  }
  // The rehash step a lookup takes (Find, FindHashed), for a caller that
  // found its node another way (removals()).
  void StepRehash() {
    if (rehashing()) RehashStep();
  }
  size_t buckets() const { return t_[0].size() + t_[1].size(); }
  bool rehashing() const { return rehash_index_ >= 0; }

  V* Find(std::string_view key) {
    Node* n = FindNode(key);
    return n ? &n->value : nullptr;
  }
  // As Find, with `h` == Hash(key) already computed.
  V* FindHashed(std::string_view key, uint64_t h) {
    if (size() == 0) return nullptr;
    if (rehashing()) RehashStep();
    Node* n = FindNode(key, h);
    return n ? &n->value : nullptr;
  }

  // Finds key or inserts it with a default-constructed value.
  std::pair<V*, bool> Insert(std::string_view key) {
    auto [n, inserted] = InsertNode(key);
    return {&n->value, inserted};
  }
  // As Insert, returning the node: its key's bytes stay put until the node
  // is erased (nodes never move, rehashing relinks them).
  std::pair<Node*, bool> InsertNode(std::string_view key) { return InsertNodeHashed(key, Hash(key)); }
  // As InsertNode, with `h` == Hash(key) already computed.
  // `value_hint` is passed to Node::Create for a node created here.
  std::pair<Node*, bool> InsertNodeHashed(std::string_view key, uint64_t h, size_t value_hint = 0) {
    if (rehashing()) RehashStep();
    if (Node* n = FindNode(key, h)) return {n, false};
    GrowIfNeeded();
    Table& t = rehashing() ? t_[1] : t_[0];
    Node* n = Node::Create(key, value_hint);
    Node*& head = t.buckets[h & t.mask()];
    n->next = head;
    head = n;
    ++t.used;
    return {n, true};
  }

  bool Erase(std::string_view key) {
    if (rehashing()) RehashStep();
    const uint64_t h = Hash(key);
    for (int i = 0; i < 2; ++i) {
      Table& t = t_[i];
      if (t.buckets == nullptr) continue;
      Node** link = &t.buckets[h & t.mask()];
      for (Node* n = *link; n != nullptr; link = &n->next, n = n->next) {
        if (n->key().Equals(key)) {
          *link = n->next;
          CountRemoval();
          Node::Destroy(n);
          --t.used;
          ShrinkIfNeeded();
          return true;
        }
      }
      if (!rehashing()) break;
    }
    return false;
  }

  void Clear() {
    CountRemoval();
    for (Table& t : t_) {
      for (uint64_t b = 0; b < t.size(); ++b) {
        for (Node* n = t.buckets[b]; n != nullptr;) {
          Node* next = n->next;
          Node::Destroy(n);
          n = next;
        }
      }
      FreeBuckets(t);
      t = Table{};
    }
    rehash_index_ = -1;
  }

  void Swap(Dict& other) {
    CountRemoval();
    other.CountRemoval();
    std::swap(t_, other.t_);
    std::swap(rehash_index_, other.rehash_index_);
  }

  // Moves up to `steps` buckets to the new table. Returns true while work remains.
  bool Rehash(int steps) {
    if (!rehashing()) return false;
    int empty_visits = steps * 10;  // bound the time spent skipping empty buckets
    while (steps-- > 0 && t_[0].used > 0) {
      while (t_[0].buckets[rehash_index_] == nullptr) {
        ++rehash_index_;
        if (--empty_visits == 0) return true;
      }
      for (Node* n = t_[0].buckets[rehash_index_]; n != nullptr;) {
        Node* next = n->next;
        Node*& head = t_[1].buckets[Hash(n->key().view()) & t_[1].mask()];
        n->next = head;
        head = n;
        --t_[0].used;
        ++t_[1].used;
        n = next;
      }
      t_[0].buckets[rehash_index_++] = nullptr;
    }
    if (t_[0].used == 0) {
      FreeBuckets(t_[0]);
      t_[0] = t_[1];
      t_[1] = Table{};
      rehash_index_ = -1;
      return false;
    }
    return true;
  }

  // Visits the buckets at `cursor` and returns the next cursor (0 = done).
  // fn(key, V&) (key: Node::key()'s type) must not insert or erase.
  template <typename Fn>
  uint64_t Scan(uint64_t cursor, Fn fn) {
    if (size() == 0) return 0;
    uint64_t v = cursor;
    if (!rehashing()) {
      const Table& t = t_[0];
      VisitBucket(t, v & t.mask(), fn);
      v |= ~t.mask();
      v = ReverseBits(ReverseBits(v) + 1);
      return v;
    }
    // Rehashing: visit the small table's bucket, then every bucket of the
    // large table that the small bucket expands into.
    const Table* small = &t_[0];
    const Table* large = &t_[1];
    if (small->size() > large->size()) std::swap(small, large);
    const uint64_t m0 = small->mask(), m1 = large->mask();
    VisitBucket(*small, v & m0, fn);
    do {
      VisitBucket(*large, v & m1, fn);
      v |= ~m1;
      v = ReverseBits(ReverseBits(v) + 1);
    } while (v & (m0 ^ m1));
    return v;
  }

  // Every node, in table order. fn(key, V&) (key: Node::key()'s type) must not insert or erase.
  template <typename Fn>
  void ForEach(Fn fn) {
    for (Table& t : t_) {
      for (uint64_t b = 0; b < t.size(); ++b) {
        for (Node* n = t.buckets[b]; n != nullptr; n = n->next) fn(n->key(), n->value);
      }
    }
  }

  // A uniformly chosen non-empty bucket, then a uniform node of its chain
  // (Redis's dictGetFairRandomKey is close enough for sampling). nullptr if empty.
  Node* RandomNode(absl::BitGen& rng) {
    if (size() == 0) return nullptr;
    if (rehashing()) RehashStep();
    Node* head = nullptr;
    for (int guard = 0; head == nullptr; ++guard) {
      if (rehashing()) {
        // Buckets below rehash_index_ in the old table are empty.
        uint64_t span = t_[0].size() + t_[1].size() - static_cast<uint64_t>(rehash_index_);
        uint64_t i = static_cast<uint64_t>(rehash_index_) + absl::Uniform<uint64_t>(rng, 0, span);
        head = i >= t_[0].size() ? t_[1].buckets[i - t_[0].size()] : t_[0].buckets[i];
      } else {
        head = t_[0].buckets[absl::Uniform<uint64_t>(rng, 0, t_[0].size())];
      }
      if (guard > 1000000) return nullptr;  // unreachable while size() > 0
    }
    size_t len = 0;
    for (Node* n = head; n != nullptr; n = n->next) ++len;
    size_t pick = absl::Uniform<size_t>(rng, 0, len);
    while (pick-- > 0) head = head->next;
    return head;
  }

  // A random node, close to uniform, as Redis's dictGetFairRandomKey: up
  // to 20 nodes gathered from consecutive buckets after a random one, then
  // one of those at random. (RandomNode favours the keys of short chains;
  // SRANDMEMBER, SPOP and HRANDFIELD use this one, whose distribution the
  // suite checks.) A small table is sampled whole: exactly uniform.
  Node* FairRandomNode(absl::BitGen& rng) {
    constexpr size_t kSample = 20;
    if (size() == 0) return nullptr;
    if (rehashing()) RehashStep();
    if (rehashing()) return RandomNode(rng);
    const Table& t = t_[0];
    Node* found[kSample];
    size_t n = 0;
    uint64_t i = absl::Uniform<uint64_t>(rng, 0, t.size());
    for (uint64_t visited = 0; visited < t.size() && visited < kSample * 10 && n < kSample; ++visited) {
      for (Node* x = t.buckets[i]; x != nullptr && n < kSample; x = x->next) found[n++] = x;
      i = (i + 1) & t.mask();
    }
    if (n == 0) return RandomNode(rng);
    return found[absl::Uniform<size_t>(rng, 0, n)];
  }

  // A lookup of `key` prefetched in rounds, ahead of the commands of a
  // pipelined batch, hashing the key once:
  //   Bucket b = d.PrefetchBucket(key);     // round 0: hints its bucket slot
  //   Dict::PrefetchChain(b);               // round 1: hints the chain's first node
  //   const V* v = d.FindInBucket(b, key);  // round 2: the value, if present
  // The bucket is the one that holds the key now (rehashing or not) and
  // stays valid until the dict changes (an insert, erase or rehash step).
  // Pure hints and const lookups: no state changes.
  using Bucket = Node* const*;
  // nullptr when the dict is empty (nothing to look up).
  Bucket PrefetchBucket(std::string_view key) const { return PrefetchBucketHashed(Hash(key)); }
  // As PrefetchBucket, for the key whose Hash is `h`.
  Bucket PrefetchBucketHashed(uint64_t h) const {
    if (size() == 0) return nullptr;
    const Table& t = (rehashing() && (h & t_[0].mask()) < static_cast<uint64_t>(rehash_index_)) ? t_[1] : t_[0];
    Bucket slot = &t.buckets[h & t.mask()];
    __builtin_prefetch(slot);
    return slot;
  }
  // False when the bucket is empty (the key is not there).
  // REQUIRES: `b` from PrefetchBucket, the dict unchanged since.
  static bool PrefetchChain(Bucket b) {
    if (*b == nullptr) return false;
    __builtin_prefetch(*b);
    return true;
  }
  // REQUIRES: `b` from PrefetchBucket(key), the dict unchanged since.
  static const V* FindInBucket(Bucket b, std::string_view key) {
    for (const Node* n = *b; n != nullptr; n = n->next) {
      if (n->key().Equals(key)) return &n->value;
    }
    return nullptr;
  }

  // Sizes an empty table for n keys up front (RDB load: RESIZEDB), so loading
  // does not rehash its way up through every power of two.
  void Reserve(size_t n) {
    if (size() != 0 || rehashing() || n <= t_[0].size()) return;
    if (n > (size_t{1} << 40)) return;  // no table that big could be allocated anyway
    uint64_t target = 4;
    while (target < n) target *= 2;
    FreeBuckets(t_[0]);
    t_[0] = Table{};
    StartResize(target);
  }
  // While a fork child shares memory copy-on-write, resizing would touch
  // every bucket page: allowed only past 5 keys per bucket (Redis's
  // dict_force_resize_ratio), and never to shrink.
  void set_resize_allowed(bool allowed) { resize_allowed_ = allowed; }
  // Redis's dictExpandAllowed (maxmemory): the owner may hold the next
  // doubling back while it would take memory past the limit; the table then
  // grows only once it is 1.618 full (HASHTABLE_MAX_LOAD_FACTOR), where
  // chains get long enough to cost more than the memory.
  bool WouldGrowOnInsert() const {
    return !rehashing() && t_[0].buckets != nullptr && t_[0].used >= t_[0].size();
  }
  size_t GrowthBytes() const { return t_[0].size() * 2 * sizeof(Node*); }
  void set_grow_held(bool held) { grow_held_ = held; }

  // Starts a shrink if the table is mostly empty (called by the cron too, so a
  // table that stopped changing still shrinks, as Redis's tryResizeHashTables).
  void ResizeIfNeeded() { ShrinkIfNeeded(); }

  // The hash every Dict uses for `key` (absl::Hash: seeded per process).
  static uint64_t Hash(std::string_view key) {
    return absl::Hash<absl::string_view>{}(absl::string_view(key.data(), key.size()));
  }

  // Bytes of bucket arrays (MEMORY USAGE / INFO overheads).
  size_t bucket_bytes() const { return buckets() * sizeof(Node*); }

  // How table `i`'s entries lie in its buckets (DEBUG HTSTATS). O(buckets).
  // REQUIRES: i == 0, or i == 1 while rehashing().
  HashTableStats TableStats(int i) const {
    HashTableStats s;
    const Table& t = t_[i];
    for (uint64_t b = 0; b < t.size(); ++b) {
      uint64_t chain = 0;
      for (const Node* n = t.buckets[b]; n != nullptr; n = n->next) ++chain;
      s.AddBucket(chain);
    }
    s.used = t.used;
    return s;
  }

 private:
  // 16 bytes (the size as a power of two, as Redis 7.0 keeps it), so that a
  // Dict is 48 (without kCountRemovals): every hash-table encoded hash, set
  // and sorted set has one.
  struct Table {
    Node** buckets = nullptr;
    uint64_t used : 58 = 0;
    uint64_t log2_size : 6 = 0;
    uint64_t mask() const { return (uint64_t{1} << log2_size) - 1; }  // 0 while empty
    uint64_t size() const { return buckets ? uint64_t{1} << log2_size : 0; }
  };

  static uint64_t ReverseBits(uint64_t v) {
    v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
    v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
    v = ((v >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((v & 0x0F0F0F0F0F0F0F0Full) << 4);
    return __builtin_bswap64(v);
  }

  Node* FindNode(std::string_view key) {
    if (size() == 0) return nullptr;
    if (rehashing()) RehashStep();
    return FindNode(key, Hash(key));
  }
  Node* FindNode(std::string_view key, uint64_t h) {
    for (int i = 0; i < 2; ++i) {
      Table& t = t_[i];
      if (t.buckets == nullptr) continue;
      for (Node* n = t.buckets[h & t.mask()]; n != nullptr; n = n->next) {
        if (n->key().Equals(key)) return n;
      }
      if (!rehashing()) break;
    }
    return nullptr;
  }

  template <typename Fn>
  static void VisitBucket(const Table& t, uint64_t b, Fn& fn) {
    for (Node* n = t.buckets[b]; n != nullptr;) {
      Node* next = n->next;  // fn may not erase, but keep the walk robust
      fn(n->key(), n->value);
      n = next;
    }
  }

  void RehashStep() { Rehash(1); }

  // Large bucket arrays are mapped straight from the kernel: its zero pages
  // are faulted in as rehashing reaches them, so growing a 10M-key table
  // costs no single command more than the map call. Zero-filling through the
  // allocator (new[]() or calloc on mimalloc) took 565 ms at 16M buckets on
  // this VM, inside one SET (SLOWLOG, perf/load_latency.sh).
  // Smaller arrays come from operator new, like every other allocation, so
  // that the server counts them and keeps them out of a fork's way
  // (io/fork_gate.h): the lazy-free thread frees them too.
  static constexpr size_t kMapThreshold = 1 << 20;
  static Node** AllocBuckets(uint64_t n) {
    const size_t bytes = n * sizeof(Node*);
    if (bytes < kMapThreshold) return static_cast<Node**>(std::memset(::operator new(bytes), 0, bytes));
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    ExternalAllocatedBytes().fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
    return static_cast<Node**>(p);
  }
  static void FreeBuckets(Table& t) {
    if (t.buckets == nullptr) return;
    const size_t bytes = t.size() * sizeof(Node*);
    if (bytes < kMapThreshold) {
      ::operator delete(t.buckets);
      return;
    }
    ExternalAllocatedBytes().fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
    munmap(t.buckets, bytes);
  }

  void StartResize(uint64_t new_size) {
    Table t;
    t.buckets = AllocBuckets(new_size);
    t.log2_size = static_cast<uint64_t>(__builtin_ctzll(new_size));
    if (t_[0].buckets == nullptr) {
      t_[0] = t;
      return;
    }
    t_[1] = t;
    rehash_index_ = 0;
    // A small table is moved at once: at most kRehashAtOnce buckets and
    // entries, and no half-moved pair of arrays left behind in each of the
    // many small hashes, sets and sorted sets that stop growing mid-rehash.
    if (t_[0].size() <= kRehashAtOnce) {
      while (Rehash(static_cast<int>(kRehashAtOnce))) {
      }
    }
  }
  static constexpr uint64_t kRehashAtOnce = 128;

  void GrowIfNeeded() {
    if (rehashing()) return;
    if (t_[0].buckets == nullptr) {
      StartResize(4);
    } else if (t_[0].used >= t_[0].size() * (resize_allowed_ ? 1 : 5)) {  // load factor 1, as Redis
      if (grow_held_ && t_[0].used * 1000 <= t_[0].size() * 1618) return;
      StartResize(t_[0].size() * 2);
    }
  }

  void ShrinkIfNeeded() {
    // Below 1/8 full: halve until it fits (Redis shrinks below 10% in the cron).
    if (!resize_allowed_ || rehashing() || t_[0].size() <= 4 || t_[0].used * 8 >= t_[0].size()) return;
    uint64_t target = 4;
    while (target < t_[0].used * 2) target *= 2;
    StartResize(target);
  }

  struct RemovalCount {
    uint64_t count = 0;
  };
  struct NoRemovalCount {};
  void CountRemoval() {
    if constexpr (kCountRemovals) ++removals_.count;
  }

  Table t_[2];
  int64_t rehash_index_ = -1;
  bool resize_allowed_ = true;
  bool grow_held_ = false;
  // Not swapped: it counts this object's removals.
  [[no_unique_address]] std::conditional_t<kCountRemovals, RemovalCount, NoRemovalCount> removals_;
};

}  // namespace ringkv::core

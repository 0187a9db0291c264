// StreamValue: a Redis stream as Redis 7.0 stores it -- an ordered index of
// listpack nodes keyed by each node's master ID, every node byte-identical
// to one of Redis's (so an RDB file stores it verbatim), plus the stream's
// counters and its consumer groups.
//
// Node layout (Redis's t_stream.c), all elements listpack integers or strings:
//   master entry: count deleted num-fields field_1 .. field_N 0
//   each entry:   flags ms-diff seq-diff [values_1..N          ] lp-count  (SAMEFIELDS)
//                 flags ms-diff seq-diff num-fields f_1 v_1 .. lp-count  (otherwise)
// `count` is the live entries, `deleted` the entries flagged DELETED but
// still present; ms-diff / seq-diff are relative to the master ID (the key);
// lp-count is the number of elements of the entry before it, so a node can
// be walked backwards. An entry whose fields are the master's, in order,
// keeps only its values (the master-entry field compression).
//
// A new node starts when the last one reached stream-node-max-bytes
// (counting the new entry's field and value bytes) or stream-node-max-entries
// (live plus deleted entries), as Redis's streamAppendItem decides.
//
// Sealed nodes: every node but the last (the open node, which XADD appends
// to) is kept at its exact size rounded to 8 bytes (Listpack::MakeExact,
// core/exact_size_slabs.h) rather than in a size class: the node that
// XADD leaves behind is sealed then, and a node read from an RDB file or a
// DUMP payload when the next one follows it. After sealing a node only
// changes in place (XDEL's and trimming's deleted flags, its counters) or
// goes whole, and when the open node is deleted whole the last sealed node
// takes appends again (each one then moves its bytes, a rare case).
//
// Consumer groups keep their pending entries (PEL) as Redis does: the
// group owns one Nack per pending ID, and each consumer indexes the Nacks it
// owns.
//
// Example:
//   StreamValue s;
//   StreamId id{1, 0};
//   s.Append(id, {"f", "v"}, limits);
//   s.Range(StreamId::Min(), StreamId::Max(), false, [](StreamId id, FieldValues fv) { ...; return true; });
//
// Thread-safety: none; a value of the keyspace. Pointers to groups,
// consumers and nacks stay valid until those are removed.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/functional/function_ref.h"
#include "core/listpack.h"

namespace ringkv::core {

struct StreamId {
  uint64_t ms = 0;
  uint64_t seq = 0;
  auto operator<=>(const StreamId&) const = default;
  static constexpr StreamId Min() { return {0, 0}; }
  static constexpr StreamId Max() { return {UINT64_MAX, UINT64_MAX}; }
  bool is_zero() const { return ms == 0 && seq == 0; }
  std::string ToString() const;
  // Writes "<ms>-<seq>" into buf (at least kMaxText bytes); returns its length.
  static constexpr size_t kMaxText = 41;
  size_t Format(char* buf) const;
  // The next / previous ID; false on overflow / underflow (ID unchanged).
  bool Incr();
  bool Decr();
  // 16 bytes, big-endian ms then seq (the key of Redis's rax, RDB's node key).
  std::string Encode() const;
  static bool Decode(std::string_view bytes, StreamId* out);
};

// stream-node-max-bytes / stream-node-max-entries (0: unlimited).
struct StreamLimits {
  int64_t node_max_bytes = 4096;
  int64_t node_max_entries = 100;
};

// An entry's fields and values, alternating (views valid during a callback).
using FieldValues = std::span<const std::string_view>;

struct StreamConsumer;

// A pending entry of a group: delivered, not yet acknowledged.
struct StreamNack {
  int64_t delivery_time = 0;  // ms
  uint64_t delivery_count = 1;
  StreamConsumer* consumer = nullptr;
};

// Memory per pending entry: a 40-byte slot in the group's B-tree (the nack
// in place) and a 16-byte one in its consumer's -- about 60 bytes with the
// trees' nodes, where Redis keeps a rax entry in each and a separate
// 24-byte streamNACK (about 85).
struct StreamConsumer {
  std::string name;
  int64_t seen_time = 0;
  // The ids of the group's nacks it owns; each nack is in StreamGroup::pel.
  absl::btree_set<StreamId> pel;
};

struct StreamGroup {
  static constexpr int64_t kInvalidEntriesRead = -1;
  StreamId last_id;
  int64_t entries_read = kInvalidEntriesRead;
  // The nacks in place: a pointer to one stays valid until the next insert
  // or erase in this map (never across one).
  absl::btree_map<StreamId, StreamNack> pel;
  absl::btree_map<std::string, std::unique_ptr<StreamConsumer>, std::less<>> consumers;

  // The consumer named `name`, or nullptr.
  StreamConsumer* FindConsumer(std::string_view name) const;
  // Creates it (REQUIRES: absent), seen now.
  StreamConsumer* CreateConsumer(std::string_view name, int64_t now_ms);
  // Deletes it and its pending entries; returns how many were pending.
  size_t DeleteConsumer(std::string_view name);
};

class StreamValue {
 public:
  using Groups = absl::btree_map<std::string, std::unique_ptr<StreamGroup>, std::less<>>;

  StreamValue() = default;
  StreamValue(StreamValue&&) noexcept = default;
  StreamValue& operator=(StreamValue&&) noexcept = default;

  size_t size() const { return length_; }
  size_t node_count() const { return nodes_.size(); }
  StreamId last_id() const { return last_id_; }
  StreamId first_id() const { return first_id_; }
  StreamId max_deleted_id() const { return max_deleted_id_; }
  uint64_t entries_added() const { return entries_added_; }
  void set_last_id(StreamId id) { last_id_ = id; }
  void set_entries_added(uint64_t n) { entries_added_ = n; }
  void set_max_deleted_id(StreamId id) { max_deleted_id_ = id; }
  void set_first_id(StreamId id) { first_id_ = id; }
  void set_length(size_t n) { length_ = n; }

  // Appends an entry. REQUIRES: id > last_id(), fv non-empty and even.
  // Updates last_id, entries_added and (for the first entry) first_id.
  void Append(StreamId id, FieldValues fv, const StreamLimits& limits);

  // Calls fn(id, fields and values) for live entries with start <= id <= end,
  // ascending (or descending with `reverse`), until fn returns false.
  void Range(StreamId start, StreamId end, bool reverse,
             absl::FunctionRef<bool(StreamId, FieldValues)> fn) const;
  // The first (or last) live entry's ID; false when empty.
  bool EdgeId(bool first, StreamId* out) const;
  // Whether the entry `id` is live.
  bool Contains(StreamId id) const;

  // XDEL: deletes the entry `id`; false when there is none. Keeps
  // first_id and max_deleted_id as Redis 7.0 does.
  bool Delete(StreamId id);

  // XTRIM / XADD's trimming. MAXLEN keeps the newest `maxlen` entries, MINID
  // removes entries below `minid`. With `approx`, only whole nodes go (and
  // at most `limit` entries, 0: no limit). Returns the entries removed.
  int64_t TrimByLength(int64_t maxlen, bool approx, int64_t limit);
  int64_t TrimByMinId(StreamId minid, bool approx, int64_t limit);

  // Whether an entry was deleted in [start, end] (end defaults to last_id),
  // so a group's entries_read cannot simply be counted on.
  bool RangeHasTombstones(StreamId start, StreamId end) const;
  // The entries-read counter of `id` when it can be known, else
  // StreamGroup::kInvalidEntriesRead (Redis's streamEstimateDistanceFromFirstEverEntry).
  int64_t EstimateDistanceFromFirstEverEntry(StreamId id) const;

  // ---- consumer groups ----
  const Groups& groups() const;
  StreamGroup* FindGroup(std::string_view name) const;
  // nullptr when a group of that name exists.
  StreamGroup* CreateGroup(std::string_view name, StreamId last_id, int64_t entries_read);
  bool DestroyGroup(std::string_view name);

  // ---- nodes, for RDB, DEBUG and tests ----
  // Calls fn(master id, listpack) for each node in ID order.
  void ForEachNode(const std::function<void(StreamId, const Listpack&)>& fn) const;
  // Appends a node read from an RDB file (REQUIRES: validated, master id
  // greater than every node's).
  void AppendNode(StreamId master, Listpack lp);
  // Checks a node read from an RDB file or DUMP payload the way Redis's deep
  // sanitization does: every entry well-formed, IDs ascending within the node
  // and not below `master`. Counts its live entries into *live; sets *last
  // to its last entry's ID.
  static bool ValidateNode(StreamId master, const Listpack& lp, size_t* live, StreamId* last);

  std::unique_ptr<StreamValue> Clone() const;
  size_t heap_bytes() const;

 private:
  absl::btree_map<StreamId, Listpack> nodes_;
  size_t length_ = 0;
  StreamId last_id_;
  StreamId first_id_;
  StreamId max_deleted_id_;
  uint64_t entries_added_ = 0;
  std::unique_ptr<Groups> groups_;  // rare: allocated on the first group
};

}  // namespace ringkv::core

// ListValue: a Redis list as Redis 7.0 stores it -- a quicklist: a sequence
// of listpack nodes (OBJECT ENCODING "quicklist"), each filled up to
// list-max-listpack-size (negative: a byte budget of 4, 8, 16, 32 or 64 KiB
// per node; positive: an element count), so pushes and pops at either end
// touch one small node, and every node is exactly what an RDB file stores
// (RDB_TYPE_LIST_QUICKLIST_2, one packed container per node).
//
// list-compress-depth N keeps the N nodes at each end uncompressed and
// LZF-compresses the nodes between them (as Redis does), decompressing a
// node only while it is read or changed. Like a Redis quicklist, a list
// keeps the fill and depth it was created with.
//
// An element of at least the packed threshold (1 GiB; DEBUG
// QUICKLIST-PACKED-THRESHOLD lowers it for tests) gets a node of its own,
// as Redis's "plain" quicklist nodes: nothing else is added to that node.
// (Redis keeps a plain node's bytes raw; here it is a one-element listpack,
// which an RDB file stores as such.)
//
// Indexes are 0-based from the head; negative ones count from the tail.
//
// Example:
//   ListValue l(limits);
//   l.PushBack("a"); l.PushFront("b");   // b a
//   std::string v;
//   l.PopBack(&v);                       // "a"
//
// Thread-safety: none; a value of the keyspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/inlined_vector.h"
#include "core/listpack.h"

namespace ringkv::core {

// Redis's quicklist packed_threshold, process-wide as in Redis. Set: false
// (unchanged) above 4 GiB - 1 MiB; 0 restores the default (1 GiB).
// REQUIRES: the thread that owns the keyspace.
bool SetListPackedThreshold(uint64_t bytes);
size_t ListPackedThreshold();

// list-max-listpack-size / list-compress-depth.
struct ListLimits {
  int32_t fill = -2;
  int32_t compress_depth = 0;
};

class ListValue {
 public:
  explicit ListValue(const ListLimits& limits) : limits_(limits) {}
  ListValue(ListValue&&) noexcept = default;
  ListValue& operator=(ListValue&&) noexcept = default;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t node_count() const { return nodes_.size(); }
  const ListLimits& limits() const { return limits_; }

  void PushFront(std::string_view v);
  void PushBack(std::string_view v);
  // False when the list is empty.
  bool PopFront(std::string* out);
  bool PopBack(std::string* out);
  // The same, at the head (`front`) or the tail: the commands take the end
  // as an argument (LEFT / RIGHT, LPUSH / RPUSH).
  void Push(bool front, std::string_view v) { front ? PushFront(v) : PushBack(v); }
  bool Pop(bool front, std::string* out) { return front ? PopFront(out) : PopBack(out); }

  // The element at `index` (negative: from the tail); false when out of range.
  bool Index(int64_t index, std::string* out) const;
  // Replaces the element at `index`; false when out of range.
  bool Set(int64_t index, std::string_view v);
  // Inserts v before (or after) the first element equal to `pivot`; false
  // when there is no such element.
  bool Insert(std::string_view pivot, std::string_view v, bool after);
  // LREM: removes up to |count| elements equal to v, from the head when
  // count > 0, from the tail when count < 0, all when 0. Returns how many.
  size_t Remove(std::string_view v, int64_t count);
  // Keeps ranks [start, end] (already clipped: start <= end < size()).
  void Keep(size_t start, size_t end);

  // Calls fn for elements from rank `start` onwards -- towards the tail, or
  // towards the head with `reverse` (ranks then count from the tail) -- until
  // fn returns false. Views are valid during the call.
  void Walk(size_t start, bool reverse, const std::function<bool(std::string_view)>& fn) const;

  // Nodes, for RDB and DEBUG OBJECT: each a listpack (decompressed).
  void ForEachNode(const std::function<void(const Listpack&)>& fn) const;
  // Appends a node read from an RDB file (REQUIRES: a valid, non-empty listpack).
  void AppendNode(Listpack node);
  // Bytes of every node's listpack, uncompressed (DEBUG OBJECT).
  size_t packed_bytes() const;
  size_t compressed_nodes() const;

  std::unique_ptr<ListValue> Clone() const;
  size_t heap_bytes() const;

 private:
  struct Node {
    Listpack lp;                         // the elements; empty while compressed
    std::unique_ptr<PackedBuffer> lzf;   // LZF bytes while compressed (only inner
                                         // nodes of a big list: kept out of line)
    uint32_t count = 0;                  // elements, also while compressed
    uint32_t raw_bytes = 0;              // listpack size, also while compressed
    bool plain = false;                  // one element over the packed threshold, alone
    bool is_compressed() const { return lzf != nullptr; }
  };
  static_assert(sizeof(Node) == 40);
  Node& N(size_t i) const { return *nodes_[i]; }

  // Whether a node of `bytes` bytes and `count` elements can take one more
  // element of `size` bytes under the fill rule.
  bool Fits(const Node& node, size_t size) const;
  bool Overfull(const Node& node) const;
  // Decompresses node i (for reading or writing); const because it changes
  // representation only.
  void Decompress(size_t i) const;
  // Re-applies list-compress-depth to the nodes near both ends (where a
  // change moves the boundary) and to `touched`, a node just read or
  // changed. A no-op at depth 0.
  void Settle(size_t touched = SIZE_MAX) const;
  bool ShouldCompress(size_t i) const;
  void Compress(size_t i) const;
  // Splits node i in two when a change left it over the fill rule.
  void SplitIfOverfull(size_t i);
  // After a change that may have put an element over the packed threshold
  // into node i, or a small one into a plain node: splits node i so that
  // each large element has a plain node of its own. Returns how many nodes
  // node i became.
  size_t IsolateLarge(size_t i);
  // The node holding rank `index` (0-based from the head) and the rank of
  // that node's first element.
  size_t NodeOf(size_t index, size_t* first) const;
  void EraseNodeIfEmpty(size_t i);
  void Touch(size_t i) {
    N(i).count = N(i).lp.size();
    N(i).raw_bytes = N(i).lp.byte_size();
  }

  ListLimits limits_;
  // Nodes by pointer: a new head node shifts pointers, not nodes. A
  // one-node list -- every small list -- keeps its pointer inline.
  absl::InlinedVector<std::unique_ptr<Node>, 1> nodes_;
  size_t size_ = 0;
};

}  // namespace ringkv::core

#include "core/list_value.h"

#include <liblzf/lzf.h>

#include <algorithm>
#include <charconv>
#include <vector>

namespace ringkv::core {
namespace {

// Redis's per-node byte budgets for fill -1 .. -5, the cap on positive
// fills, and its estimate of an entry's header and back-length bytes.
constexpr size_t kFillBytes[] = {4096, 8192, 16384, 32768, 65536};
constexpr size_t kSafetyLimit = 8192;
constexpr size_t kEntryOverhead = 8;
// Nodes below this size are not worth compressing; a compression must save
// at least kMinSaving bytes to be kept (Redis's MIN_COMPRESS_BYTES/IMPROVE).
constexpr size_t kMinCompressBytes = 48;
constexpr size_t kMinSaving = 8;

// Redis's packed_threshold (quicklist.c): 1 GiB, at most 4 GiB - 1 MiB.
constexpr size_t kDefaultPackedThreshold = size_t{1} << 30;
constexpr uint64_t kMaxPackedThreshold = (uint64_t{1} << 32) - (uint64_t{1} << 20);
size_t packed_threshold = kDefaultPackedThreshold;

bool IsLarge(size_t size) { return size >= packed_threshold; }

std::string_view Text(const ListpackValue& v, char* scratch) {
  if (!v.is_int) return v.str;
  auto r = std::to_chars(scratch, scratch + 21, v.int_value);
  return {scratch, static_cast<size_t>(r.ptr - scratch)};
}

}  // namespace

bool SetListPackedThreshold(uint64_t bytes) {
  if (bytes > kMaxPackedThreshold) return false;
  packed_threshold = bytes == 0 ? kDefaultPackedThreshold : static_cast<size_t>(bytes);
  return true;
}

size_t ListPackedThreshold() { return packed_threshold; }

bool ListValue::Fits(const Node& node, size_t size) const {
  if (node.plain || IsLarge(size)) return false;
  const size_t new_bytes = node.raw_bytes + size + kEntryOverhead;
  if (limits_.fill < 0) {
    const size_t level = static_cast<size_t>(std::min<int64_t>(-limits_.fill, 5)) - 1;
    return new_bytes <= kFillBytes[level];
  }
  return new_bytes <= kSafetyLimit && node.count < static_cast<size_t>(std::max<int64_t>(limits_.fill, 1));
}

bool ListValue::Overfull(const Node& node) const {
  if (node.count < 2) return false;
  if (limits_.fill < 0) {
    const size_t level = static_cast<size_t>(std::min<int64_t>(-limits_.fill, 5)) - 1;
    return node.raw_bytes > kFillBytes[level];
  }
  return node.raw_bytes > kSafetyLimit || node.count > static_cast<size_t>(std::max<int64_t>(limits_.fill, 1));
}

void ListValue::Decompress(size_t i) const {
  Node& n = N(i);
  if (!n.is_compressed()) return;
  std::string raw(n.raw_bytes, '\0');
  const unsigned got = lzf_decompress(n.lzf->data(), static_cast<unsigned>(n.lzf->size()), raw.data(),
                                      static_cast<unsigned>(raw.size()));
  (void)got;  // our own compressed bytes: always the full size
  n.lp = Listpack::FromBytes(std::move(raw));
  n.lzf.reset();
}

bool ListValue::ShouldCompress(size_t i) const {
  const size_t depth = static_cast<size_t>(std::max<int64_t>(limits_.compress_depth, 0));
  return depth > 0 && nodes_.size() > 2 * depth && i >= depth && i < nodes_.size() - depth;
}

void ListValue::Compress(size_t i) const {
  Node& n = N(i);
  if (n.is_compressed() || n.raw_bytes < kMinCompressBytes) return;
  std::string out(n.raw_bytes, '\0');
  const std::string_view raw = n.lp.bytes();
  const unsigned len = lzf_compress(raw.data(), static_cast<unsigned>(raw.size()), out.data(),
                                    static_cast<unsigned>(out.size()));
  if (len == 0 || len + kMinSaving > raw.size()) return;
  n.lzf = std::make_unique<PackedBuffer>(std::string_view(out.data(), len));
  n.lp = Listpack();
}

void ListValue::Settle(size_t touched) const {
  if (limits_.compress_depth <= 0) return;
  const size_t n = nodes_.size();
  const size_t depth = static_cast<size_t>(limits_.compress_depth);
  auto apply = [&](size_t i) {
    if (i >= n) return;
    if (ShouldCompress(i)) {
      Compress(i);
    } else {
      Decompress(i);
    }
  };
  for (size_t i = 0; i <= depth && i < n; ++i) {
    apply(i);
    apply(n - 1 - i);
  }
  apply(touched);
}

size_t ListValue::NodeOf(size_t index, size_t* first) const {
  if (index >= size_ / 2) {  // nearer the tail: count from there
    size_t last = size_;
    for (size_t i = nodes_.size(); i-- > 0;) {
      last -= N(i).count;
      if (index >= last) {
        *first = last;
        return i;
      }
    }
  }
  size_t start = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (index < start + N(i).count) {
      *first = start;
      return i;
    }
    start += N(i).count;
  }
  *first = start;
  return nodes_.size();
}

void ListValue::EraseNodeIfEmpty(size_t i) {
  if (N(i).count == 0) nodes_.erase(nodes_.begin() + static_cast<std::ptrdiff_t>(i));
}

void ListValue::SplitIfOverfull(size_t i) {
  if (!Overfull(N(i))) return;
  Decompress(i);
  Listpack& lp = N(i).lp;
  const size_t half = lp.size() / 2;
  Node tail;
  for (size_t pos = lp.Seek(static_cast<int64_t>(half)); pos != Listpack::kEnd; pos = lp.Next(pos)) {
    char scratch[24];
    tail.lp.Append(Text(lp.Get(pos), scratch));
  }
  lp.DeleteRange(static_cast<int64_t>(half), lp.size() - half);
  Touch(i);
  nodes_.insert(nodes_.begin() + static_cast<std::ptrdiff_t>(i) + 1, std::make_unique<Node>(std::move(tail)));
  Touch(i + 1);
}

size_t ListValue::IsolateLarge(size_t i) {
  Decompress(i);
  std::vector<std::string> elements;
  char scratch[24];
  const Listpack& lp = N(i).lp;
  for (size_t pos = lp.First(); pos != Listpack::kEnd; pos = lp.Next(pos)) {
    elements.emplace_back(Text(lp.Get(pos), scratch));
  }
  // Runs of small elements stay packed (under the fill rule); each large
  // one gets a plain node.
  std::vector<std::unique_ptr<Node>> parts;
  for (const std::string& e : elements) {
    if (parts.empty() || !Fits(*parts.back(), e.size())) {
      parts.push_back(std::make_unique<Node>());
      parts.back()->plain = IsLarge(e.size());
    }
    Node& n = *parts.back();
    n.lp.Append(e);
    n.count = static_cast<uint32_t>(n.lp.size());
    n.raw_bytes = static_cast<uint32_t>(n.lp.byte_size());
  }
  const size_t made = parts.size();
  nodes_.erase(nodes_.begin() + static_cast<std::ptrdiff_t>(i));
  for (size_t k = 0; k < made; ++k) {
    nodes_.insert(nodes_.begin() + static_cast<std::ptrdiff_t>(i + k), std::move(parts[k]));
  }
  return made;
}

void ListValue::PushFront(std::string_view v) {
  if (nodes_.empty() || !Fits(N(0), v.size())) {
    nodes_.insert(nodes_.begin(), std::make_unique<Node>());
    N(0).plain = IsLarge(v.size());
  }
  Decompress(0);
  N(0).lp.Prepend(v);
  Touch(0);
  ++size_;
  Settle();
}

void ListValue::PushBack(std::string_view v) {
  if (nodes_.empty() || !Fits(*nodes_.back(), v.size())) {
    nodes_.push_back(std::make_unique<Node>());
    nodes_.back()->plain = IsLarge(v.size());
  }
  const size_t i = nodes_.size() - 1;
  Decompress(i);
  N(i).lp.Append(v);
  Touch(i);
  ++size_;
  Settle();
}

bool ListValue::PopFront(std::string* out) {
  if (size_ == 0) return false;
  Decompress(0);
  Listpack& lp = N(0).lp;
  *out = lp.Get(lp.First()).ToString();
  lp.Delete(lp.First());
  Touch(0);
  --size_;
  EraseNodeIfEmpty(0);
  Settle();
  return true;
}

bool ListValue::PopBack(std::string* out) {
  if (size_ == 0) return false;
  const size_t i = nodes_.size() - 1;
  Decompress(i);
  Listpack& lp = N(i).lp;
  *out = lp.Get(lp.Last()).ToString();
  lp.Delete(lp.Last());
  Touch(i);
  --size_;
  EraseNodeIfEmpty(i);
  Settle();
  return true;
}

bool ListValue::Index(int64_t index, std::string* out) const {
  if (index < 0) index += static_cast<int64_t>(size_);
  if (index < 0 || static_cast<size_t>(index) >= size_) return false;
  size_t first;
  const size_t i = NodeOf(static_cast<size_t>(index), &first);
  Decompress(i);
  const Listpack& lp = N(i).lp;
  *out = lp.Get(lp.Seek(static_cast<int64_t>(static_cast<size_t>(index) - first))).ToString();
  Settle(i);
  return true;
}

bool ListValue::Set(int64_t index, std::string_view v) {
  if (index < 0) index += static_cast<int64_t>(size_);
  if (index < 0 || static_cast<size_t>(index) >= size_) return false;
  size_t first;
  const size_t i = NodeOf(static_cast<size_t>(index), &first);
  Decompress(i);
  Listpack& lp = N(i).lp;
  lp.Replace(lp.Seek(static_cast<int64_t>(static_cast<size_t>(index) - first)), v);
  Touch(i);
  if (N(i).plain || IsLarge(v.size())) {
    const size_t parts = IsolateLarge(i);
    for (size_t k = 0; k < parts; ++k) Settle(i + k);
    Settle();
    return true;
  }
  SplitIfOverfull(i);
  Settle(i);
  return true;
}

bool ListValue::Insert(std::string_view pivot, std::string_view v, bool after) {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    Decompress(i);
    Listpack& lp = N(i).lp;
    const size_t pos = lp.Find(lp.First(), pivot);
    if (pos == Listpack::kEnd) {
      Settle(i);
      continue;
    }
    lp.InsertBefore(after ? lp.Next(pos) : pos, v);
    Touch(i);
    ++size_;
    if (N(i).plain || IsLarge(v.size())) {
      const size_t parts = IsolateLarge(i);
      for (size_t k = 0; k < parts; ++k) Settle(i + k);
      Settle();
      return true;
    }
    SplitIfOverfull(i);
    Settle(i);
    Settle(i + 1);
    return true;
  }
  return false;
}

size_t ListValue::Remove(std::string_view v, int64_t count) {
  const bool from_tail = count < 0;
  // 0 - unsigned(count) is |count| even for INT64_MIN, which has no negation.
  size_t left = count == 0 ? SIZE_MAX
                           : (from_tail ? 0 - static_cast<size_t>(count) : static_cast<size_t>(count));
  size_t removed = 0;
  for (size_t step = 0; step < nodes_.size() && left > 0;) {
    const size_t i = from_tail ? nodes_.size() - 1 - step : step;
    Decompress(i);
    Listpack& lp = N(i).lp;
    if (from_tail) {
      for (size_t pos = lp.Last(); pos != Listpack::kEnd && left > 0;) {
        const size_t prev = lp.Prev(pos);
        if (lp.Get(pos).Equals(v)) {
          lp.Delete(pos);
          ++removed;
          --left;
        }
        pos = prev;
      }
    } else {
      for (size_t pos = lp.First(); pos != Listpack::kEnd && left > 0;) {
        if (lp.Get(pos).Equals(v)) {
          pos = lp.Delete(pos);
          ++removed;
          --left;
        } else {
          pos = lp.Next(pos);
        }
      }
    }
    Touch(i);
    if (N(i).count == 0) {
      // With node i gone, the same step names the next node to visit in
      // either direction.
      EraseNodeIfEmpty(i);
      continue;
    }
    Settle(i);
    ++step;
  }
  size_ -= removed;
  Settle();
  return removed;
}

void ListValue::Keep(size_t start, size_t end) {
  // Drop whole nodes outside [start, end], then trim the two edge nodes.
  size_t drop_tail = size_ - 1 - end;
  while (drop_tail > 0 && !nodes_.empty() && nodes_.back()->count <= drop_tail) {
    drop_tail -= nodes_.back()->count;
    size_ -= nodes_.back()->count;
    nodes_.pop_back();
  }
  if (drop_tail > 0) {
    const size_t i = nodes_.size() - 1;
    Decompress(i);
    Listpack& lp = N(i).lp;
    lp.DeleteRange(static_cast<int64_t>(lp.size() - drop_tail), drop_tail);
    Touch(i);
    size_ -= drop_tail;
  }
  size_t drop_head = start;
  size_t whole = 0;  // leading nodes dropped whole, erased at once
  while (drop_head > 0 && whole < nodes_.size() && N(whole).count <= drop_head) {
    drop_head -= N(whole).count;
    size_ -= N(whole).count;
    ++whole;
  }
  nodes_.erase(nodes_.begin(), nodes_.begin() + static_cast<std::ptrdiff_t>(whole));
  if (drop_head > 0) {
    Decompress(0);
    N(0).lp.DeleteRange(0, drop_head);
    Touch(0);
    size_ -= drop_head;
  }
  Settle();
}

void ListValue::Walk(size_t start, bool reverse, const std::function<bool(std::string_view)>& fn) const {
  if (start >= size_) return;
  const size_t index = reverse ? size_ - 1 - start : start;
  size_t first;
  size_t i = NodeOf(index, &first);
  char scratch[24];
  size_t local = index - first;
  while (i < nodes_.size()) {
    Decompress(i);
    const Listpack& lp = N(i).lp;
    bool more = true;
    for (size_t pos = lp.Seek(static_cast<int64_t>(local)); pos != Listpack::kEnd && more;
         pos = reverse ? lp.Prev(pos) : lp.Next(pos)) {
      more = fn(Text(lp.Get(pos), scratch));
    }
    Settle(i);
    if (!more || (reverse && i == 0)) return;
    i = reverse ? i - 1 : i + 1;
    if (i < nodes_.size()) local = reverse ? N(i).count - 1 : 0;
  }
}

void ListValue::ForEachNode(const std::function<void(const Listpack&)>& fn) const {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (N(i).is_compressed()) {
      // Decompress into a copy: a snapshot (possibly in a fork child)
      // changes nothing.
      const Node& n = N(i);
      std::string raw(n.raw_bytes, '\0');
      lzf_decompress(n.lzf->data(), static_cast<unsigned>(n.lzf->size()), raw.data(), static_cast<unsigned>(raw.size()));
      fn(Listpack::FromBytes(std::move(raw)));
    } else {
      fn(N(i).lp);
    }
  }
}

void ListValue::AppendNode(Listpack node) {
  Node n;
  n.lp = std::move(node);
  if (n.lp.size() == 1) {
    char scratch[24];
    n.plain = IsLarge(Text(n.lp.Get(n.lp.First()), scratch).size());
  }
  size_ += n.lp.size();
  nodes_.push_back(std::make_unique<Node>(std::move(n)));
  Touch(nodes_.size() - 1);
  Settle(nodes_.size() > 1 ? nodes_.size() - 2 : SIZE_MAX);
}

size_t ListValue::packed_bytes() const {
  size_t bytes = 0;
  for (const auto& n : nodes_) bytes += n->raw_bytes;
  return bytes;
}

size_t ListValue::compressed_nodes() const {
  return static_cast<size_t>(
      std::count_if(nodes_.begin(), nodes_.end(), [](const auto& n) { return n->is_compressed(); }));
}

std::unique_ptr<ListValue> ListValue::Clone() const {
  auto copy = std::make_unique<ListValue>(limits_);
  copy->nodes_.reserve(nodes_.size());
  for (const auto& n : nodes_) {
    auto node = std::make_unique<Node>();
    node->lp = n->lp;
    if (n->lzf) node->lzf = std::make_unique<PackedBuffer>(*n->lzf);
    node->count = n->count;
    node->raw_bytes = n->raw_bytes;
    node->plain = n->plain;
    copy->nodes_.push_back(std::move(node));
  }
  copy->size_ = size_;
  return copy;
}

size_t ListValue::heap_bytes() const {
  size_t bytes = (nodes_.capacity() > 1 ? nodes_.capacity() * sizeof(void*) : 0) + nodes_.size() * sizeof(Node);
  for (const auto& n : nodes_) {
    bytes += n->is_compressed() ? sizeof(PackedBuffer) + n->lzf->capacity() : PackedBuffer::RoundUp(n->lp.byte_size());
  }
  return bytes;
}

}  // namespace ringkv::core

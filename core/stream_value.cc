#include "core/stream_value.h"

#include <algorithm>
#include <charconv>

namespace ringkv::core {
namespace {

constexpr int64_t kFlagDeleted = 1;
constexpr int64_t kFlagSameFields = 2;
constexpr int64_t kListpackMaxSize = int64_t{1} << 30;

// An element that must be an integer (a node's counters, flags, deltas).
// False for a string that is not one (a corrupt node).
bool IntAt(const Listpack& lp, size_t pos, int64_t* out) {
  if (pos == Listpack::kEnd) return false;
  ListpackValue v = lp.Get(pos);
  if (v.is_int) {
    *out = v.int_value;
    return true;
  }
  auto [p, ec] = std::from_chars(v.str.data(), v.str.data() + v.str.size(), *out);
  return ec == std::errc() && p == v.str.data() + v.str.size();
}

int64_t IntAt(const Listpack& lp, size_t pos) {
  int64_t v = 0;
  IntAt(lp, pos, &v);
  return v;
}

// Walks the entries of one node. The text of integer elements is kept in
// `ints_` so every field and value can be handed out as a view.
class NodeReader {
 public:
  NodeReader(StreamId master, const Listpack& lp)
      : master_(master),
        lp_(lp),
        base_(reinterpret_cast<const uint8_t*>(lp.bytes().data())),
        size_(lp.byte_size()) {}

  // Reads the master entry; false when malformed. first_entry() is then
  // the position of the first entry's flags (kEnd: no entries).
  bool Start() {
    size_t p = lp_.First();
    if (!Int(p, &count_)) return false;
    p = Next(p);
    if (!Int(p, &deleted_)) return false;
    p = Next(p);
    if (!Int(p, &master_fields_) || master_fields_ < 0) return false;
    p = Next(p);
    master_pos_ = p;
    for (int64_t i = 0; i < master_fields_; ++i) {
      if (p == Listpack::kEnd) return false;
      p = Next(p);
    }
    int64_t zero;
    if (!Int(p, &zero) || zero != 0) return false;
    first_ = Next(p);
    return true;
  }
  size_t first_entry() const { return first_; }
  int64_t count() const { return count_; }
  int64_t deleted() const { return deleted_; }

  struct Entry {
    StreamId id;
    int64_t flags = 0;
    size_t flags_pos = 0;
    size_t next = Listpack::kEnd;  // the following entry's flags
    size_t fields = 0;             // field/value pairs
    int64_t lp_count = 0;          // the entry's trailing element count
    size_t body = 0;               // ReadHead -> ReadBody: the first field (or value)
  };
  // Reads the entry at `pos` (its flags); with `want_fv`, fills fv() with
  // its fields and values. False when malformed.
  bool Read(size_t pos, Entry* e, bool want_fv) { return ReadHead(pos, e) && ReadBody(e, want_fv); }
  // The two halves of Read: the ID, flags and field count first, so a walk
  // decides from the ID whether it wants the fields before reading them.
  bool ReadHead(size_t pos, Entry* e) {
    e->flags_pos = pos;
    int64_t ms_diff, seq_diff;
    if (!Int(pos, &e->flags)) return false;
    size_t p = Next(pos);
    if (!Int(p, &ms_diff)) return false;
    p = Next(p);
    if (!Int(p, &seq_diff)) return false;
    p = Next(p);
    e->id = {master_.ms + static_cast<uint64_t>(ms_diff), master_.seq + static_cast<uint64_t>(seq_diff)};
    int64_t n = master_fields_;
    if (!(e->flags & kFlagSameFields)) {
      if (!Int(p, &n) || n < 0) return false;
      p = Next(p);
    }
    e->fields = static_cast<size_t>(n);
    e->body = p;
    return true;
  }
  bool ReadBody(Entry* e, bool want_fv) {
    const size_t n = e->fields;
    const bool same = e->flags & kFlagSameFields;
    size_t p = e->body;
    if (want_fv) {
      views_.clear();
      // Integers are formatted into ints_, sized here for every element of
      // the entry, so the views into it stay valid.
      ints_used_ = 0;
      if (n * 2 * kMaxIntText > ints_cap_) {
        ints_cap_ = n * 2 * kMaxIntText;
        ints_ = std::make_unique<char[]>(ints_cap_);
      }
    }
    size_t mp = master_pos_;
    for (size_t i = 0; i < n; ++i) {
      if (same) {
        if (want_fv) Push(mp);
        mp = Next(mp);
      } else {
        if (p == Listpack::kEnd) return false;
        if (want_fv) Push(p);
        p = Next(p);
      }
      if (p == Listpack::kEnd) return false;
      if (want_fv) Push(p);
      p = Next(p);
    }
    if (!Int(p, &e->lp_count)) return false;
    e->next = Next(p);
    return true;
  }
  FieldValues fv() const { return views_; }

 private:
  // Listpack::Next and IntAt, inlined into the walk (every element of a
  // node passes through them on each read that starts inside it), with the
  // small integers of flags, ID deltas and counts decoded on the spot.
  [[gnu::always_inline]] size_t Next(size_t pos) const {
    const size_t part = listpack_internal::EncodedPartSize(base_ + pos, size_ - pos);
    const size_t next = pos + part + listpack_internal::BacklenSize(part);
    return next >= size_ - 1 ? Listpack::kEnd : next;
  }
  [[gnu::always_inline]] bool Int(size_t pos, int64_t* out) const {
    if (pos == Listpack::kEnd) return false;
    const uint8_t b = base_[pos];
    if ((b & 0x80) == 0) {  // 7-bit uint
      *out = b;
      return true;
    }
    if ((b & 0xE0) == 0xC0) {  // 13-bit int
      *out = listpack_internal::SignExtend((static_cast<uint64_t>(b & 0x1F) << 8) | base_[pos + 1], 13);
      return true;
    }
    return IntAt(lp_, pos, out);
  }

  static constexpr size_t kMaxIntText = 20;  // "-9223372036854775808"
  // Strings are recognised from their encoding byte here rather than
  // through a ListpackValue (returned through memory, then read back wider:
  // a store-forwarding stall that was most of this function's profile).
  void Push(size_t pos) {
    const uint8_t* const p = base_ + pos;
    const uint8_t b = p[0];
    const char* const text = reinterpret_cast<const char*>(p);
    if ((b & 0xC0) == 0x80) {  // 6-bit string length
      views_.emplace_back(text + 1, b & 0x3F);
      return;
    }
    if ((b & 0xF0) == 0xE0) {  // 12-bit string length
      views_.emplace_back(text + 2, (static_cast<size_t>(b & 0x0F) << 8) | p[1]);
      return;
    }
    if (b == 0xF0) {  // 32-bit string length
      views_.emplace_back(text + 5, static_cast<size_t>(listpack_internal::ReadLe(p + 1, 4)));
      return;
    }
    int64_t v = 0;
    Int(pos, &v);
    char* const at = ints_.get() + ints_used_;
    char* const end = std::to_chars(at, at + kMaxIntText, v).ptr;
    ints_used_ += static_cast<size_t>(end - at);
    views_.emplace_back(at, static_cast<size_t>(end - at));
  }

  StreamId master_;
  const Listpack& lp_;
  const uint8_t* base_;
  size_t size_;
  int64_t count_ = 0, deleted_ = 0, master_fields_ = 0;
  size_t master_pos_ = Listpack::kEnd;
  size_t first_ = Listpack::kEnd;
  std::unique_ptr<char[]> ints_;
  size_t ints_cap_ = 0, ints_used_ = 0;
  std::vector<std::string_view> views_;
};

// Rewrites the node's live / deleted counters.
void SetCounters(Listpack* lp, int64_t count, int64_t deleted) {
  size_t p = lp->Replace(lp->First(), std::to_string(count));
  lp->Replace(lp->Next(p), std::to_string(deleted));
}

// The last entry of a node (live or not); false when it has none.
bool LastEntryId(StreamId master, const Listpack& lp, StreamId* out) {
  NodeReader r(master, lp);
  if (!r.Start()) return false;
  bool found = false;
  NodeReader::Entry e;
  for (size_t p = r.first_entry(); p != Listpack::kEnd; p = e.next) {
    if (!r.Read(p, &e, false)) return false;
    *out = e.id;
    found = true;
  }
  return found;
}

}  // namespace

std::string StreamId::ToString() const {
  char buf[kMaxText];
  return std::string(buf, Format(buf));
}

size_t StreamId::Format(char* buf) const {
  char* p = std::to_chars(buf, buf + 20, ms).ptr;
  *p++ = '-';
  p = std::to_chars(p, p + 20, seq).ptr;
  return static_cast<size_t>(p - buf);
}

bool StreamId::Incr() {
  if (seq == UINT64_MAX) {
    if (ms == UINT64_MAX) return false;
    ++ms;
    seq = 0;
  } else {
    ++seq;
  }
  return true;
}

bool StreamId::Decr() {
  if (seq == 0) {
    if (ms == 0) return false;
    --ms;
    seq = UINT64_MAX;
  } else {
    --seq;
  }
  return true;
}

std::string StreamId::Encode() const {
  std::string out(16, '\0');
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>(ms >> (56 - 8 * i));
    out[8 + i] = static_cast<char>(seq >> (56 - 8 * i));
  }
  return out;
}

bool StreamId::Decode(std::string_view bytes, StreamId* out) {
  if (bytes.size() != 16) return false;
  out->ms = out->seq = 0;
  for (int i = 0; i < 8; ++i) {
    out->ms = (out->ms << 8) | static_cast<uint8_t>(bytes[i]);
    out->seq = (out->seq << 8) | static_cast<uint8_t>(bytes[8 + i]);
  }
  return true;
}

StreamConsumer* StreamGroup::FindConsumer(std::string_view name) const {
  auto it = consumers.find(name);
  return it == consumers.end() ? nullptr : it->second.get();
}

StreamConsumer* StreamGroup::CreateConsumer(std::string_view name, int64_t now_ms) {
  auto c = std::make_unique<StreamConsumer>();
  c->name = std::string(name);
  c->seen_time = now_ms;
  StreamConsumer* raw = c.get();
  consumers.emplace(std::string(name), std::move(c));
  return raw;
}

size_t StreamGroup::DeleteConsumer(std::string_view name) {
  auto it = consumers.find(name);
  if (it == consumers.end()) return 0;
  const size_t pending = it->second->pel.size();
  for (StreamId id : it->second->pel) pel.erase(id);
  consumers.erase(it);
  return pending;
}

void StreamValue::Append(StreamId id, FieldValues fv, const StreamLimits& limits) {
  const size_t nfields = fv.size() / 2;
  Listpack* lp = nullptr;
  StreamId master;
  if (!nodes_.empty()) {
    auto last = std::prev(nodes_.end());
    size_t total = 0;
    for (std::string_view s : fv) total += s.size();
    int64_t max_bytes = limits.node_max_bytes;
    if (max_bytes <= 0 || max_bytes > kListpackMaxSize) max_bytes = kListpackMaxSize;
    bool fresh = static_cast<int64_t>(last->second.byte_size() + total) >= max_bytes;
    if (!fresh && limits.node_max_entries > 0) {
      const Listpack& l = last->second;
      fresh = IntAt(l, l.First()) + IntAt(l, l.Next(l.First())) >= limits.node_max_entries;
    }
    if (!fresh) {
      lp = &last->second;
      master = last->first;
    } else {
      last->second.MakeExact();  // sealed: a new node takes the entries from now on
    }
  }
  int64_t flags = 0;
  if (lp == nullptr) {
    master = id;
    Listpack fresh;
    fresh.AppendInt(1);
    fresh.AppendInt(0);
    fresh.AppendInt(static_cast<int64_t>(nfields));
    for (size_t i = 0; i < nfields; ++i) fresh.Append(fv[2 * i]);
    fresh.AppendInt(0);
    lp = &nodes_.emplace(id, std::move(fresh)).first->second;
    flags = kFlagSameFields;
  } else {
    size_t p = lp->First();
    lp->ReplaceInt(p, IntAt(*lp, p) + 1);  // in place unless its encoding grows
    p = lp->Next(lp->Next(lp->First()));
    if (IntAt(*lp, p) == static_cast<int64_t>(nfields)) {
      p = lp->Next(p);
      size_t i = 0;
      for (; i < nfields; ++i, p = lp->Next(p)) {
        if (!lp->Get(p).Equals(fv[2 * i])) break;
      }
      if (i == nfields) flags = kFlagSameFields;
    }
  }
  // The whole entry is encoded first and moved into the node at once.
  static thread_local std::string entry;
  entry.clear();
  ListpackEncodeIntTo(flags, &entry);
  ListpackEncodeIntTo(static_cast<int64_t>(id.ms - master.ms), &entry);
  ListpackEncodeIntTo(static_cast<int64_t>(id.seq - master.seq), &entry);
  uint32_t elements;
  if (flags & kFlagSameFields) {
    for (size_t i = 0; i < nfields; ++i) ListpackEncodeTo(fv[2 * i + 1], &entry);
    ListpackEncodeIntTo(static_cast<int64_t>(nfields + 3), &entry);
    elements = static_cast<uint32_t>(nfields + 4);
  } else {
    ListpackEncodeIntTo(static_cast<int64_t>(nfields), &entry);
    for (std::string_view s : fv) ListpackEncodeTo(s, &entry);
    ListpackEncodeIntTo(static_cast<int64_t>(nfields * 2 + 4), &entry);
    elements = static_cast<uint32_t>(nfields * 2 + 5);
  }
  lp->AppendEncoded(entry, elements);
  if (length_ == 0) first_id_ = id;
  ++length_;
  ++entries_added_;
  last_id_ = id;
}

void StreamValue::Range(StreamId start, StreamId end, bool reverse,
                        absl::FunctionRef<bool(StreamId, FieldValues)> fn) const {
  if (start > end || nodes_.empty()) return;
  // The node holding `start` is the last one whose master is <= start.
  auto first = nodes_.upper_bound(start);
  if (first != nodes_.begin()) --first;
  auto last = nodes_.upper_bound(end);  // one past the last node to look at
  std::vector<size_t> positions;
  auto visit = [&](StreamId master, const Listpack& lp) {
    NodeReader r(master, lp);
    if (!r.Start()) return true;
    NodeReader::Entry e;
    if (!reverse) {
      for (size_t p = r.first_entry(); p != Listpack::kEnd; p = e.next) {
        if (!r.ReadHead(p, &e)) return true;
        if (e.id > end) return false;
        const bool wanted = e.id >= start && !(e.flags & kFlagDeleted);
        if (!r.ReadBody(&e, wanted)) return true;
        if (wanted && !fn(e.id, r.fv())) return false;
      }
      return true;
    }
    // Back from the last entry: each entry ends with its element count
    // (lp-count), which leads to its flags, so the newest entries are read
    // without decoding the node from its start (XREADGROUP asks for the
    // last ID on every call). A count that disagrees with the entry read
    // forward (a malformed node) sends the rest to the forward walk below.
    size_t done_from = Listpack::kEnd;  // flags of the oldest entry visited
    for (size_t q = lp.Last(); q != Listpack::kEnd;) {
      int64_t n;
      if (!IntAt(lp, q, &n) || n < 3) break;
      size_t p = q;
      for (int64_t i = 0; i < n && p != Listpack::kEnd; ++i) p = lp.Prev(p);
      if (p == Listpack::kEnd || p < r.first_entry() || !r.Read(p, &e, false) || e.next != lp.Next(q)) break;
      done_from = p;
      if (e.id < start) return false;
      if (e.id <= end && !(e.flags & kFlagDeleted)) {
        r.Read(p, &e, true);
        if (!fn(e.id, r.fv())) return false;
      }
      if (p == r.first_entry()) return true;
      q = lp.Prev(p);
    }
    positions.clear();
    for (size_t p = r.first_entry(); p != Listpack::kEnd && p < done_from; p = e.next) {
      if (!r.Read(p, &e, false)) break;
      positions.push_back(p);
    }
    for (auto it = positions.rbegin(); it != positions.rend(); ++it) {
      r.Read(*it, &e, false);
      if (e.id < start) return false;
      if (e.id > end || (e.flags & kFlagDeleted)) continue;
      r.Read(*it, &e, true);
      if (!fn(e.id, r.fv())) return false;
    }
    return true;
  };
  if (!reverse) {
    for (auto it = first; it != last; ++it) {
      if (!visit(it->first, it->second)) return;
    }
  } else {
    for (auto it = last; it != first;) {
      --it;
      if (!visit(it->first, it->second)) return;
    }
  }
}

bool StreamValue::EdgeId(bool first, StreamId* out) const {
  bool found = false;
  Range(StreamId::Min(), StreamId::Max(), !first, [&](StreamId id, FieldValues) {
    *out = id;
    found = true;
    return false;
  });
  return found;
}

bool StreamValue::Contains(StreamId id) const {
  bool found = false;
  Range(id, id, false, [&](StreamId, FieldValues) {
    found = true;
    return false;
  });
  return found;
}

bool StreamValue::Delete(StreamId id) {
  auto it = nodes_.upper_bound(id);
  if (it == nodes_.begin()) return false;
  --it;
  Listpack& lp = it->second;
  NodeReader r(it->first, lp);
  if (!r.Start()) return false;
  NodeReader::Entry e;
  for (size_t p = r.first_entry(); p != Listpack::kEnd; p = e.next) {
    if (!r.Read(p, &e, false)) return false;
    if (e.id > id) return false;
    if (e.id != id) continue;
    if (e.flags & kFlagDeleted) return false;
    const int64_t count = r.count() - 1, deleted = r.deleted() + 1;
    if (count == 0) {
      nodes_.erase(it);
    } else {
      lp.Replace(e.flags_pos, std::to_string(e.flags | kFlagDeleted));
      SetCounters(&lp, count, deleted);
    }
    --length_;
    if (id > max_deleted_id_) max_deleted_id_ = id;
    if (length_ == 0) {
      first_id_ = StreamId::Min();
    } else if (id == first_id_) {
      EdgeId(true, &first_id_);
    }
    return true;
  }
  return false;
}

namespace {

// Marks entries of one node deleted from its start while `more(id)` says
// so; returns how many live ones it marked.
template <typename More>
int64_t MarkFromStart(StreamId master, Listpack* lp, More more) {
  NodeReader r(master, *lp);
  if (!r.Start()) return 0;
  std::vector<std::pair<size_t, int64_t>> marks;  // flags position, new flags
  NodeReader::Entry e;
  int64_t marked = 0;
  for (size_t p = r.first_entry(); p != Listpack::kEnd; p = e.next) {
    if (!r.Read(p, &e, false)) break;
    if (!more(e.id, marked)) break;
    if (!(e.flags & kFlagDeleted)) {
      marks.emplace_back(p, e.flags | kFlagDeleted);
      ++marked;
    }
  }
  // Flags are small integers: rewriting one keeps every position.
  for (auto [pos, flags] : marks) lp->Replace(pos, std::to_string(flags));
  SetCounters(lp, r.count() - marked, r.deleted() + marked);
  return marked;
}

}  // namespace

int64_t StreamValue::TrimByLength(int64_t maxlen, bool approx, int64_t limit) {
  int64_t removed = 0;
  const size_t keep = static_cast<size_t>(std::max<int64_t>(maxlen, 0));
  while (!nodes_.empty() && length_ > keep) {
    auto it = nodes_.begin();
    const int64_t entries = IntAt(it->second, it->second.First());
    if (limit && removed + entries > limit) break;
    if (length_ - static_cast<size_t>(entries) >= keep) {
      nodes_.erase(it);
      length_ -= static_cast<size_t>(entries);
      removed += entries;
      continue;
    }
    if (approx) break;
    const size_t to_mark = length_ - keep;
    const int64_t marked = MarkFromStart(it->first, &it->second,
                                         [&](StreamId, int64_t n) { return static_cast<size_t>(n) < to_mark; });
    length_ -= static_cast<size_t>(marked);
    removed += marked;
    break;
  }
  if (removed > 0 && !EdgeId(true, &first_id_)) first_id_ = StreamId::Min();
  return removed;
}

int64_t StreamValue::TrimByMinId(StreamId minid, bool approx, int64_t limit) {
  int64_t removed = 0;
  while (!nodes_.empty()) {
    auto it = nodes_.begin();
    const int64_t entries = IntAt(it->second, it->second.First());
    if (limit && removed + entries > limit) break;
    StreamId last;
    if (!LastEntryId(it->first, it->second, &last)) break;
    if (last < minid) {
      nodes_.erase(it);
      length_ -= static_cast<size_t>(entries);
      removed += entries;
      continue;
    }
    if (approx) break;
    const int64_t marked = MarkFromStart(it->first, &it->second, [&](StreamId id, int64_t) { return id < minid; });
    length_ -= static_cast<size_t>(marked);
    removed += marked;
    break;
  }
  if (removed > 0 && !EdgeId(true, &first_id_)) first_id_ = StreamId::Min();
  return removed;
}

bool StreamValue::RangeHasTombstones(StreamId start, StreamId end) const {
  if (length_ == 0 || max_deleted_id_.is_zero()) return false;
  if (first_id_ > max_deleted_id_) return false;  // the latest tombstone is before the first entry
  return start <= max_deleted_id_ && max_deleted_id_ <= end;
}

int64_t StreamValue::EstimateDistanceFromFirstEverEntry(StreamId id) const {
  if (entries_added_ == 0) return 0;
  if (length_ == 0 && id <= last_id_) return static_cast<int64_t>(entries_added_);
  if (id == last_id_) return static_cast<int64_t>(entries_added_);
  if (id > last_id_) return StreamGroup::kInvalidEntriesRead;
  if (max_deleted_id_.is_zero() || max_deleted_id_ < first_id_) {
    if (id < first_id_) return static_cast<int64_t>(entries_added_ - length_);
    if (id == first_id_) return static_cast<int64_t>(entries_added_ - length_ + 1);
  }
  return StreamGroup::kInvalidEntriesRead;
}

const StreamValue::Groups& StreamValue::groups() const {
  static const Groups kNone;
  return groups_ ? *groups_ : kNone;
}

StreamGroup* StreamValue::FindGroup(std::string_view name) const {
  if (!groups_) return nullptr;
  auto it = groups_->find(name);
  return it == groups_->end() ? nullptr : it->second.get();
}

StreamGroup* StreamValue::CreateGroup(std::string_view name, StreamId last_id, int64_t entries_read) {
  if (!groups_) groups_ = std::make_unique<Groups>();
  auto g = std::make_unique<StreamGroup>();
  g->last_id = last_id;
  g->entries_read = entries_read;
  auto [it, inserted] = groups_->emplace(std::string(name), std::move(g));
  return inserted ? it->second.get() : nullptr;
}

bool StreamValue::DestroyGroup(std::string_view name) {
  if (!groups_) return false;
  auto it = groups_->find(name);
  if (it == groups_->end()) return false;
  groups_->erase(it);
  return true;
}

void StreamValue::ForEachNode(const std::function<void(StreamId, const Listpack&)>& fn) const {
  for (const auto& [id, lp] : nodes_) fn(id, lp);
}

void StreamValue::AppendNode(StreamId master, Listpack lp) {
  if (!nodes_.empty()) std::prev(nodes_.end())->second.MakeExact();  // no longer the open node
  nodes_.emplace_hint(nodes_.end(), master, std::move(lp));
}

bool StreamValue::ValidateNode(StreamId master, const Listpack& lp, size_t* live, StreamId* last) {
  NodeReader r(master, lp);
  if (!r.Start() || r.count() < 0 || r.deleted() < 0) return false;
  NodeReader::Entry e;
  int64_t seen_live = 0, seen_deleted = 0;
  bool any = false;
  StreamId prev;
  for (size_t p = r.first_entry(); p != Listpack::kEnd; p = e.next) {
    if (!r.Read(p, &e, false)) return false;
    if (e.flags < 0 || e.flags > 3) return false;
    // The element count Redis writes after each entry (its backwards
    // iteration steps by it): flags, ms, seq and the values, plus the field
    // count and the fields when they are not the master entry's.
    const int64_t fields = static_cast<int64_t>(e.fields);
    if (e.lp_count != ((e.flags & kFlagSameFields) ? fields + 3 : 2 * fields + 4)) return false;
    if (e.id < master || (any && e.id <= prev)) return false;
    prev = e.id;
    any = true;
    (e.flags & kFlagDeleted) ? ++seen_deleted : ++seen_live;
  }
  if (!any || seen_live != r.count() || seen_deleted != r.deleted()) return false;
  *live = static_cast<size_t>(seen_live);
  *last = prev;
  return true;
}

std::unique_ptr<StreamValue> StreamValue::Clone() const {
  auto c = std::make_unique<StreamValue>();
  c->nodes_ = nodes_;
  c->length_ = length_;
  c->last_id_ = last_id_;
  c->first_id_ = first_id_;
  c->max_deleted_id_ = max_deleted_id_;
  c->entries_added_ = entries_added_;
  if (groups_) {
    c->groups_ = std::make_unique<Groups>();
    for (const auto& [name, g] : *groups_) {
      StreamGroup* ng = c->CreateGroup(name, g->last_id, g->entries_read);
      for (const auto& [cname, cons] : g->consumers) ng->CreateConsumer(cname, cons->seen_time);
      for (const auto& [id, nack] : g->pel) {
        StreamNack n = nack;
        if (nack.consumer != nullptr) {
          n.consumer = ng->FindConsumer(nack.consumer->name);
          n.consumer->pel.insert(id);
        }
        ng->pel.emplace_hint(ng->pel.end(), id, n);
      }
    }
  }
  return c;
}

size_t StreamValue::heap_bytes() const {
  size_t n = 0;
  // Each listpack's allocation (PackedBuffer's size classes for the open
  // node, the exact size rounded to 8 for sealed ones) and its share of the
  // B-tree: a 16-byte key and a 16-byte Listpack per slot, slots about
  // two-thirds full, plus node headers.
  for (const auto& [id, lp] : nodes_) n += lp.capacity() + 48;
  if (groups_) {
    for (const auto& [name, g] : *groups_) {
      // B-tree slots (key and nack in place) about nine-tenths full.
      n += sizeof(StreamGroup) + name.size() + g->pel.size() * (sizeof(StreamId) + sizeof(StreamNack)) * 10 / 9;
      for (const auto& [cname, c] : g->consumers) {
        n += sizeof(StreamConsumer) + cname.size() + c->pel.size() * sizeof(StreamId) * 10 / 9;
      }
    }
  }
  return n;
}

}  // namespace ringkv::core

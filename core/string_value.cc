#include "core/string_value.h"

#include <algorithm>
#include <charconv>

namespace ringkv::core {

bool StringToInt64(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  if (s.size() == 1 && s[0] == '0') {
    *out = 0;
    return true;
  }
  size_t i = 0;
  bool neg = false;
  if (s[0] == '-') {
    neg = true;
    i = 1;
    if (s.size() == 1) return false;
  }
  if (s[i] < '1' || s[i] > '9') return false;
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    const uint64_t d = static_cast<uint64_t>(static_cast<unsigned char>(s[i])) - '0';
    if (d > 9) return false;
    // Overflow flags, not a division per digit (WAIT's arguments, docs/performance.md 39.1).
    if (__builtin_mul_overflow(v, uint64_t{10}, &v) || __builtin_add_overflow(v, d, &v)) return false;
  }
  if (neg) {
    if (v > static_cast<uint64_t>(INT64_MAX) + 1) return false;
    *out = static_cast<int64_t>(0 - v);
  } else {
    if (v > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(v);
  }
  return true;
}

StringValue StringValue::FromInt(int64_t v) {
  StringValue s;
  s.encoding_ = StringEncoding::kInt;
  s.int_ = v;
  return s;
}

StringValue StringValue::Raw(std::string_view s) {
  StringValue v;
  v.Init(s, false);
  v.encoding_ = StringEncoding::kRaw;
  return v;
}

StringValue StringValue::Text(std::string_view s) {
  StringValue v;
  v.Init(s, false);
  return v;
}

void StringValue::Init(std::string_view s, bool try_int) {
  int64_t v;
  if (try_int && s.size() <= 20 && StringToInt64(s, &v)) {
    encoding_ = StringEncoding::kInt;
    inline_ = 1;  // no stale inline length behind an integer (MoveFrom reads it)
    inline_len_ = 0;
    int_ = v;
    return;
  }
  encoding_ = s.size() <= kEmbstrMax ? StringEncoding::kEmbstr : StringEncoding::kRaw;
  SetBytes(s);
}

void StringValue::SetBytes(std::string_view s) {
  if (s.size() <= inline_capacity()) {
    inline_ = 1;
    inline_len_ = static_cast<uint8_t>(s.size());
    if (!s.empty()) std::memcpy(payload(), s.data(), s.size());  // an empty view may have a null data()
    return;
  }
  inline_ = 0;
  heap_.data = new char[s.size()];
  heap_.size = static_cast<uint32_t>(s.size());
  heap_.cap = static_cast<uint32_t>(s.size());
  std::memcpy(heap_.data, s.data(), s.size());
}

void StringValue::Assign(std::string_view s) {
  int64_t v;
  if (encoding_ != StringEncoding::kInt && !inline_ && s.size() > inline_capacity() && s.size() <= heap_.cap &&
      heap_.cap - s.size() <= s.size() / 8 && !(s.size() <= 20 && StringToInt64(s, &v))) {
    std::memmove(heap_.data, s.data(), s.size());
    heap_.size = static_cast<uint32_t>(s.size());
    encoding_ = s.size() <= kEmbstrMax ? StringEncoding::kEmbstr : StringEncoding::kRaw;
    return;
  }
  // Built in place: a string that fits this slot's room goes there, never
  // by way of a temporary on the heap. `s` may view this value's own bytes.
  if (encoding_ != StringEncoding::kInt) {
    char scratch[24];
    const std::string_view own = View(scratch);
    if (!s.empty() && s.data() >= own.data() && s.data() < own.data() + own.size()) {
      const std::string copy(s);
      Free();
      Init(copy, /*try_int=*/true);
      return;
    }
  }
  Free();
  Init(s, /*try_int=*/true);
}

void StringValue::TakeLongString(const StringValue& o) {
  static_assert(kPayloadOffset == sizeof(StringValue) - kPayloadSize);
  if (o.inline_) {
    SetBytes({o.payload(), o.inline_len_});
    return;
  }
  SetBytes({o.heap_.data, o.heap_.size});  // into the room: MoveFrom checked it fits
  delete[] o.heap_.data;
}

size_t StringValue::SlotBytesFor(std::string_view s) {
  if (s.size() <= kInlineMax || s.size() > kMaxInline) return 0;
  int64_t v;
  if (s.size() <= 20 && StringToInt64(s, &v)) return 0;
  return s.size() - kInlineMax;
}

size_t StringValue::size() const {
  if (encoding_ == StringEncoding::kInt) {
    char buf[24];
    return static_cast<size_t>(std::to_chars(buf, buf + sizeof(buf), int_).ptr - buf);
  }
  return inline_ ? inline_len_ : heap_.size;
}

std::string_view StringValue::IntView(char* scratch) const {
  auto r = std::to_chars(scratch, scratch + 21, int_);
  return {scratch, static_cast<size_t>(r.ptr - scratch)};
}

std::string StringValue::ToString() const {
  char scratch[24];
  return std::string(View(scratch));
}

void StringValue::MakeHeap(size_t n) {
  char scratch[24];
  std::string_view cur = View(scratch);
  if (encoding_ != StringEncoding::kInt && !inline_ && heap_.cap >= n) return;
  // A string made at its size in one step (SETRANGE or SETBIT of a new key,
  // which start from "") gets exactly that, as Redis's sdsnewlen; one that
  // grows again grows geometrically, so repeated APPENDs are amortized O(1),
  // as sds's greedy sdsMakeRoomFor.
  size_t cap = cur.empty() ? n : std::max<size_t>(n, n < 1024 * 1024 ? n * 2 : n + 1024 * 1024);
  char* data = new char[cap];
  std::memcpy(data, cur.data(), cur.size());
  size_t size = cur.size();
  Free();
  inline_ = 0;
  heap_.data = data;
  heap_.size = static_cast<uint32_t>(size);
  heap_.cap = static_cast<uint32_t>(cap);
}

void StringValue::Append(std::string_view s) {
  size_t old = size();
  MakeHeap(old + s.size());
  encoding_ = StringEncoding::kRaw;
  std::memcpy(heap_.data + old, s.data(), s.size());
  heap_.size = static_cast<uint32_t>(old + s.size());
}

void StringValue::SetRange(size_t offset, std::string_view s) {
  size_t old = size();
  size_t need = std::max(old, offset + s.size());
  MakeHeap(need);
  encoding_ = StringEncoding::kRaw;
  if (offset > old) std::memset(heap_.data + old, 0, offset - old);
  std::memcpy(heap_.data + offset, s.data(), s.size());
  heap_.size = static_cast<uint32_t>(need);
}

char* StringValue::MutableBytesSlow(size_t min_size) {
  const size_t old = size();
  const size_t need = std::max(old, min_size);
  MakeHeap(need);
  encoding_ = StringEncoding::kRaw;
  if (need > old) std::memset(heap_.data + old, 0, need - old);
  heap_.size = static_cast<uint32_t>(need);
  return heap_.data;
}

}  // namespace ringkv::core

#include "core/listpack.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/string_value.h"

namespace ringkv::core {
namespace {

using listpack_internal::BacklenSize;
using listpack_internal::EncodedPartSize;
using listpack_internal::ReadLe;

constexpr uint8_t kEof = 0xFF;
constexpr uint16_t kUnknownCount = 65535;

// Appends the back-length: big-end first, every byte but the first with the
// high bit set, so it can be read right to left.
void AppendBacklen(uint64_t len, std::string* out) {
  const size_t n = BacklenSize(len);
  for (size_t i = 0; i < n; ++i) {
    const int shift = static_cast<int>(7 * (n - 1 - i));
    uint8_t b = static_cast<uint8_t>((len >> shift) & 127);
    if (i > 0) b |= 128;
    out->push_back(static_cast<char>(b));
  }
}

void AppendLe(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

}  // namespace

bool ListpackValue::Equals(std::string_view s) const {
  if (!is_int) return str == s;
  int64_t v;
  return StringToInt64(s, &v) && v == int_value;
}

void ListpackEncodeIntTo(int64_t v, std::string* out) {
  const size_t start = out->size();
  if (v >= 0 && v <= 127) {
    out->push_back(static_cast<char>(v));
  } else if (v >= -4096 && v <= 4095) {
    const uint64_t u = static_cast<uint64_t>(v < 0 ? (int64_t{1} << 13) + v : v);
    out->push_back(static_cast<char>((u >> 8) | 0xC0));
    out->push_back(static_cast<char>(u & 0xFF));
  } else if (v >= -32768 && v <= 32767) {
    out->push_back(static_cast<char>(0xF1));
    AppendLe(static_cast<uint64_t>(v), 2, out);
  } else if (v >= -8388608 && v <= 8388607) {
    out->push_back(static_cast<char>(0xF2));
    AppendLe(static_cast<uint64_t>(v), 3, out);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    out->push_back(static_cast<char>(0xF3));
    AppendLe(static_cast<uint64_t>(v), 4, out);
  } else {
    out->push_back(static_cast<char>(0xF4));
    AppendLe(static_cast<uint64_t>(v), 8, out);
  }
  AppendBacklen(out->size() - start, out);
}

void ListpackEncodeTo(std::string_view s, std::string* out) {
  int64_t v;
  if (StringToInt64(s, &v)) return ListpackEncodeIntTo(v, out);
  const size_t start = out->size();
  const size_t n = s.size();
  if (n < 64) {
    out->push_back(static_cast<char>(0x80 | n));
  } else if (n < 4096) {
    out->push_back(static_cast<char>(0xE0 | (n >> 8)));
    out->push_back(static_cast<char>(n & 0xFF));
  } else {
    out->push_back(static_cast<char>(0xF0));
    AppendLe(n, 4, out);
  }
  out->append(s);
  AppendBacklen(out->size() - start, out);
}

std::string ListpackEncodeInt(int64_t v) {
  std::string out;
  ListpackEncodeIntTo(v, &out);
  return out;
}

std::string ListpackEncode(std::string_view s) {
  std::string out;
  ListpackEncodeTo(s, &out);
  return out;
}

Listpack::Listpack() {
  const char empty[kHeaderSize + 1] = {0, 0, 0, 0, 0, 0, static_cast<char>(kEof)};
  buf_.Assign(std::string_view(empty, sizeof(empty)));
  SetHeader();
}

Listpack Listpack::FromBytes(std::string bytes) {
  Listpack lp;
  lp.buf_.Assign(bytes);
  const auto* p = reinterpret_cast<const uint8_t*>(lp.buf_.data());
  uint32_t count = static_cast<uint32_t>(ReadLe(p + 4, 2));
  if (count == kUnknownCount) {  // count by walking
    count = 0;
    for (size_t pos = kHeaderSize; pos < lp.buf_.size() - 1; pos += lp.EntrySize(pos)) ++count;
  }
  lp.buf_.set_aux(count);
  return lp;
}

absl::Status Listpack::Validate(std::string_view bytes) {
  if (bytes.size() < kHeaderSize + 1) return absl::DataLossError("listpack shorter than its header");
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (ReadLe(p, 4) != bytes.size()) return absl::DataLossError("listpack size mismatch");
  if (p[bytes.size() - 1] != kEof) return absl::DataLossError("listpack without its terminator");
  const uint64_t declared = ReadLe(p + 4, 2);
  uint64_t count = 0;
  size_t pos = kHeaderSize;
  const size_t end = bytes.size() - 1;
  while (pos < end) {
    const size_t part = EncodedPartSize(p + pos, end - pos);
    if (part == 0 || part > end - pos) return absl::DataLossError(absl::StrCat("bad listpack entry at ", pos));
    const size_t back = BacklenSize(part);
    if (back > end - pos - part) return absl::DataLossError(absl::StrCat("listpack entry past the end at ", pos));
    std::string expect;
    AppendBacklen(part, &expect);
    if (std::memcmp(expect.data(), p + pos + part, back) != 0) {
      return absl::DataLossError(absl::StrCat("bad listpack back-length at ", pos));
    }
    pos += part + back;
    ++count;
  }
  if (declared != kUnknownCount && declared != count) return absl::DataLossError("listpack count mismatch");
  return absl::OkStatus();
}

void Listpack::SetHeader() {
  auto* p = reinterpret_cast<uint8_t*>(buf_.data());
  const uint64_t total = buf_.size();
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>((total >> (8 * i)) & 0xFF);
  const uint64_t count = std::min<uint64_t>(buf_.aux(), kUnknownCount);
  p[4] = static_cast<uint8_t>(count & 0xFF);
  p[5] = static_cast<uint8_t>(count >> 8);
}

size_t Listpack::EntrySize(size_t pos) const {
  const auto* p = reinterpret_cast<const uint8_t*>(buf_.data()) + pos;
  const size_t part = EncodedPartSize(p, buf_.size() - pos);
  return part + BacklenSize(part);
}

size_t Listpack::First() const { return buf_.aux() == 0 ? kEnd : kHeaderSize; }

size_t Listpack::Prev(size_t pos) const {
  if (pos == kHeaderSize || pos == kEnd) return kEnd;
  // Read the previous entry's back-length right to left.
  const auto* p = reinterpret_cast<const uint8_t*>(buf_.data());
  size_t at = pos - 1;
  uint64_t len = 0;
  int shift = 0;
  while (true) {
    len |= static_cast<uint64_t>(p[at] & 127) << shift;
    if (!(p[at] & 128)) break;
    shift += 7;
    --at;
  }
  return pos - BacklenSize(len) - len;
}

size_t Listpack::Last() const {
  if (buf_.aux() == 0) return kEnd;
  return Prev(buf_.size() - 1);
}

size_t Listpack::Seek(int64_t index) const {
  const int64_t n = static_cast<int64_t>(buf_.aux());
  if (index < 0) index += n;
  if (index < 0 || index >= n) return kEnd;
  if (index < n / 2) {
    size_t pos = First();
    for (int64_t i = 0; i < index; ++i) pos = Next(pos);
    return pos;
  }
  size_t pos = Last();
  for (int64_t i = n - 1; i > index; --i) pos = Prev(pos);
  return pos;
}

size_t Listpack::Find(size_t pos, std::string_view s, size_t skip) const {
  int64_t as_int;
  const bool numeric = StringToInt64(s, &as_int);
  while (pos != kEnd) {
    const ListpackValue v = Get(pos);
    // A string entry is compared by its bytes even when `s` is numeric: Redis
    // stores such text as an integer, but a listpack from an RDB file or a
    // DUMP payload may hold it as a string (Redis's lpFind matches it too).
    if (v.is_int ? numeric && v.int_value == as_int : v.str == s) return pos;
    for (size_t i = 0; i <= skip && pos != kEnd; ++i) pos = Next(pos);
  }
  return kEnd;
}

size_t Listpack::InsertEncoded(size_t pos, std::string_view encoded) {
  if (pos == kEnd) pos = buf_.size() - 1;
  buf_.Insert(pos, encoded);
  buf_.set_aux(buf_.aux() + 1);
  SetHeader();
  return pos;
}

void Listpack::Append(std::string_view s) { InsertEncoded(kEnd, ListpackEncode(s)); }
void Listpack::AppendInt(int64_t v) { InsertEncoded(kEnd, ListpackEncodeInt(v)); }
void Listpack::Prepend(std::string_view s) { InsertEncoded(kHeaderSize, ListpackEncode(s)); }
size_t Listpack::InsertBefore(size_t pos, std::string_view s) { return InsertEncoded(pos, ListpackEncode(s)); }

void Listpack::AppendEncoded(std::string_view encoded, uint32_t count) {
  buf_.Insert(buf_.size() - 1, encoded);
  buf_.set_aux(buf_.aux() + count);
  SetHeader();
}

size_t Listpack::Replace(size_t pos, std::string_view s) {
  const std::string encoded = ListpackEncode(s);
  buf_.Replace(pos, EntrySize(pos), encoded);
  SetHeader();
  return pos;
}

void Listpack::ReplaceInt(size_t pos, int64_t v) {
  std::string encoded;  // at most 10 bytes: within the small-string buffer, no allocation
  ListpackEncodeIntTo(v, &encoded);
  const size_t old = EntrySize(pos);
  if (old == encoded.size()) {
    std::memcpy(buf_.data() + pos, encoded.data(), old);  // the header (size, count) is unchanged
    return;
  }
  buf_.Replace(pos, old, encoded);
  SetHeader();
}

size_t Listpack::Delete(size_t pos, size_t n) {
  size_t end = pos;
  size_t removed = 0;
  while (removed < n && end < buf_.size() - 1) {
    end += EntrySize(end);
    ++removed;
  }
  buf_.Erase(pos, end - pos);
  buf_.set_aux(buf_.aux() - static_cast<uint32_t>(removed));
  SetHeader();
  return pos >= buf_.size() - 1 ? kEnd : pos;
}

void Listpack::DeleteRange(int64_t start, size_t n) {
  const int64_t size = static_cast<int64_t>(buf_.aux());
  if (start < 0) start = std::max<int64_t>(0, start + size);
  if (start >= size || n == 0) return;
  Delete(Seek(start), n);
}

}  // namespace ringkv::core

#include "core/intset.h"

#include <cstring>

namespace ringkv::core {
namespace {

uint32_t EncodingFor(int64_t v) {
  if (v >= INT16_MIN && v <= INT16_MAX) return 2;
  if (v >= INT32_MIN && v <= INT32_MAX) return 4;
  return 8;
}

uint64_t ReadIntsetField(const char* p, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

void WriteLe(char* p, uint64_t v, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

int64_t ReadElement(const char* p, uint32_t encoding) {
  const uint64_t raw = ReadIntsetField(p, encoding);
  switch (encoding) {
    case 2: return static_cast<int16_t>(raw);
    case 4: return static_cast<int32_t>(raw);
    default: return static_cast<int64_t>(raw);
  }
}

}  // namespace

Intset::Intset() {
  buf_.Assign(std::string_view("\0\0\0\0\0\0\0\0", kHeaderSize));
  WriteLe(buf_.data(), 2, 4);
}

Intset Intset::FromBytes(std::string bytes) {
  Intset s;
  s.buf_.Assign(bytes);
  return s;
}

absl::Status Intset::Validate(std::string_view bytes) {
  if (bytes.size() < kHeaderSize) return absl::DataLossError("intset shorter than its header");
  const uint64_t encoding = ReadIntsetField(bytes.data(), 4);
  if (encoding != 2 && encoding != 4 && encoding != 8) return absl::DataLossError("bad intset encoding");
  const uint64_t length = ReadIntsetField(bytes.data() + 4, 4);
  if (length == 0) return absl::DataLossError("empty intset");
  if (kHeaderSize + length * encoding != bytes.size()) return absl::DataLossError("intset size mismatch");
  int64_t prev = 0;
  for (uint64_t i = 0; i < length; ++i) {
    const int64_t v = ReadElement(bytes.data() + kHeaderSize + i * encoding, static_cast<uint32_t>(encoding));
    if (i > 0 && v <= prev) return absl::DataLossError("intset elements not strictly ascending");
    prev = v;
  }
  return absl::OkStatus();
}

uint32_t Intset::encoding() const { return static_cast<uint32_t>(ReadIntsetField(buf_.data(), 4)); }
size_t Intset::size() const { return static_cast<size_t>(ReadIntsetField(buf_.data() + 4, 4)); }

int64_t Intset::Get(size_t i) const {
  const uint32_t enc = encoding();
  return ReadElement(buf_.data() + kHeaderSize + i * enc, enc);
}

void Intset::Set(size_t i, int64_t v) {
  const uint32_t enc = encoding();
  WriteLe(buf_.data() + kHeaderSize + i * enc, static_cast<uint64_t>(v), enc);
}

size_t Intset::Search(int64_t v, bool* found) const {
  size_t lo = 0, hi = size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const int64_t m = Get(mid);
    if (m == v) {
      *found = true;
      return mid;
    }
    if (m < v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  *found = false;
  return lo;
}

bool Intset::Contains(int64_t v) const {
  if (EncodingFor(v) > encoding()) return false;
  bool found;
  Search(v, &found);
  return found;
}

void Intset::Upgrade(uint32_t to) {
  const uint32_t from = encoding();
  const size_t n = size();
  std::string out(kHeaderSize + n * to, '\0');
  WriteLe(out.data(), to, 4);
  WriteLe(out.data() + 4, n, 4);
  for (size_t i = 0; i < n; ++i) {
    WriteLe(out.data() + kHeaderSize + i * to,
            static_cast<uint64_t>(ReadElement(buf_.data() + kHeaderSize + i * from, from)), to);
  }
  buf_.Assign(out);
}

bool Intset::Add(int64_t v) {
  if (EncodingFor(v) > encoding()) Upgrade(EncodingFor(v));  // v is then the new minimum or maximum
  bool found;
  const size_t at = Search(v, &found);
  if (found) return false;
  const uint32_t enc = encoding();
  buf_.Insert(kHeaderSize + at * enc, std::string_view("\0\0\0\0\0\0\0\0", enc));
  WriteLe(buf_.data() + 4, size() + 1, 4);
  Set(at, v);
  return true;
}

bool Intset::Remove(int64_t v) {
  if (EncodingFor(v) > encoding()) return false;
  bool found;
  const size_t at = Search(v, &found);
  if (!found) return false;
  const uint32_t enc = encoding();
  buf_.Erase(kHeaderSize + at * enc, enc);
  WriteLe(buf_.data() + 4, size() - 1, 4);
  return true;
}

}  // namespace ringkv::core

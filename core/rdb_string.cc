#include "core/rdb_string.h"

#include <liblzf/lzf.h>

#include <charconv>
#include <vector>

namespace ringkv::core {
namespace {

constexpr uint8_t kEncInt8 = 0xC0, kEncInt16 = 0xC1, kEncInt32 = 0xC2, kEncLzf = 0xC3;

}  // namespace

void RdbAppendLength(uint64_t n, std::string* out) {
  if (n < (1 << 6)) {
    out->push_back(static_cast<char>(n));
  } else if (n < (1 << 14)) {
    out->push_back(static_cast<char>(0x40 | (n >> 8)));
    out->push_back(static_cast<char>(n & 0xFF));
  } else if (n <= UINT32_MAX) {
    out->push_back(static_cast<char>(0x80));
    for (int i = 3; i >= 0; --i) out->push_back(static_cast<char>((n >> (8 * i)) & 0xFF));  // big endian
  } else {
    out->push_back(static_cast<char>(0x81));
    for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  }
}

namespace {

// The integer encodings: a value that fits 8, 16 or 32 bits, little endian.
bool AppendInteger(int64_t v, std::string* out, size_t* written) {
  if (v >= INT8_MIN && v <= INT8_MAX) {
    out->push_back(static_cast<char>(kEncInt8));
    out->push_back(static_cast<char>(v & 0xFF));
    *written = 2;
  } else if (v >= INT16_MIN && v <= INT16_MAX) {
    out->push_back(static_cast<char>(kEncInt16));
    for (int i = 0; i < 2; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
    *written = 3;
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    out->push_back(static_cast<char>(kEncInt32));
    for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
    *written = 5;
  } else {
    return false;
  }
  return true;
}

}  // namespace

size_t RdbLengthSize(uint64_t n) {
  if (n < (1 << 6)) return 1;
  if (n < (1 << 14)) return 2;
  if (n <= UINT32_MAX) return 5;
  return 9;
}

size_t RdbEncodeString(std::string_view s, bool compress, std::string* out) {
  size_t written;
  int64_t v;
  // Short decimal strings that round-trip exactly are stored as integers.
  if (s.size() <= 11 && StringToInt64(s, &v) && AppendInteger(v, out, &written)) return written;
  if (compress && s.size() > 20) {
    // Worth it only if LZF saves at least 4 bytes (out buffer len - 4).
    std::vector<char> buf(s.size() - 4 + 1);
    unsigned int clen = lzf_compress(s.data(), static_cast<unsigned int>(s.size()), buf.data(),
                                     static_cast<unsigned int>(s.size() - 4));
    if (clen > 0) {
      size_t start = out->size();
      out->push_back(static_cast<char>(kEncLzf));
      RdbAppendLength(clen, out);
      RdbAppendLength(s.size(), out);
      out->append(buf.data(), clen);
      return out->size() - start;
    }
  }
  size_t start = out->size();
  RdbAppendLength(s.size(), out);
  out->append(s);
  return out->size() - start;
}

size_t RdbStringSize(const StringValue& v, bool compress) {
  std::string scratch;
  if (v.is_int()) {
    size_t written;
    if (AppendInteger(v.int_value(), &scratch, &written)) return written;
    char digits[24];
    auto r = std::to_chars(digits, digits + sizeof(digits), v.int_value());
    size_t len = static_cast<size_t>(r.ptr - digits);
    return RdbLengthSize(len) + len;
  }
  char buf[24];
  return RdbEncodeString(v.View(buf), compress, &scratch);
}

}  // namespace ringkv::core

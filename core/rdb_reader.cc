#include "core/rdb_reader.h"

#include <liblzf/lzf.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/crc64.h"
#include "core/strings.h"
#include "core/rdb_format.h"

namespace ringkv::core {

std::string_view rdb::TypeName(uint8_t type) {
  switch (type) {
    case kTypeString:
      return "string";
    case kTypeList:
    case kTypeListZiplist:
    case kTypeListQuicklist:
    case kTypeListQuicklist2:
      return "list";
    case kTypeSet:
    case kTypeSetIntset:
      return "set";
    case kTypeZset:
    case kTypeZset2:
    case kTypeZsetZiplist:
    case kTypeZsetListpack:
      return "zset";
    case kTypeHash:
    case kTypeHashZipmap:
    case kTypeHashZiplist:
    case kTypeHashListpack:
      return "hash";
    case kTypeStreamListpacks:
    case kTypeStreamListpacks2:
      return "stream";
    case kTypeModule:
    case kTypeModule2:
      return "module";
    default:
      return "unknown";
  }
}

bool MemorySource::Read(char* dst, size_t n) {
  if (n > data_.size() - pos_) return false;
  std::memcpy(dst, data_.data() + pos_, n);
  pos_ += n;
  return true;
}

bool FdSource::Fill() {
  pos_ = len_ = 0;
  const uint64_t left = limit_ - fetched_;
  if (left == 0) return false;
  while (true) {
    ssize_t r = ::read(fd_, buf_.get(), static_cast<size_t>(std::min<uint64_t>(kBufSize, left)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    len_ = static_cast<size_t>(r);
    fetched_ += len_;
    return true;
  }
}

bool FdSource::Read(char* dst, size_t n) {
  while (n > 0) {
    if (pos_ == len_ && !Fill()) return false;
    size_t take = std::min(n, len_ - pos_);
    std::memcpy(dst, buf_.get() + pos_, take);
    pos_ += take;
    offset_ += take;
    dst += take;
    n -= take;
  }
  return true;
}

bool FdSource::AtEnd() { return pos_ == len_ && !Fill(); }

namespace {

// Reads through a source, keeping the running CRC-64 and naming offsets in
// errors.
class Reader {
 public:
  explicit Reader(ByteSource* src) : src_(src) {}

  absl::Status Error(std::string_view what) const {
    return absl::DataLossError(StrCat(what, " at offset ", src_->offset()));
  }
  absl::Status ShortRead() const { return Error("Short read or unexpected end of file"); }

  bool Bytes(char* dst, size_t n) {
    if (!src_->Read(dst, n)) return false;
    crc_ = Crc64(crc_, std::string_view(dst, n));
    return true;
  }
  bool Byte(uint8_t* b) { return Bytes(reinterpret_cast<char*>(b), 1); }

  // A length field; *special says it was an encoding marker (11xxxxxx).
  absl::Status Length(uint64_t* len, bool* special = nullptr) {
    uint8_t b;
    if (!Byte(&b)) return ShortRead();
    if (special) *special = false;
    switch (b >> 6) {
      case 0:
        *len = b & 0x3F;
        return absl::OkStatus();
      case 1: {
        uint8_t b2;
        if (!Byte(&b2)) return ShortRead();
        *len = (static_cast<uint64_t>(b & 0x3F) << 8) | b2;
        return absl::OkStatus();
      }
      case 2: {
        int n = b == 0x80 ? 4 : b == 0x81 ? 8 : 0;
        if (n == 0) return Error(absl::StrFormat("Unknown length encoding 0x%02x", b));
        unsigned char raw[8];
        if (!Bytes(reinterpret_cast<char*>(raw), n)) return ShortRead();
        uint64_t v = 0;
        for (int i = 0; i < n; ++i) v = (v << 8) | raw[i];  // big endian
        *len = v;
        return absl::OkStatus();
      }
      default:
        if (special == nullptr) return Error("Unexpected string encoding where a length was expected");
        *special = true;
        *len = b & 0x3F;
        return absl::OkStatus();
    }
  }

  absl::Status String(std::string* out) {
    uint64_t len;
    bool special;
    if (absl::Status s = Length(&len, &special); !s.ok()) return s;
    if (special) {
      switch (len) {
        case rdb::kEncInt8:
        case rdb::kEncInt16:
        case rdb::kEncInt32: {
          const int n = len == rdb::kEncInt8 ? 1 : len == rdb::kEncInt16 ? 2 : 4;
          unsigned char raw[4];
          if (!Bytes(reinterpret_cast<char*>(raw), n)) return ShortRead();
          uint32_t u = 0;
          for (int i = n - 1; i >= 0; --i) u = (u << 8) | raw[i];  // little endian
          int64_t v = n == 1 ? static_cast<int8_t>(u) : n == 2 ? static_cast<int16_t>(u) : static_cast<int32_t>(u);
          *out = StrCat(v);
          return absl::OkStatus();
        }
        case rdb::kEncLzf:
          return Lzf(out);
        default:
          return Error(StrCat("Unknown string encoding ", len));
      }
    }
    return Raw(len, out);
  }

  // len bytes, read in pieces so a corrupt length cannot make us allocate
  // more than the input really holds.
  absl::Status Raw(uint64_t len, std::string* out) {
    out->clear();
    constexpr uint64_t kPiece = 16 << 20;
    while (out->size() < len) {
      size_t take = static_cast<size_t>(std::min<uint64_t>(kPiece, len - out->size()));
      size_t at = out->size();
      out->resize(at + take);
      if (!Bytes(out->data() + at, take)) return ShortRead();
    }
    return absl::OkStatus();
  }

  absl::Status Lzf(std::string* out) {
    uint64_t clen, len;
    if (absl::Status s = Length(&clen); !s.ok()) return s;
    if (absl::Status s = Length(&len); !s.ok()) return s;
    std::string compressed;
    if (absl::Status s = Raw(clen, &compressed); !s.ok()) return s;
    if (len > (1ULL << 32) || len == 0) return Error("Invalid LZF length");
    out->resize(static_cast<size_t>(len));
    unsigned int got = lzf_decompress(compressed.data(), static_cast<unsigned int>(clen), out->data(),
                                      static_cast<unsigned int>(len));
    if (got != len) return Error("Invalid LZF compressed string");
    return absl::OkStatus();
  }

  absl::StatusOr<StringValue> Value(uint8_t type) {
    if (type != rdb::kTypeString) {
      return Error(StrCat("Unsupported RDB value type ", static_cast<int>(type), " (",
                                rdb::TypeName(type), "): ringkv does not store this type"));
    }
    std::string s;
    if (absl::Status st = String(&s); !st.ok()) return st;
    return StringValue(s);
  }

  uint64_t crc() const { return crc_; }
  ByteSource* src() { return src_; }

 private:
  ByteSource* src_;
  uint64_t crc_ = 0;
};

}  // namespace

absl::StatusOr<StringValue> ReadRdbValue(ByteSource* src) {
  Reader r(src);
  uint8_t type;
  if (!r.Byte(&type)) return r.ShortRead();
  return r.Value(type);
}

absl::Status LoadRdb(ByteSource* src, RdbVisitor* visitor, const RdbLoadOptions& options) {
  Reader r(src);
  char header[9];
  if (!r.Bytes(header, sizeof(header)) || std::string_view(header, 5) != rdb::kMagic) {
    return absl::DataLossError("Wrong signature trying to load DB from file");
  }
  int version = 0;
  for (int i = 5; i < 9; ++i) {
    if (header[i] < '0' || header[i] > '9') return absl::DataLossError("Wrong signature trying to load DB from file");
    version = version * 10 + (header[i] - '0');
  }
  if (version < 1 || version > rdb::kVersion) {
    return absl::DataLossError(StrCat("Can't handle RDB format version ", version));
  }
  int db = 0;
  int64_t expire_ms = -1;
  KeyMeta meta;
  while (true) {
    uint8_t op;
    if (!r.Byte(&op)) return r.ShortRead();
    switch (op) {
      case rdb::kOpExpireMs: {
        unsigned char raw[8];
        if (!r.Bytes(reinterpret_cast<char*>(raw), 8)) return r.ShortRead();
        uint64_t v = 0;
        for (int i = 7; i >= 0; --i) v = (v << 8) | raw[i];
        expire_ms = static_cast<int64_t>(v);
        continue;
      }
      case rdb::kOpExpireSec: {
        unsigned char raw[4];
        if (!r.Bytes(reinterpret_cast<char*>(raw), 4)) return r.ShortRead();
        uint32_t v = 0;
        for (int i = 3; i >= 0; --i) v = (v << 8) | raw[i];
        expire_ms = static_cast<int64_t>(v) * 1000;
        continue;
      }
      case rdb::kOpIdle: {
        uint64_t idle;
        if (absl::Status s = r.Length(&idle); !s.ok()) return s;
        meta.idle_s = static_cast<int64_t>(idle);
        continue;
      }
      case rdb::kOpFreq: {
        uint8_t freq;
        if (!r.Byte(&freq)) return r.ShortRead();
        meta.freq = freq;
        continue;
      }
      case rdb::kOpSelectDb: {
        uint64_t n;
        if (absl::Status s = r.Length(&n); !s.ok()) return s;
        if (n >= static_cast<uint64_t>(options.databases)) {
          return r.Error(StrCat("Data file was created with a server configured to handle more than ",
                                      options.databases, " databases (SELECTDB ", n, ")"));
        }
        db = static_cast<int>(n);
        continue;
      }
      case rdb::kOpResizeDb: {
        uint64_t keys, expires;
        if (absl::Status s = r.Length(&keys); !s.ok()) return s;
        if (absl::Status s = r.Length(&expires); !s.ok()) return s;
        visitor->OnResizeDb(db, keys, expires);
        continue;
      }
      case rdb::kOpAux: {
        std::string key, value;
        if (absl::Status s = r.String(&key); !s.ok()) return s;
        if (absl::Status s = r.String(&value); !s.ok()) return s;
        if (absl::Status s = visitor->OnAux(key, value); !s.ok()) return s;
        continue;
      }
      case rdb::kOpModuleAux:
        return r.Error("The RDB holds module data (MODULE_AUX): ringkv has no modules");
      case rdb::kOpFunction2:
        return r.Error("The RDB holds function libraries (FUNCTION LOAD): ringkv does not support functions");
      case rdb::kOpEof: {
        if (version >= 5) {
          const uint64_t expected = r.crc();
          unsigned char raw[8];
          if (!src->Read(reinterpret_cast<char*>(raw), 8)) return r.ShortRead();
          uint64_t stored = 0;
          for (int i = 7; i >= 0; --i) stored = (stored << 8) | raw[i];
          if (stored != 0 && stored != expected) {
            return absl::DataLossError(absl::StrFormat("Wrong RDB checksum expected: (%x) got (%x)", stored, expected));
          }
        }
        return absl::OkStatus();
      }
      default: {
        if (op > rdb::kTypeStreamListpacks2 || op == 8) {
          return r.Error(StrCat("Unknown RDB record type ", static_cast<int>(op)));
        }
        std::string key;
        if (absl::Status s = r.String(&key); !s.ok()) return s;
        absl::StatusOr<StringValue> value = r.Value(op);
        if (!value.ok()) return value.status();
        if (absl::Status s = visitor->OnEntry(db, std::move(key), std::move(*value), expire_ms, meta); !s.ok()) {
          return s;
        }
        expire_ms = -1;
        meta = KeyMeta{};
      }
    }
  }
}

}  // namespace ringkv::core

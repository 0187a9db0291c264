#include "core/rdb_reader.h"

#include <liblzf/lzf.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/crc64.h"
#include "core/strings.h"
#include "core/rdb_format.h"
#include "core/rdb_input.h"

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

ssize_t FdSource::Fetch(char* dst, size_t n) {
  while (true) {
    const ssize_t r = ::read(fd_, dst, n);
    if (r < 0 && errno == EINTR) continue;
    return r;
  }
}

bool BufferedSource::Fill() {
  pos_ = len_ = 0;
  const uint64_t left = limit_ - fetched_;
  if (left == 0) return false;
  const ssize_t r = Fetch(buf_.get(), static_cast<size_t>(std::min<uint64_t>(buf_size_, left)));
  if (r <= 0) return false;
  len_ = static_cast<size_t>(r);
  fetched_ += len_;
  return true;
}

bool BufferedSource::Read(char* dst, size_t n) {
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

bool BufferedSource::AtEnd() { return pos_ == len_ && !Fill(); }

namespace {
std::atomic<bool> g_skip_checksum_validation{false};
}  // namespace

void SetSkipChecksumValidation(bool skip) { g_skip_checksum_validation.store(skip, std::memory_order_relaxed); }
bool SkipChecksumValidation() { return g_skip_checksum_validation.load(std::memory_order_relaxed); }

absl::StatusOr<Value> ReadRdbValue(ByteSource* src, const CollectionLimits& limits, uint64_t* packed_blobs) {
  RdbInput r(src);
  uint8_t type;
  if (!r.Byte(&type)) return r.ShortRead();
  absl::StatusOr<Value> v = ReadRdbValueOfType(r, type, limits);
  if (packed_blobs != nullptr) *packed_blobs = r.packed_blobs();
  return v;
}

absl::Status LoadRdb(ByteSource* src, RdbVisitor* visitor, const RdbLoadOptions& options) {
  RdbInput r(src);
  char header[9];
  // As Redis: fewer than 9 bytes is a short read (a payload cut before its
  // header), not a wrong signature.
  if (!r.Bytes(header, sizeof(header))) return r.ShortRead();
  if (std::string_view(header, 5) != rdb::kMagic) return absl::DataLossError("Wrong signature trying to load DB from file");
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
        // Only a hint: capped so that a corrupt one cannot make the loader
        // allocate tables for billions of keys before it has read one.
        visitor->OnResizeDb(db, std::min(keys, rdb::kMaxSizeHint), std::min(expires, rdb::kMaxSizeHint));
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
      case rdb::kOpFunction2: {
        std::string code;
        if (absl::Status s = r.String(&code); !s.ok()) return s;
        if (absl::Status s = visitor->OnFunctionLibrary(std::move(code)); !s.ok()) return s;
        continue;
      }
      case rdb::kOpFunctionPreGa:
        return r.Error("Pre-release function format not supported");
      case rdb::kOpEof: {
        if (version >= 5) {
          const uint64_t expected = r.crc();
          unsigned char raw[8];
          if (!src->Read(reinterpret_cast<char*>(raw), 8)) return r.ShortRead();
          uint64_t stored = 0;
          for (int i = 7; i >= 0; --i) stored = (stored << 8) | raw[i];
          if (stored != 0 && stored != expected && !SkipChecksumValidation()) {  // 0: saved with rdbchecksum no
            return r.Error(absl::StrFormat("RDB CRC error: Wrong RDB checksum expected: (%x) but got (%x)", expected,
                                           stored));
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
        absl::StatusOr<Value> value = ReadRdbValueOfType(r, op, options.limits);
        if (!value.ok() && IsEmptyKeyError(value.status())) {  // skipped, as Redis does
          visitor->OnEmptyKeySkipped(db, key);
          expire_ms = -1;
          meta = KeyMeta{};
          continue;
        }
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

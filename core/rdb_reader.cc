#include "core/rdb_reader.h"

#include <liblzf/lzf.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <utility>
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

namespace {

// An unsigned little-endian integer of `n` bytes (EXPIRETIME_MS: 8,
// EXPIRETIME: 4), counted in the checksum.
bool ReadRdbLittleEndian(RdbInput& r, int n, uint64_t* v) {
  unsigned char raw[8];
  if (!r.Bytes(reinterpret_cast<char*>(raw), n)) return false;
  *v = 0;
  for (int i = n - 1; i >= 0; --i) *v = (*v << 8) | raw[i];
  return true;
}

// "REDIS" and four digits: the format version, 1 to rdb::kVersion.
absl::StatusOr<int> ReadRdbHeader(RdbInput& r) {
  char header[9];
  // As Redis: fewer than 9 bytes is a short read (a payload cut before its
  // header), not a wrong signature.
  if (!r.Bytes(header, sizeof(header))) return r.ShortRead();
  if (std::string_view(header, 5) != rdb::kMagic) {
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
  return version;
}

// After EOF (version 5 on): the CRC64 of everything before it, read past the
// checksum's own count. 0 means saved with rdbchecksum no.
absl::Status VerifyRdbChecksum(RdbInput& r, ByteSource* src) {
  const uint64_t expected = r.crc();
  unsigned char raw[8];
  if (!src->Read(reinterpret_cast<char*>(raw), 8)) return r.ShortRead();
  uint64_t stored = 0;
  for (int i = 7; i >= 0; --i) stored = (stored << 8) | raw[i];
  if (stored != 0 && stored != expected && !SkipChecksumValidation()) {
    return r.Error(absl::StrFormat("RDB CRC error: Wrong RDB checksum expected: (%x) but got (%x)", expected, stored));
  }
  return absl::OkStatus();
}

// Where the file's records have got to: the database SELECTDB chose, and
// what the records before the next key said of it (its deadline, IDLE,
// FREQ), cleared once that key is read.
struct RdbCursor {
  int db = 0;
  int64_t expire_ms = -1;
  KeyMeta meta;
};

// One record that is not a key or EOF; `*is_key` set (and nothing read)
// when `op` is a key's value type instead.
absl::Status ReadRdbOpcode(RdbInput& r, uint8_t op, RdbCursor& at, RdbVisitor* visitor,
                           const RdbLoadOptions& options, bool* is_key) {
  *is_key = false;
  switch (op) {
    case rdb::kOpExpireMs: {
      uint64_t v;
      if (!ReadRdbLittleEndian(r, 8, &v)) return r.ShortRead();
      at.expire_ms = static_cast<int64_t>(v);
      return absl::OkStatus();
    }
    case rdb::kOpExpireSec: {
      uint64_t v;
      if (!ReadRdbLittleEndian(r, 4, &v)) return r.ShortRead();
      at.expire_ms = static_cast<int64_t>(v) * 1000;
      return absl::OkStatus();
    }
    case rdb::kOpIdle: {
      uint64_t idle;
      if (absl::Status s = r.Length(&idle); !s.ok()) return s;
      at.meta.idle_s = static_cast<int64_t>(idle);
      return absl::OkStatus();
    }
    case rdb::kOpFreq: {
      uint8_t freq;
      if (!r.Byte(&freq)) return r.ShortRead();
      at.meta.freq = freq;
      return absl::OkStatus();
    }
    case rdb::kOpSelectDb: {
      uint64_t n;
      if (absl::Status s = r.Length(&n); !s.ok()) return s;
      if (n >= static_cast<uint64_t>(options.databases)) {
        return r.Error(StrCat("Data file was created with a server configured to handle more than ",
                              options.databases, " databases (SELECTDB ", n, ")"));
      }
      at.db = static_cast<int>(n);
      return absl::OkStatus();
    }
    case rdb::kOpResizeDb: {
      uint64_t keys, expires;
      if (absl::Status s = r.Length(&keys); !s.ok()) return s;
      if (absl::Status s = r.Length(&expires); !s.ok()) return s;
      // Only a hint: capped so that a corrupt one cannot make the loader
      // allocate tables for billions of keys before it has read one.
      visitor->OnResizeDb(at.db, std::min(keys, rdb::kMaxSizeHint), std::min(expires, rdb::kMaxSizeHint));
      return absl::OkStatus();
    }
    case rdb::kOpAux: {
      std::string key, value;
      if (absl::Status s = r.String(&key); !s.ok()) return s;
      if (absl::Status s = r.String(&value); !s.ok()) return s;
      return visitor->OnAux(key, value);
    }
    case rdb::kOpModuleAux:
      return r.Error("The RDB holds module data (MODULE_AUX): ringkv has no modules");
    case rdb::kOpFunction2: {
      std::string code;
      if (absl::Status s = r.String(&code); !s.ok()) return s;
      return visitor->OnFunctionLibrary(std::move(code));
    }
    case rdb::kOpFunctionPreGa:
      return r.Error("Pre-release function format not supported");
    default:
      *is_key = true;
      return absl::OkStatus();
  }
}

// A key of value type `type`, with what the records before it said; an
// empty collection is skipped (and reported), as Redis does.
absl::Status ReadRdbKey(RdbInput& r, uint8_t type, RdbCursor& at, RdbVisitor* visitor,
                        const RdbLoadOptions& options) {
  if (type > rdb::kTypeStreamListpacks2 || type == 8) {
    return r.Error(StrCat("Unknown RDB record type ", static_cast<int>(type)));
  }
  std::string key;
  if (absl::Status s = r.String(&key); !s.ok()) return s;
  absl::StatusOr<Value> value = ReadRdbValueOfType(r, type, options.limits);
  const int64_t expire_ms = std::exchange(at.expire_ms, -1);
  const KeyMeta meta = std::exchange(at.meta, KeyMeta{});
  if (!value.ok() && IsEmptyKeyError(value.status())) {
    visitor->OnEmptyKeySkipped(at.db, key);
    return absl::OkStatus();
  }
  if (!value.ok()) return value.status();
  return visitor->OnEntry(at.db, std::move(key), std::move(*value), expire_ms, meta);
}

}  // namespace

absl::Status LoadRdb(ByteSource* src, RdbVisitor* visitor, const RdbLoadOptions& options) {
  RdbInput r(src);
  absl::StatusOr<int> version = ReadRdbHeader(r);
  if (!version.ok()) return version.status();
  RdbCursor at;
  while (true) {
    uint8_t op;
    if (!r.Byte(&op)) return r.ShortRead();
    if (op == rdb::kOpEof) return *version >= 5 ? VerifyRdbChecksum(r, src) : absl::OkStatus();
    bool is_key;
    absl::Status s = ReadRdbOpcode(r, op, at, visitor, options, &is_key);
    if (s.ok() && is_key) s = ReadRdbKey(r, op, at, visitor, options);
    if (!s.ok()) return s;
  }
}

}  // namespace ringkv::core

// RDB reading: LoadRdb() walks an RDB file (versions 1 to 10, as Redis 7.0
// loads them) and hands each record to an RdbVisitor; ReadRdbValue() decodes
// one value (DUMP payloads).
//
// Contract: the input is validated as it is read. Any error -- a short read,
// an unknown opcode or type, bad LZF data, a database number out of range, a
// wrong checksum -- stops the load with a message naming the byte offset. The
// visitor may have seen earlier records by then: callers load into state they
// can throw away (a fresh keyspace, or a process that exits).
//
// Thread-safety: none; one reader per input.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/collection_limits.h"
#include "core/rdb_format.h"
#include "core/value.h"

namespace ringkv::core {

// Where RDB bytes come from.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads exactly n bytes into dst; false at end of input or on a read error.
  virtual bool Read(char* dst, size_t n) = 0;
  // Bytes consumed so far.
  virtual uint64_t offset() const = 0;
};

class MemorySource : public ByteSource {
 public:
  explicit MemorySource(std::string_view data) : data_(data) {}
  bool Read(char* dst, size_t n) override;
  uint64_t offset() const override { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// Buffered reads through Fetch(), never more than `limit` bytes in all (a
// socket's payload may be followed by bytes that are not the source's).
class BufferedSource : public ByteSource {
 public:
  bool Read(char* dst, size_t n) override;
  uint64_t offset() const override { return offset_; }
  // True when every byte of the input has been consumed.
  bool AtEnd();
  // Bytes fetched but not consumed yet.
  size_t buffered() const { return len_ - pos_; }

 protected:
  BufferedSource(uint64_t limit, size_t buffer_size)
      : limit_(limit), buf_size_(buffer_size), buf_(new char[buffer_size]) {}
  // Up to n bytes of the underlying input (n > 0); <= 0 at its end or on an
  // error.
  virtual ssize_t Fetch(char* dst, size_t n) = 0;

 private:
  bool Fill();
  uint64_t limit_;
  size_t buf_size_;
  uint64_t fetched_ = 0;
  std::unique_ptr<char[]> buf_;
  size_t pos_ = 0, len_ = 0;
  uint64_t offset_ = 0;
};

// Buffered reads from a file descriptor (not owned): a file or a socket.
class FdSource final : public BufferedSource {
 public:
  explicit FdSource(int fd, uint64_t limit = UINT64_MAX) : BufferedSource(limit, 256 * 1024), fd_(fd) {}

 private:
  ssize_t Fetch(char* dst, size_t n) override;
  int fd_;
};

class RdbVisitor {
 public:
  virtual ~RdbVisitor() = default;
  virtual absl::Status OnAux(std::string_view key, std::string_view value) {
    (void)key;
    (void)value;
    return absl::OkStatus();
  }
  // A database's size hint, before its keys (capped at rdb::kMaxSizeHint).
  virtual void OnResizeDb(int db, uint64_t keys, uint64_t expires) {
    (void)db;
    (void)keys;
    (void)expires;
  }
  // One key. expire_ms < 0: no expiry.
  virtual absl::Status OnEntry(int db, std::string key, Value value, int64_t expire_ms, KeyMeta meta) = 0;
  // A function library (RDB_OPCODE_FUNCTION2): its code, "#!lua name=..."
  // first. The default refuses it: a reader that cannot keep functions must
  // not drop them silently.
  virtual absl::Status OnFunctionLibrary(std::string code) {
    (void)code;
    return absl::DataLossError("The RDB holds function libraries, which this load cannot keep");
  }
  // A key whose collection is empty: not loaded, as Redis skips it (older
  // versions could write such keys).
  virtual void OnEmptyKeySkipped(int db, std::string_view key) {
    (void)db;
    (void)key;
  }
};

struct RdbLoadOptions {
  int databases = 16;  // SELECTDB at or above this is refused
  CollectionLimits limits;  // encodings of loaded collections
};

// Loads a whole RDB file from src, up to and including its checksum.
absl::Status LoadRdb(ByteSource* src, RdbVisitor* visitor, const RdbLoadOptions& options);
// Decodes one value: its type byte, then its encoding. Collections get the
// encoding `limits` call for (a listpack too big for them is converted).
// `packed_blobs` (optional): the listpacks, ziplists, zipmaps and intsets
// validated on the way (Redis's dump_payload_sanitizations).
absl::StatusOr<Value> ReadRdbValue(ByteSource* src, const CollectionLimits& limits = {},
                                   uint64_t* packed_blobs = nullptr);

// DEBUG SET-SKIP-CHECKSUM-VALIDATION (a test hook, process-wide as in Redis):
// while set, LoadRdb and ParseDumpPayload (core/dump_payload.h) do not check the CRC-64 (the
// contents are still validated). Safe to call from any thread.
void SetSkipChecksumValidation(bool skip);
bool SkipChecksumValidation();

}  // namespace ringkv::core

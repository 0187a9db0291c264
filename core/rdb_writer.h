// RdbWriter: produces an RDB file (Redis 7.0, version 10) record by record.
//
// Bytes are buffered and handed to a ByteSink in large pieces; the CRC-64
// trailer is computed on the way (or written as zero when checksums are off,
// as Redis's `rdbchecksum no` does). The first sink error stops all further
// output and is returned by Finish().
//
// Also home of the DUMP payload format: one value's RDB encoding, the 2-byte
// RDB version and a CRC-64 footer.
//
// Thread-safety: none; one writer per output. Safe to use in a forked child.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/collection_limits.h"
#include "core/rdb_format.h"
#include "core/value.h"

namespace ringkv::core {

// Where RDB bytes go.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual absl::Status Write(std::string_view bytes) = 0;
};

class StringSink : public ByteSink {
 public:
  absl::Status Write(std::string_view bytes) override {
    data.append(bytes);
    return absl::OkStatus();
  }
  std::string data;
};

// Writes to a file descriptor, retrying short writes. With sync_every > 0
// and a regular file, the data is flushed to the disk (fdatasync) each time
// that many more bytes were written -- Redis's incremental fsync of a file
// being saved, so the kernel never holds a whole snapshot of dirty pages to
// write at once; a pipe or socket is never synced.
class FdSink : public ByteSink {
 public:
  explicit FdSink(int fd, uint64_t sync_every = 0);
  absl::Status Write(std::string_view bytes) override;
  uint64_t syncs() const { return syncs_; }  // incremental fdatasyncs so far

 private:
  int fd_;
  uint64_t sync_every_;
  uint64_t unsynced_ = 0;
  uint64_t syncs_ = 0;
};

class RdbWriter {
 public:
  // Bytes buffered before they go to the sink (the most the writer holds).
  static constexpr size_t kFlushAt = 64 * 1024;

  RdbWriter(ByteSink* sink, bool compress, bool checksum)
      : sink_(sink), compress_(compress), checksum_(checksum) {}

  void Header();  // "REDIS0010"
  void Aux(std::string_view key, std::string_view value);
  void AuxInt(std::string_view key, int64_t value);
  // A FUNCTION library's code (opcode FUNCTION2), after the AUX fields.
  void FunctionLibrary(std::string_view code);
  void SelectDb(int db);
  void ResizeDb(uint64_t keys, uint64_t expires);
  // One key and its value; expire_ms < 0 means no expiry.
  void Entry(std::string_view key, const Value& value, int64_t expire_ms, KeyMeta meta = {});
  // EOF opcode and checksum, then flushes. Returns the first error met.
  absl::Status Finish();
  // Bytes produced so far (handed to the sink or still buffered).
  uint64_t bytes() const { return flushed_ + buf_.size(); }
  // Bytes buffered, not yet handed to the sink.
  size_t buffered() const { return buf_.size(); }
  // The first sink error so far (OK while there is none).
  const absl::Status& status() const { return status_; }

 private:
  void MaybeFlush() {
    if (buf_.size() >= kFlushAt) Flush();
  }
  void Flush();

  ByteSink* sink_;
  bool compress_;
  bool checksum_;
  uint64_t crc_ = 0;
  uint64_t flushed_ = 0;
  std::string buf_;
  absl::Status status_;
};

// The RDB type byte Redis 7.0 writes for a value in its current encoding.
uint8_t RdbTypeOf(const Value& value);
// Appends the RDB encoding of `value` without its type byte
// (core/rdb_collections.cc).
void RdbAppendValueBody(const Value& value, bool compress, std::string* out);
// Appends the RDB value encoding of `value` (its type byte first).
void RdbAppendValue(const Value& value, bool compress, std::string* out);

}  // namespace ringkv::core

#include "core/rdb_writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/crc64.h"
#include "core/strings.h"
#include "core/rdb_format.h"
#include "core/rdb_string.h"

namespace ringkv::core {
namespace {

void AppendLe64(uint64_t v, std::string* out) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

}  // namespace

FdSink::FdSink(int fd, uint64_t sync_every) : fd_(fd), sync_every_(sync_every) {
  struct stat st;
  if (sync_every_ > 0 && (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode))) sync_every_ = 0;
}

absl::Status FdSink::Write(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(StrCat("Write error: ", std::strerror(errno)));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
    unsynced_ += static_cast<uint64_t>(n);
  }
  if (sync_every_ > 0 && unsynced_ >= sync_every_) {
    if (::fdatasync(fd_) != 0) return absl::InternalError(StrCat("Write error: fsync: ", std::strerror(errno)));
    unsynced_ = 0;
    ++syncs_;
  }
  return absl::OkStatus();
}

void RdbWriter::Header() {
  StrAppend(&buf_, rdb::kMagic, absl::Dec(rdb::kVersion, absl::kZeroPad4));
}

void RdbWriter::Aux(std::string_view key, std::string_view value) {
  buf_.push_back(static_cast<char>(rdb::kOpAux));
  RdbEncodeString(key, compress_, &buf_);
  RdbEncodeString(value, compress_, &buf_);
  MaybeFlush();
}

void RdbWriter::AuxInt(std::string_view key, int64_t value) { Aux(key, StrCat(value)); }

void RdbWriter::FunctionLibrary(std::string_view code) {
  buf_.push_back(static_cast<char>(rdb::kOpFunction2));
  RdbEncodeString(code, compress_, &buf_);
  MaybeFlush();
}

void RdbWriter::SelectDb(int db) {
  buf_.push_back(static_cast<char>(rdb::kOpSelectDb));
  RdbAppendLength(static_cast<uint64_t>(db), &buf_);
}

void RdbWriter::ResizeDb(uint64_t keys, uint64_t expires) {
  buf_.push_back(static_cast<char>(rdb::kOpResizeDb));
  RdbAppendLength(keys, &buf_);
  RdbAppendLength(expires, &buf_);
}

void RdbWriter::Entry(std::string_view key, const Value& value, int64_t expire_ms, KeyMeta meta) {
  if (expire_ms >= 0) {
    buf_.push_back(static_cast<char>(rdb::kOpExpireMs));
    AppendLe64(static_cast<uint64_t>(expire_ms), &buf_);
  }
  if (meta.idle_s >= 0) {
    buf_.push_back(static_cast<char>(rdb::kOpIdle));
    RdbAppendLength(static_cast<uint64_t>(meta.idle_s), &buf_);
  }
  if (meta.freq >= 0) {
    buf_.push_back(static_cast<char>(rdb::kOpFreq));
    buf_.push_back(static_cast<char>(meta.freq & 0xFF));
  }
  buf_.push_back(static_cast<char>(RdbTypeOf(value)));
  RdbEncodeString(key, compress_, &buf_);
  RdbAppendValueBody(value, compress_, &buf_);
  MaybeFlush();
}

void RdbWriter::Flush() {
  if (buf_.empty()) return;
  if (checksum_) crc_ = Crc64(crc_, buf_);
  if (status_.ok()) status_ = sink_->Write(buf_);
  flushed_ += buf_.size();
  buf_.clear();
}

absl::Status RdbWriter::Finish() {
  buf_.push_back(static_cast<char>(rdb::kOpEof));
  Flush();  // the CRC covers everything up to and including EOF
  std::string trailer;
  AppendLe64(checksum_ ? crc_ : 0, &trailer);
  if (status_.ok()) status_ = sink_->Write(trailer);
  return status_;
}

void RdbAppendValue(const Value& value, bool compress, std::string* out) {
  out->push_back(static_cast<char>(RdbTypeOf(value)));
  RdbAppendValueBody(value, compress, out);
}

}  // namespace ringkv::core

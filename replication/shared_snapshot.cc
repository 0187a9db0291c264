#include "replication/shared_snapshot.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace ringkv::repl {

SharedSnapshot::SharedSnapshot(int fd, uint64_t size) : fd_(fd), size_(size), stream_(kBlockSize, 0) {}

SharedSnapshot::~SharedSnapshot() {
  if (fd_ >= 0) ::close(fd_);
}

bool SharedSnapshot::FillTo(uint64_t target) {
  target = std::min({target, size_, stream_.front_offset() + kMaxHeld});
  if (scratch_.size() != kBlockSize) scratch_.resize(kBlockSize);
  while (stream_.end() < target) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(target - stream_.end(), kBlockSize));
    const ssize_t n = ReadAt(scratch_.data(), want, stream_.end());
    if (n <= 0) return false;
    io::SharedBlock* none = nullptr;
    stream_.Append(std::string_view(scratch_.data(), static_cast<size_t>(n)), &none);
  }
  return true;
}

void SharedSnapshot::DropBefore(uint64_t offset) {
  while (stream_.blocks() > 1 && stream_.front_offset() + kBlockSize <= offset) stream_.PopFront()->Unref();
}

ssize_t SharedSnapshot::ReadAt(char* dst, size_t n, uint64_t offset) const {
  ssize_t got;
  do {
    got = ::pread(fd_, dst, n, static_cast<off_t>(offset));
  } while (got < 0 && errno == EINTR);
  return got;
}

}  // namespace ringkv::repl

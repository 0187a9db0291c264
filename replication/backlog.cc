#include "replication/backlog.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <utility>

namespace ringkv::repl {

namespace {

// A block's memory, header included.
size_t BlockMemoryFor(size_t capacity) {
  return std::clamp<size_t>(std::bit_floor(std::max<size_t>(capacity / 16, 1)), Backlog::kMinBlockSize,
                            Backlog::kMaxBlockSize);
}

}  // namespace

Backlog::Backlog(size_t capacity, uint64_t end_offset)
    : stream_(io::SharedBlockCapacityFor(BlockMemoryFor(capacity)), end_offset + 1),
      first_offset_(end_offset + 1),
      capacity_(capacity) {}

Backlog::~Backlog() {
  for (io::SharedBlock* b : retired_) b->Unref();
  if (spare_ != nullptr) spare_->Unref();
}

uint64_t Backlog::RefTo(uint64_t from, size_t max_bytes, io::OutBuffer* out) const {
  const uint64_t stop = std::min<uint64_t>(stream_.end(), from + max_bytes);
  return stream_.ForEachPiece(from, stop, std::numeric_limits<int>::max(),
                              [out](io::SharedBlock* block, const char* data, size_t n) {
                                out->AppendShared(block, data, n);
                              });
}

void Backlog::Trim(uint64_t needed_from) {
  // A block is released once we hold its only reference: what it held has
  // been sent.
  std::erase_if(retired_, [this](io::SharedBlock* b) {
    if (!b->unique()) return false;
    Release(b);
    return true;
  });
  // What is held moves forward in Redis's steps (its 16 KiB blocks), so a
  // PSYNC finds the same range held as on Redis, whatever our block size.
  const uint64_t end = stream_.end();
  while (first_offset_ + kTrimStep <= std::min(needed_from, end) && end - (first_offset_ + kTrimStep) >= capacity_) {
    first_offset_ += kTrimStep;
  }
  while (stream_.blocks() > 1 && stream_.front_offset() + stream_.block_size() <= first_offset_) {
    io::SharedBlock* done = stream_.PopFront();
    if (done->unique()) {
      Release(done);
    } else {
      retired_.push_back(done);
    }
  }
}

void Backlog::Release(io::SharedBlock* block) {
  if (spare_ == nullptr) {
    spare_ = block;
  } else {
    block->Unref();
  }
}

}  // namespace ringkv::repl

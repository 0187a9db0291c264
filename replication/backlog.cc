#include "replication/backlog.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

namespace ringkv::repl {

namespace {

size_t BlockSizeFor(size_t capacity) {
  return std::clamp<size_t>(std::bit_floor(std::max<size_t>(capacity / 16, 1)), Backlog::kMinBlockSize,
                            Backlog::kMaxBlockSize);
}

}  // namespace

Backlog::Backlog(size_t capacity, uint64_t end_offset)
    : block_size_(BlockSizeFor(capacity)),
      front_block_offset_(end_offset + 1), first_offset_(end_offset + 1), end_offset_(end_offset),
      capacity_(capacity) {}

Backlog::~Backlog() {
  for (io::SharedBlock* b : blocks_) b->Unref();
  for (io::SharedBlock* b : retired_) b->Unref();
  if (spare_ != nullptr) spare_->Unref();
}

void Backlog::Append(std::string_view bytes) {
  while (!bytes.empty()) {
    const size_t used = static_cast<size_t>(end_offset_ + 1 - front_block_offset_) % block_size_;
    if (used == 0 && end_offset_ + 1 - front_block_offset_ == blocks_.size() * block_size_) {
      blocks_.push_back(spare_ != nullptr ? std::exchange(spare_, nullptr) : io::SharedBlock::Create(block_size_));
    }
    const size_t take = std::min(bytes.size(), block_size_ - used);
    std::memcpy(blocks_.back()->data() + used, bytes.data(), take);
    end_offset_ += take;
    bytes.remove_prefix(take);
  }
}

uint64_t Backlog::RefTo(uint64_t from, size_t max_bytes, io::OutBuffer* out) const {
  uint64_t at = from;
  const uint64_t stop = std::min<uint64_t>(end_offset_ + 1, from + max_bytes);
  while (at < stop) {
    const uint64_t rel = at - front_block_offset_;
    const size_t block = static_cast<size_t>(rel / block_size_);
    const size_t pos = static_cast<size_t>(rel % block_size_);
    const size_t take = static_cast<size_t>(std::min<uint64_t>(block_size_ - pos, stop - at));
    out->AppendShared(blocks_[block], blocks_[block]->data() + pos, take);
    at += take;
  }
  return at;
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
  const uint64_t end = end_offset_ + 1;
  while (first_offset_ + kTrimStep <= std::min(needed_from, end) && end - (first_offset_ + kTrimStep) >= capacity_) {
    first_offset_ += kTrimStep;
  }
  while (blocks_.size() > 1 && front_block_offset_ + block_size_ <= first_offset_) {
    const uint64_t block_end = front_block_offset_ + block_size_;  // offset after the front block
    io::SharedBlock* done = blocks_.front();
    blocks_.pop_front();
    if (done->unique()) {
      Release(done);
    } else {
      retired_.push_back(done);
    }
    front_block_offset_ = block_end;
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

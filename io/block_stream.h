// BlockStream: an append-only byte stream stored in a chain of SharedBlocks
// of one size and addressed by absolute offset -- the storage of the
// replication backlog (repl::Backlog owns one, appends and trims it).
//
// It lives in io/ so that a replica connection's flush
// (IoThread::FlushReplica) builds its iovecs straight from the blocks, with
// no per-replica copy and no per-replica link nodes: the connection keeps
// only an offset into the stream (io::ReplicaSend).
//
// Offsets: the byte at offset o lives in block (o - front_offset) /
// block_size, at (o - front_offset) % block_size. end() is the offset after
// the last byte; every block but the last is full.
//
// Thread-safety: none. Owned and read on the main thread only (a replica
// streamed from it is a connection of I/O thread 0). Bytes once appended are
// never written again while their block is in the chain, so a send in
// flight may read them; a block leaving the chain is handed back to the
// owner, who frees or reuses it only when nobody else holds a reference
// (SharedBlock::unique()).
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string_view>

#include "io/shared_block.h"

namespace ringkv::io {

class BlockStream {
 public:
  // Empty; its first byte will have offset `next_offset`.
  BlockStream(size_t block_size, uint64_t next_offset)
      : block_size_(block_size), front_offset_(next_offset), end_(next_offset) {}
  BlockStream(const BlockStream&) = delete;
  BlockStream& operator=(const BlockStream&) = delete;
  // Drops the chain's references (a block still sent from lives on).
  ~BlockStream() {
    for (SharedBlock* b : blocks_) b->Unref();
  }

  // Bytes a block holds; and the memory a block takes, its header included.
  size_t block_size() const { return block_size_; }
  size_t block_memory() const { return block_size_ + sizeof(SharedBlock); }
  // Offset of the front block's first byte.
  uint64_t front_offset() const { return front_offset_; }
  // Offset after the last byte appended.
  uint64_t end() const { return end_; }
  size_t blocks() const { return blocks_.size(); }

  // Appends bytes, starting a block when the last is full: `*spare` when
  // non-null (taken), else a fresh one.
  void Append(std::string_view bytes, SharedBlock** spare) {
    while (!bytes.empty()) {
      const uint64_t held = end_ - front_offset_;
      const size_t used = static_cast<size_t>(held % block_size_);
      if (used == 0 && held == blocks_.size() * block_size_) {
        SharedBlock* b = *spare;
        *spare = nullptr;
        blocks_.push_back(b != nullptr ? b : SharedBlock::Create(block_size_));
      }
      const size_t take = bytes.size() < block_size_ - used ? bytes.size() : block_size_ - used;
      std::memcpy(blocks_.back()->data() + used, bytes.data(), take);
      end_ += take;
      bytes.remove_prefix(take);
    }
  }

  // Calls fn(block, data, n) for each contiguous piece of [from, stop), in
  // order, at most `max` pieces; returns the offset after the last byte
  // given. REQUIRES: front_offset() <= from, stop <= end().
  template <typename Fn>
  [[gnu::always_inline]] inline uint64_t ForEachPiece(uint64_t from, uint64_t stop, int max, Fn&& fn) const {
    uint64_t at = from;
    for (int i = 0; i < max && at < stop; ++i) {
      const uint64_t rel = at - front_offset_;
      SharedBlock* block = blocks_[static_cast<size_t>(rel / block_size_)];
      const size_t pos = static_cast<size_t>(rel % block_size_);
      const uint64_t room = block_size_ - pos;
      const size_t take = static_cast<size_t>(stop - at < room ? stop - at : room);
      fn(block, block->data() + pos, take);
      at += take;
    }
    return at;
  }

  // Removes the front block (its bytes end before the new front offset) and
  // hands its reference to the caller. REQUIRES: blocks() > 1.
  SharedBlock* PopFront() {
    SharedBlock* b = blocks_.front();
    blocks_.pop_front();
    front_offset_ += block_size_;
    return b;
  }

 private:
  const size_t block_size_;
  uint64_t front_offset_;
  uint64_t end_;
  std::deque<SharedBlock*> blocks_;  // one reference each
};

}  // namespace ringkv::io

// SlotTable: an I/O thread's connections by slot index, the index its
// completion tags carry (io/io_thread.h).
//
// Chunks of 1,024 entries that never move: growing adds one chunk (8 KiB)
// where a vector would copy the whole array into one twice the size and
// leave the old one behind in the allocator. At 10,000 connections that is
// about 8 bytes per connection instead of about 20 (docs/performance.md
// 19.1). An index costs one more load than a vector's (the chunk pointer).
//
// Thread-safety: the owning I/O thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace ringkv::io {

struct Connection;

class SlotTable {
 public:
  // Slots handed out so far (free or not).
  uint32_t size() const { return size_; }
  // REQUIRES: slot < size().
  Connection*& operator[](uint32_t slot) { return chunks_[slot >> kBits][slot & kMask]; }
  Connection* operator[](uint32_t slot) const { return chunks_[slot >> kBits][slot & kMask]; }
  // A new slot holding `conn`; returns its index.
  uint32_t PushBack(Connection* conn) {
    if ((size_ & kMask) == 0) chunks_.push_back(std::make_unique<Connection*[]>(kChunk));
    (*this)[size_] = conn;
    return size_++;
  }

 private:
  static constexpr uint32_t kBits = 10;
  static constexpr uint32_t kChunk = 1u << kBits;
  static constexpr uint32_t kMask = kChunk - 1;
  std::vector<std::unique_ptr<Connection*[]>> chunks_;
  uint32_t size_ = 0;
};

}  // namespace ringkv::io

// SharedBlock: a block of bytes written by one thread and then read, by
// reference, from any thread -- the replication backlog's storage, which the
// I/O threads send from directly (no copy per replica).
//
// Ownership is a reference count: the creator holds the first reference;
// every OutBuffer range that points into the block holds one more (see
// OutBuffer::AppendShared). The last Unref frees it, on whichever thread that
// happens.
//
// Contract for concurrent use: bytes handed to a reader are never written
// again. The writer may keep appending *after* them in the same block (other
// memory locations), so no lock is needed; the hand-off itself (a mailbox
// message) orders the writes before the reads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

namespace ringkv::io {

class SharedBlock {
 public:
  // A block of `capacity` bytes with one reference (the caller's).
  static SharedBlock* Create(size_t capacity) {
    void* mem = ::operator new(sizeof(SharedBlock) + capacity);
    return new (mem) SharedBlock(capacity);
  }
  SharedBlock(const SharedBlock&) = delete;
  SharedBlock& operator=(const SharedBlock&) = delete;

  char* data() { return reinterpret_cast<char*>(this + 1); }
  const char* data() const { return reinterpret_cast<const char*>(this + 1); }
  size_t capacity() const { return capacity_; }

  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  // True when the caller holds the only reference: nobody else can read the
  // bytes any more, so the block may be reused (written) by its owner.
  bool unique() const { return refs_.load(std::memory_order_acquire) == 1; }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      this->~SharedBlock();
      ::operator delete(this);
    }
  }

 private:
  explicit SharedBlock(size_t capacity) : capacity_(capacity) {}
  ~SharedBlock() = default;

  std::atomic<uint32_t> refs_{1};
  uint32_t capacity_;
};
static_assert(sizeof(SharedBlock) == 8);

// The capacity that makes a block take `allocation` bytes in all, its
// header included. Blocks are sized by it: with a power of two the
// allocator's size class fits the block exactly, where a power-of-two
// capacity plus the header takes the next class up (a quarter more memory
// for 16 KiB and 64 KiB blocks).
constexpr size_t SharedBlockCapacityFor(size_t allocation) { return allocation - sizeof(SharedBlock); }

}  // namespace ringkv::io

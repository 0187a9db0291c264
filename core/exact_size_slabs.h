// ExactSizeSlabs: memory for blocks that are written once at a known size and
// then mostly left alone -- a stream's sealed nodes (core/stream_value.h) --
// kept at that size rounded up to 8 bytes, where an allocator would put them
// in a size class (four per power of two in mimalloc and jemalloc: a
// 1,537-byte stream node takes a 1,792-byte block, 13% of the stream's
// memory; docs/performance.md 22.1).
//
// How:
//   - One step per 8 bytes between kMinSlabbed and kMaxSlabbed. A step owns
//     slabs: kSlabBytes of address space mapped from the kernel, aligned to
//     kSlabBytes so that a block finds its slab by masking its address. The
//     slab's first kHeaderBytes are its header; blocks of the step's size
//     follow back to back, carved in address order as they are first needed.
//     The kernel backs a page on its first write, so a slab costs the pages
//     it has carved into, not kSlabBytes, and a step's last, partly carved
//     slab leaves at most part of one page unused.
//   - A freed block goes on its slab's free list (linked through the block's
//     first 8 bytes) and is handed out again before anything is carved. Each
//     step keeps a list of its slabs with room (a free block or space not yet
//     carved); a slab that fills leaves it, a slab that frees a block joins it.
//   - A slab whose every block is free goes back to the kernel (munmap),
//     except one kept as a spare for the next new slab of any step, so a
//     block allocated and freed over and over at a step boundary does not map
//     and unmap a slab each time. Deleting a large stream therefore returns
//     all its slabs but that one.
//   - Other sizes (below kMinSlabbed the allocator's classes are 8 or 16 bytes
//     apart anyway; above kMaxSlabbed nodes are rare) are `new char[]`
//     blocks of the size rounded to 8.
//
// Accounting: the bytes of every slab block handed out (the size rounded to
// 8) are added to `*counted` (the process-wide instance counts into
// ExternalAllocatedBytes(), which the server adds to INFO used_memory), and
// taken off when it is freed: used_memory counts live blocks as the heap
// counts live allocations, not the slabs' free blocks and headers (as it does
// not count an allocator's free space). Blocks outside the slabbed range are
// counted by whatever counts `new` (the server's operator new).
//
// Thread-safety: Allocate and Free may be called from any thread; one mutex
// serialises them (the keyspace's main thread allocates and frees nodes, the
// lazy-free thread frees whole values, a replica's sync worker loads a
// staging keyspace; sealing or freeing happens at most once per node, so the
// lock is taken once per stream node, not per entry). Reading or writing
// the bytes of a block needs no lock: a block is its owner's. A fork child
// (RDB save, AOF rewrite) may read blocks but must not allocate or free (the
// mutex may have been held by another thread when the process forked).
//
// Example:
//   ExactSizeSlabs& slabs = ExactSizeSlabs::Global();
//   char* p = static_cast<char*>(slabs.Allocate(1537));  // 1,544 bytes
//   ...
//   slabs.Free(p, 1537);
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace ringkv::core {

class ExactSizeSlabs {
 public:
  static constexpr size_t kGranule = 8;
  static constexpr size_t kMinSlabbed = 128;
  static constexpr size_t kMaxSlabbed = 8192;
  static constexpr size_t kSlabBytes = 256 * 1024;
  static constexpr size_t kHeaderBytes = 64;

  // Slab blocks' bytes are added to and taken from *counted (which must
  // outlive this object).
  explicit ExactSizeSlabs(std::atomic<int64_t>* counted);
  // Unmaps the spare. REQUIRES: every block freed (each other slab went back
  // to the kernel when its last block did).
  ~ExactSizeSlabs();
  ExactSizeSlabs(const ExactSizeSlabs&) = delete;
  ExactSizeSlabs& operator=(const ExactSizeSlabs&) = delete;

  // The process-wide instance, counting into ExternalAllocatedBytes(). Never
  // destroyed: values may outlive static destruction at exit.
  static ExactSizeSlabs& Global();

  // The bytes a block for n bytes takes.
  static constexpr size_t RoundUp(size_t n) { return (n + kGranule - 1) & ~(kGranule - 1); }
  static constexpr bool Slabbed(size_t n) { return n >= kMinSlabbed && n <= kMaxSlabbed; }

  // A block of RoundUp(n) bytes, 8-aligned. REQUIRES: n > 0. Throws
  // std::bad_alloc when the kernel maps no more memory.
  void* Allocate(size_t n);
  // REQUIRES: p came from Allocate(m) of this object with RoundUp(m) == RoundUp(n).
  void Free(void* p, size_t n);

  struct Stats {
    size_t slabs = 0;        // mapped, the spare included
    size_t live_blocks = 0;  // slab blocks handed out
    size_t live_bytes = 0;   // their bytes (what *counted holds from them)
  };
  Stats stats() const;

 private:
  struct Slab;
  static constexpr size_t kSteps = (kMaxSlabbed - kMinSlabbed) / kGranule + 1;
  static size_t StepOf(size_t rounded) { return (rounded - kMinSlabbed) / kGranule; }

  Slab* NewSlab(uint32_t block) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReleaseSlab(Slab* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Link(size_t step, Slab* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Unlink(size_t step, Slab* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::atomic<int64_t>* const counted_;
  mutable absl::Mutex mu_;
  // Per step, the head of its list of slabs with room (headers are guarded
  // by mu_ too).
  Slab* with_room_[kSteps] ABSL_GUARDED_BY(mu_) = {};
  Slab* spare_ ABSL_GUARDED_BY(mu_) = nullptr;
  size_t slabs_ ABSL_GUARDED_BY(mu_) = 0;
  size_t live_blocks_ ABSL_GUARDED_BY(mu_) = 0;
  size_t live_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ringkv::core

#include "core/exact_size_slabs.h"

#include <sys/mman.h>

#include <cstring>
#include <new>

#include "core/alloc_stats.h"

namespace ringkv::core {

// The header at the start of each slab.
struct ExactSizeSlabs::Slab {
  Slab* prev;        // in its step's list of slabs with room
  Slab* next;
  void* free_list;   // freed blocks, each holding the next one's address
  uint32_t block;    // the step's block bytes
  uint32_t carved;   // offset of the first byte not carved into blocks yet
  uint32_t live;     // blocks handed out
  bool listed;       // in its step's list

  bool has_room() const { return free_list != nullptr || carved + block <= kSlabBytes; }
};

namespace {

// With transparent huge pages set to "always", a fault in a run of adjacent
// slabs could back 2 MiB at once, and a slab would no longer cost only the
// pages it has carved into.
void* NoHugePages(void* p, size_t bytes) {
  madvise(p, bytes, MADV_NOHUGEPAGE);
  return p;
}

void* MapAligned(size_t bytes) {
  // The kernel places a new mapping next to the last one, so a slab-sized
  // mapping is usually aligned already; otherwise map twice the size and
  // trim both ends.
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  if ((reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0) return NoHugePages(p, bytes);
  munmap(p, bytes);
  p = mmap(nullptr, 2 * bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  const uintptr_t raw = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = (raw + bytes - 1) & ~(bytes - 1);
  if (aligned > raw) munmap(p, aligned - raw);
  if (raw + 2 * bytes > aligned + bytes) munmap(reinterpret_cast<void*>(aligned + bytes), raw + bytes - aligned);
  return NoHugePages(reinterpret_cast<void*>(aligned), bytes);
}

}  // namespace

ExactSizeSlabs::ExactSizeSlabs(std::atomic<int64_t>* counted) : counted_(counted) {}

ExactSizeSlabs::~ExactSizeSlabs() {
  absl::MutexLock lock(&mu_);
  if (spare_ != nullptr) munmap(spare_, kSlabBytes);
}

ExactSizeSlabs& ExactSizeSlabs::Global() {
  static ExactSizeSlabs* const slabs = new ExactSizeSlabs(&ExternalAllocatedBytes());
  return *slabs;
}

void* ExactSizeSlabs::Allocate(size_t n) {
  const size_t rounded = RoundUp(n);
  if (!Slabbed(rounded)) return new char[rounded];
  const size_t step = StepOf(rounded);
  void* block;
  {
    absl::MutexLock lock(&mu_);
    Slab* s = with_room_[step];
    if (s == nullptr) {
      s = NewSlab(static_cast<uint32_t>(rounded));
      Link(step, s);
    }
    if (s->free_list != nullptr) {
      block = s->free_list;
      std::memcpy(&s->free_list, block, sizeof(void*));
    } else {
      block = reinterpret_cast<char*>(s) + s->carved;
      s->carved += s->block;
    }
    ++s->live;
    if (!s->has_room()) Unlink(step, s);
    ++live_blocks_;
    live_bytes_ += rounded;
  }
  counted_->fetch_add(static_cast<int64_t>(rounded), std::memory_order_relaxed);
  return block;
}

void ExactSizeSlabs::Free(void* p, size_t n) {
  if (p == nullptr) return;
  const size_t rounded = RoundUp(n);
  if (!Slabbed(rounded)) {
    delete[] static_cast<char*>(p);
    return;
  }
  const size_t step = StepOf(rounded);
  Slab* s = reinterpret_cast<Slab*>(reinterpret_cast<uintptr_t>(p) & ~(kSlabBytes - 1));
  {
    absl::MutexLock lock(&mu_);
    std::memcpy(p, &s->free_list, sizeof(void*));
    s->free_list = p;
    --s->live;
    --live_blocks_;
    live_bytes_ -= rounded;
    if (s->live == 0) {
      if (s->listed) Unlink(step, s);
      ReleaseSlab(s);
    } else if (!s->listed) {
      Link(step, s);
    }
  }
  counted_->fetch_sub(static_cast<int64_t>(rounded), std::memory_order_relaxed);
}

ExactSizeSlabs::Stats ExactSizeSlabs::stats() const {
  absl::MutexLock lock(&mu_);
  return Stats{slabs_, live_blocks_, live_bytes_};
}

ExactSizeSlabs::Slab* ExactSizeSlabs::NewSlab(uint32_t block) {
  static_assert(sizeof(Slab) <= kHeaderBytes && kHeaderBytes % kGranule == 0);
  void* mem = spare_;
  if (mem != nullptr) {
    spare_ = nullptr;
  } else {
    mem = MapAligned(kSlabBytes);
    if (mem == nullptr) throw std::bad_alloc();
    ++slabs_;
  }
  Slab* s = static_cast<Slab*>(mem);
  *s = Slab{nullptr, nullptr, nullptr, block, static_cast<uint32_t>(kHeaderBytes), 0, false};
  return s;
}

void ExactSizeSlabs::ReleaseSlab(Slab* s) {
  if (spare_ == nullptr) {
    spare_ = s;
    return;
  }
  munmap(s, kSlabBytes);
  --slabs_;
}

void ExactSizeSlabs::Link(size_t step, Slab* s) {
  s->prev = nullptr;
  s->next = with_room_[step];
  if (s->next != nullptr) s->next->prev = s;
  with_room_[step] = s;
  s->listed = true;
}

void ExactSizeSlabs::Unlink(size_t step, Slab* s) {
  if (s->prev != nullptr) {
    s->prev->next = s->next;
  } else {
    with_room_[step] = s->next;
  }
  if (s->next != nullptr) s->next->prev = s->prev;
  s->prev = s->next = nullptr;
  s->listed = false;
}

}  // namespace ringkv::core

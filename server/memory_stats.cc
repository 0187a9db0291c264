#include "server/memory_stats.h"

#include "core/alloc_stats.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <atomic>
#include <new>

#ifdef RINGKV_WITH_MIMALLOC
#include <mimalloc.h>
#define RK_MALLOC(n) mi_malloc(n)
#define RK_MALLOC_ALIGNED(n, a) mi_malloc_aligned(n, a)
#define RK_FREE(p) mi_free(p)
#define RK_USABLE(p) mi_usable_size(p)
#else
#define RK_MALLOC(n) malloc(n)
#define RK_MALLOC_ALIGNED(n, a) aligned_alloc(a, ((n) + (a) - 1) / (a) * (a))
#define RK_FREE(p) free(p)
#define RK_USABLE(p) malloc_usable_size(p)
#endif

// C++ allocations are counted, as Redis's zmalloc counts its own: used_memory
// is the bytes the process holds in live allocations (usable size), not what
// the allocator reserved from the OS. With mimalloc they go to mimalloc.
namespace {
std::atomic<int64_t> g_allocated{0};
inline void* Counted(void* p) {
  if (p != nullptr) g_allocated.fetch_add(static_cast<int64_t>(RK_USABLE(p)), std::memory_order_relaxed);
  return p;
}
inline void Uncount(void* p) {
  if (p != nullptr) g_allocated.fetch_sub(static_cast<int64_t>(RK_USABLE(p)), std::memory_order_relaxed);
}
}  // namespace

void* operator new(size_t n) {
  void* p = Counted(RK_MALLOC(n));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n) {
  void* p = Counted(RK_MALLOC(n));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new(size_t n, std::align_val_t a) {
  void* p = Counted(RK_MALLOC_ALIGNED(n, static_cast<size_t>(a)));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n, std::align_val_t a) {
  void* p = Counted(RK_MALLOC_ALIGNED(n, static_cast<size_t>(a)));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new(size_t n, const std::nothrow_t&) noexcept { return Counted(RK_MALLOC(n)); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return Counted(RK_MALLOC(n)); }
void operator delete(void* p) noexcept { Uncount(p); RK_FREE(p); }
void operator delete[](void* p) noexcept { Uncount(p); RK_FREE(p); }
void operator delete(void* p, size_t) noexcept { Uncount(p); RK_FREE(p); }
void operator delete[](void* p, size_t) noexcept { Uncount(p); RK_FREE(p); }
void operator delete(void* p, std::align_val_t) noexcept { Uncount(p); RK_FREE(p); }
void operator delete[](void* p, std::align_val_t) noexcept { Uncount(p); RK_FREE(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { Uncount(p); RK_FREE(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { Uncount(p); RK_FREE(p); }

namespace ringkv::server {
namespace {
std::atomic<uint64_t> g_peak{0};
}  // namespace

size_t AllocatedBytes() {
  int64_t bytes = g_allocated.load(std::memory_order_relaxed) +
                  core::ExternalAllocatedBytes().load(std::memory_order_relaxed);
  return static_cast<size_t>(std::max<int64_t>(0, bytes));
}

MemoryStats ReadMemoryStats() {
  MemoryStats m;
  long pages = 0, resident = 0;
  if (FILE* f = fopen("/proc/self/statm", "r")) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
  }
  m.rss = static_cast<uint64_t>(resident) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  m.used = AllocatedBytes();
#ifdef RINGKV_WITH_MIMALLOC
  static char name[32];
  snprintf(name, sizeof(name), "mimalloc-%d.%d.%d", MI_MALLOC_VERSION / 100, MI_MALLOC_VERSION / 10 % 10,
           MI_MALLOC_VERSION % 10);
  m.allocator = name;
#else
  m.allocator = "libc";
#endif
  uint64_t peak = g_peak.load(std::memory_order_relaxed);
  while (m.used > peak && !g_peak.compare_exchange_weak(peak, m.used, std::memory_order_relaxed)) {
  }
  m.peak = std::max(peak, m.used);
  return m;
}

uint64_t TotalSystemMemory() {
  return static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace ringkv::server

#include "server/memory_stats.h"

#include "core/alloc_stats.h"
#include "io/fork_gate.h"
#include "io/out_buffer.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

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
// Each call is made under the calling helper thread's fork gate
// (io/fork_gate.h), so that no fork() catches one half done.
namespace {
std::atomic<int64_t> g_allocated{0};
inline void* Counted(void* p) {
  if (p != nullptr) g_allocated.fetch_add(static_cast<int64_t>(RK_USABLE(p)), std::memory_order_relaxed);
  return p;
}
inline void* Allocate(size_t n) {
  ringkv::io::ForkGate::AllocationScope gate;
  return Counted(RK_MALLOC(n));
}
inline void* AllocateAligned(size_t n, std::align_val_t a) {
  ringkv::io::ForkGate::AllocationScope gate;
  return Counted(RK_MALLOC_ALIGNED(n, static_cast<size_t>(a)));
}
inline void Release(void* p) {
  if (p == nullptr) return;
  ringkv::io::ForkGate::AllocationScope gate;
  g_allocated.fetch_sub(static_cast<int64_t>(RK_USABLE(p)), std::memory_order_relaxed);
  RK_FREE(p);
}
}  // namespace

void* operator new(size_t n) {
  void* p = Allocate(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n) {
  void* p = Allocate(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new(size_t n, std::align_val_t a) {
  void* p = AllocateAligned(n, a);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n, std::align_val_t a) {
  void* p = AllocateAligned(n, a);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new(size_t n, const std::nothrow_t&) noexcept { return Allocate(n); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return Allocate(n); }
void operator delete(void* p) noexcept { Release(p); }
void operator delete[](void* p) noexcept { Release(p); }
void operator delete(void* p, size_t) noexcept { Release(p); }
void operator delete[](void* p, size_t) noexcept { Release(p); }
void operator delete(void* p, std::align_val_t) noexcept { Release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { Release(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { Release(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { Release(p); }

namespace ringkv::server {
namespace {
std::atomic<uint64_t> g_peak{0};
}  // namespace

size_t AllocatedBytes() {
  int64_t bytes = g_allocated.load(std::memory_order_relaxed) +
                  core::ExternalAllocatedBytes().load(std::memory_order_relaxed) - io::PooledChunkBytes();
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

AllocatorStats ReadAllocatorStats(const MemoryStats& m) {
  AllocatorStats a;
  a.allocated = m.used;
  a.active = a.resident = m.rss;
#ifdef RINGKV_WITH_MIMALLOC
  size_t elapsed, user, system, rss, peak_rss, commit = 0, peak_commit, faults;
  mi_process_info(&elapsed, &user, &system, &rss, &peak_rss, &commit, &peak_commit, &faults);
  if (commit > 0) a.active = a.resident = commit;
#endif
  return a;
}

std::string AllocatorStatsText() {
  std::string out;
#ifdef RINGKV_WITH_MIMALLOC
  mi_stats_print_out([](const char* msg, void* arg) { static_cast<std::string*>(arg)->append(msg); }, &out);
#endif
  return out;
}

void MemoryOverhead::Finish() {
  overhead_total = startup_allocated + repl_backlog + clients_slaves + clients_normal + aof_buffer + lua_caches +
                   functions_caches;
  for (const Db& db : dbs) overhead_total += db.overhead_ht_main + db.overhead_ht_expires;
  dataset = total_allocated > overhead_total ? total_allocated - overhead_total : 0;
  peak_perc = peak_allocated ? static_cast<float>(total_allocated) * 100 / static_cast<float>(peak_allocated) : 0;
  // Figures net of what the server used once set up.
  const uint64_t net = total_allocated > startup_allocated ? total_allocated - startup_allocated : 1;
  dataset_perc = static_cast<float>(dataset) * 100 / static_cast<float>(net);
  bytes_per_key = total_keys ? net / total_keys : 0;
  auto ratio = [](uint64_t a, uint64_t b) { return b ? static_cast<float>(a) / static_cast<float>(b) : 0.0f; };
  auto diff = [](uint64_t a, uint64_t b) { return static_cast<int64_t>(a) - static_cast<int64_t>(b); };
  total_frag = ratio(process_rss, total_allocated);
  total_frag_bytes = diff(process_rss, total_allocated);
  allocator_frag = ratio(allocator.active, allocator.allocated);
  allocator_frag_bytes = diff(allocator.active, allocator.allocated);
  allocator_rss = ratio(allocator.resident, allocator.active);
  allocator_rss_bytes = diff(allocator.resident, allocator.active);
  rss_extra = ratio(process_rss, allocator.resident);
  rss_extra_bytes = diff(process_rss, allocator.resident);
}

std::string MemoryDoctorReport(const MemoryOverhead& mh, const char* allocator) {
  constexpr int64_t k10MB = 10 << 20;
  bool empty = false, big_peak = false, high_frag = false, high_alloc_frag = false, high_proc_rss = false;
  bool high_alloc_rss = false, big_slave_buf = false, big_client_buf = false, many_scripts = false;
  int reports = 0;
  if (mh.total_allocated < 1024 * 1024 * 5) {
    empty = true;
    ++reports;
  } else {
    if (static_cast<float>(mh.peak_allocated) / static_cast<float>(mh.total_allocated) > 1.5) big_peak = true;
    if (mh.total_frag > 1.4 && mh.total_frag_bytes > k10MB) high_frag = true;
    if (mh.allocator_frag > 1.1 && mh.allocator_frag_bytes > k10MB) high_alloc_frag = true;
    if (mh.allocator_rss > 1.1 && mh.allocator_rss_bytes > k10MB) high_alloc_rss = true;
    if (mh.rss_extra > 1.1 && mh.rss_extra_bytes > k10MB) high_proc_rss = true;
    const uint64_t normal = mh.clients > mh.replicas ? mh.clients - mh.replicas : 0;
    if (normal > 0 && mh.clients_normal / normal > 1024 * 200) big_client_buf = true;
    if (mh.replicas > 0 && mh.clients_slaves / mh.replicas > 1024 * 1024 * 10) big_slave_buf = true;
    if (mh.cached_scripts > 1000) many_scripts = true;
    reports = big_peak + high_frag + high_alloc_frag + high_alloc_rss + high_proc_rss + big_client_buf +
              big_slave_buf + many_scripts;
  }
  if (reports == 0) {
    return "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this "
           "base.\n";
  }
  if (empty) {
    return "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in "
           "these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I "
           "will be back to our programming as soon as I finished rebooting.\n";
  }
  std::string s = "Sam, I detected a few issues in this Redis instance memory implants:\n\n";
  if (big_peak) {
    s += " * Peak memory: In the past this instance used more than 150% the memory that is currently using. The "
         "allocator is normally not able to release memory after a peak, so you can expect to see a big "
         "fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the "
         "Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon "
         "as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try "
         "to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown "
         "and restart the instance.\n\n";
  }
  if (high_frag) {
    s += " * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this "
         "means that the Resident Set Size of the Redis process is much larger than the sum of the logical "
         "allocations Redis performed). This problem is usually due either to a large peak memory (check if there "
         "is a peak memory entry above in the report) or may result from a workload that causes the allocator to "
         "fragment memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make "
         "sure you are using the Jemalloc allocator and not the default libc malloc. Note: The currently used "
         "allocator is \"";
    s += allocator;
    s += "\".\n\n";
  }
  if (high_alloc_frag) {
    s += " * High allocator fragmentation: This instance has an allocator external fragmentation greater than "
         "1.1. This problem is usually due either to a large peak memory (check if there is a peak memory entry "
         "above in the report) or may result from a workload that causes the allocator to fragment memory a lot. "
         "You can try enabling 'activedefrag' config option.\n\n";
  }
  if (high_alloc_rss) {
    s += " * High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 (this "
         "means that the Resident Set Size of the allocator is much larger than the sum what the allocator "
         "actually holds). This problem is usually due to a large peak memory (check if there is a peak memory "
         "entry above in the report), you can try the MEMORY PURGE command to reclaim it.\n\n";
  }
  if (high_proc_rss) {
    s += " * High process RSS overhead: This instance has non-allocator RSS memory overhead is greater than 1.1 "
         "(this means that the Resident Set Size of the Redis process is much larger than the RSS the allocator "
         "holds). This problem may be due to Lua scripts or Modules.\n\n";
  }
  if (big_slave_buf) {
    s += " * Big replica buffers: The replica output buffers in this instance are greater than 10MB for each "
         "replica (on average). This likely means that there is some replica instance that is struggling receiving "
         "data, either because it is too slow or because of networking issues. As a result, data piles on the "
         "master output buffers. Please try to identify what replica is not receiving data correctly and why. You "
         "can use the INFO output in order to check the replicas delays and the CLIENT LIST command to check the "
         "output buffers of each replica.\n\n";
  }
  if (big_client_buf) {
    s += " * Big client buffers: The clients output buffers in this instance are greater than 200K per client "
         "(on average). This may result from different causes, like Pub/Sub clients subscribed to channels bot not "
         "receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending "
         "commands with large replies or very large sequences of commands in the same pipeline. Please use the "
         "CLIENT LIST command in order to investigate the issue if it causes problems in your instance, or to "
         "understand better why certain clients are using a big amount of memory.\n\n";
  }
  if (many_scripts) {
    s += " * Many scripts: There seem to be many cached scripts in this instance (more than 1000). This may be "
         "because scripts are generated and `EVAL`ed, instead of being parameterized (with KEYS and ARGV), `SCRIPT "
         "LOAD`ed and `EVALSHA`ed. Unless `SCRIPT FLUSH` is called periodically, the scripts' caches may end up "
         "consuming most of your memory.\n\n";
  }
  s += "I'm here to keep you safe, Sam. I want to help you.\n";
  return s;
}

uint64_t TotalSystemMemory() {
  return static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace ringkv::server

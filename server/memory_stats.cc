#include "server/memory_stats.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdio>

#ifdef RINGKV_WITH_MIMALLOC
#include <mimalloc.h>
#endif

namespace ringkv::server {

MemoryStats ReadMemoryStats() {
  MemoryStats m;
  long pages = 0, resident = 0;
  if (FILE* f = fopen("/proc/self/statm", "r")) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
  }
  m.rss = static_cast<uint64_t>(resident) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
#ifdef RINGKV_WITH_MIMALLOC
  size_t elapsed, user, sys, rss, peak_rss, commit, peak_commit, faults;
  mi_process_info(&elapsed, &user, &sys, &rss, &peak_rss, &commit, &peak_commit, &faults);
  m.used = commit;
  m.peak = peak_commit;
  static char name[32];
  snprintf(name, sizeof(name), "mimalloc-%d.%d.%d", MI_MALLOC_VERSION / 100, MI_MALLOC_VERSION / 10 % 10,
           MI_MALLOC_VERSION % 10);
  m.allocator = name;
#else
  struct mallinfo2 mi = mallinfo2();
  m.used = mi.uordblks + mi.hblkhd;
  m.peak = m.used;
  m.allocator = "libc";
#endif
  return m;
}

uint64_t TotalSystemMemory() {
  return static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace ringkv::server

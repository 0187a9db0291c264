// Process memory figures for INFO memory and maxmemory: bytes in live C++
// allocations, counted by the process's operator new/delete (on mimalloc; on
// glibc malloc in the sanitizer build), and RSS from /proc. The server calls
// ReadMemoryStats() from the cron so the peak tracks between INFO calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ringkv::server {

struct MemoryStats {
  uint64_t used = 0;       // bytes in live C++ allocations (usable size)
  uint64_t peak = 0;       // highest `used` seen by ReadMemoryStats
  uint64_t rss = 0;        // resident set size
  const char* allocator = "";
};

MemoryStats ReadMemoryStats();

// What the allocator holds, as Redis's allocator_* figures: `allocated` is
// used memory; with mimalloc, `active` and `resident` are the bytes it has
// committed; otherwise (the sanitizer build, as Redis on libc malloc) both
// are the process's RSS.
struct AllocatorStats {
  uint64_t allocated = 0, active = 0, resident = 0;
};
AllocatorStats ReadAllocatorStats(const MemoryStats& m);
// MEMORY MALLOC-STATS: mimalloc's statistics report, or "" without mimalloc.
std::string AllocatorStatsText();

// Where used memory goes, as Redis 7.0's getMemoryOverheadData fills it
// for MEMORY STATS and MEMORY DOCTOR (the server gathers it:
// Server::MemoryOverheadData).
struct MemoryOverhead {
  uint64_t peak_allocated = 0, total_allocated = 0, startup_allocated = 0;
  uint64_t repl_backlog = 0, clients_slaves = 0, clients_normal = 0, aof_buffer = 0;
  uint64_t lua_caches = 0, functions_caches = 0;
  struct Db {
    int index;
    uint64_t overhead_ht_main, overhead_ht_expires;
  };
  std::vector<Db> dbs;  // databases with keys
  uint64_t overhead_total = 0, total_keys = 0, bytes_per_key = 0, dataset = 0;
  float dataset_perc = 0, peak_perc = 0;
  AllocatorStats allocator;
  uint64_t process_rss = 0;
  float total_frag = 0, allocator_frag = 0, allocator_rss = 0, rss_extra = 0;
  int64_t total_frag_bytes = 0, allocator_frag_bytes = 0, allocator_rss_bytes = 0, rss_extra_bytes = 0;
  // For MEMORY DOCTOR.
  uint64_t clients = 0, replicas = 0, cached_scripts = 0;
  // Fills the totals and ratios from the parts above.
  void Finish();
};
// MEMORY DOCTOR's report, Redis 7.0's words.
std::string MemoryDoctorReport(const MemoryOverhead& mh, const char* allocator);
// Bytes in live allocations; one atomic load (used before every command when
// maxmemory is set).
size_t AllocatedBytes();
uint64_t TotalSystemMemory();

}  // namespace ringkv::server

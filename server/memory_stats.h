// Process memory figures for INFO memory: allocated bytes counted by the
// process's operator new/delete (on mimalloc), RSS from /proc. In the
// sanitizer build mimalloc is not linked; figures then come from glibc's
// mallinfo2. The server calls ReadMemoryStats() from the cron so the peak
// tracks between INFO calls.
#pragma once

#include <cstdint>

namespace ringkv::server {

struct MemoryStats {
  uint64_t used = 0;       // bytes in live C++ allocations (usable size)
  uint64_t peak = 0;       // highest `used` seen by ReadMemoryStats
  uint64_t rss = 0;        // resident set size
  const char* allocator = "";
};

MemoryStats ReadMemoryStats();
uint64_t TotalSystemMemory();

}  // namespace ringkv::server

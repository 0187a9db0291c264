// Process memory figures for INFO memory and maxmemory: bytes in live C++
// allocations, counted by the process's operator new/delete (on mimalloc; on
// glibc malloc in the sanitizer build), and RSS from /proc. The server calls
// ReadMemoryStats() from the cron so the peak tracks between INFO calls.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ringkv::server {

struct MemoryStats {
  uint64_t used = 0;       // bytes in live C++ allocations (usable size)
  uint64_t peak = 0;       // highest `used` seen by ReadMemoryStats
  uint64_t rss = 0;        // resident set size
  const char* allocator = "";
};

MemoryStats ReadMemoryStats();
// Bytes in live allocations; one atomic load (used before every command when
// maxmemory is set).
size_t AllocatedBytes();
uint64_t TotalSystemMemory();

}  // namespace ringkv::server

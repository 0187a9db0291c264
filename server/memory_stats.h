// Process memory figures for INFO memory, from the allocator (mimalloc) and
// /proc. In the sanitizer build mimalloc is not linked; figures then come
// from glibc's mallinfo2.
#pragma once

#include <cstdint>

namespace ringkv::server {

struct MemoryStats {
  uint64_t used = 0;       // bytes the allocator has committed for us
  uint64_t peak = 0;
  uint64_t rss = 0;        // resident set size
  const char* allocator = "";
};

MemoryStats ReadMemoryStats();
uint64_t TotalSystemMemory();

}  // namespace ringkv::server

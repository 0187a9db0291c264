// Bytes that core/ allocates outside operator new: large zeroed arrays mapped
// straight from the kernel, so the OS hands over zero pages lazily instead of
// the process zero-filling them up front, and the exact-size slabs
// (core/exact_size_slabs.h). The server adds this to used_memory.
#pragma once

#include <atomic>
#include <cstdint>

namespace ringkv::core {

inline std::atomic<int64_t>& ExternalAllocatedBytes() {
  static std::atomic<int64_t> bytes{0};
  return bytes;
}

}  // namespace ringkv::core

// The memory that maxmemory is compared with, as Redis 7.0 counts it.
//
// Redis leaves out of the comparison what the eviction itself would make
// grow (freeMemoryGetNotCountedMemory): the replication buffer beyond
// repl-backlog-size (the stream its replicas still have to read) and the
// AOF buffer. Counted, each key evicted would add its DEL to those buffers
// and push the server further over the limit: a feedback loop that empties
// the dataset of a primary with a slow replica. INFO memory shows the
// excluded part as mem_not_counted_for_evict.
//
// Main thread only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ringkv::server {

class Server;

// Bytes of the replication and AOF buffers that eviction does not count.
uint64_t MemoryNotCountedForEvict(Server& s);

// Allocated bytes less MemoryNotCountedForEvict (never below 0).
size_t MemoryCountedForEvict(Server& s);

}  // namespace ringkv::server

#include "server/eviction_memory.h"

#include "replication/primary.h"
#include "server/memory_stats.h"
#include "server/server.h"

namespace ringkv::server {

uint64_t MemoryNotCountedForEvict(Server& s) {
  uint64_t n = 0;
  // The stream's blocks are shared by the backlog and the replicas: what
  // exceeds the backlog's size is the replicas' unread part.
  if (const repl::Primary* p = s.primary_side().primary()) {
    const uint64_t stream = p->backlog().memory(), backlog = p->backlog().capacity();
    if (stream > backlog) n += stream - backlog;
  }
  if (s.persistence().aof().enabled()) n += s.persistence().aof().buffer_allocated();
  // An in-process snapshot's output waiting for the disk, and the tables of
  // databases emptied during it, which it frees once walked.
  n += s.persistence().child().in_process_buffered_bytes();
  // Replies of connections closed (an evicted client, one over its output
  // limit) that the kernel still holds for a send in flight: freed once it
  // completes, as Redis frees a closed client's buffers at once.
  n += s.io().closing_output_bytes();
  return n;
}

size_t MemoryCountedForEvict(Server& s) {
  const size_t used = AllocatedBytes();
  const uint64_t not_counted = MemoryNotCountedForEvict(s);
  return used > not_counted ? used - static_cast<size_t>(not_counted) : 0;
}

}  // namespace ringkv::server

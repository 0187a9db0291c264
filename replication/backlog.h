// Backlog: the replication stream, kept once for every replica.
//
// Every write the primary propagates is appended here exactly once. A
// replica reads the range it has not yet received (its `next offset`); a
// partial resync (PSYNC) is possible while the range it asks for is still
// held. The backlog keeps at least `capacity` bytes (repl-backlog-size) and
// also everything a connected replica still needs, up to the replica output
// limit; past that the replica is dropped (and resyncs) rather than letting
// memory grow without bound.
//
// Storage is a chain of SharedBlocks of one size, chosen when the backlog
// is created: 1/16 of repl-backlog-size, between Redis's 16 KiB and 64 KiB
// (so the default 1 MB backlog uses 64 KiB blocks, and a 16 KiB backlog
// holds no more memory than Redis's 16 KiB blocks would). That is a
// block's memory, its header included (io::SharedBlockCapacityFor): the
// allocator's size class fits it exactly. The chain is an
// io::BlockStream, so that a replica connection of the main thread sends
// straight from it by offset (io::ReplicaSend: no copy, no per-replica
// links); a replica of another I/O thread is handed its range by reference
// (RefTo). Either way a block trimmed from the backlog lives on until the
// sends reading it are done: the backlog keeps its reference to such a block
// (`retired_`) until it holds the only one, so memory() counts every block
// of the stream still alive: Redis 7.0's shared replication buffer (INFO
// mem_total_replication_buffers).
//
// Offsets are Redis's: byte n of the stream has offset n (the first byte
// ever is 1); end_offset() is master_repl_offset.
//
// Thread-safety: none (main thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "io/block_stream.h"
#include "io/out_buffer.h"
#include "io/shared_block.h"

namespace ringkv::repl {

class Backlog {
 public:
  static constexpr size_t kMinBlockSize = 16 * 1024;
  static constexpr size_t kMaxBlockSize = 64 * 1024;

  // An empty backlog whose next byte will have offset `end_offset + 1`.
  Backlog(size_t capacity, uint64_t end_offset);
  ~Backlog();
  Backlog(const Backlog&) = delete;
  Backlog& operator=(const Backlog&) = delete;

  void Append(std::string_view bytes) { stream_.Append(bytes, &spare_); }
  uint64_t end_offset() const { return stream_.end() - 1; }
  // Offset of the first byte held (end_offset() + 1 when empty).
  uint64_t first_offset() const { return first_offset_; }
  uint64_t histlen() const { return stream_.end() - first_offset_; }
  // The blocks, for a replica connection that sends from them by offset.
  const io::BlockStream& stream() const { return stream_; }
  size_t capacity() const { return capacity_; }
  void set_capacity(size_t capacity) { capacity_ = capacity; }
  // True when bytes from `offset` (up to the end) are all held.
  bool Has(uint64_t offset) const { return offset >= first_offset_ && offset <= stream_.end(); }
  // Appends stream bytes [from, from + max_bytes) (clipped to the end) to
  // *out by reference (no copy); returns the offset after the last byte
  // handed over. REQUIRES: Has(from).
  uint64_t RefTo(uint64_t from, size_t max_bytes, io::OutBuffer* out) const;
  // Drops bytes before `needed_from` in 16 KiB steps while at least
  // capacity bytes remain (so up to a step more than capacity is held, as
  // Redis holds up to a block more), frees the blocks wholly dropped, and
  // the blocks trimmed earlier whose sends have all completed.
  // `needed_from` is the lowest offset a replica has not sent yet: a replica
  // sending by offset has nothing in flight before it.
  void Trim(uint64_t needed_from);
  // Bytes of stream blocks alive: held here, or trimmed and still being
  // sent from by a connection.
  size_t memory() const { return (stream_.blocks() + retired_.size()) * stream_.block_memory(); }
  // Bytes a block holds, and the memory it takes (a power of two:
  // kMinBlockSize to kMaxBlockSize).
  size_t block_size() const { return stream_.block_size(); }
  size_t block_memory() const { return stream_.block_memory(); }

 private:
  // A block only we reference: kept as the spare, else freed.
  void Release(io::SharedBlock* block);

  static constexpr uint64_t kTrimStep = 16 * 1024;
  // Trimmed blocks a connection still sends from (one reference each, ours).
  std::vector<io::SharedBlock*> retired_;
  // A trimmed block nobody else references, kept for the next Append: a
  // steady stream then reuses warm memory instead of allocating (and
  // page-faulting) a fresh block each time.
  io::SharedBlock* spare_ = nullptr;
  io::BlockStream stream_;  // the blocks, full except the last; fixed block size
  uint64_t first_offset_;   // first byte held (in the front block)
  size_t capacity_;
};

}  // namespace ringkv::repl

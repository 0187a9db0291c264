// OutBuffer: the reply bytes waiting to be sent to one connection.
//
// A chain of fixed-size chunks taken from a thread-local pool. An idle
// connection's OutBuffer holds no chunk at all (sizeof(OutBuffer) is three
// words), so idle clients cost no reply memory. Chunks move between threads by
// splicing whole chains (Splice), never by copying bytes.
//
// Besides its own chunks, a buffer can hold borrowed ranges of SharedBlocks
// (AppendShared): a small header pointing into a block it keeps a reference
// to. A replica's connection sends the replication backlog this way, straight
// from the backlog's memory, with no copy per replica.
//
// Thread-safety: an OutBuffer is owned by exactly one thread at a time; it has
// no internal locking. Chunks freed on another thread than the one that
// allocated them go to the freeing thread's pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <sys/types.h>
#include <sys/uio.h>
#include <string_view>

#include "io/shared_block.h"

namespace ringkv::io {

// One link of an OutBuffer: bytes [base, base + used), of which `sent` were
// already handed to the kernel (head link only). A link either owns its
// bytes (a ReplyChunk: base is its data, room up to `capacity`) or borrows
// them from `shared` (just this header; capacity == used, so no room).
struct ChunkHeader {
  ChunkHeader* next = nullptr;
  char* base = nullptr;
  SharedBlock* shared = nullptr;  // the block borrowed from, holding a reference
  uint32_t used = 0;
  uint32_t sent = 0;
  uint32_t capacity = 0;
};

struct ReplyChunk : ChunkHeader {
  static constexpr size_t kCapacity = 16 * 1024 - 48;  // with the header, within 16 KiB
  char data[kCapacity];
};

// Thread-local chunk pool. Bounded: surplus chunks go back to the allocator.
ReplyChunk* AllocChunk();
void FreeChunk(ReplyChunk* chunk);
// Bytes of the chunks resting in every thread's pool: free memory to the
// server, as an allocator's cache is, so used_memory (and maxmemory's
// eviction) leaves them out -- else sending replies would look like memory
// kept, up to a pool per thread.
int64_t PooledChunkBytes();

class OutBuffer {
 public:
  OutBuffer() = default;
  OutBuffer(const OutBuffer&) = delete;
  OutBuffer& operator=(const OutBuffer&) = delete;
  OutBuffer(OutBuffer&& other) noexcept
      : head_(other.head_), tail_(other.tail_), bytes_(other.bytes_) {
    other.head_ = other.tail_ = nullptr;
    other.bytes_ = 0;
  }
  // Inline when empty: a command's throw-away buffer (Server::Execute's,
  // for a client whose replies are off) is built and dropped every command.
  ~OutBuffer() {
    if (head_ != nullptr) Clear();
  }

  bool empty() const { return bytes_ == 0; }
  // Bytes not yet sent.
  size_t size() const { return bytes_; }
  // Memory held (for CLIENT LIST omem / INFO).
  size_t allocated() const;

  [[gnu::always_inline]] inline void Append(std::string_view s) {
    if (s.empty()) return;  // also keeps a null data() away from memcpy
    if (tail_ != nullptr && tail_->capacity - tail_->used >= s.size()) {
      std::memcpy(tail_->base + tail_->used, s.data(), s.size());
      tail_->used += static_cast<uint32_t>(s.size());
      bytes_ += s.size();
      return;
    }
    AppendSlow(s);
  }

  // Returns space for at least n (n <= ReplyChunk::kCapacity) contiguous bytes;
  // Commit(k) with k <= n makes them part of the buffer.
  [[gnu::always_inline]] inline char* Reserve(size_t n) {
    if (tail_ == nullptr || tail_->capacity - tail_->used < n) NewTail();
    return tail_->base + tail_->used;
  }
  void Commit(size_t n) {
    tail_->used += static_cast<uint32_t>(n);
    bytes_ += n;
  }

  // Appends bytes [data, data + n) of `block` by reference: they are sent
  // from the block itself, which stays alive (one more reference) until they
  // are. A range continuing the previous one in the same block extends it.
  // REQUIRES: the bytes are inside block and are never written again.
  void AppendShared(SharedBlock* block, const char* data, size_t n);

  // Moves all of other's chunks to the end of this buffer.
  void Splice(OutBuffer& other);

  // The first contiguous unsent range; empty when the buffer is empty.
  std::string_view Front() const {
    if (head_ == nullptr) return {};
    return {head_->base + head_->sent, head_->used - head_->sent};
  }
  // True when the unsent bytes span more than one link (a vectored send
  // pays off).
  bool MultiLink() const { return head_ != nullptr && head_->next != nullptr; }
  // Fills up to `max` iovecs with the unsent ranges, in order; returns how
  // many. They stay valid until the buffer is consumed or modified at its head.
  int Gather(iovec* iov, int max) const;
  // Marks the first n unsent bytes as sent (across links), releasing links
  // that are done.
  void Consume(size_t n);
  void Clear();
  // Empties the buffer as Clear does, but keeps its one chunk when that is
  // all it holds, for the next fill: a buffer filled and emptied once per
  // call (redis.call's replies) skips the pool round trip. The kept chunk is
  // an empty head: Append and Reserve write into it; Front() is empty until
  // they do (a caller that then Splices or AppendShared must read with
  // ToString or Gather, which skip it).
  void Rewind() {
    if (head_ != nullptr && head_->next == nullptr && head_->shared == nullptr) {
      head_->used = head_->sent = 0;
      bytes_ = 0;
      return;
    }
    Clear();
  }

  // Copies everything unsent into a string (tests, debugging).
  std::string ToString() const;

 private:
  void AppendSlow(std::string_view s);
  void NewTail();

  void Link(ChunkHeader* c);

  ChunkHeader* head_ = nullptr;
  ChunkHeader* tail_ = nullptr;
  size_t bytes_ = 0;
};

// Sends what `out` holds on a socket with one sendmsg (MSG_NOSIGNAL: a
// closed peer is an EPIPE, never a signal) and consumes what went; returns
// sendmsg's result (bytes sent, or -1 with errno: EAGAIN when a
// non-blocking socket is full). For the callers that own a socket outside
// the I/O threads (the cluster bus, MIGRATE, a replica's sync).
ssize_t SendOutBuffer(int fd, OutBuffer& out);

}  // namespace ringkv::io

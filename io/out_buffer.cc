#include "io/out_buffer.h"

#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <new>
#include <string>

namespace ringkv::io {
namespace {

// Enough chunks for a loop turn of small replies to many clients without
// touching the allocator; beyond this they are returned to mimalloc.
constexpr int kPoolLimit = 64;

struct ChunkPool {
  ReplyChunk* free = nullptr;
  int count = 0;
  ~ChunkPool();
};
thread_local ChunkPool pool;
std::atomic<int64_t> g_pooled_bytes{0};

ChunkPool::~ChunkPool() {
  g_pooled_bytes.fetch_sub(count * static_cast<int64_t>(sizeof(ReplyChunk)), std::memory_order_relaxed);
  while (free != nullptr) {
    auto* next = static_cast<ReplyChunk*>(free->next);
    delete free;
    free = next;
  }
}

// Releases one link: a borrowed one drops its block reference.
void ReleaseLink(ChunkHeader* c) {
  if (c->shared != nullptr) {
    c->shared->Unref();
    delete c;
    return;
  }
  FreeChunk(static_cast<ReplyChunk*>(c));
}

}  // namespace

ReplyChunk* AllocChunk() {
  ReplyChunk* c = pool.free;
  if (c != nullptr) {
    pool.free = static_cast<ReplyChunk*>(c->next);
    --pool.count;
    g_pooled_bytes.fetch_sub(sizeof(ReplyChunk), std::memory_order_relaxed);
  } else {
    c = new ReplyChunk;
  }
  c->next = nullptr;
  c->base = c->data;
  c->shared = nullptr;
  c->used = 0;
  c->sent = 0;
  c->capacity = ReplyChunk::kCapacity;
  return c;
}

void FreeChunk(ReplyChunk* chunk) {
  if (pool.count >= kPoolLimit) {
    delete chunk;
    return;
  }
  chunk->next = pool.free;
  pool.free = chunk;
  ++pool.count;
  g_pooled_bytes.fetch_add(sizeof(ReplyChunk), std::memory_order_relaxed);
}

int64_t PooledChunkBytes() { return g_pooled_bytes.load(std::memory_order_relaxed); }

size_t OutBuffer::allocated() const {
  size_t n = 0;
  for (ChunkHeader* c = head_; c != nullptr; c = c->next) {
    n += c->shared != nullptr ? sizeof(ChunkHeader) : sizeof(ReplyChunk);
  }
  return n;
}

void OutBuffer::Link(ChunkHeader* c) {
  if (tail_ == nullptr) {
    head_ = tail_ = c;
  } else {
    tail_->next = c;
    tail_ = c;
  }
}

void OutBuffer::NewTail() { Link(AllocChunk()); }

void OutBuffer::AppendShared(SharedBlock* block, const char* data, size_t n) {
  if (n == 0) return;
  bytes_ += n;
  if (tail_ != nullptr && tail_->shared == block && tail_->base + tail_->used == data) {
    tail_->used += static_cast<uint32_t>(n);
    tail_->capacity = tail_->used;
    return;
  }
  auto* c = new ChunkHeader;
  block->Ref();
  c->shared = block;
  c->base = const_cast<char*>(data);  // never written through: capacity == used
  c->used = c->capacity = static_cast<uint32_t>(n);
  Link(c);
}

void OutBuffer::AppendSlow(std::string_view s) {
  while (!s.empty()) {
    if (tail_ == nullptr || tail_->used == tail_->capacity) NewTail();
    size_t n = std::min<size_t>(s.size(), tail_->capacity - tail_->used);
    std::memcpy(tail_->base + tail_->used, s.data(), n);
    tail_->used += static_cast<uint32_t>(n);
    bytes_ += n;
    s.remove_prefix(n);
  }
}

void OutBuffer::Splice(OutBuffer& other) {
  if (other.head_ == nullptr) return;
  if (tail_ == nullptr) {
    head_ = other.head_;
  } else {
    tail_->next = other.head_;
  }
  tail_ = other.tail_;
  bytes_ += other.bytes_;
  other.head_ = other.tail_ = nullptr;
  other.bytes_ = 0;
}

ssize_t SendOutBuffer(int fd, OutBuffer& out) {
  iovec iov[16];
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = static_cast<size_t>(out.Gather(iov, 16));
  ssize_t n;
  do {
    n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n > 0) out.Consume(static_cast<size_t>(n));
  return n;
}

int OutBuffer::Gather(iovec* iov, int max) const {
  int n = 0;
  for (const ChunkHeader* c = head_; c != nullptr && n < max; c = c->next) {
    const uint32_t from = c == head_ ? c->sent : 0;
    if (c->used == from) continue;
    iov[n].iov_base = c->base + from;
    iov[n].iov_len = c->used - from;
    ++n;
  }
  return n;
}

void OutBuffer::Consume(size_t n) {
  bytes_ -= n;
  while (n > 0) {
    size_t avail = head_->used - head_->sent;
    if (n < avail) {
      head_->sent += static_cast<uint32_t>(n);
      return;
    }
    n -= avail;
    ChunkHeader* done = head_;
    head_ = head_->next;
    if (head_ == nullptr) tail_ = nullptr;
    ReleaseLink(done);
  }
}

void OutBuffer::Clear() {
  while (head_ != nullptr) {
    ChunkHeader* next = head_->next;
    ReleaseLink(head_);
    head_ = next;
  }
  tail_ = nullptr;
  bytes_ = 0;
}

std::string OutBuffer::ToString() const {
  std::string out;
  out.reserve(bytes_);
  for (ChunkHeader* c = head_; c != nullptr; c = c->next) out.append(c->base + c->sent, c->used - c->sent);
  return out;
}

}  // namespace ringkv::io

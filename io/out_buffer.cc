#include "io/out_buffer.h"

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
  ~ChunkPool() {
    while (free != nullptr) {
      ReplyChunk* next = free->next;
      delete free;
      free = next;
    }
  }
};
thread_local ChunkPool pool;

}  // namespace

ReplyChunk* AllocChunk() {
  ReplyChunk* c = pool.free;
  if (c != nullptr) {
    pool.free = c->next;
    --pool.count;
  } else {
    c = new ReplyChunk;
  }
  c->next = nullptr;
  c->used = 0;
  c->sent = 0;
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
}

size_t OutBuffer::allocated() const {
  size_t n = 0;
  for (ReplyChunk* c = head_; c != nullptr; c = c->next) n += sizeof(ReplyChunk);
  return n;
}

void OutBuffer::NewTail() {
  ReplyChunk* c = AllocChunk();
  if (tail_ == nullptr) {
    head_ = tail_ = c;
  } else {
    tail_->next = c;
    tail_ = c;
  }
}

void OutBuffer::AppendSlow(std::string_view s) {
  while (!s.empty()) {
    if (tail_ == nullptr || tail_->used == ReplyChunk::kCapacity) NewTail();
    size_t n = std::min(s.size(), ReplyChunk::kCapacity - tail_->used);
    std::memcpy(tail_->data + tail_->used, s.data(), n);
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

void OutBuffer::Consume(size_t n) {
  bytes_ -= n;
  while (n > 0) {
    size_t avail = head_->used - head_->sent;
    if (n < avail) {
      head_->sent += static_cast<uint32_t>(n);
      return;
    }
    n -= avail;
    ReplyChunk* done = head_;
    head_ = head_->next;
    if (head_ == nullptr) tail_ = nullptr;
    FreeChunk(done);
  }
}

void OutBuffer::Clear() {
  while (head_ != nullptr) {
    ReplyChunk* next = head_->next;
    FreeChunk(head_);
    head_ = next;
  }
  tail_ = nullptr;
  bytes_ = 0;
}

std::string OutBuffer::ToString() const {
  std::string out;
  out.reserve(bytes_);
  for (ReplyChunk* c = head_; c != nullptr; c = c->next) out.append(c->data + c->sent, c->used - c->sent);
  return out;
}

}  // namespace ringkv::io

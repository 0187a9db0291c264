// ReplicaSend: the send side of a connection that carries a replication
// stream read by offset from an io::BlockStream (the backlog's blocks).
//
// A replica's connection keeps one of these instead of queueing the stream
// in its OutBuffer: its position is an offset, and each flush builds the
// iovecs straight from the stream's blocks (IoThread::FlushReplica). What
// the connection's OutBuffer holds (the +FULLRESYNC / +CONTINUE line, a
// snapshot) is sent first; the stream follows once it is empty.
//
// Lifetime of the bytes: the blocks a send in flight reads are referenced
// (`held`) from its submission to its completion, so neither a trim of the
// backlog nor its destruction (a new history) frees memory the kernel still
// reads. Between sends nothing is held: the backlog keeps the bytes from
// `next` on as long as the replica is attached (repl::Primary counts `next`
// when it trims).
//
// Thread-safety: main thread only (a connection streamed this way belongs
// to I/O thread 0).
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <cstdint>

#include "io/block_stream.h"
#include "io/shared_block.h"

namespace ringkv::io {

struct ReplicaSend {
  static constexpr int kMaxIov = 16;  // pieces per send: up to 1 MiB of 64 KiB blocks

  ReplicaSend(const BlockStream* s, uint64_t from) : stream(s), next(from) {}
  ReplicaSend(const ReplicaSend&) = delete;
  ReplicaSend& operator=(const ReplicaSend&) = delete;
  ~ReplicaSend() { ReleaseHeld(); }

  // Bytes of the stream not sent yet (0 once stopped).
  uint64_t behind() const { return stream != nullptr && stream->end() > next ? stream->end() - next : 0; }
  void ReleaseHeld() {
    for (int i = 0; i < held_count; ++i) held[i]->Unref();
    held_count = 0;
  }

  const BlockStream* stream;  // null: stopped (a send in flight still completes)
  uint64_t next;              // offset of the first stream byte not sent yet
  uint32_t inflight = 0;      // bytes of the stream send in flight (0: none)
  int held_count = 0;
  SharedBlock* held[kMaxIov];  // one reference per piece of the send in flight
  // The send in flight's vector: it must outlive the submission (io_uring).
  iovec iov[kMaxIov];
  msghdr msg{};
};

}  // namespace ringkv::io

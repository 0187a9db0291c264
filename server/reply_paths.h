// Reply paths: where bytes for a client go, and how much of its output is
// still unsent -- shared by the Server (replies, CLIENT LIST, output limits)
// and the components that write to clients on their own (PubSub's messages).
//
// A reply goes to the client's connection, or -- with appendfsync always,
// when it may depend on AOF bytes not yet fsynced, or replies are already
// held -- to a held segment (Persistence's DurableReplies), so nothing
// overtakes a reply waiting for its fsync. Free functions, always inlined:
// the caller's references are used as they are, no object in between.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>

#include "io/connection.h"
#include "io/io_system.h"
#include "io/out_buffer.h"
#include "server/client.h"
#include "server/persistence/persistence.h"

namespace ringkv::server {

// Where a reply to `c` goes (`writes`: its command is a write). On the path
// of every reply.
[[gnu::always_inline]] inline io::OutBuffer& ReplyTargetOf(Client& c, Persistence& persistence, io::IoSystem& io,
                                                          bool writes = false) {
  if (c.held_replies || persistence.MustHoldReply(writes)) {
    c.held_replies = true;
    return persistence.HeldReplyTarget(c.id());
  }
  return io.PrepareWrite(c.conn);
}

// ReplyTargetOf for bytes the client did not ask for in this turn (a
// published message): sent with the held fan-out (IoSystem::PrepareFanoutWrite).
[[gnu::always_inline]] inline io::OutBuffer& FanoutTargetOf(Client& c, Persistence& persistence, io::IoSystem& io) {
  if (c.held_replies || persistence.MustHoldReply(false)) return ReplyTargetOf(c, persistence, io);
  return io.PrepareFanoutWrite(c.conn);
}

// The client's unsent output: its connection's buffers (on another I/O
// thread: what that thread last reported, plus what the main thread has not
// posted yet) and the replies held for an fsync. REQUIRES: c.conn != nullptr.
inline uint64_t UnsentOutputOf(const Client& c, const Persistence& persistence) {
  const io::Connection& conn = *c.conn;
  return (conn.thread == 0 ? io::QueuedOutput(conn) : conn.stat_obuf() + conn.main_out_size()) +
         (c.held_replies ? persistence.held_bytes(c.id()) : 0);
}

}  // namespace ringkv::server

// CommandSink: what the I/O layer delivers to the layer that executes
// commands (the server; perf/ok_server.cc's +OK sink).
//
// Every method is called on the main thread (I/O thread 0): directly from a
// completion of one of its own connections, or while it drains the batches
// the other I/O threads posted. OnCommand is the per-command path: one
// virtual call per command (plus, for a pipelined batch, one per prefetch
// stage the command asked for).
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "io/connection.h"

namespace ringkv::io {

// What CommandSink::PrefetchBatch leaves for one command of a pipelined
// batch, for that command's OnPrefetchedCommand: a slot the I/O loop keeps
// per command of the batch (reused buffers, no allocation per batch) and
// zeroes before the sink fills it, so a command costs the sink one lookup of
// what it is, not one per prefetch round. Opaque to the I/O layer.
struct PrefetchSlot {
  const void* what = nullptr;   // the sink's (the server: the CommandSpec)
  const void* where = nullptr;  // the sink's (the server: the first key's bucket)
  uint64_t hash = 0;            // the sink's (the server: the first key's hash)
  // The sink's (the server: the first key's entry, when the last round
  // found it, with what tells whether it still is: core::KnownEntry).
  const void* found = nullptr;
  const void* found_in = nullptr;
  uint64_t found_stamp = 0;
  uint32_t arg = 0;             // the sink's (the server: the first key's index in argv)
  uint8_t stages = 0;           // the sink's (the server: the prefetch rounds it takes)
};

class CommandSink {
 public:
  virtual ~CommandSink() = default;
  // A connection was accepted. Return an empty string to take it, or the
  // whole error line to send before closing it (maxclients, protected mode).
  virtual std::string OnAccept(const SocketAddress& peer) = 0;
  // The connection is taken; conn->peer is set (the local address: LocalAddress).
  virtual void OnOpen(Connection* conn) = 0;
  // One command. Replies go to IoSystem::PrepareWrite(conn). The argv views
  // are valid only during the call.
  virtual void OnCommand(Connection* conn, std::span<const std::string_view> argv) = 0;
  // A command of a pipelined batch whose prefetch ran: as OnCommand, with
  // the slot PrefetchBatch filled, so that the sink need not find again
  // what it found (the server: the command, its first key's hash, the key's
  // entry). The slot is not changed by the batch's other commands, nor by a
  // nested turn's batches. By default, OnCommand.
  virtual void OnPrefetchedCommand(Connection* conn, std::span<const std::string_view> argv,
                                   const PrefetchSlot& slot) {
    (void)slot;
    OnCommand(conn, argv);
  }
  // The commands of a pipelined batch, before any of them runs: command i's
  // arguments are argvs[i], and slots[i] (zeroed) is what it gets back in
  // OnPrefetchedCommand. One call for the batch, so the sink can prefetch
  // what the commands will touch in rounds of overlapping memory loads, each
  // round following pointers the previous one brought in (the server: the
  // key's bucket, its node, then the bytes of its value), and record in each
  // slot what it found. Nothing runs between the rounds. Optional (the
  // default prefetches nothing); must not change state.
  virtual void PrefetchBatch(Connection* conn, std::span<const std::span<const std::string_view>> argvs,
                             std::span<PrefetchSlot> slots) {
    (void)conn;
    (void)argvs;
    (void)slots;
  }
  // A partial command of `conn` holds a large query buffer (at least
  // kLargeHeldInput bytes reserved): the sink may weigh the client now
  // (maxmemory-clients) rather than at its next cron. Connections of the
  // main thread only (an I/O thread's are weighed by the cron); may close
  // `conn`. Optional.
  static constexpr size_t kLargeHeldInput = 32 * 1024;  // Redis's PROTO_MBULK_BIG_ARG
  virtual void OnLargeInputHeld(Connection* conn) { (void)conn; }
  // The parser rejected the input; the sink replies and closes the client.
  virtual void OnProtocolError(Connection* conn, std::string_view message) = 0;
  // The connection is gone: the sink drops every reference to it.
  virtual void OnClose(Connection* conn) = 0;
  // Periodic work and deadlines; returns the microseconds until it wants to
  // run again (at least 1). The loop sleeps that long at most, to the
  // microsecond (IoBackend::Wait), so a deadline reported here fires within
  // the kernel's timer slack of its time on an idle server.
  virtual int64_t OnTimer() = 0;
  // The end of a loop turn, before replies are flushed.
  virtual void BeforeFlush() = 0;
  // Another thread called IoSystem::Notify() (background work finished).
  virtual void OnNotify() {}
  // An fdatasync started with IoSystem::SubmitFsync finished (result: 0 or -errno).
  virtual void OnFsyncDone(uint32_t token, int result) {
    (void)token;
    (void)result;
  }
  // A descriptor watched with IoSystem::WatchReadable became readable (or
  // hung up; result: the poll mask, or -errno).
  virtual void OnReadable(uint32_t token, int result) {
    (void)token;
    (void)result;
  }
};

// Limits read by the I/O threads on every parse; changed by CONFIG SET on the
// main thread (relaxed atomics: a parse may see the old value once).
struct SharedLimits {
  std::atomic<int64_t> max_bulk_len{512 * 1024 * 1024};
  std::atomic<int64_t> query_buffer_limit{1024LL * 1024 * 1024};
};

}  // namespace ringkv::io

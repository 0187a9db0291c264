// CommandSink: what the I/O layer delivers to the layer that executes
// commands (the server; perf/ok_server.cc's +OK sink).
//
// Every method is called on the main thread (I/O thread 0): directly from a
// completion of one of its own connections, or while it drains the batches
// the other I/O threads posted. OnCommand is the per-command path: one
// virtual call per command, the only one the I/O layer makes.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "io/connection.h"

namespace ringkv::io {

// The prefetch rounds a pipelined batch gets (CommandSink::Prefetch).
inline constexpr int kPrefetchStages = 3;

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
  // Commands of a pipelined batch, before any of them runs: stage 0, then
  // stage 1, ... up to kPrefetchStages - 1 for every command, so the sink can
  // prefetch what they will touch in rounds of overlapping memory loads, each
  // round following pointers the previous one brought in (the server: the
  // key's bucket, its node, then the value's bytes the command will read).
  // Optional; must not change state.
  virtual void Prefetch(Connection* conn, std::span<const std::string_view> argv, int stage) {
    (void)conn;
    (void)argv;
    (void)stage;
  }
  // The parser rejected the input; the sink replies and closes the client.
  virtual void OnProtocolError(Connection* conn, std::string_view message) = 0;
  // The connection is gone: the sink drops every reference to it.
  virtual void OnClose(Connection* conn) = 0;
  // Periodic work; returns milliseconds until it wants to run again.
  virtual int OnTimer() = 0;
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

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

// The prefetch rounds a pipelined batch gets at most (CommandSink::Prefetch).
inline constexpr int kPrefetchStages = 3;

// What stage 0 of CommandSink::Prefetch leaves for the later stages of one
// command: a slot the I/O loop keeps per command of the batch (reused
// buffers, no allocation per batch), so a command costs the sink one lookup
// of what it is, not one per stage. Opaque to the I/O layer except
// `stages`; the loop zeroes the slot before stage 0.
struct PrefetchSlot {
  const void* what = nullptr;   // the sink's (the server: the CommandSpec)
  const void* where = nullptr;  // the sink's (the server: the first key's bucket)
  uint64_t hash = 0;            // the sink's (the server: the first key's hash)
  uint32_t arg = 0;             // the sink's (the server: the first key's index in argv)
  // How many stages the command takes, stage 0 included: the loop calls
  // stage s only while s < stages. Set by stage 0 (left at 0: nothing
  // after it); a later stage may lower it.
  uint8_t stages = 0;
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
  // A command of a pipelined batch whose prefetch rounds ran: as OnCommand,
  // with the slot its prefetch stages filled, so that the sink need not
  // find again what they found (the server: the command, its first key's
  // hash). The slot is not changed by the batch's other commands, nor by a
  // nested turn's batches. By default, OnCommand.
  virtual void OnPrefetchedCommand(Connection* conn, std::span<const std::string_view> argv,
                                   const PrefetchSlot& slot) {
    (void)slot;
    OnCommand(conn, argv);
  }
  // Commands of a pipelined batch, before any of them runs: stage 0 for
  // every command, then stage 1 for those whose slot asks for it, ... up to
  // kPrefetchStages - 1 (PrefetchRounds), so the sink can prefetch what they
  // will touch in rounds of overlapping memory loads, each round following
  // pointers the previous one brought in (the server: the key's bucket, its
  // node, then the value's bytes GETBIT / SETBIT will read). Stage 0 finds
  // what the command is and records it in `slot` with the number of stages
  // it takes; later stages get the same slot back (and the same argv) and
  // must not look the command up again. Nothing runs between the stages of
  // a batch. Optional (the default takes no later stage); must not change
  // state.
  virtual void Prefetch(Connection* conn, std::span<const std::string_view> argv, int stage, PrefetchSlot& slot) {
    (void)conn;
    (void)argv;
    (void)stage;
    (void)slot;
  }
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

// The prefetch rounds over the `slots.size()` commands of a batch, command
// i's arguments being argv_of(i): one virtual call per command and stage it
// asked for, none for a stage it did not.
template <typename ArgvOf>
inline void PrefetchRounds(CommandSink& sink, Connection* conn, std::span<PrefetchSlot> slots, ArgvOf argv_of) {
  for (size_t i = 0; i < slots.size(); ++i) {
    slots[i] = PrefetchSlot{};
    sink.Prefetch(conn, argv_of(i), 0, slots[i]);
  }
  for (int stage = 1; stage < kPrefetchStages; ++stage) {
    for (size_t i = 0; i < slots.size(); ++i) {
      if (stage < slots[i].stages) sink.Prefetch(conn, argv_of(i), stage, slots[i]);
    }
  }
}

// Limits read by the I/O threads on every parse; changed by CONFIG SET on the
// main thread (relaxed atomics: a parse may see the old value once).
struct SharedLimits {
  std::atomic<int64_t> max_bulk_len{512 * 1024 * 1024};
  std::atomic<int64_t> query_buffer_limit{1024LL * 1024 * 1024};
};

}  // namespace ringkv::io

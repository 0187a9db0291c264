// Connection: one client socket as the I/O layer sees it.
//
// Ownership: created by the main thread at accept time (IoSystem), then
// registered with exactly one IoThread, which owns every field in the "I/O
// thread" group until it reports the connection closed; the main thread then
// deletes it. Fields in the "main thread" group are touched only by the main
// thread. `stat_*` fields are
// written by the I/O thread and read (relaxed) by the main thread for CLIENT
// LIST / INFO.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "io/out_buffer.h"
#include "io/replica_send.h"
#include "io/resp_parser.h"

namespace ringkv::io {

class TlsSession;  // io/tls_session.h: only TLS connections have one
struct TlsSessionDeleter {
  void operator()(TlsSession* session) const;
};
using TlsSessionPtr = std::unique_ptr<TlsSession, TlsSessionDeleter>;

// An IPv4 / IPv6 address and port in 20 bytes (CLIENT LIST renders it), or
// a Unix socket: `addr` then holds a pointer to the listening socket's path,
// owned by the IoSystem (which outlives its connections).
struct SocketAddress {
  uint8_t family = 0;  // AF_INET, AF_INET6, AF_UNIX, or 0 when unknown
  uint16_t port = 0;
  uint8_t addr[16] = {};
  static SocketAddress Unix(const std::string* path);
  // "ip:port", as CLIENT LIST shows it; "path:0" for a Unix socket.
  std::string ToString() const;
  bool IsLoopback() const;
};

// Input state that exists only while a command is incomplete: the resumable
// parser and the bytes received so far. A connection between commands has
// none, so idle clients hold no parser and no query buffer.
struct PendingInput {
  RespParser parser;
  std::string qbuf;
};

struct Connection {
  // ---- identity: set at accept, immutable afterwards -------------------------
  uint64_t id = 0;        // CLIENT ID
  int fd = -1;
  uint16_t thread = 0;    // index of the owning IoThread (0 = main thread)
  SocketAddress peer;
  SocketAddress local;

  // ---- I/O thread ---------------------------------------------------------------
  uint32_t slot = 0;      // index in the owning thread's slot table
  uint8_t inflight = 0;   // submitted operations not yet completed
  bool recv_armed : 1 = false;
  bool send_inflight : 1 = false;
  bool send_pending : 1 = false;      // queued in the thread's flush list
  bool closing : 1 = false;           // shutdown started; ignore further input
  bool close_after_flush : 1 = false; // close once `out` is empty
  bool rearm_recv : 1 = false;        // multishot recv ended (ENOBUFS); re-arm
  bool input_done : 1 = false;        // after a protocol error: ignore further input
  bool fanout_held : 1 = false;       // in the thread's held fan-out list (main thread only)
  std::unique_ptr<PendingInput> pending;  // only while a command is incomplete
  // Only for a connection accepted on tls-port (or a replica's TLS link):
  // `out` then holds plaintext, encrypted into the session's wire buffer at
  // each flush, and received bytes are decrypted before parsing.
  TlsSessionPtr tls;
  OutBuffer out;          // bytes waiting to be sent
  // A replica of the main thread: the stream it is sent by offset, after
  // `out` (IoSystem::StreamReplica). Null for every other connection.
  std::unique_ptr<ReplicaSend> replica;

  std::atomic<uint32_t> stat_qbuf{0};  // qbuf size / capacity, for CLIENT LIST
  std::atomic<uint32_t> stat_qbuf_cap{0};
  std::atomic<uint64_t> stat_obuf{0};  // unsent reply bytes on the I/O thread
  std::atomic<bool> authenticated{true};  // written by main; tightens parser limits
  // A replication link, as Redis counts it: what our primary's link
  // receives (kReplInput) and what a replica's connection sends
  // (kReplOutput) are INFO's total_net_repl_* rather than total_net_*.
  // Written by main.
  static constexpr uint8_t kReplInput = 1, kReplOutput = 2;
  std::atomic<uint8_t> replication{0};

  // ---- main thread ----------------------------------------------------------------
  // Not padded to its own cache line: with io-threads 1 there is no sharing at
  // all, and the padding would cost every idle connection 40+ bytes. Written
  // by the main thread only while it executes this connection's commands.
  OutBuffer main_out;     // replies of a remote connection not yet posted
  void* owner = nullptr;  // the server's Client
  bool main_pending = false;  // in IoSystem's remote-pending list
  bool main_closed = false;   // close requested by the main thread
  bool main_dead = false;     // OnClose delivered; deleted at end of turn
};

// What the owning I/O thread holds unsent for `conn`: its `out`, and for a
// TLS connection the ciphertext not sent yet. REQUIRES: on that thread (the
// main thread for connections of thread 0).
size_t QueuedOutput(const Connection& conn);

}  // namespace ringkv::io

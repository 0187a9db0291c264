// Connection: one client socket as the I/O layer sees it.
//
// Ownership: created by the main thread at accept time (IoSystem), then
// registered with exactly one IoThread, which owns every field in the "I/O
// thread" group until it reports the connection closed; the main thread then
// deletes it. Fields in the "main thread" group are touched only by the main
// thread. What only some connections need lives in ConnectionExtras,
// allocated only for them: an idle plain connection is 96 bytes.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "io/out_buffer.h"
#include "io/replica_send.h"
#include "io/resp_parser.h"

struct sockaddr_storage;

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
  // An IPv4 / IPv6 address as the kernel gave it (accept, getpeername,
  // getsockname); an AF_UNIX one is `unix_path`'s.
  static SocketAddress FromSockaddr(const sockaddr_storage& ss, const std::string* unix_path);
  // "ip:port", as CLIENT LIST shows it; "path:0" for a Unix socket.
  std::string ToString() const;
  // The address alone ("" for a Unix socket or an unknown one).
  std::string Ip() const;
  bool IsLoopback() const;
};

// Input state that exists only while a command is incomplete: the resumable
// parser and the bytes received so far. A connection between commands has
// none, so idle clients hold no parser and no query buffer.
struct PendingInput {
  RespParser parser;
  std::string qbuf;
};

// The I/O layer's state of one framed link (Connection::link(); io/link_sink.h).
struct LinkState {
  bool inbound = false;     // accepted, not connected out
  bool connecting = false;  // outbound, its connect not completed: nothing is sent yet
  bool up = false;          // OnLinkUp was delivered
  std::string why;          // what ended the link, once known (OnLinkClosed's `why`)
};

// What only some connections use, allocated only for them: a TLS session
// (at accept, for a connection of tls-port or a replica's TLS link), a
// replica's stream sent by offset (main thread, IoSystem::StartStream), and
// for a connection of an I/O thread other than the main one (at accept) the
// main thread's staging buffer and the I/O thread's figures for CLIENT LIST
// / INFO / output limits. A plain connection of the main thread -- every
// connection with io-threads 1 -- has none.
struct ConnectionExtras {
  TlsSessionPtr tls;
  std::unique_ptr<ReplicaSend> replica;
  std::unique_ptr<LinkState> link;  // a framed link's (io/link_sink.h), from its creation
  // ---- another I/O thread's connection ----
  OutBuffer main_out;                  // main thread: replies not yet posted
  std::atomic<uint64_t> stat_obuf{0};  // unsent reply bytes on the I/O thread
  std::atomic<uint32_t> stat_qbuf{0};  // qbuf size / capacity (saturated)
  std::atomic<uint32_t> stat_qbuf_cap{0};
};

struct Connection {
  Connection() = default;
  ~Connection() { delete extras_; }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // ---- identity: set at accept, immutable afterwards -------------------------
  // (The local address is not kept: LocalAddress() asks the socket.)
  uint64_t id = 0;        // CLIENT ID
  int fd = -1;
  SocketAddress peer;
  // Index of the owning IoThread (0 = main thread). Main thread: set at
  // accept, and changed only while no I/O thread owns the connection (a
  // hand-over between threads when io-threads changes: IoSystem::Handover).
  uint16_t thread = 0;

  // ---- I/O thread ---------------------------------------------------------------
  uint8_t inflight = 0;   // submitted operations not yet completed
  bool recv_armed : 1 = false;
  bool send_inflight : 1 = false;
  bool send_pending : 1 = false;      // queued in the thread's flush list
  bool closing : 1 = false;           // shutdown started; ignore further input
  bool close_after_flush : 1 = false; // close once `out` is empty
  bool rearm_recv : 1 = false;        // multishot recv ended (ENOBUFS); re-arm
  bool input_done : 1 = false;        // after a protocol error: ignore further input
  bool fanout_held : 1 = false;       // in the thread's held fan-out list (main thread only)
  std::atomic<bool> authenticated{true};  // written by main; tightens parser limits
  // A replication link, as Redis counts it: what our primary's link
  // receives (kReplInput) and what a replica's connection sends
  // (kReplOutput) are INFO's total_net_repl_* rather than total_net_*.
  // Written by main.
  static constexpr uint8_t kReplInput = 1, kReplOutput = 2;
  std::atomic<uint8_t> replication{0};
  // ---- main thread (a byte of its own: never shares one with I/O-thread bits) ----
  bool main_pending : 1 = false;  // in IoSystem's remote-pending list
  bool main_closed : 1 = false;   // close requested by the main thread
  bool main_dead : 1 = false;     // OnClose delivered; deleted at end of turn
  bool main_moving : 1 = false;   // being handed to another thread: replies stay in main_out
  bool main_close_now : 1 = false;  // CloseNow while moving: closed, unsent dropped, once handed over
  bool : 0;  // ends the main thread's memory location: the bits below are written by an I/O thread
  // I/O thread (a byte of its own): the owning thread was asked to give the
  // connection up (IoThread::Release): its receive is cancelled, no new send
  // starts, and once nothing is in flight it is detached and reported.
  bool detaching : 1 = false;
  // A framed link of thread 0 (io/link_sink.h), not a client: its input is
  // cut into frames for the LinkSink, never parsed as RESP, and it never
  // moves to another thread. Set before the connection is adopted.
  bool framed : 1 = false;
  // A connection of another thread than the main one sent what may change
  // its parser limits (AUTH or HELLO unauthenticated, RESET): what follows
  // is not parsed until the main thread ran it (ToIo::kResume), so that it
  // is parsed with the limits that then apply, as Redis parses it.
  bool awaiting_auth : 1 = false;

  uint32_t slot = 0;      // index in the owning thread's slot table
  uint32_t gen = 0;       // its completion tags' generation (24 bits; IoThread)
  std::unique_ptr<PendingInput> pending;  // only while a command is incomplete
  // What only some connections use (ConnectionExtras), owned; null for a
  // plain connection of the main thread. Created before the connection is
  // handed to an I/O thread (at accept, at a hand-over to another thread)
  // or, for a replica's stream, by the main thread, which is that
  // connection's I/O thread; never replaced while a thread owns it.
  ConnectionExtras* extras() const { return extras_; }
  // The extras, created on first use.
  ConnectionExtras& mutable_extras() {
    if (extras_ == nullptr) extras_ = new ConnectionExtras;
    return *extras_;
  }
  // Only a TLS connection has a session: `out` then holds plaintext,
  // encrypted into the session's wire buffer at each flush, and received
  // bytes are decrypted before parsing.
  TlsSession* tls() const { return extras_ != nullptr ? extras_->tls.get() : nullptr; }
  // A replica of the main thread: the stream it is sent by offset, after
  // `out` (IoSystem::StartStream).
  ReplicaSend* replica() const { return extras_ != nullptr ? extras_->replica.get() : nullptr; }
  // A framed link's state (null for a client).
  LinkState* link() const { return extras_ != nullptr ? extras_->link.get() : nullptr; }
  // Main thread, another thread's connection: replies not posted yet.
  size_t main_out_size() const { return extras_ != nullptr ? extras_->main_out.size() : 0; }
  size_t main_out_allocated() const { return extras_ != nullptr ? extras_->main_out.allocated() : 0; }
  // Another thread's connection: the unsent bytes its thread last published.
  uint64_t stat_obuf() const { return extras_ != nullptr ? extras_->stat_obuf.load(std::memory_order_relaxed) : 0; }

 private:
  ConnectionExtras* extras_ = nullptr;

 public:
  OutBuffer out;          // bytes waiting to be sent (I/O thread)

  // ---- main thread ----------------------------------------------------------------
  void* owner = nullptr;  // the server's Client
};

// The per-connection cost of every idle client (docs/performance.md 19.1):
// 96 bytes is one mimalloc size class; more goes to the next (112).
static_assert(sizeof(Connection) <= 96, "Connection grew: move what few connections use into ConnectionExtras");

// The qbuf size and capacity for CLIENT LIST / INFO, as Redis holds a
// query buffer: from the start of a big argument still arriving
// (RespParser::big_argument_offset), else the whole partial command.
inline size_t ShownQueryBufferSize(const PendingInput& in) { return in.qbuf.size() - in.parser.big_argument_offset(); }
inline size_t ShownQueryBufferCapacity(const PendingInput& in) {
  return in.qbuf.capacity() - in.parser.big_argument_offset();
}
// The same for any connection. Main thread.
inline uint32_t QueryBufferSize(const Connection& conn) {
  if (conn.thread != 0) return conn.extras()->stat_qbuf.load(std::memory_order_relaxed);
  return conn.pending != nullptr ? static_cast<uint32_t>(std::min<size_t>(ShownQueryBufferSize(*conn.pending), UINT32_MAX))
                                 : 0;
}
inline uint32_t QueryBufferCapacity(const Connection& conn) {
  if (conn.thread != 0) return conn.extras()->stat_qbuf_cap.load(std::memory_order_relaxed);
  return conn.pending != nullptr
             ? static_cast<uint32_t>(std::min<size_t>(ShownQueryBufferCapacity(*conn.pending), UINT32_MAX))
             : 0;
}

// The memory its unsent replies hold, as CLIENT LIST's omem shows it. Main
// thread: a connection of thread 0, its `out`; another thread's, the unsent
// bytes that thread last published, in whole chunks (the staging buffer,
// main_out, is apart).
inline size_t OutputBufferMemory(const Connection& conn) {
  if (conn.thread == 0) return conn.out.allocated();
  return (conn.stat_obuf() + ReplyChunk::kCapacity - 1) / ReplyChunk::kCapacity * sizeof(ReplyChunk);
}

// The connection's local address, as CLIENT LIST's laddr shows it, asked
// of its socket (getsockname); a Unix socket's is `unix_path`. Unknown
// (family 0) once the socket is closed.
SocketAddress LocalAddress(const Connection& conn, const std::string* unix_path);

// What the owning I/O thread holds unsent for `conn`: its `out`, and for a
// TLS connection the ciphertext not sent yet. REQUIRES: on that thread (the
// main thread for connections of thread 0).
size_t QueuedOutput(const Connection& conn);

}  // namespace ringkv::io

// TlsSession: the TLS state of one connection, over memory BIOs.
//
// The session never touches the socket. Whoever owns the connection moves
// bytes: ciphertext received from the socket goes in with Feed, plaintext
// comes out of Read; plaintext to send goes in with Write (or Encrypt), and
// the ciphertext to put on the socket accumulates in wire(). That keeps TLS
// connections on the same receive and send paths as plain ones (io_uring or
// epoll), and makes the handshake non-blocking by construction: a peer that
// stalls mid-handshake just leaves a session waiting for more input.
//
//   session->Feed(received);
//   while ((n = session->Read(buf, sizeof(buf))) > 0) Parse(buf, n);
//   if (n == kFailed) Close(session->error());
//   session->Encrypt(replies);   // replies -> session->wire()
//   Send(session->wire());
//
// Created only for connections that use TLS (io::Connection holds a null
// pointer otherwise).
//
// Thread-safety: one session is used by one thread at a time (the
// connection's I/O thread; for a replica's link, the sync worker until it
// hands the socket over to the main loop).
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "io/connection.h"
#include "io/out_buffer.h"
#include "io/tls_context.h"

namespace ringkv::io {

class TlsSession {
 public:
  // A session answering a client (SSL_accept's side) or connecting to a
  // server. Null when OpenSSL could not allocate one.
  // `require_peer_certificate`: the peer must present a certificate the CA
  // verifies, whatever the context's tls-auth-clients says (the cluster
  // bus, as Redis's TLS_CLIENT_AUTH_YES there).
  static TlsSessionPtr Accept(const SslCtxPtr& ctx, bool require_peer_certificate = false);
  static TlsSessionPtr Connect(const SslCtxPtr& ctx);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // Ciphertext received from the peer.
  void Feed(std::string_view cipher);
  // Read's results besides a byte count.
  static constexpr long kWantInput = 0;  // nothing more until more is fed
  static constexpr long kClosed = -1;    // the peer sent close_notify
  static constexpr long kFailed = -2;    // handshake or protocol error: error()
  // Advances the handshake while it is not done, then decrypts up to `n`
  // bytes of plaintext into `buf`. Whatever the session has to send
  // (handshake records, alerts, session tickets) is appended to wire().
  long Read(char* buf, size_t n);
  // Encrypts `plain` (REQUIRES: handshake_done()); the records go to wire().
  // False (error() set) when the session is broken.
  bool Write(std::string_view plain);
  // Encrypts and consumes everything in `plain`, chunk by chunk.
  bool Encrypt(OutBuffer& plain);

  // Advances the handshake (a client's first call queues its hello in
  // wire()); false when it failed (error()). Read does this by itself.
  bool Handshake();
  bool handshake_done() const { return handshake_done_; }
  // Whether input already fed may yield more (plaintext buffered in the
  // session, or ciphertext not processed yet).
  bool HasBufferedInput() const;
  // Ciphertext waiting to be sent, in order.
  OutBuffer& wire() { return wire_; }
  const OutBuffer& wire() const { return wire_; }
  const std::string& error() const { return error_; }
  // A failed session sends nothing more but what it already queued (the alert).
  bool failed() const { return !error_.empty(); }
  // "TLSv1.3" / the negotiated cipher, for logs.
  const char* version() const { return SSL_get_version(ssl_); }

 private:
  explicit TlsSession(SSL* ssl);
  void DrainOutput();
  void Fail(int ssl_error);

  SSL* ssl_;
  BIO* rbio_;  // ciphertext in (owned by ssl_)
  BIO* wbio_;  // ciphertext out (owned by ssl_)
  OutBuffer wire_;
  std::string error_;
  bool handshake_done_ = false;
};

}  // namespace ringkv::io

#include "io/tls_session.h"

#include <openssl/err.h>

#include <climits>

namespace ringkv::io {
namespace {

// OpenSSL's rule before SSL_read / SSL_write / SSL_do_handshake: the
// thread's error queue must be empty, or SSL_get_error may report a stale
// error. It nearly always is already; looking costs less than clearing its
// sixteen slots on every call (ERR_clear_error was 1.5% of the server's CPU
// under TLS GET P16, docs/performance.md 34.2).
void EmptyErrorQueue() {
  if (ERR_peek_error() != 0) ERR_clear_error();
}

}  // namespace

void TlsSessionDeleter::operator()(TlsSession* session) const { delete session; }

size_t QueuedOutput(const Connection& conn) {
  return conn.out.size() + (conn.tls() != nullptr ? conn.tls()->wire().size() : 0);
}

TlsSessionPtr TlsSession::Accept(const SslCtxPtr& ctx, bool require_peer_certificate) {
  SSL* ssl = ctx != nullptr ? SSL_new(ctx.get()) : nullptr;
  if (ssl == nullptr) return nullptr;
  SSL_set_accept_state(ssl);
  if (require_peer_certificate) SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  return TlsSessionPtr(new TlsSession(ssl));
}

TlsSessionPtr TlsSession::Connect(const SslCtxPtr& ctx) {
  SSL* ssl = ctx != nullptr ? SSL_new(ctx.get()) : nullptr;
  if (ssl == nullptr) return nullptr;
  SSL_set_connect_state(ssl);
  return TlsSessionPtr(new TlsSession(ssl));
}

TlsSession::TlsSession(SSL* ssl) : ssl_(ssl), rbio_(BIO_new(BIO_s_mem())), wbio_(BIO_new(BIO_s_mem())) {
  // An empty memory BIO reports "retry" rather than EOF, which is what a
  // non-blocking socket with nothing to read looks like to OpenSSL.
  BIO_set_mem_eof_return(rbio_, -1);
  BIO_set_mem_eof_return(wbio_, -1);
  SSL_set_bio(ssl_, rbio_, wbio_);
}

TlsSession::~TlsSession() { SSL_free(ssl_); }

void TlsSession::Feed(std::string_view cipher) {
  while (!cipher.empty()) {
    const int n = BIO_write(rbio_, cipher.data(), static_cast<int>(std::min<size_t>(cipher.size(), INT_MAX)));
    if (n <= 0) return;  // memory BIOs grow; only allocation failure stops them
    cipher.remove_prefix(static_cast<size_t>(n));
  }
}

bool TlsSession::HasBufferedInput() const {
  return SSL_pending(ssl_) > 0 || BIO_ctrl_pending(rbio_) > 0;
}

void TlsSession::DrainOutput() {
  while (BIO_ctrl_pending(wbio_) > 0) {
    char* dst = wire_.Reserve(ReplyChunk::kCapacity);
    const int n = BIO_read(wbio_, dst, static_cast<int>(ReplyChunk::kCapacity));
    if (n <= 0) return;
    wire_.Commit(static_cast<size_t>(n));
  }
}

void TlsSession::Fail(int ssl_error) {
  if (ssl_error == SSL_ERROR_SYSCALL || ERR_peek_error() == 0) {
    error_ = "unexpected end of the TLS stream";
    ERR_clear_error();
  } else {
    error_ = TlsErrorString();
  }
}

bool TlsSession::Handshake() {
  EmptyErrorQueue();
  const int rc = SSL_do_handshake(ssl_);
  DrainOutput();  // the handshake's records, or the alert of a failure
  if (rc == 1) {
    handshake_done_ = true;
    return true;
  }
  const int e = SSL_get_error(ssl_, rc);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return true;
  Fail(e);
  return false;
}

long TlsSession::Read(char* buf, size_t n) {
  if (!handshake_done_) {
    if (!Handshake()) return kFailed;
    if (!handshake_done_) return kWantInput;
  }
  EmptyErrorQueue();
  const int rc = SSL_read(ssl_, buf, static_cast<int>(std::min<size_t>(n, INT_MAX)));
  DrainOutput();  // TLS 1.3 tickets, key updates, alerts
  if (rc > 0) return rc;
  const int e = SSL_get_error(ssl_, rc);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return kWantInput;
  if (e == SSL_ERROR_ZERO_RETURN) return kClosed;
  Fail(e);
  return kFailed;
}

bool TlsSession::Write(std::string_view plain) {
  while (!plain.empty()) {
    EmptyErrorQueue();
    const int rc = SSL_write(ssl_, plain.data(), static_cast<int>(std::min<size_t>(plain.size(), INT_MAX)));
    if (rc <= 0) {
      Fail(SSL_get_error(ssl_, rc));
      DrainOutput();
      return false;
    }
    plain.remove_prefix(static_cast<size_t>(rc));
  }
  DrainOutput();
  return true;
}

bool TlsSession::Encrypt(OutBuffer& plain) {
  while (!plain.empty()) {
    const std::string_view front = plain.Front();
    if (!Write(front)) return false;
    plain.Consume(front.size());
  }
  return true;
}

}  // namespace ringkv::io

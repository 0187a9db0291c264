#include "io/tls_session.h"

#include <openssl/err.h>

#include <climits>

namespace ringkv::io {
namespace {

// The write side's BIO: each record OpenSSL writes is appended to the
// session's wire() as it is written. A memory BIO would hold it until
// drained into wire(): one more copy, and a buffer grown and reset, per
// record. It never refuses a write, as a memory BIO never does.
int WireWrite(BIO* bio, const char* data, int n) {
  if (n <= 0) return 0;
  static_cast<OutBuffer*>(BIO_get_data(bio))->Append(std::string_view(data, static_cast<size_t>(n)));
  return n;
}

long WireCtrl(BIO* /*bio*/, int cmd, long /*num*/, void* /*ptr*/) {
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;  // nothing is ever held back
}

int WireCreate(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

// Created once, kept for the process's life (OpenSSL's BIO_METHODs are too).
const BIO_METHOD* WireMethod() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "ringkv wire");
    if (m != nullptr) {
      BIO_meth_set_write(m, WireWrite);
      BIO_meth_set_ctrl(m, WireCtrl);
      BIO_meth_set_create(m, WireCreate);
    }
    return m;
  }();
  return method;
}

// OpenSSL's contract: the thread's error queue is empty before an I/O call,
// or SSL_get_error may misread its result. It nearly always is (a failure's
// errors are taken by Fail), and peeking costs a fraction of clearing all
// sixteen entries, which a profile put at 2% of a pipelined TLS server.
void ClearStaleErrors() {
  if (ERR_peek_error() != 0) ERR_clear_error();
}

}  // namespace

void TlsSessionDeleter::operator()(TlsSession* session) const { delete session; }

size_t QueuedOutput(const Connection& conn) {
  return conn.out.size() + (conn.tls() != nullptr ? conn.tls()->wire().size() : 0);
}

TlsSessionPtr TlsSession::Accept(const SslCtxPtr& ctx, bool require_peer_certificate) {
  SSL* ssl = ctx != nullptr && WireMethod() != nullptr ? SSL_new(ctx.get()) : nullptr;
  if (ssl == nullptr) return nullptr;
  SSL_set_accept_state(ssl);
  if (require_peer_certificate) SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  return TlsSessionPtr(new TlsSession(ssl));
}

TlsSessionPtr TlsSession::Connect(const SslCtxPtr& ctx) {
  SSL* ssl = ctx != nullptr && WireMethod() != nullptr ? SSL_new(ctx.get()) : nullptr;
  if (ssl == nullptr) return nullptr;
  SSL_set_connect_state(ssl);
  return TlsSessionPtr(new TlsSession(ssl));
}

TlsSession::TlsSession(SSL* ssl) : ssl_(ssl), rbio_(BIO_new(BIO_s_mem())) {
  // An empty memory BIO reports "retry" rather than EOF, which is what a
  // non-blocking socket with nothing to read looks like to OpenSSL.
  BIO_set_mem_eof_return(rbio_, -1);
  BIO* wbio = BIO_new(WireMethod());
  BIO_set_data(wbio, &wire_);
  SSL_set_bio(ssl_, rbio_, wbio);
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

void TlsSession::Fail(int ssl_error) {
  if (ssl_error == SSL_ERROR_SYSCALL || ERR_peek_error() == 0) {
    error_ = "unexpected end of the TLS stream";
  } else {
    error_ = TlsErrorString();
  }
  ERR_clear_error();  // every error it queued, not only the one told
}

bool TlsSession::Handshake() {
  ClearStaleErrors();
  const int rc = SSL_do_handshake(ssl_);  // its records, or a failure's alert, go to wire()
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
  ClearStaleErrors();
  // TLS 1.3 tickets, key updates and alerts it answers with go to wire().
  const int rc = SSL_read(ssl_, buf, static_cast<int>(std::min<size_t>(n, INT_MAX)));
  if (rc > 0) return rc;
  const int e = SSL_get_error(ssl_, rc);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return kWantInput;
  if (e == SSL_ERROR_ZERO_RETURN) return kClosed;
  Fail(e);
  return kFailed;
}

bool TlsSession::Write(std::string_view plain) {
  while (!plain.empty()) {
    ClearStaleErrors();
    const int rc = SSL_write(ssl_, plain.data(), static_cast<int>(std::min<size_t>(plain.size(), INT_MAX)));
    if (rc <= 0) {
      Fail(SSL_get_error(ssl_, rc));
      return false;
    }
    plain.remove_prefix(static_cast<size_t>(rc));
  }
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

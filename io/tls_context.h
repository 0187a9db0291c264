// TlsContext: the OpenSSL contexts TLS connections are made from -- the
// server side (accepted on tls-port) and the client side (a replica's link to
// its primary with tls-replication) -- built from Redis 7.0's tls-* options.
//
//   io::TlsOptions opts;  opts.cert_file = "redis.crt"; ...
//   if (absl::Status s = tls.Configure(opts); !s.ok()) Log(s.message());
//   SSL* ssl = SSL_new(tls.server_ctx().get());
//
// Configure builds both contexts completely before replacing the current
// ones, so a bad certificate or key changes nothing (CONFIG SET answers an
// error, the server keeps serving with what it had). Rotation: a connection
// holds a reference to the context it was made from, so existing connections
// continue on the old certificate while new ones get the new.
//
// Error messages are Redis's log lines ("Failed to load certificate: FILE:
// error:...").
//
// Thread-safety: Configure and the accessors on the main thread. The
// SSL_CTX objects themselves are shared safely: a worker thread (the
// replica's sync) may create sessions from the shared_ptr it was given.
#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"

namespace ringkv::io {

struct TlsOptions {
  std::string cert_file, key_file, key_file_pass;
  std::string client_cert_file, client_key_file, client_key_file_pass;
  std::string ca_cert_file, ca_cert_dir;
  enum class AuthClients : uint8_t { kNo, kYes, kOptional } auth_clients = AuthClients::kYes;
  bool replication = false;  // tls-replication (or tls-cluster): needs a CA to verify the peer
  std::string protocols;     // "TLSv1.2 TLSv1.3" (empty: those two)
  std::string ciphers, ciphersuites;
  bool prefer_server_ciphers = false;
  bool session_caching = true;
  int64_t session_cache_size = 20480;
  int64_t session_cache_timeout = 300;
  std::string dh_params_file;
};

using SslCtxPtr = std::shared_ptr<SSL_CTX>;

class TlsContext {
 public:
  TlsContext() = default;
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // Builds new server and client contexts; replaces the current ones only
  // when both could be built. The error is the line Redis logs.
  absl::Status Configure(const TlsOptions& options);
  bool configured() const { return server_ != nullptr; }
  // Null until Configure succeeded.
  const SslCtxPtr& server_ctx() const { return server_; }
  const SslCtxPtr& client_ctx() const { return client_; }

 private:
  SslCtxPtr server_;
  SslCtxPtr client_;
};

// OpenSSL's oldest queued error, as Redis logs it ("error:0A0000C7:SSL
// routines::peer did not return a certificate"); the queue is cleared.
std::string TlsErrorString();

// Makes OpenSSL allocate through malloc under the calling thread's fork gate
// (io/fork_gate.h), so that an I/O thread inside SSL_read or a handshake is
// never caught in the allocator by a fork. REQUIRES: called before OpenSSL
// allocates anything (first thing in main); false, and nothing changed, if
// it already has.
bool RouteOpenSslAllocations();

}  // namespace ringkv::io

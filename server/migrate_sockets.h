// MigrateSockets: MIGRATE's connections to other servers, cached as Redis
// caches them (migrateGetSocket): one per "host:port", at most 64, each
// closed after 10 s unused (the cron calls CloseIdle), so that a
// resharding tool's stream of MIGRATEs to one target pays one connect.
// Each remembers the database it last SELECTed, so a SELECT is sent only
// when the target database changes.
//
// I/O is blocking with a deadline, on the main thread, as in Redis: MIGRATE
// holds the server for at most its timeout per step.
//
// With tls-cluster the connections are TLS (Redis's migrateGetSocket), made
// from the server's client context: the handshake is part of the connect,
// within the same timeout, and the bytes go through an io::TlsSession.
//
// Created on the first MIGRATE (a server that never migrates allocates
// none of it). Main thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "io/connection.h"
#include "io/tls_context.h"

namespace ringkv::server {

class MigrateSockets {
 public:
  static constexpr size_t kMaxCached = 64;
  static constexpr int64_t kIdleCloseMs = 10000;

  struct Socket {
    int fd = -1;
    int64_t last_db = -1;   // -1: SELECT before the next command
    int64_t last_use_ms = 0;
    io::TlsSessionPtr tls;  // null on a plain connection
    std::string in;         // received, not read yet (plaintext)
  };

  MigrateSockets() = default;
  MigrateSockets(const MigrateSockets&) = delete;
  MigrateSockets& operator=(const MigrateSockets&) = delete;
  ~MigrateSockets();

  // The cached connection to host:port, or a new one connected within
  // timeout_ms -- over TLS from `tls` when it is not null, the handshake
  // included --; nullptr when it could not connect (Redis's "error or
  // timeout connecting to the client"). The pointer stays valid until
  // Close or CloseIdle.
  Socket* Get(std::string_view host, std::string_view port, int64_t timeout_ms, int64_t now_ms,
              const io::SslCtxPtr& tls = nullptr);
  // Closes and forgets host:port's connection, if any.
  void Close(std::string_view host, std::string_view port);
  // Closes the connections unused for more than kIdleCloseMs.
  void CloseIdle(int64_t now_ms);
  size_t size() const { return sockets_.size(); }

  // Blocking I/O with a deadline of timeout_ms for the whole call. False on
  // error or timeout; errno is ETIMEDOUT after a timeout, ECONNRESET when
  // the peer closed (or TLS failed).
  static bool WriteAll(Socket& s, std::string_view data, int64_t timeout_ms);
  // One reply line, without its CRLF (at most `max` bytes are kept).
  static bool ReadLine(Socket& s, std::string* line, size_t max, int64_t timeout_ms);

 private:
  absl::flat_hash_map<std::string, Socket> sockets_;  // "host:port"
  absl::BitGen rng_;
};

}  // namespace ringkv::server

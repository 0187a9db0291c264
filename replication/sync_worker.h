// SyncWorker: a replica's connection to its primary, up to the point where
// the stream starts -- connect, PING, AUTH, REPLCONF, PSYNC, and for a full
// resync the RDB payload into a file. These steps block on the network and
// the disk, so they run on a thread of their own; the main thread only sees
// the result (Poll) and then loads the file and takes over the socket.
//
// Speaks Redis 7.0's replica handshake and announces "capa eof", so the
// payload comes either as "$<length>" and that many bytes, or as
// "$EOF:<mark>", the RDB and the 40-byte mark (a diskless primary). No byte
// after the payload is read here (a diskless primary waits for our first ACK
// before it streams): the stream is left in the socket for the main loop.
//
// The payload goes to a file (rdb_path), or -- diskless load -- straight from
// the socket into `load_payload`, which the server points at a staging
// keyspace; the worker thread then does the parsing, off the main thread.
//
// With `tls_ctx` the link is TLS (tls-replication): the handshake and every
// byte go through an io::TlsSession over the same blocking socket, and the
// session is handed over with the socket.
//
// Thread-safety: Start/Poll/Cancel from the main thread; `done` is called on
// the worker thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "core/rdb_reader.h"
#include "io/connection.h"
#include "io/tls_context.h"

namespace ringkv::repl {

struct SyncRequest {
  std::string host;
  int port = 0;
  std::string masteruser;
  std::string masterauth;
  int listening_port = 0;
  std::string announce_ip;
  std::string replid = "?";  // PSYNC arguments: "?" -1 for a full sync
  int64_t psync_offset = -1;
  bool failover = false;     // PSYNC ... FAILOVER: the primary hands over to this replica
  std::string rdb_path;      // where a full sync's payload goes
  // Set: a full sync's payload is parsed from the socket by this call (on
  // the worker thread) instead of being written to rdb_path. It is told the
  // replication id the primary's +FULLRESYNC named.
  std::function<absl::Status(core::ByteSource*, const std::string& primary_replid)> load_payload;
  int timeout_s = 60;
  // Set (tls-replication): the link is TLS, made from this client context.
  io::SslCtxPtr tls_ctx;
  std::string bind_source_addr;  // bind-source-addr: the local address to connect from ("" any)
};

struct SyncResult {
  enum class Kind { kFull, kContinue, kFailed } kind = Kind::kFailed;
  int fd = -1;            // the connected socket (kFull, kContinue)
  std::string replid;     // the primary's replication id
  int64_t offset = 0;     // kFull: the offset the stream continues after
  std::string rdb_path;   // kFull: the downloaded snapshot (empty when loaded from the socket)
  bool eof_payload = false;  // kFull: the primary sent the diskless "$EOF:" form
  uint64_t payload_bytes = 0;
  std::string error;      // kFailed: what went wrong (for the log)
  bool psync_refused = false;  // kFailed: PSYNC was answered neither +CONTINUE nor +FULLRESYNC
  // A TLS link: the session, handshake done, that the socket's stream
  // continues in (it may hold stream bytes already decrypted).
  io::TlsSessionPtr tls;
};

// How far an attempt got (ROLE shows it: connecting, handshake, sync).
enum class SyncPhase : uint8_t { kConnecting, kHandshake, kTransfer };

class SyncWorker {
 public:
  explicit SyncWorker(std::function<void()> done) : done_(std::move(done)) {}
  ~SyncWorker();  // cancels and joins
  SyncWorker(const SyncWorker&) = delete;
  SyncWorker& operator=(const SyncWorker&) = delete;

  void Start(const SyncRequest& request);
  bool running() const { return thread_.joinable() && !finished_.load(); }
  // The result once the worker finished (then it can be started again).
  std::optional<SyncResult> Poll();
  // Stops the attempt (closes its socket) and waits for the thread.
  void Cancel();
  // The step the running attempt is in (any thread).
  SyncPhase phase() const { return phase_.load(std::memory_order_relaxed); }

 private:
  SyncResult Run(const SyncRequest& request);

  std::function<void()> done_;
  std::thread thread_;
  std::atomic<bool> finished_{false};
  std::atomic<bool> cancelled_{false};
  std::atomic<int> fd_{-1};
  std::atomic<SyncPhase> phase_{SyncPhase::kConnecting};
  std::mutex mu_;
  std::optional<SyncResult> result_;
};

}  // namespace ringkv::repl

// IoThread: TLS connections -- plaintext encrypted at each flush, received
// ciphertext decrypted (the handshake runs here, non-blocking) and parsed,
// sessions that hold decrypted input kicked.
#include "io/io_thread.h"

#include <memory>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "io/io_log.h"
#include "io/tls_session.h"

namespace ringkv::io {

OutBuffer& IoThread::EncryptForSend(Connection* conn) {
  TlsSession& tls = *conn->tls();
  if (!tls.handshake_done() || tls.failed() || conn->out.empty()) return tls.wire();
  if (!conn->framed) {
    net_stats_.AddWrite(conn->out.size(), conn->replication.load(std::memory_order_relaxed) & Connection::kReplOutput);
  }
  if (!tls.Encrypt(conn->out)) {
    Log(1, absl::StrCat("Error writing to client: ", tls.error()));
    conn->out.Clear();
    conn->input_done = true;
    conn->close_after_flush = true;  // after the alert, if any
  }
  return tls.wire();
}

void IoThread::ReceiveTls(Connection* conn, std::string_view cipher) {
  TlsSession& tls = *conn->tls();
  if (tls.failed()) return;
  tls.Feed(cipher);
  const bool was_done = tls.handshake_done();
  std::unique_ptr<char[]>& buf = tls_plain_[scratch_level_];
  if (buf == nullptr) buf = std::make_unique<char[]>(kTlsReadSize);
  while (!conn->closing && !conn->input_done && !(runs_main_loop() && conn->main_closed)) {
    const long n = tls.Read(buf.get(), kTlsReadSize);
    // A framed link is up once its handshake is done, before its first frame.
    if (conn->framed && tls.handshake_done() && !conn->link()->up) LinkUp(conn);
    if (n > 0) {
      if (!conn->framed) net_stats_.AddRead(static_cast<uint64_t>(n),
                         conn->replication.load(std::memory_order_relaxed) & Connection::kReplInput);
      Process(conn, std::string_view(buf.get(), static_cast<size_t>(n)));
      // Nothing more fed: another Read could only answer kWantInput, at the
      // cost of a whole SSL_read call.
      if (!tls.HasBufferedInput()) break;
      continue;
    }
    if (n == TlsSession::kFailed) {
      // Redis's words; a handshake failure is what an operator looks for
      // (wrong CA, plain text on the TLS port, no client certificate).
      if (conn->framed) {
        conn->link()->why = tls.error();  // the link sink says it
      } else if (!tls.handshake_done()) {
        Log(3, absl::StrCat("Error accepting a client connection: ", tls.error(), " (conn: fd=", conn->fd,
                            " addr=", conn->peer.ToString(), ")"));
      } else {
        Log(1, absl::StrCat("Error reading from client: ", tls.error()));
      }
      conn->input_done = true;
      CloseAfterFlush(conn);  // sends the alert OpenSSL queued, then closes
      if (!tls.wire().empty()) MarkPending(conn);
      return;
    }
    if (n == TlsSession::kClosed) {
      if (conn->framed) conn->link()->why = "connection closed by the peer";
      StartClose(conn);  // close_notify: as the end of the stream
      return;
    }
    break;  // kWantInput
  }
  if (!tls.wire().empty() || (!was_done && tls.handshake_done() && !conn->out.empty())) MarkPending(conn);
}

void IoThread::KickTls() {
  std::vector<Connection*> kick;
  kick.swap(tls_kick_);
  for (Connection* conn : kick) {
    if (!conn->closing && !conn->input_done && conn != busy_) ReceiveTls(conn, {});
  }
}

}  // namespace ringkv::io

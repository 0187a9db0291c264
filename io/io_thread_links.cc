// IoThread: framed links (io/link_sink.h) -- the connect of an outbound
// link, a link coming up, its input cut into frames, and closing them all.
// Thread 0 only: links never live on another I/O thread.
#include "io/io_thread.h"

#include <errno.h>
#include <sys/socket.h>

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "io/tls_session.h"

namespace ringkv::io {

void IoThread::AdoptConnecting(Connection* conn) {
  TakeSlot(conn);
  backend_->PollOut(conn->fd, Tag(Op::kConnect, conn->gen, conn->slot));
  ++conn->inflight;
}

void IoThread::OnConnected(Connection* conn, int res) {
  --conn->inflight;
  if (conn->closing) {
    if (conn->inflight == 0) FinishClose(conn);
    return;
  }
  LinkState& link = *conn->link();
  int err = res < 0 ? -res : 0;
  if (err == 0) {
    socklen_t len = sizeof(err);
    if (getsockopt(conn->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  }
  link.connecting = false;  // the poll is done: nothing to cancel at the close
  if (err != 0) {
    link.why = std::strerror(err);
    StartClose(conn);
    return;
  }
  ArmRecv(conn);
  if (TlsSession* tls = conn->tls(); tls != nullptr) {
    // The client speaks first: its hello goes now, the link is up once the
    // handshake ends (ReceiveTls).
    if (!tls->Handshake()) {
      link.why = tls->error();
      StartClose(conn);
      return;
    }
    if (!tls->wire().empty()) MarkPending(conn);
    return;
  }
  LinkUp(conn);
}

void IoThread::LinkUp(Connection* conn) {
  LinkState& link = *conn->link();
  if (link.up) return;
  link.up = true;
  if (link_sink_ != nullptr) link_sink_->OnLinkUp(conn);
  if (!conn->closing && Unsent(conn)) MarkPending(conn);
}

void IoThread::CloseLinks() {
  for (uint32_t slot = 0; slot < slots_.size(); ++slot) {
    Connection* conn = slots_[slot];
    if (conn == nullptr || !conn->framed || conn->main_closed) continue;
    conn->main_closed = true;
    StartClose(conn);
  }
}

void IoThread::ProcessFrames(Connection* conn, std::string_view data) {
  if (link_sink_ == nullptr) return;
  std::string_view in = data;
  if (conn->pending != nullptr) {
    conn->pending->qbuf.append(data);
    in = conn->pending->qbuf;
  }
  const size_t header = link_sink_->FrameHeaderSize();
  size_t off = 0;
  while (in.size() - off >= header && !conn->closing && !conn->main_closed) {
    absl::StatusOr<size_t> len = link_sink_->FrameLength(in.substr(off, header));
    if (len.ok() && *len < header) len = absl::InvalidArgumentError("frame shorter than its header");
    if (!len.ok()) {
      conn->link()->why = std::string(len.status().message());
      conn->input_done = true;
      StartClose(conn);
      return;
    }
    if (in.size() - off < *len) break;
    link_sink_->OnLinkFrame(conn, in.substr(off, *len));
    off += *len;
  }
  if (conn->closing || conn->main_closed) return;
  if (conn->pending != nullptr) {
    if (off == in.size()) {
      conn->pending.reset();
    } else if (off > 0) {
      conn->pending->qbuf.erase(0, off);
    }
  } else if (off < in.size()) {
    conn->pending = std::make_unique<PendingInput>();
    conn->pending->qbuf.assign(in.substr(off));
  }
}

}  // namespace ringkv::io

// LinkSink: framed links -- connections that carry length-prefixed binary
// messages instead of RESP (the cluster bus, server/cluster/bus_net.h). The
// I/O layer listens for them, connects them, runs their TLS, cuts their input
// into frames and sends what is written to them (IoSystem::PrepareWrite), on
// I/O thread 0, the main thread's loop, like every other socket: no thread
// of their own, and both backends (io_uring, epoll). The sink says how long
// a frame is and decides what the frames mean.
//
// A link's life: an inbound one is accepted on a link listener
// (IoSystem::ListenLinks), an outbound one made by IoSystem::ConnectLink;
// OnLinkUp once it is connected and its TLS handshake is done (never for a
// link that fails before), OnLinkFrame for each whole frame, in order, then
// OnLinkClosed exactly once -- unless the sink closed it itself
// (IoSystem::CloseNow), after which nothing more is said of it.
//
// Thread-safety: every method is called on the main thread, from its loop.
#pragma once

#include <cstddef>
#include <string_view>

#include "absl/status/statusor.h"
#include "io/connection.h"
#include "io/tls_session.h"

namespace ringkv::io {

class LinkSink {
 public:
  virtual ~LinkSink() = default;
  // How many bytes a frame's header takes: FrameLength is asked once that
  // many have arrived.
  virtual size_t FrameHeaderSize() const = 0;
  // The whole frame's length, header included, from its header. An error
  // closes the link, its message being the reason.
  virtual absl::StatusOr<size_t> FrameLength(std::string_view header) = 0;
  // A link listener accepted a connection from `peer`: the TLS session to
  // run it with (server side), or null for a plain link. An error refuses
  // it: the socket is closed and nothing else is said of it.
  virtual absl::StatusOr<TlsSessionPtr> AcceptSession(const SocketAddress& peer) = 0;
  // The link is connected (outbound) or accepted (inbound), its handshake
  // done: what was written to it before is sent now.
  virtual void OnLinkUp(Connection* conn) = 0;
  // One whole frame, valid only during the call.
  virtual void OnLinkFrame(Connection* conn, std::string_view frame) = 0;
  // The link is gone (`state.up` says whether it ever was up); the sink
  // drops every reference to `conn`, which is freed after the turn.
  virtual void OnLinkClosed(Connection* conn, const LinkState& state) = 0;
};

}  // namespace ringkv::io

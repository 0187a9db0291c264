// MarkClosing: what the server does the moment it decides to close a
// client, before the connection's close completes.
//
// The close itself is the I/O layer's: it shuts the socket down at once, but
// reports the connection closed (Server::OnClose) only after every operation
// on it has ended -- on the epoll backend a loop turn or more later, after
// other clients' commands already read. What other clients can observe must
// not wait for that: a closing client is skipped by PUBLISH (nothing more is
// appended to it) and its subscriptions are dropped here, so PUBSUB NUMSUB
// and the receiver count PUBLISH replies no longer count it, as in Redis,
// which frees such a client before it runs another command. A blocked client
// is unblocked here too: nothing is served to it any more (an element pushed
// meanwhile waits for the next client, not popped for one that is gone).
//
// REQUIRES: main thread; not called while PubSub delivers (PubSub::Publish closes
// the subscribers it finds over the limit once it is done).
#pragma once

#include "server/blocking.h"
#include "server/client.h"
#include "server/pubsub/pubsub.h"

namespace ringkv::server {

inline void MarkClosing(PubSub& pubsub, BlockedClients& blocking, Client& c) {
  c.closing = true;
  if (c.blocked) blocking.Unblock(c, UnblockReason::kClosed);
  if (c.pubsub) {
    pubsub.RemoveClient(c.id());
    c.pubsub = false;
  }
}

}  // namespace ringkv::server

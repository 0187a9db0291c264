// HeldPushes: a command's own pushes, placed where Redis 7.0 writes them in
// its reply.
//
// Redis writes a keyspace notification or a redirected invalidation into the
// output of the client running the command at the moment its code makes it,
// so where such a push lands in that client's stream depends on where the
// command writes its reply: after it for RPUSH, HSET or EXPIRE, before it
// for SET or DEL, between its parts for LMOVE, SPOP or ZPOPMIN. ringkv's Op*
// functions make their events before their Cmd* handler writes the reply;
// an Op whose Redis counterpart replies before (part of) its events marks
// that point (Effects::ReplyPoint), and the pushes to its own client made
// after it wait here, in a segment per mark, until the handler has written
// that part of the reply (Effects::ReleasePushes) or the command ends
// (Server::Call).
//
// Only pushes to the running command's own client are held: other clients
// have no reply in this stream. Nothing is held for a client without a
// connection (a script's, the AOF loader's).
//
// Cost: a pointer compare per push (TargetFor); nothing while no command
// marks a point.
//
// Thread-safety: main thread only.
#pragma once

#include <cassert>
#include <cstddef>
#include <vector>

#include "io/out_buffer.h"

namespace ringkv::server {

struct Client;

class HeldPushes {
 public:
  // The client whose pushes are held (null: none).
  const Client* holder() const { return holder_; }

  // Opens a new segment for `c`'s pushes. REQUIRES: no other client's
  // pushes are held.
  void Hold(Client& c) {
    assert(holder_ == nullptr || holder_ == &c);  // one command's client at a time
    holder_ = &c;
    segments_.emplace_back();
  }
  // Where a push to `c` goes now: the holder's open segment, or null (the
  // push goes out as usual) for any other client, or once every segment is
  // released. On every push: inline, one compare when nothing is held.
  io::OutBuffer* TargetFor(const Client* c) {
    if (holder_ != c) [[likely]] return nullptr;
    return released_ < segments_.size() ? &segments_.back() : nullptr;
  }
  // Moves the oldest segment not yet released to `out` (null: dropped, the
  // client is closing). False when none is left.
  bool ReleaseNext(io::OutBuffer* out) {
    if (released_ == segments_.size()) return false;
    io::OutBuffer& s = segments_[released_++];
    if (out != nullptr && !s.empty()) out->Append(s.ToString());
    s.Clear();
    return true;
  }
  // The command ended: the rest goes to `out` (null: dropped, the client is
  // closing), and nothing is held any more.
  void ReleaseAll(io::OutBuffer* out) {
    for (size_t i = released_; i < segments_.size(); ++i) {
      if (out != nullptr && !segments_[i].empty()) out->Append(segments_[i].ToString());
    }
    segments_.clear();
    released_ = 0;
    holder_ = nullptr;
  }

 private:
  Client* holder_ = nullptr;
  std::vector<io::OutBuffer> segments_;
  size_t released_ = 0;  // segments_[0, released_) went out
};

}  // namespace ringkv::server

// DurableReplies: replies held back until the AOF bytes they depend on are
// fsynced (appendfsync always), so no client hears "OK" for a write that a
// crash could still lose -- without the main thread ever waiting for a disk.
//
// While the AOF has unsynced bytes (or the client already has replies held),
// a client's replies go into a held segment instead of its connection. A
// segment covers one loop turn and records the AOF offset it needs (the fed
// offset after the turn's last command for that client, which includes any
// unsynced data the client may have read). When an fsync completion reports an
// offset, every segment it covers moves, in order, to its connection.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <deque>

#include "absl/container/flat_hash_map.h"
#include "io/out_buffer.h"

namespace ringkv::server {

class DurableReplies {
 public:
  // The buffer for a reply of client `id` in loop turn `turn`; the segment
  // needs at least `required` synced.
  io::OutBuffer& Target(uint64_t id, uint64_t turn, uint64_t required) {
    std::deque<Segment>& q = held_[id];
    if (q.empty() || q.back().turn != turn) q.push_back(Segment{turn, required, io::OutBuffer()});
    Segment& s = q.back();
    if (required > s.required) s.required = required;
    return s.out;
  }
  // After a command ran: its replies need `required` synced.
  void Require(uint64_t id, uint64_t required) {
    auto it = held_.find(id);
    if (it != held_.end() && !it->second.empty() && it->second.back().required < required) {
      it->second.back().required = required;
    }
  }
  // Hands every segment covered by `synced` to deliver(id, OutBuffer&) in
  // order; done(id) is called for clients left with nothing held.
  template <typename Deliver, typename Done>
  void Release(uint64_t synced, Deliver deliver, Done done) {
    for (auto it = held_.begin(); it != held_.end();) {
      std::deque<Segment>& q = it->second;
      while (!q.empty() && q.front().required <= synced) {
        deliver(it->first, q.front().out);
        q.pop_front();
      }
      if (q.empty()) {
        done(it->first);
        held_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  // The client is gone: its held replies are dropped.
  void Drop(uint64_t id) { held_.erase(id); }
  size_t clients() const { return held_.size(); }
  // Bytes held for a client (its output that is waiting, for output limits).
  size_t held_bytes(uint64_t id) const {
    auto it = held_.find(id);
    if (it == held_.end()) return 0;
    size_t n = 0;
    for (const Segment& s : it->second) n += s.out.size();
    return n;
  }

 private:
  struct Segment {
    uint64_t turn;
    uint64_t required;
    io::OutBuffer out;
  };
  absl::flat_hash_map<uint64_t, std::deque<Segment>> held_;
};

}  // namespace ringkv::server

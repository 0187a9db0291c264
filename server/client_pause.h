// ClientPause: CLIENT PAUSE's window and the clients it holds back.
//
// Owns until when the pause lasts (0: none), whether it holds every command
// or only those that may write (WRITE), and the clients whose commands wait
// for its end, in the order they were held (a client's `paused_wait` bit
// says it is listed). What a pause does to the server -- expiry and
// eviction stop, the held commands run again at its end -- is done by its
// owner, Clients (server/clients.h: Pause, Unpause, Defer). SHUTDOWN and
// FAILOVER pause writes themselves and put back the pause they replaced
// (Window).
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <vector>

#include "server/client.h"
#include "server/command.h"

namespace ringkv::server {

class ClientPause {
 public:
  // A pause's extent: until when (0: none), and whether ALL.
  struct Window {
    int64_t until_ms = 0;
    bool all = false;
  };

  // CLIENT PAUSE: a later pause extends, never shortens; ALL wins over
  // WRITE (Redis 7.0).
  void Pause(int64_t until_ms, bool all) {
    if (until_ms > window_.until_ms) window_.until_ms = until_ms;
    window_.all = window_.all || all;
  }
  // Ends the pause (the held clients stay listed until TakeHeld).
  void End() { window_ = Window{}; }
  // Puts back a pause saved with window() (a SHUTDOWN that stopped waiting).
  void Restore(const Window& w) { window_ = w; }
  const Window& window() const { return window_; }

  bool active() const { return window_.until_ms > 0; }
  int64_t until_ms() const { return window_.until_ms; }
  bool paused_all() const { return active() && window_.all; }
  // Whether a command judged by `flags` is held back now: everything under
  // ALL, what may write or replicate under WRITE.
  bool Holds(uint32_t flags) const {
    if (window_.until_ms == 0) return false;
    if (window_.all) return true;
    return (flags & (cmd::kWrite | cmd::kMayReplicate)) != 0;
  }

  // `c` waits for the end of the pause (listed once).
  void Hold(Client& c) {
    if (c.paused_wait) return;
    c.paused_wait = true;
    held_.push_back(c.id());
  }
  // The clients held, in order; the list is emptied.
  std::vector<uint64_t> TakeHeld() {
    std::vector<uint64_t> ids;
    ids.swap(held_);
    return ids;
  }
  const std::vector<uint64_t>& held() const { return held_; }

  // The pause switched expiry from deleting to hiding (as Redis: nothing
  // expires while paused); the end of the pause switches it back.
  bool expiry_paused = false;

 private:
  Window window_;
  std::vector<uint64_t> held_;
};

}  // namespace ringkv::server

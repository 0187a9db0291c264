// Messages between the I/O threads and the main thread (internal to io/).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/connection.h"
#include "io/out_buffer.h"

namespace ringkv::io {

// Commands parsed on an I/O thread, to be executed on the main thread.
struct CommandBatch {
  std::string arena;            // argument bytes back to back
  std::vector<uint32_t> lens;   // one per argument
  std::vector<uint32_t> argc;   // one per command
  std::string protocol_error;   // non-empty: reply with it after the commands, then close
  // Its last command may change the connection's parser limits (AUTH,
  // HELLO, RESET): once it ran, the main thread posts ToIo::kResume
  // (Connection::awaiting_auth).
  bool resume_after = false;
};

// kOffer: the thread would give `conn` up (asked to by kReleaseSome or
// kRetire); the main thread answers with kRelease once it holds the
// connection's replies back. kDetached: the thread gave `conn` up after a
// kRelease (nothing in flight on it any more; its unsent output is in
// conn->out): the main thread hands it to another thread. kRetired: a
// retiring thread has no connection left and has left its loop.
struct ToMain {
  enum class Kind : uint8_t { kBatch, kClosed, kNotify, kOffer, kDetached, kRetired };
  Kind kind;
  Connection* conn;  // valid: the main thread deletes a connection only after kClosed
  std::unique_ptr<CommandBatch> batch;
  int thread = 0;    // kRetired: the thread's index
};

// kReleaseSome: offer `id` connections (kOffer) to be moved to other
// threads. kRelease: give connection `id` up (detach it once nothing is in
// flight). kRetire: offer every connection, and leave the loop once none is
// left.
struct ToIo {
  enum class Kind : uint8_t { kAdopt, kReply, kClose, kStop, kReleaseSome, kRelease, kRetire, kResume };
  Kind kind;
  Connection* conn = nullptr;  // kAdopt only; others are addressed by id
  uint64_t id = 0;
  OutBuffer out;
  bool after_flush = false;

  static ToIo Adopt(Connection* c) { return ToIo{Kind::kAdopt, c, c->id, OutBuffer(), false}; }
  static ToIo Reply(uint64_t id, OutBuffer& from) {
    ToIo m{Kind::kReply, nullptr, id, OutBuffer(), false};
    m.out.Splice(from);
    return m;
  }
  static ToIo Close(uint64_t id, bool after_flush) { return ToIo{Kind::kClose, nullptr, id, OutBuffer(), after_flush}; }
  static ToIo Stop() { return ToIo{Kind::kStop, nullptr, 0, OutBuffer(), false}; }
  static ToIo ReleaseSome(uint64_t count) { return ToIo{Kind::kReleaseSome, nullptr, count, OutBuffer(), false}; }
  static ToIo Release(uint64_t id) { return ToIo{Kind::kRelease, nullptr, id, OutBuffer(), false}; }
  static ToIo Retire() { return ToIo{Kind::kRetire, nullptr, 0, OutBuffer(), false}; }
  static ToIo Resume(uint64_t id) { return ToIo{Kind::kResume, nullptr, id, OutBuffer(), false}; }
};

}  // namespace ringkv::io

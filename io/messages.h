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
};

struct ToMain {
  enum class Kind : uint8_t { kBatch, kClosed, kNotify };
  Kind kind;
  Connection* conn;  // valid: the main thread deletes a connection only after kClosed
  std::unique_ptr<CommandBatch> batch;
};

struct ToIo {
  enum class Kind : uint8_t { kAdopt, kReply, kClose, kStop };
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
};

}  // namespace ringkv::io

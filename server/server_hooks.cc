// Server: its side of the components' hooks -- what BlockedClients asks of
// the server (blocking.h; Tracking's Delivery is inline in server.h). Each is called when a client blocks, is served,
// times out or is unblocked, never once per command.
#include <algorithm>

#include "core/keyspace.h"
#include "server/server.h"

namespace ringkv::server {

const core::Value* Server::PeekValue(int db, std::string_view key) {
  core::Entry* e = keyspace_.db(db).FindNoTouch(key, clock_.WallMs());
  return e == nullptr ? nullptr : &e->value;
}

void Server::WakeTimerIn(int ms) { io_->WakeTimerIn(ms); }

void Server::ReplyUnblockError(Client& c, std::string_view msg) {
  ClientErrors errors(*this, c);
  io::ReplyBuilder rb(&ReplyTarget(c), c.resp, &errors);
  rb.Error(msg);
}

void Server::ReplyBlockTimeout(Client& c) {
  ClientErrors errors(*this, c);
  io::ReplyBuilder rb(&ReplyTarget(c), c.resp, &errors);
  rb.NullArray();  // for every key-blocking command, BLMOVE included, as in Redis 7.0
}

void Server::RerunBlocked(Client& c, std::span<const std::string_view> argv) {
  ClientErrors errors(*this, c);
  io::ReplyBuilder rb(&ReplyTarget(c, true), c.resp, &errors);
  Call(c, *commands_.Find(argv[0]), argv, rb, clock_.WallMs());
  // What it changed of its own tracked keys: told after its reply.
  if (c.tracking) tracking_.FlushPending(c);
}

void Server::CountUnblockedCommand(const CommandSpec& spec, int64_t latency_us) {
  ++stats_.total_commands;
  latency_.RecordHistogram(spec, latency_us);
}

}  // namespace ringkv::server

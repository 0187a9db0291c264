// Effects: what a write did to the keyspace, as the Op* functions report it.
//
// Op* functions (server/commands/*_ops.h) change the keyspace and report
// each change here, in the order they make it: the key and its database,
// the keyspace event, and how many changes it counts in `dirty` (from which
// Server::Call decides to propagate). Where the command's own argv would not
// replay the same on a replica or from the AOF (SPOP, HINCRBYFLOAT, LMPOP,
// ...), they give the form to propagate instead. They never touch WATCH,
// blocked clients, notifications, stats or propagation themselves, and
// neither do the Cmd* handlers that call them.
//
// Every CommandContext carries one bound to its server (Server::Call, the
// AOF loader, EXEC's queued commands, re-runs of blocked commands: all build
// a CommandContext). A bound record applies each report as it is made --
// dirty grows, then Server::KeyEvent (WATCH, blocked clients, client-side
// caching, the keyspace notification) -- so every event keeps its place:
// after the "expired" and "new" events of the lookups before it, in the
// order Redis 7.0 publishes them (LMOVE's "lpush" before the source's "lpop"
// and "del"). An Op reports its changes in the order of its Redis
// counterpart's signalModifiedKey and notifyKeyspaceEvent calls (Changed,
// or its halves Signaled and Notified), and marks where that code writes
// the reply (ReplyPoint): the pushes to the command's own client made after
// that mark wait until the handler has written the reply (HeldPushes), so
// a RESP3 client subscribed to its own keys sees them where Redis puts them.
//
// An unbound record (a null server: unit tests of the Op* functions) keeps
// the reports instead, for the test to read.
//
// Cost: a report is a direct call, no allocation (bound); the record is two
// pointers on the command's stack.
//
// REQUIRES: main thread. `event` is static text. `key` is only read during
// the call when bound; when unbound it must outlive the record.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/stream_value.h"
#include "server/block_kind.h"

namespace ringkv::core {
class Database;
class Entry;
class Value;
}

namespace ringkv::server {

class Server;
struct Client;

// One reported change.
struct KeyChange {
  int db;
  uint32_t type;           // notify::k* class of the event
  std::string_view event;  // "hset", "del", ...
  std::string_view key;
  uint64_t dirty;          // changes counted in stats().dirty
};

class Effects {
 public:
  // Bound to `server`, or unbound (nullptr) to record; `client` runs the
  // command (its pushes are the ones ReplyPoint holds). Inline: every
  // command constructs one.
  explicit Effects(Server* server, Client* client = nullptr) : server_(server), client_(client) {
    if (server_ == nullptr) [[unlikely]] recorded_ = std::make_unique<Recorded>();
  }
  Effects(const Effects&) = delete;
  Effects& operator=(const Effects&) = delete;

  // `key` in database `db` changed: its event `event` of class `type`, and
  // `dirty` changes counted (0: an event that changes nothing countable).
  void Changed(int db, uint32_t type, std::string_view event, std::string_view key, uint64_t dirty);
  // As Changed, in two halves, for the commands whose Redis code orders them
  // otherwise (LPOP: the events, then the signal) or makes only one (XGROUP
  // CREATE: an event, no signal). Notified: the event and its `dirty`, as
  // Redis's notifyKeyspaceEvent. Signaled: WATCH, blocked clients and
  // client-side caching, as signalModifiedKey.
  void Notified(int db, uint32_t type, std::string_view event, std::string_view key, uint64_t dirty);
  void Signaled(int db, std::string_view key);
  // Clients blocked on `key` get a chance to be served, and nothing else
  // (Redis's signalKeyAsReady: XGROUP DESTROY answers its XREADGROUP
  // clients -NOGROUP; WATCH and caching are not told).
  void KeyReady(int db, std::string_view key);
  // Redis writes (the next part of) the command's reply here: pushes to the
  // command's own client made after this point wait until the handler has
  // written that part (ReleasePushes) or the command ends (HeldPushes).
  void ReplyPoint();
  // The handler has written the part of its reply that the oldest
  // ReplyPoint stands for: what waits since then goes out now.
  void ReleasePushes();
  // Changes counted with no event of their own.
  void Dirty(uint64_t n);
  // The command propagates as `argv` (replaces the command's own argv).
  void PropagateAs(std::vector<std::string> argv);
  // ... and then as `argv` too (several commands: wrapped in MULTI / EXEC).
  void AlsoPropagate(std::vector<std::string> argv);
  // Deletes `key` (DEL, or before a command replaces its value), freeing a
  // big value on the lazy-free thread when `lazy`. True when it existed.
  bool DeleteKey(core::Database& db, std::string_view key, int64_t now_ms, bool lazy);
  // Replaces the value of a live entry found by a write lookup (Redis's
  // dbOverwrite: the key is not new), the old value freed as DeleteKey
  // frees it.
  void ReplaceValue(core::Entry& e, core::Value value, bool lazy);
  // lazyfree-lazy-server-del (false when unbound): whether a whole value a
  // command deletes propagates as UNLINK rather than DEL.
  bool lazy_server_del() const;
  // Blocks `client`, running `argv`, on `keys` (BLPOP & co.;
  // BlockedClients::BlockOnKeys) until `deadline_us` (0: no deadline). False,
  // and nothing done, where the client may not block -- inside EXEC or a
  // script, the primary's link, the AOF loader, or unbound: the handler
  // then answers as on a timeout.
  bool BlockOnKeys(Client& client, BlockKind kind, std::span<const std::string_view> argv,
                   std::vector<std::string> keys, int64_t deadline_us,
                   std::vector<std::pair<std::string, core::StreamId>> read_after = {});
  // lazyfree-lazy-user-del (false when unbound): whether DEL frees as
  // UNLINK does.
  bool lazy_user_del() const;
  // cluster-enabled (false when unbound): MOVE and COPY to another
  // database are refused.
  bool cluster_enabled() const;
  // lazyfree-lazy-expire (false when unbound): whether a key deleted for a
  // deadline already past propagates as UNLINK rather than DEL.
  bool lazy_expire() const;

  // The server it reports to (null: unbound), for a context made from this
  // one (CommandContext::WithArgv).
  Server* bound_server() const { return server_; }

  // ---- unbound only: what was reported, in order ----
  const std::vector<KeyChange>& changes() const { return recorded_->changes; }
  // Everything in the order reported: "<event> <key>" for an event,
  // "signal <key>", "ready <key>", and "reply" for a ReplyPoint.
  const std::vector<std::string>& sequence() const { return recorded_->sequence; }
  uint64_t dirty() const { return recorded_->dirty; }
  const std::vector<std::string>& propagated_as() const { return recorded_->propagate_as; }
  const std::vector<std::vector<std::string>>& also_propagated() const { return recorded_->also; }

 private:
  struct Recorded {
    std::vector<KeyChange> changes;
    std::vector<std::string> sequence;
    uint64_t dirty = 0;
    std::vector<std::string> propagate_as;
    std::vector<std::vector<std::string>> also;
  };
  Server* server_;
  Client* client_;
  std::unique_ptr<Recorded> recorded_;  // unbound only
};

}  // namespace ringkv::server

// Client: the server's state for one connection.
//
// Compact by design: the fields every request reads sit first, the flags are
// packed, and everything only some clients use lives in a separately
// allocated component created on first use. Today that is ClientMeta (name
// and library info, set by few clients, read only by CLIENT LIST) and
// DeferredCommands (only while CLIENT PAUSE or a blocking command holds back
// a command the client sent). Replies held for an AOF fsync live in the server's
// DurableReplies, keyed by client id, only while they wait; a subscriber's
// channels and patterns in the server's PubSub, only while it has any; a
// replica's state in the replication component; a blocked client's
// BlockState, a MULTI's queued commands and WATCHed keys in the server's
// maps of those components, each only while in use. A client that never
// uses a feature pays nothing for it but a bit below.
//
// Thread-safety: main thread only. The I/O side of the connection lives in
// io::Connection and is reached only through IoSystem.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "io/connection.h"

namespace ringkv::server {

struct CommandSpec;
namespace acl {
struct User;
}  // namespace acl

// Names a client gave itself (CLIENT SETNAME / SETINFO / HELLO SETNAME) and
// the ACL user it authenticated as (null: the default user): allocated the
// first time one is set.
struct ClientMeta {
  std::string name;
  std::string lib_name;
  std::string lib_ver;
  std::shared_ptr<acl::User> user;
};

// Commands held back by CLIENT PAUSE (owned copies), replayed in order.
struct DeferredCommands {
  std::deque<std::vector<std::string>> commands;
};

// CLIENT REPLY. While a command runs, kSkipThis means its reply is being
// skipped (CLIENT REPLY SKIP came just before), kSkipNext that it was CLIENT
// REPLY SKIP itself.
enum class ReplyMode : uint8_t { kOn, kOff, kSkipNext, kSkipThis };

struct Client {
  // ---- every request -------------------------------------------------------
  io::Connection* conn = nullptr;   // null for the AOF-loading client
  const CommandSpec* last_command = nullptr;
  uint64_t woff = 0;                // AOF offset after this client's last write (WAITAOF)
  uint64_t repl_woff = 0;           // replication offset after its last write (WAIT)
  uint32_t last_interaction_s = 0;  // unix seconds, as Redis's lastinteraction
  uint32_t created_s = 0;
  int32_t db = 0;
  uint8_t resp = 2;
  ReplyMode reply_mode = ReplyMode::kOn;
  bool authenticated : 1 = false;
  bool closing : 1 = false;      // close requested; ignore further commands
  bool no_evict : 1 = false;
  bool loopback : 1 = false;
  bool paused_wait : 1 = false;  // held by CLIENT PAUSE (listed in ClientPause)
  bool held_replies : 1 = false; // replies wait for an AOF fsync (appendfsync always)
  bool blocked : 1 = false;      // blocked (BLPOP, WAIT, ...): later commands queue in `deferred`
  bool is_replica : 1 = false;   // a replica's link (state in the replication component)
  bool is_master : 1 = false;    // this replica's link to its primary
  bool pubsub : 1 = false;       // has subscriptions (they live in the server's PubSub)
  bool over_soft_limit : 1 = false;  // output above its soft limit (since when: in OutputLimits)
  bool in_multi : 1 = false;     // between MULTI and EXEC (queue in Transactions)
  bool watching : 1 = false;     // has WATCHed keys (in Transactions)
  bool tracking : 1 = false;     // CLIENT TRACKING on (settings in the server's Tracking)
  bool monitor : 1 = false;      // MONITOR: receives every command the server runs (listed in Monitors)
  bool is_script : 1 = false;    // the scripting component's client (redis.call)
  // CLIENT ID: the connection's id (0 for the AOF-loading client).
  uint64_t id() const { return conn != nullptr ? conn->id : 0; }
  // A connection, and a plain one (not TLS). The script and AOF clients
  // have none: false, as Redis's `c->conn && !TLS` (they are told TLS ports).
  bool on_plain_connection() const { return conn != nullptr && conn->tls() == nullptr; }
  // CLIENT REPLY OFF / SKIP silences the running command's reply. Pushes
  // (Pub/Sub confirmations and messages, invalidations) still go out, as
  // Redis's CLIENT_PUSHING.
  bool replies_silenced() const { return reply_mode == ReplyMode::kOff || reply_mode == ReplyMode::kSkipThis; }
  // Closed by the server at once (Server::CloseNow: an output limit,
  // client eviction, the idle timeout, CLIENT KILL; a replica dropped), its
  // replies turned off: what it still runs (the rest of an EXEC) answers
  // nowhere, and CLIENT LIST and INFO no longer count it, as Redis frees
  // such a client before serving anyone else (the connection itself ends a
  // loop turn later).
  bool closed_at_once() const { return closing && reply_mode == ReplyMode::kOff; }
  // A command it sends now waits (Clients::Defer): behind commands already
  // held back (CLIENT PAUSE), or behind its blocked command.
  bool defers_commands() const { return deferred != nullptr || blocked; }
  // ---- rarely used: components allocated on first use ---------------------------
  std::unique_ptr<ClientMeta> meta;  // null until a name is set
  ClientMeta& mutable_meta() {
    if (!meta) meta = std::make_unique<ClientMeta>();
    return *meta;
  }
  // Commands held back while the client is paused (CLIENT PAUSE) or blocked.
  std::unique_ptr<DeferredCommands> deferred;
};

// The base client must stay small; the size is recorded in docs/architecture.md.
static_assert(sizeof(Client) <= 64, "Client grew past one cache line: move cold fields to a component");

}  // namespace ringkv::server

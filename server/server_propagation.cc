// Server: propagation of writes -- to the AOF (Persistence's Aof) and to
// the replicas (repl::Primary's backlog), one command at a time or, for
// EXEC and scripts, as one MULTI ... EXEC block; keys the keyspace deletes
// on its own (expiry, eviction) propagate as DEL or UNLINK.
#include <string>
#include <string_view>
#include <vector>

#include "io/thread_check.h"
#include "server/server.h"

namespace ringkv::server {

void Server::Propagate(int db, Argv argv) {
  RINGKV_DCHECK_MAIN_THREAD();
  if (loading_) return;
  if (propagation_depth_ > 0) {  // inside EXEC or a script: one block at its end
    // Nothing would receive it (no AOF, no stream of our own): not copied.
    // Neither can appear inside the block (a replica attaches between
    // commands; an AOF turned on inside EXEC starts from a rewrite that
    // forks after the commands before it ran, so it has them already).
    if (!persistence_.aof().enabled() && !(primary_side_.primary() && !replica_side_.is_replica())) return;
    propagation_block_.push_back(
        PropagatedCommand{db, propagate_targets_, std::vector<std::string>(argv.begin(), argv.end())});
    return;
  }
  if (propagate_targets_ & scripting::kReplAof) persistence_.aof().Feed(db, argv);
  // Only a top-level primary writes its own stream. A replica's backlog is
  // its primary's stream, verbatim (ExecuteFromMaster), so offsets mean the
  // same bytes on every node of the chain: a writable replica's own writes
  // go to its AOF only, as in Redis.
  repl::Primary* primary = primary_side_.primary();
  if (primary && !replica_side_.is_replica() && (propagate_targets_ & scripting::kReplReplica)) primary->Feed(db, argv);
}

void Server::PropagateToReplicas(int db, Argv argv) {
  RINGKV_DCHECK_MAIN_THREAD();
  // A replica only relays its primary's stream.
  if (repl::Primary* p = primary_side_.primary(); p && !replica_side_.is_replica() && !loading_) p->Feed(db, argv);
}

void Server::BeginPropagationBlock() { ++propagation_depth_; }

void Server::EndPropagationBlock(bool discard) {
  if (--propagation_depth_ > 0) return;
  std::vector<PropagatedCommand> block;
  block.swap(propagation_block_);
  if (block.empty() || discard) return;
  // Each destination gets its share, wrapped when that is more than one
  // command (a script may send some commands to one side only).
  const std::string_view multi[] = {"MULTI"};
  const std::string_view exec[] = {"EXEC"};
  auto send = [&](int target, auto&& feed) {
    size_t n = 0;
    int first_db = -1;
    for (const PropagatedCommand& p : block) {
      if (!(p.targets & target)) continue;
      if (n++ == 0) first_db = p.db;
    }
    if (n == 0) return;
    // MULTI in the first command's database, so that its SELECT comes
    // before the MULTI, as Redis's propagatePendingCommands.
    if (n > 1) feed(first_db, multi);
    for (const PropagatedCommand& p : block) {
      if (!(p.targets & target)) continue;
      std::vector<std::string_view> views(p.argv.begin(), p.argv.end());
      feed(p.db, Argv(views));
    }
    if (n > 1) feed(-1, exec);
  };
  send(scripting::kReplAof, [&](int db, Argv argv) { persistence_.aof().Feed(db, argv); });
  if (repl::Primary* primary = primary_side_.primary(); primary && !replica_side_.is_replica()) {
    send(scripting::kReplReplica, [&](int db, Argv argv) { primary->Feed(db, argv); });
  }
}

void Server::OnKeyExpired(int db, std::string_view key) {
  RINGKV_DCHECK_MAIN_THREAD();
  if (replica_side_.is_replica()) return;  // a replica never propagates deletions of its own
  std::string k(key);  // the key's storage goes away with the entry
  std::string_view del[] = {lazy_expire_ ? "UNLINK" : "DEL", k};
  Propagate(db, del);
  KeyEvent(notify::kExpired, "expired", db, k, /*by_server=*/true);
}

void Server::OnKeyEvicted(int db, std::string_view key) {
  RINGKV_DCHECK_MAIN_THREAD();
  std::string k(key);
  if (!replica_side_.is_replica()) {
    std::string_view del[] = {lazy_eviction_ ? "UNLINK" : "DEL", k};
    Propagate(db, del);
  }
  KeyEvent(notify::kEvicted, "evicted", db, k, /*by_server=*/true);
}

void Server::OnKeyCreated(int db, std::string_view key) { NotifyKeyspaceEvent(notify::kNew, "new", db, key); }
void Server::OnKeyMiss(int db, std::string_view key) { NotifyKeyspaceEvent(notify::kKeyMiss, "keymiss", db, key); }

}  // namespace ringkv::server

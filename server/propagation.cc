#include "server/propagation.h"

#include "io/thread_check.h"
#include "replication/primary.h"
#include "server/loading.h"
#include "server/persistence/persistence.h"
#include "server/primary_side/primary_side.h"
#include "server/replica_side/replica_side.h"

namespace ringkv::server {

bool Propagation::FeedsStream() const { return !replica_side_.is_replica(); }

bool Propagation::HasReceiver() const {
  return persistence_.aof().enabled() || (primary_side_.primary() != nullptr && FeedsStream());
}

void Propagation::Propagate(int db, Argv argv) {
  RINGKV_DCHECK_MAIN_THREAD();
  if (loading_.active()) return;
  repl::Primary* primary = primary_side_.primary();
  if (depth_ > 0) {  // inside EXEC or a script: one block at its end
    // Nothing would receive it (no AOF, no stream of our own): not copied.
    // Neither can appear inside the block (a replica attaches between
    // commands; an AOF turned on inside EXEC starts from a rewrite that
    // forks after the commands before it ran, so it has them already).
    if (!HasReceiver()) return;
    block_.push_back(Collected{db, targets_, std::vector<std::string>(argv.begin(), argv.end())});
    return;
  }
  if ((targets_ & scripting::kReplAof) && persistence_.aof().enabled()) persistence_.aof().Feed(db, argv);
  if (primary != nullptr && FeedsStream() && (targets_ & scripting::kReplReplica)) primary->Feed(db, argv);
}

void Propagation::ToReplicas(int db, Argv argv) {
  RINGKV_DCHECK_MAIN_THREAD();
  if (repl::Primary* p = primary_side_.primary(); p != nullptr && FeedsStream() && !loading_.active()) p->Feed(db, argv);
}

void Propagation::PropagateCommand(int db, Argv argv) {
  // Nothing to feed (a standalone server's writes): only the forms go.
  // Propagate would drop every form, in a block or not.
  if (!HasReceiver()) {
    DropForms();
    return;
  }
  if (forms_.empty()) {
    Propagate(db, argv);
    return;
  }
  if (forms_.size() > 1) BeginBlock();
  for (const std::vector<std::string>& form : forms_) {
    std::vector<std::string_view> views(form.begin(), form.end());
    Propagate(db, views);
  }
  if (forms_.size() > 1) EndBlock(false);
  DropForms();
}

void Propagation::EndBlock(bool discard) {
  if (--depth_ > 0) return;
  std::vector<Collected> block;
  block.swap(block_);
  if (block.empty() || discard) return;
  // Each destination gets its share, wrapped when that is more than one
  // command (a script may send some commands to one side only).
  const std::string_view multi[] = {"MULTI"};
  const std::string_view exec[] = {"EXEC"};
  auto send = [&](int target, auto&& feed) {
    size_t n = 0;
    int first_db = -1;
    for (const Collected& p : block) {
      if (!(p.targets & target)) continue;
      if (n++ == 0) first_db = p.db;
    }
    if (n == 0) return;
    // MULTI in the first command's database, so that its SELECT comes
    // before the MULTI, as Redis's propagatePendingCommands.
    if (n > 1) feed(first_db, multi);
    for (const Collected& p : block) {
      if (!(p.targets & target)) continue;
      std::vector<std::string_view> views(p.argv.begin(), p.argv.end());
      feed(p.db, Argv(views));
    }
    if (n > 1) feed(-1, exec);
  };
  send(scripting::kReplAof, [&](int db, Argv argv) { persistence_.aof().Feed(db, argv); });
  if (repl::Primary* primary = primary_side_.primary(); primary != nullptr && FeedsStream()) {
    send(scripting::kReplReplica, [&](int db, Argv argv) { primary->Feed(db, argv); });
  }
}

}  // namespace ringkv::server

// Propagation: where writes go once made -- the AOF (Persistence's Aof) and
// the replicas' stream (repl::Primary's backlog) -- one command at a time
// or, for EXEC and scripts, collected and sent as one MULTI ... EXEC; and
// the running command's replayable forms (Effects::PropagateAs /
// AlsoPropagate), held until the gate propagates the command.
//
// Nothing propagates while a dataset loads (what is loaded is what was).
// Only a top-level primary feeds its own stream: a replica's backlog is its
// primary's stream, verbatim (ReplicaSide::ExecuteFromMaster), so offsets
// mean the same bytes on every node of a chain, and a writable replica's own
// writes go to its AOF only, as in Redis.
//
// Thread-safety: main thread only (checked in debug builds).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/scripting/script_run.h"

namespace ringkv::server {

class Loading;
class Persistence;
class PrimarySide;
class ReplicaSide;

class Propagation {
 public:
  using Argv = std::span<const std::string_view>;

  // Borrows what it feeds and the dataset's Loading (its active() is read
  // on every call); all must outlive it.
  Propagation(Persistence& persistence, PrimarySide& primary_side, const ReplicaSide& replica_side,
              const Loading& loading)
      : persistence_(persistence), primary_side_(primary_side), replica_side_(replica_side), loading_(loading) {}
  Propagation(const Propagation&) = delete;
  Propagation& operator=(const Propagation&) = delete;

  // Appends a command to the AOF and the replicas' stream now; inside a
  // block, at the block's end.
  void Propagate(int db, Argv argv);
  // A command that changes nothing but must reach the replicas (PUBLISH).
  void ToReplicas(int db, Argv argv);

  // Between BeginBlock and EndBlock (EXEC, a script), what Propagate is
  // given is collected, then sent as one MULTI ... EXEC to the AOF and to
  // the replicas (each wrapped only when it gets more than one command, as
  // Redis 7.0). Nests: only the outermost EndBlock sends. `discard`: drop
  // what was collected (a script stopped by SHUTDOWN NOSAVE).
  void BeginBlock() { ++depth_; }
  // Inside an EXEC or a script: its writes are not propagated yet.
  bool in_block() const { return depth_ > 0; }
  void EndBlock(bool discard = false);
  // Where Propagate sends (scripting::ReplTarget bits): a script's
  // redis.set_repl, for the time it runs; kReplAll otherwise.
  void set_targets(int targets) { targets_ = targets; }

  // ---- the running command's forms (Effects) ----------------------------------------
  // The command propagates as `argv` instead of its own arguments (the
  // replayable form: SET ... PXAT for SET EX, PEXPIREAT for EXPIRE, ...).
  void ReplaceWith(std::vector<std::string> argv) {
    forms_.clear();
    forms_.push_back(std::move(argv));
  }
  // ... or as one more command (XREADGROUP's XCLAIMs): several are wrapped
  // in MULTI / EXEC.
  void Add(std::vector<std::string> argv) { forms_.push_back(std::move(argv)); }
  bool has_forms() const { return !forms_.empty(); }
  // Propagates the command that just ran in `db`: its forms, or its own
  // `argv` when it gave none; then drops the forms.
  void PropagateCommand(int db, Argv argv);
  // Drops the forms, and the room a big set of them needed (an XREADGROUP
  // of 100,000 entries: 100,000 XCLAIMs, 3 MiB kept for ever otherwise).
  void DropForms() {
    if (forms_.capacity() > 16) {
      std::vector<std::vector<std::string>>().swap(forms_);
    } else {
      forms_.clear();
    }
  }

 private:
  // Whether this node feeds a stream of its own (a primary, not a replica).
  bool FeedsStream() const;
  // Whether anything receives what is propagated: the AOF, or a stream of
  // this node's own.
  bool HasReceiver() const;

  Persistence& persistence_;
  PrimarySide& primary_side_;
  const ReplicaSide& replica_side_;
  const Loading& loading_;
  std::vector<std::vector<std::string>> forms_;
  struct Collected {
    int db;
    int targets;  // scripting::ReplTarget bits
    std::vector<std::string> argv;
  };
  std::vector<Collected> block_;
  int depth_ = 0;
  int targets_ = scripting::kReplAll;
};

}  // namespace ringkv::server

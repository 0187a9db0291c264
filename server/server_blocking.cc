// Server: blocked clients -- BLPOP & co. on keys and WAIT / WAITAOF on
// acknowledgements -- through one mechanism: block, serve, time out,
// CLIENT UNBLOCK, close.
#include "core/stream_value.h"
#include "core/strings.h"
#include "server/commands/util.h"
#include "server/cluster/cluster_mode.h"
#include "server/errors.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

// An XREADGROUP blocked on `s` whose group was destroyed (or replaced by a
// stream without it, RENAME).
bool StreamGroupGone(const BlockState& state, const core::StreamValue& s) {
  if (!Is(state.argv[0], "xreadgroup")) return false;
  for (size_t i = 1; i + 1 < state.argv.size(); ++i) {
    if (Is(state.argv[i], "streams")) return false;
    if (Is(state.argv[i], "group")) return s.FindGroup(state.argv[i + 1]) == nullptr;
  }
  return false;
}

}  // namespace

void Server::BlockClient(Client& c, std::unique_ptr<BlockState> state) {
  c.blocked = true;
  if (!c.deferred) c.deferred = std::make_unique<DeferredCommands>();
  state->blocked_at_us = UnixUs();
  if (state->deadline_ms > 0) {
    block_deadlines_.emplace(state->deadline_ms, c.id());
    io_->WakeTimerIn(static_cast<int>(std::clamp<int64_t>(state->deadline_ms - UnixMs(), 0, 1000)));
  }
  blocked_[c.id()] = std::move(state);
}

void Server::BlockOnKeys(CommandContext& ctx, BlockKind kind, std::vector<std::string> keys, int64_t deadline_ms) {
  Client& c = ctx.client;
  if (!MayBlock(c)) {
    // Inside EXEC, BLMOVE and BRPOPLPUSH answer as LMOVE on an empty list
    // does; the others as on timeout.
    if (Is(ctx.argv[0], "blmove") || Is(ctx.argv[0], "brpoplpush")) {
      ctx.reply.Null();
    } else {
      ReplyBlockTimeout(ctx.reply);
    }
    return;
  }
  auto state = std::make_unique<BlockState>();
  state->kind = kind;
  state->db = c.db;
  state->deadline_ms = deadline_ms;
  state->argv.assign(ctx.argv.begin(), ctx.argv.end());
  // Each key once: BLPOP k k waits in k's list once.
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  key_waiters_.Add(c.id(), c.db, keys, state.get());
  BlockClient(c, std::move(state));
}

void Server::ReplyBlockTimeout(io::ReplyBuilder& rb) {
  rb.NullArray();  // for every key-blocking command, BLMOVE included, as in Redis 7.0
}

std::unique_ptr<BlockState> Server::TakeBlockState(uint64_t id) {
  auto it = blocked_.find(id);
  if (it == blocked_.end()) return nullptr;
  std::unique_ptr<BlockState> state = std::move(it->second);
  blocked_.erase(it);
  if (state->deadline_ms > 0) block_deadlines_.erase({state->deadline_ms, id});
  if (state->kind == BlockKind::kWait) {
    waits_.Remove(id);
  } else if (state->kind != BlockKind::kShutdown) {
    key_waiters_.Remove(*state);
  }
  return state;
}

void Server::UnblockClient(Client& c, UnblockReason reason) {
  std::unique_ptr<BlockState> state = TakeBlockState(c.id());
  if (state == nullptr) return;
  c.blocked = false;
  if (reason == UnblockReason::kClosed) return;
  if (reason == UnblockReason::kTimeout || reason == UnblockReason::kError) {
    ClientErrors errors(*this, c);
    io::ReplyBuilder rb(&ReplyTarget(c), c.resp, &errors);
    if (reason == UnblockReason::kError) {
      rb.Error(state->error.empty() ? "UNBLOCKED client unblocked via CLIENT UNBLOCK" : state->error);
    } else if (state->kind == BlockKind::kWait) {
      ReplyToWaiter(c, state->wait);
    } else {
      ReplyBlockTimeout(rb);
    }
    // The blocking command is counted now, as Redis's updateStatsOnUnblock.
    if (state->kind != BlockKind::kWait && c.last_command != nullptr) {
      ++c.last_command->calls;
      const int64_t blocked_us = std::max<int64_t>(0, UnixUs() - state->blocked_at_us);
      c.last_command->usec += static_cast<uint64_t>(blocked_us);
      if (reason == UnblockReason::kError) ++c.last_command->failed_calls;
      ++stats_.total_commands;
      // As Redis 7.0: its latency is the time its first run took.
      latency_.RecordHistogram(*c.last_command, state->first_call_us);
    }
  } else if (state->kind == BlockKind::kList || state->kind == BlockKind::kZSet ||
             state->kind == BlockKind::kStream) {
    // Served: the command runs again, now finding its key ready (in the
    // database it blocked in: a blocked client runs nothing else).
    std::vector<std::string_view> views(state->argv.begin(), state->argv.end());
    ClientErrors errors(*this, c);
    io::ReplyBuilder rb(&ReplyTarget(c, true), c.resp, &errors);
    Call(c, *commands_.Find(views[0]), views, rb, clock_.WallMs());
    // What it changed of its own tracked keys: told after its reply.
    if (c.tracking && (!pending_invalidations_.empty() || flush_invalidation_pending_)) FlushPendingInvalidations(c);
    if (c.blocked) return;  // nothing there after all: blocked again
  }
  if (c.deferred && c.deferred->commands.empty() && !c.paused_wait) c.deferred.reset();
  if (!c.closing) ResumeClient(c);
}

void Server::ServeReadyKeys() {
  serving_ready_ = true;
  while (key_waiters_.has_ready()) {
    for (const auto& [db, key] : key_waiters_.TakeReady()) {
      const std::list<uint64_t>* waiting = key_waiters_.Waiting(db, key);
      if (waiting == nullptr) continue;
      // First blocked, first served, while the key holds a value of the
      // kind they wait for; the others keep their places.
      std::vector<uint64_t> ids(waiting->begin(), waiting->end());
      for (uint64_t id : ids) {
        core::Entry* e = keyspace_.db(db).FindNoTouch(key, clock_.WallMs());
        auto it = blocked_.find(id);
        Client* c = FindClient(id);
        if (it == blocked_.end() || c == nullptr) continue;
        const BlockKind kind = it->second->kind;
        // A stream a consumer group reads from went away (deleted, flushed,
        // replaced): XREADGROUP is answered with an error, XREAD waits on.
        if (kind == BlockKind::kStream && (e == nullptr || e->value.type() != core::ValueType::kStream)) {
          if (Is(it->second->argv[0], "xreadgroup")) {
            it->second->error = "UNBLOCKED the stream key no longer exists";
            UnblockClient(*c, UnblockReason::kError);
          }
          continue;
        }
        if (kind == BlockKind::kStream && StreamGroupGone(*it->second, e->value.stream())) {
          it->second->error = "NOGROUP the consumer group this client was blocked on no longer exists";
          UnblockClient(*c, UnblockReason::kError);
          continue;
        }
        if (e == nullptr) break;
        const core::ValueType want = kind == BlockKind::kList   ? core::ValueType::kList
                                     : kind == BlockKind::kZSet ? core::ValueType::kZSet
                                                                : core::ValueType::kStream;
        if (e->value.type() != want) break;
        UnblockClient(*c, UnblockReason::kServed);
      }
    }
  }
  serving_ready_ = false;
}

void Server::ExpireBlocked(int64_t now_ms) {
  while (!block_deadlines_.empty() && block_deadlines_.begin()->first <= now_ms) {
    const uint64_t id = block_deadlines_.begin()->second;
    if (Client* c = FindClient(id)) {
      UnblockClient(*c, UnblockReason::kTimeout);
    } else {
      TakeBlockState(id);  // not expected: closing clients unblock first
    }
  }
}

bool Server::UnblockByRequest(uint64_t id, bool error) {
  Client* c = FindClient(id);
  auto it = blocked_.find(id);
  // SHUTDOWN waits for the server, not for something CLIENT UNBLOCK can give up on.
  if (c == nullptr || it == blocked_.end() || it->second->kind == BlockKind::kShutdown) return false;
  const bool counted = it->second->kind != BlockKind::kWait;
  UnblockClient(*c, error ? UnblockReason::kError : UnblockReason::kTimeout);
  // Redis 7.0 counts a blocking command that CLIENT UNBLOCK (TIMEOUT) gave
  // up on as a failed call too, though it answers it as a timeout (which,
  // when the deadline passes by itself, is not a failure).
  if (!error && counted && c->last_command != nullptr) ++c->last_command->failed_calls;
  return true;
}

void Server::DisconnectBlockedClients() {
  std::vector<uint64_t> ids;
  for (const auto& [id, state] : blocked_) ids.push_back(id);
  for (uint64_t id : ids) {
    Client* c = FindClient(id);
    if (c == nullptr) continue;
    ClientErrors errors(*this, *c);
    io::ReplyBuilder rb(&ReplyTarget(*c), c->resp, &errors);
    rb.Error("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)");
    UnblockClient(*c, UnblockReason::kClosed);
    CloseClient(*c);
  }
}

void Server::ResetClientState(Client& c) {
  if (c.blocked) UnblockClient(c, UnblockReason::kClosed);
  transactions_.Forget(c);
  monitors_.Remove(c);
  DisableTracking(c);
  if (cluster_) cluster_->ForgetClient(c.id());  // ASKING, READONLY
}

}  // namespace ringkv::server

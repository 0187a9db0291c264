#include "server/blocking.h"

#include <algorithm>
#include <cassert>

#include "core/stream_value.h"
#include "core/strings.h"
#include "core/value.h"
#include "server/clock.h"
#include "server/command.h"

namespace ringkv::server {

void KeyWaiters::Add(uint64_t client, int db, const std::vector<std::string>& keys, BlockState* state) {
  auto& table = by_db_[db];
  for (const std::string& key : keys) {
    auto [it, inserted] = table.try_emplace(key);
    if (inserted) ++keys_;
    it->second.push_back(client);
    state->places.emplace_back(key, std::prev(it->second.end()));
  }
}

void KeyWaiters::Remove(const BlockState& state) {
  auto db_it = by_db_.find(state.db);
  if (db_it == by_db_.end()) return;
  for (const auto& [key, place] : state.places) {
    auto it = db_it->second.find(key);
    if (it == db_it->second.end()) continue;
    it->second.erase(place);
    if (it->second.empty()) {
      db_it->second.erase(it);
      --keys_;
    }
  }
  if (db_it->second.empty()) by_db_.erase(db_it);
}

const std::list<uint64_t>* KeyWaiters::Waiting(int db, std::string_view key) const {
  auto db_it = by_db_.find(db);
  if (db_it == by_db_.end()) return nullptr;
  auto it = db_it->second.find(key);
  return it == db_it->second.end() ? nullptr : &it->second;
}

void KeyWaiters::MarkReady(int db, std::string_view key, bool readied) {
  auto [it, inserted] = ready_set_[db].try_emplace(key, ready_.size());
  if (inserted) {
    ready_.push_back({db, std::string(key), readied});
  } else {
    ready_[it->second].readied |= readied;
  }
}

std::vector<KeyWaiters::ReadyKey> KeyWaiters::TakeReady() {
  std::vector<ReadyKey> out;
  out.swap(ready_);
  ready_set_.clear();
  return out;
}

void KeyWaiters::RotateToTail(int db, std::string_view key) {
  auto db_it = by_db_.find(db);
  if (db_it == by_db_.end()) return;
  auto it = db_it->second.find(key);
  if (it == db_it->second.end() || it->second.size() < 2) return;
  std::list<uint64_t>& clients = it->second;
  clients.splice(clients.end(), clients, clients.begin());
}

std::vector<std::string> KeyWaiters::KeysOf(int db) const {
  std::vector<std::string> keys;
  auto db_it = by_db_.find(db);
  if (db_it == by_db_.end()) return keys;
  for (const auto& [key, clients] : db_it->second) keys.push_back(key);
  return keys;
}

namespace {

bool IsGroupRead(const BlockState& state) { return EqualsIgnoreCase(state.argv[0], "xreadgroup"); }

// The group an XREADGROUP waits in (its GROUP option: it comes before
// STREAMS, the options taking their values with them).
std::string_view GroupOf(const BlockState& state) {
  for (size_t i = 1; i + 1 < state.argv.size(); ++i) {
    if (EqualsIgnoreCase(state.argv[i], "streams")) break;
    if (EqualsIgnoreCase(state.argv[i], "group")) return state.argv[i + 1];
    if (EqualsIgnoreCase(state.argv[i], "count") || EqualsIgnoreCase(state.argv[i], "block")) ++i;
  }
  return {};
}

// Whether stream `s` at readied `key` has something for the reader: an ID
// past the one it reads after (XREADGROUP: its group's last delivered ID,
// now), as Redis compares the stream's last ID, deleted entries included.
// REQUIRES: an XREADGROUP's group exists.
bool StreamServes(const BlockState& state, std::string_view key, const core::StreamValue& s) {
  core::StreamId after = core::StreamId::Min();
  if (IsGroupRead(state)) {
    after = s.FindGroup(GroupOf(state))->last_id;
  } else {
    for (const auto& [k, id] : state.read_after) {
      if (k == key) {
        after = id;
        break;
      }
    }
  }
  return s.last_id() > after;
}

}  // namespace

void BlockedClients::Block(Client& c, std::unique_ptr<BlockState> state) {
  c.blocked = true;  // later commands wait in c.deferred, allocated when one comes (Clients::Defer)
  if (state->deadline_us > 0) {
    // A re-arm only when this deadline is the earliest: the loop's timer
    // is already due by the others.
    const bool earliest = deadlines_.empty() || state->deadline_us < deadlines_.min_key().first;
    state->deadline_seq = ++next_deadline_seq_;
    deadlines_.Insert({state->deadline_us, state->deadline_seq}, &c);
    // The clock is read only then (a WAIT-heavy load blocks behind an earlier deadline).
    if (earliest) hooks_.WakeTimerInUs(std::clamp<int64_t>(state->deadline_us - UnixUs(), 0, 1'000'000));
  }
  blocked_[c.id()] = std::move(state);
}

void BlockedClients::BlockOnWait(Client& c, const WaitSpec& spec, int64_t deadline_us,
                                 const WaitRegistry::Progress& now) {
  auto state = std::make_unique<BlockState>();
  state->kind = BlockKind::kWait;
  state->db = c.db;
  state->deadline_us = deadline_us;
  state->wait.id = c.id();
  state->wait.spec = spec;
  waits_.Add(state->wait, now);  // the state is on the heap: the waiter stays where it is
  Block(c, std::move(state));
}

void BlockedClients::BlockOnKeys(Client& c, BlockKind kind, std::span<const std::string_view> argv,
                                 std::vector<std::string> keys, int64_t deadline_us,
                                 std::vector<std::pair<std::string, core::StreamId>> read_after) {
  auto state = std::make_unique<BlockState>();
  state->kind = kind;
  state->db = c.db;
  state->deadline_us = deadline_us;
  state->argv.assign(argv.begin(), argv.end());
  state->read_after = std::move(read_after);
  // Each key once: BLPOP k k waits in k's list once.
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  if (key_waiters_.empty()) hooks_.KeyWaitersPresent(true);
  key_waiters_.Add(c.id(), c.db, keys, state.get());
  Block(c, std::move(state));
}

std::unique_ptr<BlockState> BlockedClients::Take(uint64_t id) {
  auto it = blocked_.find(id);
  if (it == blocked_.end()) return nullptr;
  std::unique_ptr<BlockState> state = std::move(it->second);
  blocked_.erase(it);
  if (state->deadline_us > 0) deadlines_.Erase({state->deadline_us, state->deadline_seq});
  if (state->kind == BlockKind::kWait) {
    waits_.Remove(state->wait);
  } else if (state->kind != BlockKind::kShutdown) {
    key_waiters_.Remove(*state);
    if (key_waiters_.empty()) hooks_.KeyWaitersPresent(false);
  }
  return state;
}

void BlockedClients::Unblock(Client& c, UnblockReason reason, std::string_view served_key) {
  std::unique_ptr<BlockState> state = Take(c.id());
  if (state == nullptr) return;
  c.blocked = false;
  if (reason == UnblockReason::kClosed) return;
  if (reason == UnblockReason::kTimeout || reason == UnblockReason::kError) {
    if (reason == UnblockReason::kError) {
      hooks_.ReplyUnblockError(c, state->error.empty() ? "UNBLOCKED client unblocked via CLIENT UNBLOCK" : state->error);
    } else if (state->kind == BlockKind::kWait) {
      hooks_.ReplyToWaiter(c, state->wait.spec);
    } else {
      hooks_.ReplyBlockTimeout(c);
    }
    // It was counted when it blocked (Server::Call). As Redis 7.0.15 then
    // does for a key block: commandstats' usec adds its first run's time
    // again (not the time it waited), an error is a failed call, and the
    // latency histogram takes that time -- except on a deadline's timeout
    // (CLIENT UNBLOCK records it: UnblockByRequest). WAIT adds nothing.
    if (state->kind != BlockKind::kWait && state->kind != BlockKind::kShutdown && c.last_command != nullptr) {
      c.last_command->usec += static_cast<uint64_t>(state->first_call_us);
      if (reason == UnblockReason::kError) {
        ++c.last_command->failed_calls;
        hooks_.RecordUnblockedLatency(*c.last_command, state->first_call_us);
      }
    }
  } else if (state->kind == BlockKind::kList || state->kind == BlockKind::kZSet ||
             state->kind == BlockKind::kStream) {
    // Served: the command runs again on the ready key (in the database it
    // blocked in: a blocked client runs nothing else).
    std::vector<std::string_view> views(state->argv.begin(), state->argv.end());
    hooks_.RerunBlocked(c, views, state->first_call_us, served_key);
    if (c.blocked) return;  // (no serving blocks: ServeReadyKeys serves what is there)
  }
  if (c.deferred && c.deferred->commands.empty() && !c.paused_wait) c.deferred.reset();
  if (!c.closing) hooks_.ResumeClient(c);
}

void BlockedClients::SignalDbChanged(int db) {
  if (key_waiters_.empty()) return;
  for (const std::string& key : key_waiters_.KeysOf(db)) key_waiters_.MarkReady(db, key, /*readied=*/true);
}

void BlockedClients::ServeReadyKeys() {
  serving_ready_ = true;
  while (key_waiters_.has_ready()) {
    for (const auto& [db, key, readied] : key_waiters_.TakeReady()) {
      const core::Value* v = hooks_.PeekValue(db, key);
      const bool stream = v != nullptr && v->type() == core::ValueType::kStream;
      if (v != nullptr && v->type() == core::ValueType::kList) {
        ServeInTurn(db, key, BlockKind::kList);
      } else if (v != nullptr && v->type() == core::ValueType::kZSet) {
        ServeInTurn(db, key, BlockKind::kZSet);
      } else if (stream && readied) {
        ServeStreamReaders(db, key);
      }
      // Deleted, or replaced by another type (the kind it held before the
      // serving above, as in Redis): its consumer groups went with it.
      if (!stream) FailGroupReaders(db, key);
    }
  }
  serving_ready_ = false;
}

std::vector<uint64_t> BlockedClients::WaitingOn(int db, const std::string& key) const {
  const std::list<uint64_t>* waiting = key_waiters_.Waiting(db, key);
  return waiting == nullptr ? std::vector<uint64_t>() : std::vector<uint64_t>(waiting->begin(), waiting->end());
}

void BlockedClients::ServeInTurn(int db, const std::string& key, BlockKind kind) {
  const core::ValueType want = kind == BlockKind::kList ? core::ValueType::kList : core::ValueType::kZSet;
  const std::list<uint64_t>* waiting = key_waiters_.Waiting(db, key);
  // Each waiter there now is looked at once: served, or passed to the back.
  for (size_t turns = waiting == nullptr ? 0 : waiting->size(); turns > 0; --turns) {
    waiting = key_waiters_.Waiting(db, key);
    const core::Value* v = hooks_.PeekValue(db, key);
    if (waiting == nullptr || v == nullptr || v->type() != want) return;  // emptied by those served
    const uint64_t id = waiting->front();
    auto it = blocked_.find(id);
    Client* c = hooks_.BlockedClient(id);
    if (it == blocked_.end() || c == nullptr || it->second->kind != kind) {
      key_waiters_.RotateToTail(db, key);
      continue;
    }
    Unblock(*c, UnblockReason::kServed, key);
  }
}

void BlockedClients::ServeStreamReaders(int db, const std::string& key) {
  for (uint64_t id : WaitingOn(db, key)) {
    const core::Value* v = hooks_.PeekValue(db, key);
    auto it = blocked_.find(id);
    Client* c = hooks_.BlockedClient(id);
    if (v == nullptr || v->type() != core::ValueType::kStream) return;
    if (it == blocked_.end() || c == nullptr || it->second->kind != BlockKind::kStream) continue;
    const BlockState& state = *it->second;
    if (IsGroupRead(state) && v->stream().FindGroup(GroupOf(state)) == nullptr) {
      it->second->error = "NOGROUP the consumer group this client was blocked on no longer exists";
      Unblock(*c, UnblockReason::kError);
      continue;
    }
    if (StreamServes(state, key, v->stream())) Unblock(*c, UnblockReason::kServed, key);
  }
}

void BlockedClients::FailGroupReaders(int db, const std::string& key) {
  for (uint64_t id : WaitingOn(db, key)) {
    auto it = blocked_.find(id);
    Client* c = hooks_.BlockedClient(id);
    if (it == blocked_.end() || c == nullptr || it->second->kind != BlockKind::kStream || !IsGroupRead(*it->second)) {
      continue;
    }
    it->second->error = "UNBLOCKED the stream key no longer exists";
    Unblock(*c, UnblockReason::kError);
  }
}

void BlockedClients::ExpireDue(int64_t now_us) {
  while (!deadlines_.empty() && deadlines_.min_key().first <= now_us) {
    const int64_t deadline_us = deadlines_.min_key().first;
    Client* c = deadlines_.min_value();
    // Thousands of waiters are cold: ask for the client two entries ahead
    // and the connection of the next (its client asked for a step ago).
    int ahead = 0;
    deadlines_.ForEachWhile([&](const std::pair<int64_t, uint64_t>& key, Client* next) {
      if (key.first > now_us) return false;
      if (ahead == 1) __builtin_prefetch(next->conn);
      if (ahead == 2) __builtin_prefetch(next);
      return ++ahead <= 2;
    });
    if (!lateness_) lateness_ = std::make_unique<core::LatencyHistogram>();
    lateness_->Record(static_cast<uint64_t>(now_us - deadline_us));
    assert(hooks_.BlockedClient(c->id()) == c);  // unblocked before it is freed
    Unblock(*c, UnblockReason::kTimeout);
  }
}

bool BlockedClients::UnblockByRequest(uint64_t id, bool error) {
  Client* c = hooks_.BlockedClient(id);
  auto it = blocked_.find(id);
  // SHUTDOWN waits for the server, not for something CLIENT UNBLOCK can give up on.
  if (c == nullptr || it == blocked_.end() || it->second->kind == BlockKind::kShutdown) return false;
  const bool wait = it->second->kind == BlockKind::kWait;
  const int64_t first_call_us = it->second->first_call_us;
  // Unblock resumes the client's deferred commands, which become its
  // last_command: what is charged below is the command that blocked.
  const CommandSpec* blocked_command = c->last_command;
  Unblock(*c, error ? UnblockReason::kError : UnblockReason::kTimeout);
  // Redis 7.0 counts a blocking command that CLIENT UNBLOCK gave up on as
  // a failed call, though with TIMEOUT it answers it as a timeout (which,
  // when the deadline passes by itself, is not a failure), and records its
  // latency (a deadline's timeout does not). Unblock charged a key block's
  // error already; WAIT and WAITAOF, which it leaves alone, get their first
  // run's time again too, as a key block does there.
  if (blocked_command != nullptr && (wait || !error)) {
    if (wait) blocked_command->usec += static_cast<uint64_t>(first_call_us);
    ++blocked_command->failed_calls;
    hooks_.RecordUnblockedLatency(*blocked_command, first_call_us);
  }
  return true;
}

void BlockedClients::DisconnectAll(std::string_view error) {
  std::vector<uint64_t> ids;
  for (const auto& [id, state] : blocked_) ids.push_back(id);
  for (uint64_t id : ids) {
    Client* c = hooks_.BlockedClient(id);
    if (c == nullptr) continue;
    hooks_.ReplyUnblockError(*c, error);
    Unblock(*c, UnblockReason::kClosed);
    hooks_.CloseClient(*c);
  }
}

std::vector<uint64_t> BlockedClients::BlockedWith(BlockKind kind) const {
  std::vector<uint64_t> ids;
  for (const auto& [id, state] : blocked_) {
    if (state->kind == kind) ids.push_back(id);
  }
  return ids;
}

void BlockedClients::UnblockKeyBlocksWith(const std::function<std::string(uint64_t, const BlockState&)>& error_for) {
  std::vector<std::pair<uint64_t, std::string>> ended;
  for (const auto& [id, state] : blocked_) {
    if (state->kind != BlockKind::kList && state->kind != BlockKind::kZSet && state->kind != BlockKind::kStream) {
      continue;
    }
    if (std::string error = error_for(id, *state); !error.empty()) ended.emplace_back(id, std::move(error));
  }
  for (auto& [id, error] : ended) {
    Client* c = hooks_.BlockedClient(id);
    auto it = blocked_.find(id);
    if (c == nullptr || it == blocked_.end()) continue;
    it->second->error = std::move(error);
    Unblock(*c, UnblockReason::kError);
  }
}

bool BlockedClients::NoteFirstCall(uint64_t id, int64_t us) {
  auto it = blocked_.find(id);
  if (it == blocked_.end()) return false;
  it->second->first_call_us = us;
  return true;
}

}  // namespace ringkv::server

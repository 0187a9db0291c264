#include "server/transactions.h"

#include "core/keyspace.h"
#include "server/command.h"

namespace ringkv::server {

void Transactions::Start(Client& c) {
  multi_[c.id()] = std::make_unique<MultiState>();
  c.in_multi = true;
}

void Transactions::Discard(Client& c) {
  multi_.erase(c.id());
  c.in_multi = false;
  Unwatch(c);
}

void Transactions::Forget(Client& c) {
  if (c.in_multi) multi_.erase(c.id());
  c.in_multi = false;
  if (c.watching) watched_.UnwatchAll(c.id());
  c.watching = false;
}

void Transactions::Queue(const Client& c, const CommandSpec& spec, std::span<const std::string_view> argv,
                         uint32_t flags) {
  MultiState& m = *multi_.at(c.id());
  // A transaction EXEC will refuse keeps nothing more (QUEUED is still
  // answered), as Redis's queueMultiCommand: CLIENT LIST's multi= stops.
  if (m.aborted || WatchDirty(c)) return;
  QueuedCommand& q = m.commands.emplace_back(QueuedCommand{&spec, {argv.begin(), argv.end()}});
  for (const std::string& a : q.argv) m.bytes += a.size();
  m.flags |= flags;
  m.inv_flags |= ~flags;
}

uint32_t Transactions::ExecFlags(const Client& c, uint32_t exec_flags) const {
  const MultiState& m = *multi_.at(c.id());
  exec_flags |= m.flags & (cmd::kWrite | cmd::kDenyOom | cmd::kMayReplicate);
  exec_flags &= ~(m.inv_flags & cmd::kStale);  // one command not allowed on a stale replica: EXEC is not
  return exec_flags;
}

bool Transactions::QueueRunsWhileLoading(const Client& c) const {
  for (const QueuedCommand& q : multi_.at(c.id())->commands) {
    if (!(q.spec->flags & cmd::kLoading)) return false;
  }
  return true;
}

void Transactions::Watch(Client& c, int db_index, core::Database& db, std::span<const std::string_view> keys,
                         int64_t now_ms) {
  for (std::string_view key : keys) watched_.Watch(c.id(), db_index, key, db.IsLogicallyExpired(key, now_ms));
  c.watching = true;
}

void Transactions::Unwatch(Client& c) {
  if (!c.watching) return;
  watched_.UnwatchAll(c.id());
  c.watching = false;
}

bool Transactions::WatchDirty(const Client& c) const {
  return c.watching && watched_.Dirty(c.id(), [](int, std::string_view) { return false; });
}

std::unique_ptr<MultiState> Transactions::TakeForExec(Client& c,
                                                      absl::FunctionRef<bool(int, std::string_view)> expired_now,
                                                      bool* dirty) {
  std::unique_ptr<MultiState> m = std::move(multi_[c.id()]);
  multi_.erase(c.id());
  c.in_multi = false;
  *dirty = c.watching && watched_.Dirty(c.id(), [&](int db, std::string_view key) { return expired_now(db, key); });
  Unwatch(c);
  return m;
}

}  // namespace ringkv::server

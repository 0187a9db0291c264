#include "server/transactions.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "core/keyspace.h"
#include "server/command.h"

namespace ringkv::server::transactions_test {
namespace {

struct TestClient {
  explicit TestClient(uint64_t id) {
    conn.id = id;
    client.conn = &conn;
  }
  io::Connection conn;
  Client client;
};

CommandSpec Spec(const char* name, uint32_t flags) {
  CommandSpec s;
  s.name = name;
  s.flags = flags;
  return s;
}

auto NeverExpired = [](int, std::string_view) { return false; };

TEST(TransactionsTest, QueueKeepsFlagsAndExecTakesIt) {
  Transactions t;
  TestClient c(1);
  const CommandSpec set = Spec("set", cmd::kWrite | cmd::kDenyOom);
  t.Start(c.client);
  EXPECT_TRUE(c.client.in_multi);
  const std::vector<std::string_view> argv{"set", "k", "v"};
  t.Queue(c.client, set, argv, set.flags);
  // EXEC is judged by what it will run: a write that may grow memory, and
  // not `stale` (SET is not allowed on a stale replica).
  EXPECT_EQ(t.ExecFlags(c.client, cmd::kStale | cmd::kLoading),
            cmd::kLoading | cmd::kWrite | cmd::kDenyOom);
  EXPECT_FALSE(t.QueueRunsWhileLoading(c.client));
  EXPECT_EQ(t.Find(c.client)->bytes, 5u);

  bool dirty = true;
  std::unique_ptr<MultiState> m = t.TakeForExec(c.client, NeverExpired, &dirty);
  EXPECT_FALSE(dirty);
  EXPECT_FALSE(c.client.in_multi);
  EXPECT_EQ(t.Find(c.client), nullptr);
  ASSERT_EQ(m->commands.size(), 1u);
  EXPECT_EQ(m->commands[0].spec, &set);
}

TEST(TransactionsTest, AbortAndDiscard) {
  Transactions t;
  TestClient c(2);
  t.Start(c.client);
  t.Abort(c.client);
  EXPECT_TRUE(t.Find(c.client)->aborted);
  t.Discard(c.client);
  EXPECT_FALSE(c.client.in_multi);
  EXPECT_EQ(t.Find(c.client), nullptr);
}

TEST(TransactionsTest, AWriteToAWatchedKeyMakesExecDirty) {
  Transactions t;
  core::Keyspace keyspace(1);
  TestClient c(3), other(4);
  const std::vector<std::string_view> keys{"k"};
  t.Watch(c.client, 0, keyspace.db(0), keys, /*now_ms=*/1000);
  EXPECT_TRUE(c.client.watching);
  EXPECT_TRUE(t.Watching(c.client));
  EXPECT_FALSE(t.WatchDirty(c.client));
  t.watched().Touch(0, "k", [] { return true; });
  EXPECT_TRUE(t.WatchDirty(c.client));

  t.Start(c.client);
  bool dirty = false;
  t.TakeForExec(c.client, NeverExpired, &dirty);
  EXPECT_TRUE(dirty);
  EXPECT_FALSE(c.client.watching);  // EXEC unwatches
  EXPECT_FALSE(t.Watching(c.client));
  EXPECT_FALSE(t.Watching(other.client));
}

TEST(TransactionsTest, ForgetDropsEverything) {
  Transactions t;
  core::Keyspace keyspace(1);
  TestClient c(5);
  const std::vector<std::string_view> keys{"a", "b"};
  t.Watch(c.client, 0, keyspace.db(0), keys, 0);
  t.Start(c.client);
  t.Forget(c.client);
  EXPECT_FALSE(c.client.in_multi);
  EXPECT_FALSE(c.client.watching);
  EXPECT_EQ(t.Find(c.client), nullptr);
  EXPECT_TRUE(t.watched().empty());
}

}  // namespace
}  // namespace ringkv::server::transactions_test

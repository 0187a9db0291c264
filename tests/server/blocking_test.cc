#include "server/blocking.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/list_value.h"
#include "core/stream_value.h"
#include "core/string_value.h"
#include "core/zset_value.h"
#include "core/value.h"
#include "server/clock.h"
#include "server/command.h"
#include "tests/server/fake_server_parts.h"

namespace ringkv::server::blocking_test {
namespace {

std::vector<uint64_t> Waiting(const KeyWaiters& w, int db, std::string_view key) {
  const std::list<uint64_t>* l = w.Waiting(db, key);
  return l ? std::vector<uint64_t>(l->begin(), l->end()) : std::vector<uint64_t>{};
}

TEST(KeyWaitersTest, WaitersAreKeptInBlockingOrderPerKey) {
  KeyWaiters w;
  BlockState a, b, c;
  w.Add(1, 0, {"x", "y"}, &a);
  w.Add(2, 0, {"y"}, &b);
  w.Add(3, 1, {"x"}, &c);
  EXPECT_EQ(Waiting(w, 0, "x"), (std::vector<uint64_t>{1}));
  EXPECT_EQ(Waiting(w, 0, "y"), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(Waiting(w, 1, "x"), (std::vector<uint64_t>{3}));
  EXPECT_EQ(a.places.size(), 2u);
}

TEST(KeyWaitersTest, RemovingOneClientKeepsTheOthersInPlace) {
  KeyWaiters w;
  BlockState a, b, c;
  a.db = b.db = c.db = 0;
  w.Add(1, 0, {"k"}, &a);
  w.Add(2, 0, {"k", "other"}, &b);
  w.Add(3, 0, {"k"}, &c);
  w.Remove(b);
  EXPECT_EQ(Waiting(w, 0, "k"), (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(w.Waiting(0, "other"), nullptr);  // its last waiter left
  w.Remove(a);
  w.Remove(c);
  EXPECT_TRUE(w.empty());
}

TEST(KeyWaitersTest, OnlyWritesToAwaitedKeysBecomeReadyOnceEach) {
  KeyWaiters w;
  w.SignalWrite(0, "k");  // nobody waits anywhere: nothing recorded
  EXPECT_FALSE(w.has_ready());
  BlockState a;
  w.Add(1, 0, {"k"}, &a);
  w.SignalWrite(0, "unrelated");
  w.SignalWrite(1, "k");  // other database
  EXPECT_FALSE(w.has_ready());
  w.SignalWrite(0, "k");
  w.SignalWrite(0, "k");
  ASSERT_TRUE(w.has_ready());
  auto ready = w.TakeReady();
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].db, 0);
  EXPECT_EQ(ready[0].key, "k");
  EXPECT_FALSE(ready[0].readied);
  EXPECT_FALSE(w.has_ready());
  w.SignalWrite(0, "k");  // ready again after being taken
  EXPECT_EQ(w.TakeReady().size(), 1u);
}

// ---- BlockedClients through a fake server: no socket, no Server --------------

// Records what the component asked of its server; keys hold real values.
class FakeHooks final : public BlockedClients::Hooks {
 public:
  Client& AddClient(uint64_t id) { return test_fakes::AddFakeClient(id, conns_, clients_); }
  void RemoveClient(uint64_t id) { clients_.erase(id); }
  void SetList(int db, const std::string& key) {
    values_[{db, key}] = core::Value(std::make_unique<core::ListValue>(core::ListLimits{}));
  }
  void SetString(int db, const std::string& key) { values_[{db, key}] = core::Value(core::StringValue("v")); }
  void SetZSet(int db, const std::string& key) { values_[{db, key}] = core::Value(core::ZSetValue()); }
  // A stream whose last ID is `last` (one entry with it).
  void SetStream(int db, const std::string& key, core::StreamId last) {
    auto s = std::make_unique<core::StreamValue>();
    const std::vector<std::string_view> fv = {"f", "v"};
    s->Append(last, fv, core::StreamLimits{});
    values_[{db, key}] = core::Value(std::move(s));
  }
  void Delete(int db, const std::string& key) { values_.erase({db, key}); }

  Client* BlockedClient(uint64_t id) override {
    auto it = clients_.find(id);
    return it == clients_.end() ? nullptr : it->second.get();
  }
  const core::Value* PeekValue(int db, std::string_view key) override {
    auto it = values_.find({db, std::string(key)});
    return it == values_.end() ? nullptr : &it->second;
  }
  void WakeTimerInUs(int64_t us) override { wakes.push_back(us); }
  void ReplyUnblockError(Client& c, std::string_view msg) override {
    log.push_back("error " + std::to_string(c.id()) + " " + std::string(msg));
  }
  void ReplyBlockTimeout(Client& c) override { log.push_back("timeout " + std::to_string(c.id())); }
  void ReplyToWaiter(Client& c, const WaitSpec& spec) override {
    log.push_back("wait-reply " + std::to_string(c.id()) + " " + std::to_string(spec.numreplicas));
  }
  void RerunBlocked(Client& c, std::span<const std::string_view> argv, int64_t first_call_us,
                    std::string_view served_key) override {
    std::string line = "rerun " + std::to_string(c.id()) + " after " + std::to_string(first_call_us) + ":";
    for (std::string_view a : argv) line += " " + std::string(a);
    log.push_back(line + " on " + std::string(served_key));
    // The command takes the list's only element: the key goes away.
    if (consume_on_rerun) values_.erase({c.db, std::string(served_key)});
  }
  void RecordUnblockedLatency(const CommandSpec& spec, int64_t latency_us) override {
    log.push_back("latency " + spec.name + " " + std::to_string(latency_us));
  }
  void ResumeClient(Client& c) override { log.push_back("resume " + std::to_string(c.id())); }
  void CloseClient(Client& c) override { log.push_back("close " + std::to_string(c.id())); }
  void KeyWaitersPresent(bool present) override { key_waiters_present = present; }
  bool key_waiters_present = false;

  std::vector<std::string> TakeLog() { return std::exchange(log, {}); }

  std::vector<std::string> log;
  std::vector<int64_t> wakes;  // µs
  bool consume_on_rerun = true;

 private:
  std::vector<std::unique_ptr<io::Connection>> conns_;
  std::map<uint64_t, std::unique_ptr<Client>> clients_;
  std::map<std::pair<int, std::string>, core::Value> values_;
};

std::vector<std::string_view> Views(const std::vector<std::string>& argv) { return {argv.begin(), argv.end()}; }

TEST(BlockedClientsTest, AWriteServesTheFirstBlockedAndKeepsTheOthersInPlace) {
  FakeHooks hooks;
  BlockedClients blocking(hooks);
  Client& a = hooks.AddClient(1);
  Client& b = hooks.AddClient(2);
  const std::vector<std::string> argv = {"blpop", "q", "0"};
  blocking.BlockOnKeys(a, BlockKind::kList, Views(argv), {"q", "q"}, 0);
  blocking.BlockOnKeys(b, BlockKind::kList, Views(argv), {"q"}, 0);
  EXPECT_TRUE(a.blocked);
  EXPECT_EQ(a.deferred, nullptr);  // allocated when a later command comes to wait there
  EXPECT_EQ(blocking.size(), 2u);
  EXPECT_FALSE(blocking.has_deadlines());
  EXPECT_TRUE(hooks.wakes.empty());  // no deadline: no timer

  blocking.SignalWrite(0, "other");  // nobody waits on it
  EXPECT_FALSE(blocking.has_ready());
  hooks.SetList(0, "q");
  blocking.SignalWrite(0, "q");
  ASSERT_TRUE(blocking.has_ready());
  blocking.ServeReadyKeys();
  // a ran again and took the element; b finds no list and keeps waiting.
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"rerun 1 after 0: blpop q 0 on q", "resume 1"}));
  EXPECT_FALSE(a.blocked);
  EXPECT_EQ(a.deferred, nullptr);  // nothing was deferred: the component is freed
  EXPECT_TRUE(b.blocked);
  EXPECT_FALSE(blocking.IsBlocked(1));
  EXPECT_TRUE(blocking.IsBlocked(2));
  EXPECT_FALSE(blocking.has_ready());
}

TEST(BlockedClientsTest, AValueOfAnotherKindServesNobody) {
  FakeHooks hooks;
  BlockedClients blocking(hooks);
  Client& a = hooks.AddClient(1);
  const std::vector<std::string> argv = {"bzpopmin", "z", "0"};
  blocking.BlockOnKeys(a, BlockKind::kZSet, Views(argv), {"z"}, 0);
  hooks.SetList(0, "z");
  blocking.SignalWrite(0, "z");
  blocking.ServeReadyKeys();
  EXPECT_TRUE(hooks.TakeLog().empty());
  EXPECT_TRUE(a.blocked);
}

// Redis 7.0's serving loop: a waiter of another kind goes to the back of the
// key's list, and the list's own waiter behind it is served.
TEST(BlockedClientsTest, AWaiterOfAnotherKindIsPassedAndGoesToTheBack) {
  FakeHooks hooks;
  BlockedClients blocking(hooks);
  Client& z1 = hooks.AddClient(1);
  Client& l = hooks.AddClient(2);
  Client& z3 = hooks.AddClient(3);
  const std::vector<std::string> bzpop = {"bzpopmin", "k", "0"};
  const std::vector<std::string> blpop = {"blpop", "other", "k", "0"};
  blocking.BlockOnKeys(z1, BlockKind::kZSet, Views(bzpop), {"k"}, 0);
  blocking.BlockOnKeys(l, BlockKind::kList, Views(blpop), {"other", "k"}, 0);
  blocking.BlockOnKeys(z3, BlockKind::kZSet, Views(bzpop), {"k"}, 0);
  hooks.SetList(0, "k");
  blocking.SignalWrite(0, "k");
  blocking.ServeReadyKeys();
  // Served on k alone, though it waits on "other" too.
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"rerun 2 after 0: blpop other k 0 on k", "resume 2"}));
  EXPECT_TRUE(z1.blocked);
  EXPECT_TRUE(z3.blocked);
  // The list went with its element; a sorted set there now serves 3 first,
  // which 1's pass moved ahead of it.
  hooks.consume_on_rerun = false;
  hooks.SetZSet(0, "k");
  blocking.SignalWrite(0, "k");
  blocking.ServeReadyKeys();
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"rerun 3 after 0: bzpopmin k 0 on k", "resume 3",
                                                        "rerun 1 after 0: bzpopmin k 0 on k", "resume 1"}));
}

// XREAD is served once the stream's last ID passes the one it read after
// (the first given for a key named twice); until then it keeps its place.
TEST(BlockedClientsTest, XreadIsServedOnlyPastItsId) {
  FakeHooks hooks;
  BlockedClients blocking(hooks);
  Client& early = hooks.AddClient(1);
  Client& late = hooks.AddClient(2);
  const std::vector<std::string> xread = {"xread", "block", "0", "streams", "s", "s", "5-0", "1-0"};
  blocking.BlockOnKeys(late, BlockKind::kStream, Views(xread), {"s", "s"}, 0, {{"s", core::StreamId{5, 0}}});
  blocking.BlockOnKeys(early, BlockKind::kStream, Views(xread), {"s"}, 0, {{"s", core::StreamId{2, 0}}});
  hooks.SetStream(0, "s", core::StreamId{3, 0});
  blocking.SignalReady(0, "s");  // XADD
  blocking.ServeReadyKeys();
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{
                                 "rerun 1 after 0: xread block 0 streams s s 5-0 1-0 on s", "resume 1"}));
  EXPECT_TRUE(late.blocked);
  hooks.SetStream(0, "s", core::StreamId{5, 1});
  blocking.SignalReady(0, "s");
  blocking.ServeReadyKeys();
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{
                                 "rerun 2 after 0: xread block 0 streams s s 5-0 1-0 on s", "resume 2"}));
}

// A stream serves its readers only when the key is readied as Redis readies
// it: a write that is not an XADD (XTRIM, XDEL, XGROUP SETID) serves
// nobody, even a reader whose ID the last ID is past; the key made anew
// (RENAME onto it) does, with the very same last ID.
TEST(BlockedClientsTest, AStreamServesOnlyWhenTheKeyIsReadied) {
  FakeHooks hooks;
  BlockedClients blocking(hooks);
  Client& reader = hooks.AddClient(1);
  const std::vector<std::string> xread = {"xread", "block", "0", "streams", "s", "0-0"};
  EXPECT_FALSE(hooks.key_waiters_present);
  blocking.BlockOnKeys(reader, BlockKind::kStream, Views(xread), {"s"}, 0, {{"s", core::StreamId::Min()}});
  EXPECT_TRUE(hooks.key_waiters_present);  // the server tells it of created keys from now on
  hooks.SetStream(0, "s", core::StreamId{7, 0});
  blocking.SignalWrite(0, "s");
  blocking.ServeReadyKeys();
  EXPECT_TRUE(hooks.TakeLog().empty());
  EXPECT_TRUE(reader.blocked);
  blocking.SignalReady(0, "other");  // created: nobody waits on it
  blocking.ServeReadyKeys();
  EXPECT_TRUE(hooks.TakeLog().empty());
  blocking.SignalWrite(0, "s");
  blocking.SignalReady(0, "s");  // created (Server::OnKeyCreated)
  blocking.ServeReadyKeys();
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"rerun 1 after 0: xread block 0 streams s 0-0 on s", "resume 1"}));
  EXPECT_FALSE(hooks.key_waiters_present);  // the last one left
}

TEST(BlockedClientsTest, ADeadlineTimesOutAndCountsTheCommand) {
  FakeHooks hooks;
  BlockedClients blocking(hooks);
  Client& a = hooks.AddClient(7);
  CommandSpec spec;
  spec.name = "blpop";
  a.last_command = &spec;
  const std::vector<std::string> argv = {"blpop", "q", "1"};
  const int64_t deadline = UnixUs() + 500'000;
  blocking.BlockOnKeys(a, BlockKind::kList, Views(argv), {"q"}, deadline);
  ASSERT_TRUE(blocking.NoteFirstCall(7, 42));
  EXPECT_FALSE(blocking.NoteFirstCall(8, 1));  // not blocked
  ASSERT_EQ(hooks.wakes.size(), 1u);
  EXPECT_GE(hooks.wakes[0], 0);
  EXPECT_LE(hooks.wakes[0], 500'000);
  ASSERT_TRUE(blocking.has_deadlines());
  EXPECT_EQ(blocking.next_deadline_us(), deadline);
  EXPECT_EQ(blocking.with_deadline(), 1u);

  blocking.ExpireDue(deadline - 1);  // not yet: one microsecond early
  EXPECT_TRUE(a.blocked);
  EXPECT_EQ(blocking.deadline_lateness(), nullptr);  // nothing timed out yet
  blocking.ExpireDue(deadline + 300);  // fired 300 us late
  ASSERT_NE(blocking.deadline_lateness(), nullptr);
  EXPECT_EQ(blocking.deadline_lateness()->total(), 1u);
  const int64_t late_us = blocking.deadline_lateness()->ValueAtPercentile(100) / 1000;
  EXPECT_GE(late_us, 299);
  EXPECT_LE(late_us, 303);  // HdrHistogram's bucket around 300 us is 1 us wide
  blocking.ResetDeadlineLateness();
  EXPECT_EQ(blocking.deadline_lateness(), nullptr);
  // As Redis 7.0.15: a deadline's timeout records no latency, and usec
  // adds the first run's time again, not the time it waited. (The call was
  // counted when it blocked, by the server's Call.)
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"timeout 7", "resume 7"}));
  EXPECT_FALSE(a.blocked);
  EXPECT_FALSE(blocking.has_deadlines());
  EXPECT_EQ(spec.calls, 0u);
  EXPECT_EQ(spec.usec, 42u);
  EXPECT_EQ(spec.failed_calls, 0u);
  // Its key no longer has waiters: a write marks nothing ready.
  blocking.SignalWrite(0, "q");
  EXPECT_FALSE(blocking.has_ready());
}

TEST(BlockedClientsTest, ClientUnblockAnswersAsTimeoutOrErrorButNotForShutdown) {
  FakeHooks hooks;
  BlockedClients blocking(hooks);
  Client& a = hooks.AddClient(1);
  Client& b = hooks.AddClient(2);
  Client& s = hooks.AddClient(3);
  CommandSpec spec;
  spec.name = "brpop";
  a.last_command = b.last_command = &spec;
  const std::vector<std::string> argv = {"brpop", "q", "0"};
  blocking.BlockOnKeys(a, BlockKind::kList, Views(argv), {"q"}, 0);
  blocking.BlockOnKeys(b, BlockKind::kList, Views(argv), {"q"}, 0);
  auto shutdown = std::make_unique<BlockState>();
  shutdown->kind = BlockKind::kShutdown;
  blocking.Block(s, std::move(shutdown));
  EXPECT_EQ(blocking.BlockedWith(BlockKind::kShutdown), (std::vector<uint64_t>{3}));

  EXPECT_TRUE(blocking.UnblockByRequest(1, /*error=*/false));
  EXPECT_TRUE(blocking.UnblockByRequest(2, /*error=*/true));
  EXPECT_FALSE(blocking.UnblockByRequest(3, false));  // SHUTDOWN is not given up on
  EXPECT_FALSE(blocking.UnblockByRequest(9, false));  // no such client
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"timeout 1", "resume 1", "latency brpop 0",
                                                       "error 2 UNBLOCKED client unblocked via CLIENT UNBLOCK",
                                                       "latency brpop 0", "resume 2"}));
  // Redis 7.0 counts both as failed calls (TIMEOUT too); the calls were
  // counted when they blocked.
  EXPECT_EQ(spec.calls, 0u);
  EXPECT_EQ(spec.failed_calls, 2u);
  EXPECT_TRUE(s.blocked);
}

TEST(BlockedClientsTest, WaitTimesOutWithItsCountAndLeavesTheRegistry) {
  FakeHooks hooks;
  BlockedClients blocking(hooks);
  Client& a = hooks.AddClient(4);
  WaitSpec spec;
  spec.numreplicas = 2;
  WaitRegistry::Progress none;
  none.nth_ack = [](int64_t, bool) -> int64_t { return -1; };  // no replica online
  blocking.BlockOnWait(a, spec, 1000 * 1000, none);
  EXPECT_FALSE(blocking.waits().empty());
  ASSERT_TRUE(blocking.has_deadlines());
  EXPECT_EQ(blocking.next_deadline_us(), 1000 * 1000);
  blocking.ExpireDue(1000 * 1000 - 1);
  EXPECT_TRUE(a.blocked);
  blocking.ExpireDue(1000 * 1000);
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"wait-reply 4 2", "resume 4"}));  // WAIT is not re-counted
  EXPECT_TRUE(blocking.waits().empty());
}

// Redis 7.0: a WAIT that CLIENT UNBLOCK ends, either way, is a failed call
// with its latency recorded (its own timeout counts nothing, above).
TEST(BlockedClientsTest, ClientUnblockOfWaitIsAFailedCall) {
  FakeHooks hooks;
  BlockedClients blocking(hooks);
  Client& a = hooks.AddClient(4);
  Client& b = hooks.AddClient(5);
  CommandSpec wait;
  wait.name = "wait";
  a.last_command = b.last_command = &wait;
  WaitSpec spec;
  spec.numreplicas = 1;
  WaitRegistry::Progress none;
  none.nth_ack = [](int64_t, bool) -> int64_t { return -1; };
  blocking.BlockOnWait(a, spec, 0, none);
  blocking.BlockOnWait(b, spec, 0, none);
  blocking.NoteFirstCall(4, 7);
  EXPECT_TRUE(blocking.UnblockByRequest(4, /*error=*/false));
  EXPECT_TRUE(blocking.UnblockByRequest(5, /*error=*/true));
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"wait-reply 4 1", "resume 4", "latency wait 7",
                                                       "error 5 UNBLOCKED client unblocked via CLIENT UNBLOCK",
                                                       "resume 5", "latency wait 0"}));
  EXPECT_EQ(wait.failed_calls, 2u);
  EXPECT_EQ(wait.usec, 7u);
  EXPECT_TRUE(blocking.waits().empty());
}

TEST(BlockedClientsTest, ClosingAnswersNothingAndForgetsTheKeys) {
  FakeHooks hooks;
  BlockedClients blocking(hooks);
  Client& a = hooks.AddClient(1);
  const std::vector<std::string> argv = {"blpop", "q", "0"};
  blocking.BlockOnKeys(a, BlockKind::kList, Views(argv), {"q"}, UnixUs() + 10'000'000);
  blocking.Unblock(a, UnblockReason::kClosed);
  EXPECT_TRUE(hooks.TakeLog().empty());
  EXPECT_FALSE(blocking.has_deadlines());
  blocking.SignalWrite(0, "q");
  EXPECT_FALSE(blocking.has_ready());
  blocking.Unblock(a, UnblockReason::kTimeout);  // not blocked: nothing
  EXPECT_TRUE(hooks.TakeLog().empty());
}

TEST(BlockedClientsTest, XreadgroupIsToldItsStreamWentAwayXreadWaitsOn) {
  FakeHooks hooks;
  BlockedClients blocking(hooks);
  Client& group = hooks.AddClient(1);
  Client& plain = hooks.AddClient(2);
  const std::vector<std::string> xreadgroup = {"xreadgroup", "group", "g", "c", "streams", "s", ">"};
  const std::vector<std::string> xread = {"xread", "block", "0", "streams", "s", "$"};
  blocking.BlockOnKeys(group, BlockKind::kStream, Views(xreadgroup), {"s"}, 0);
  blocking.BlockOnKeys(plain, BlockKind::kStream, Views(xread), {"s"}, 0);
  hooks.SetString(0, "s");  // replaced by a string
  blocking.SignalDbChanged(0);  // as FLUSHDB / SWAPDB do: every awaited key of db 0
  blocking.ServeReadyKeys();
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"error 1 UNBLOCKED the stream key no longer exists", "resume 1"}));
  EXPECT_FALSE(group.blocked);
  EXPECT_TRUE(plain.blocked);
}

TEST(BlockedClientsTest, DisconnectAllTellsAndClosesEveryBlockedClient) {
  FakeHooks hooks;
  BlockedClients blocking(hooks);
  Client& a = hooks.AddClient(1);
  const std::vector<std::string> argv = {"blpop", "q", "0"};
  blocking.BlockOnKeys(a, BlockKind::kList, Views(argv), {"q"}, 0);
  blocking.DisconnectAll("UNBLOCKED gone");
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"error 1 UNBLOCKED gone", "close 1"}));
  EXPECT_EQ(blocking.size(), 0u);
  EXPECT_FALSE(a.blocked);
}

// The deadline index keeps the client itself (ExpireDue reaches it without a
// registry lookup): a client closing while blocked is unblocked first, as
// Server::ResetClientState does, and its deadline goes with it.
TEST(BlockedClientsTest, AClosedClientsDeadlineGoesWithItsUnblock) {
  FakeHooks hooks;
  BlockedClients blocking(hooks);
  Client& a = hooks.AddClient(1);
  Client& b = hooks.AddClient(2);
  const std::vector<std::string> argv = {"blpop", "q", "1"};
  blocking.BlockOnKeys(a, BlockKind::kList, Views(argv), {"q"}, 50);
  blocking.BlockOnKeys(b, BlockKind::kList, Views(argv), {"q"}, 60);
  EXPECT_EQ(blocking.with_deadline(), 2u);
  blocking.Unblock(a, UnblockReason::kClosed);
  hooks.RemoveClient(1);
  EXPECT_EQ(blocking.with_deadline(), 1u);
  blocking.ExpireDue(50 * 1000);
  // Only b's deadline fired: nothing is answered for the closed client.
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"timeout 2", "resume 2"}));
  EXPECT_EQ(blocking.size(), 0u);
  EXPECT_FALSE(b.blocked);
}

// The loop's timer is moved only by a deadline earlier than every other:
// a later one is already covered by the wake-up the earliest asked for.
TEST(BlockedClientsTest, OnlyANewEarliestDeadlineMovesTheTimer) {
  FakeHooks hooks;
  BlockedClients blocking(hooks);
  Client& a = hooks.AddClient(1);
  Client& b = hooks.AddClient(2);
  Client& c = hooks.AddClient(3);
  const std::vector<std::string> argv = {"blpop", "q", "1"};
  const int64_t now = UnixUs();
  blocking.BlockOnKeys(a, BlockKind::kList, Views(argv), {"q"}, now + 200'000);
  blocking.BlockOnKeys(b, BlockKind::kList, Views(argv), {"q"}, now + 300'000);  // later: no wake
  ASSERT_EQ(hooks.wakes.size(), 1u);
  EXPECT_GT(hooks.wakes[0], 100'000);  // counted in µs
  EXPECT_LE(hooks.wakes[0], 200'000);
  blocking.BlockOnKeys(c, BlockKind::kList, Views(argv), {"q"}, now + 5'000);  // earlier: wakes
  ASSERT_EQ(hooks.wakes.size(), 2u);
  EXPECT_LE(hooks.wakes[1], 5'000);
  EXPECT_EQ(blocking.next_deadline_us(), now + 5'000);
  // Each fires at its microsecond, not before.
  blocking.ExpireDue(now + 4'999);
  EXPECT_EQ(blocking.size(), 3u);
  blocking.ExpireDue(now + 5'000);
  EXPECT_EQ(blocking.size(), 2u);
  EXPECT_FALSE(c.blocked);
  EXPECT_EQ(blocking.next_deadline_us(), now + 200'000);
}

}  // namespace
}  // namespace ringkv::server::blocking_test

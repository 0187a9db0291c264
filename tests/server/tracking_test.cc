#include "server/tracking.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "io/out_buffer.h"
#include "server/command_table.h"
#include "server/config.h"

namespace ringkv::server {
namespace {

// A fake server: clients without sockets, each with the bytes pushed to it.
class FakeDelivery final : public Tracking::Delivery {
 public:
  Client& AddClient(uint64_t id, uint8_t resp) {
    auto conn = std::make_unique<io::Connection>();
    conn->id = id;
    auto c = std::make_unique<Client>();
    c->conn = conn.get();
    c->resp = resp;
    Client& ref = *c;
    conns_.push_back(std::move(conn));
    clients_[id] = std::move(c);
    return ref;
  }
  void RemoveClient(uint64_t id) { clients_.erase(id); }
  // What was pushed to `id` since the last call.
  std::string Take(uint64_t id) {
    std::string out = out_[id].ToString();
    out_[id].Clear();
    return out;
  }

  Client* TrackingClient(uint64_t id) override {
    ++lookups;
    auto it = clients_.find(id);
    return it == clients_.end() ? nullptr : it->second.get();
  }
  io::OutBuffer& PushTarget(Client& c) override { return out_[c.id()]; }
  void PushedToRedirect(Client& target) override { ++redirect_pushes[target.id()]; }

  int lookups = 0;
  std::map<uint64_t, int> redirect_pushes;  // per redirect client: invalidations written to it

 private:
  std::vector<std::unique_ptr<io::Connection>> conns_;
  std::map<uint64_t, std::unique_ptr<Client>> clients_;
  std::map<uint64_t, io::OutBuffer> out_;
};

// `writer` changed `key` while running a command of its own (0: the server did).
std::vector<uint64_t> Told(Tracking& t, uint64_t writer, std::string_view key) {
  std::vector<uint64_t> ids;
  t.Invalidate(writer, writer, key, [&](uint64_t id) { ids.push_back(id); });
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(TrackingTest, ReadersAreToldOnceThenForgotten) {
  FakeDelivery d;
  Tracking t(d);
  ASSERT_EQ(t.Enable(1, {}), "");
  ASSERT_EQ(t.Enable(2, {}), "");
  t.RememberKeys(1, {"k"});
  t.RememberKeys(2, {"k", "other"});
  EXPECT_EQ(t.keys(), 2u);
  EXPECT_EQ(t.items(), 3u);
  EXPECT_EQ(Told(t, 0, "k"), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(Told(t, 0, "k"), std::vector<uint64_t>{});  // one-shot
  t.Disable(2);
  EXPECT_EQ(Told(t, 0, "other"), std::vector<uint64_t>{});  // no longer tracking
}

TEST(TrackingTest, EvictedKeysAreInvalidatedForTheirReaders) {
  FakeDelivery d;
  Tracking t(d);
  ASSERT_EQ(t.Enable(1, {}), "");
  t.RememberKeys(1, {"a", "b", "c"});
  std::vector<std::string> told;
  t.EvictKeys(2, [&](uint64_t id, std::string_view key) {
    EXPECT_EQ(id, 1u);
    told.emplace_back(key);
  });
  EXPECT_EQ(told.size(), 2u);
  EXPECT_EQ(t.keys(), 1u);
}

TEST(TrackingTest, NoloopSkipsTheWriter) {
  FakeDelivery d;
  Tracking t(d);
  TrackingOptions noloop;
  noloop.noloop = true;
  ASSERT_EQ(t.Enable(1, noloop), "");
  ASSERT_EQ(t.Enable(2, {}), "");
  t.RememberKeys(1, {"k"});
  t.RememberKeys(2, {"k"});
  EXPECT_EQ(Told(t, 1, "k"), std::vector<uint64_t>{2});
  t.RememberKeys(2, {"j"});
  EXPECT_EQ(Told(t, 2, "j"), std::vector<uint64_t>{2});  // without NOLOOP, the writer is told too
}

TEST(TrackingTest, OptinAndOptoutFollowClientCaching) {
  FakeDelivery d;
  Tracking t(d);
  TrackingOptions in, out;
  in.optin = true;
  out.optout = true;
  ASSERT_EQ(t.Enable(1, in), "");
  ASSERT_EQ(t.Enable(2, out), "");
  t.RememberKeys(1, {"a"});  // OPTIN without CACHING yes: not tracked
  t.Find(1)->caching_yes = true;
  t.RememberKeys(1, {"b"});
  t.Find(2)->caching_no = true;
  t.RememberKeys(2, {"a"});  // OPTOUT with CACHING no: not tracked
  t.EndCommand(*t.Find(2));
  t.RememberKeys(2, {"b"});
  EXPECT_EQ(Told(t, 0, "a"), std::vector<uint64_t>{});
  EXPECT_EQ(Told(t, 0, "b"), (std::vector<uint64_t>{1, 2}));
}

TEST(TrackingTest, BroadcastsGroupKeysPerPrefixSortedAndDeduplicated) {
  FakeDelivery d;
  Tracking t(d);
  TrackingOptions bcast;
  bcast.bcast = true;
  bcast.prefixes = {"user:", "item:"};
  ASSERT_EQ(t.Enable(7, bcast), "");
  EXPECT_EQ(Told(t, 0, "user:2"), std::vector<uint64_t>{});  // nothing per key in BCAST
  Told(t, 0, "user:1");
  Told(t, 0, "user:2");
  Told(t, 0, "other");
  ASSERT_TRUE(t.has_broadcasts());
  std::vector<std::vector<std::string>> sent;
  t.TakeBroadcasts([&](uint64_t id, const std::vector<std::string>& keys) {
    EXPECT_EQ(id, 7u);
    sent.push_back(keys);
  });
  EXPECT_EQ(sent, (std::vector<std::vector<std::string>>{{"user:1", "user:2"}}));
  EXPECT_FALSE(t.has_broadcasts());
}

// An expiry caused by a NOLOOP client's own read: a default-mode client is
// not told (its command was running), a BCAST client is (Redis records no
// writer for it, and the last writer of a key in a batch counts) -- the
// suite's "Tracking gets notification of lazy expired keys".
TEST(TrackingTest, ServerMadeChangesReachBroadcastNoloopClients) {
  FakeDelivery d;
  Tracking t(d);
  TrackingOptions bcast;
  bcast.bcast = true;
  bcast.noloop = true;
  ASSERT_EQ(t.Enable(7, bcast), "");
  TrackingOptions noloop;
  noloop.noloop = true;
  ASSERT_EQ(t.Enable(8, noloop), "");
  t.RememberKeys(8, {"k"});
  std::vector<uint64_t> told;
  t.Invalidate(7, 7, "mine", [&](uint64_t id) { told.push_back(id); });
  t.Invalidate(7, 7, "expired", [&](uint64_t id) { told.push_back(id); });
  t.Invalidate(0, 0, "expired", [&](uint64_t id) { told.push_back(id); });  // same batch: last writer counts
  t.Invalidate(0, 8, "k", [&](uint64_t id) { told.push_back(id); });
  EXPECT_EQ(told, std::vector<uint64_t>{});
  std::vector<std::vector<std::string>> sent;
  t.TakeBroadcasts([&](uint64_t, const std::vector<std::string>& keys) { sent.push_back(keys); });
  EXPECT_EQ(sent, (std::vector<std::vector<std::string>>{{"expired", "k"}}));
}

TEST(TrackingTest, ModeSwitchesAndOverlapsAreRefusedAsRedisDoes) {
  FakeDelivery d;
  Tracking t(d);
  TrackingOptions prefix_only;
  prefix_only.prefixes = {"a"};
  EXPECT_EQ(t.Enable(1, prefix_only), "ERR PREFIX option requires BCAST mode to be enabled");
  ASSERT_EQ(t.Enable(1, {}), "");
  TrackingOptions bcast;
  bcast.bcast = true;
  EXPECT_NE(t.Enable(1, bcast).find("switch BCAST"), std::string::npos);
  t.Disable(1);
  bcast.prefixes = {"ab", "a"};
  EXPECT_EQ(t.Enable(1, bcast),
            "ERR Prefix 'ab' overlaps with another provided prefix 'a'. Prefixes for a single client must not overlap.");
  bcast.prefixes = {"a"};
  ASSERT_EQ(t.Enable(1, bcast), "");
  bcast.prefixes = {"abc"};
  EXPECT_EQ(t.Enable(1, bcast),
            "ERR Prefix 'abc' overlaps with an existing prefix 'a'. Prefixes for a single client must not overlap.");
  EXPECT_EQ(t.prefixes(), 1u);
  t.Disable(1);
  EXPECT_EQ(t.prefixes(), 0u);
}

// ---- delivery: the messages, through the fake server ----------------------------

// A GET-like spec: one key at argv[1].
CommandSpec GetSpec() {
  CommandSpec spec{};
  spec.name = "get";
  spec.arity = 2;
  spec.first_key = 1;
  spec.last_key = 1;
  spec.step = 1;
  return spec;
}

TEST(TrackingDeliveryTest, AReaderIsPushedTheKeyAndTheWriterAfterItsReply) {
  FakeDelivery d;
  Tracking t(d);
  Client& reader = d.AddClient(1, 3);
  Client& writer = d.AddClient(2, 3);
  ASSERT_EQ(t.Enable(reader, {}), "");
  ASSERT_EQ(t.Enable(writer, {}), "");
  EXPECT_TRUE(reader.tracking);
  const CommandSpec get = GetSpec();
  const std::vector<std::string_view> argv = {"get", "k"};
  t.TrackRead(reader, get, argv);
  t.TrackRead(writer, get, argv);
  // The writer's own command changes k: the reader is told now, the writer
  // only once its reply is out.
  t.KeyWritten("k", /*current=*/2, /*by_server=*/false);
  EXPECT_EQ(d.Take(1), ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n");
  EXPECT_EQ(d.Take(2), "");
  t.FlushPending(writer);
  EXPECT_EQ(d.Take(2), ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n");
  const int lookups = d.lookups;
  t.FlushPending(writer);  // nothing left: no delivery asked for
  EXPECT_EQ(d.lookups, lookups);
  EXPECT_EQ(d.Take(2), "");
}

TEST(TrackingDeliveryTest, Resp2GetsNothingUnlessRedirectedToASubscriber) {
  FakeDelivery d;
  Tracking t(d);
  Client& plain = d.AddClient(1, 2);
  Client& redirected = d.AddClient(2, 2);
  Client& sub = d.AddClient(3, 2);
  sub.pubsub = true;
  TrackingOptions to_sub;
  to_sub.redirect = 3;
  ASSERT_EQ(t.Enable(plain, {}), "");
  ASSERT_EQ(t.Enable(redirected, to_sub), "");
  const CommandSpec get = GetSpec();
  const std::vector<std::string_view> argv = {"get", "k"};
  t.TrackRead(plain, get, argv);
  t.TrackRead(redirected, get, argv);
  t.KeyWritten("k", 0, true);
  EXPECT_EQ(d.Take(1), "");
  EXPECT_EQ(d.Take(3), "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\nk\r\n");
  // The redirect client is weighed (output limit, maxmemory-clients) for
  // what was written to it; a client's own connection is weighed after its command.
  EXPECT_EQ(d.redirect_pushes[3], 1);
  EXPECT_EQ(d.redirect_pushes.count(1), 0u);
}

// As Redis 7.0: every message that cannot reach the redirect becomes the
// notice, not only the first.
TEST(TrackingDeliveryTest, ABrokenRedirectIsToldOnEachMessageOnResp3) {
  FakeDelivery d;
  Tracking t(d);
  Client& c = d.AddClient(1, 3);
  TrackingOptions gone;
  gone.redirect = 9;  // no such client
  ASSERT_EQ(t.Enable(c, gone), "");
  t.Send(1, nullptr, 0);
  t.Send(1, nullptr, 0);
  EXPECT_EQ(d.Take(1),
            ">2\r\n$21\r\ntracking-redir-broken\r\n:9\r\n"
            ">2\r\n$21\r\ntracking-redir-broken\r\n:9\r\n");
  EXPECT_TRUE(t.Find(1)->broken_redirect);
}

// A key read while tracking stays in the table when the reader turns
// tracking off; the next write forgets it even though nobody tracks, so the
// reader, tracking again, is not told of the write after that (Redis).
TEST(TrackingDeliveryTest, AWriteWhileTheReaderIsNotTrackingForgetsTheKey) {
  FakeDelivery d;
  Tracking t(d);
  Client& a = d.AddClient(1, 3);
  ASSERT_EQ(t.Enable(a, {}), "");
  t.TrackRead(a, GetSpec(), std::vector<std::string_view>{"get", "k"});
  t.Disable(a);
  EXPECT_EQ(t.clients(), 0u);
  EXPECT_FALSE(t.idle());  // the server still calls KeyWritten
  t.KeyWritten("k", /*current=*/2, /*by_server=*/false);
  EXPECT_TRUE(t.idle());
  ASSERT_EQ(t.Enable(a, {}), "");
  t.KeyWritten("k", /*current=*/2, /*by_server=*/false);
  EXPECT_EQ(d.Take(1), "");
}

// A command (EXEC) that invalidated its own keys or flushed, then turned
// tracking off: the pending messages still go to the redirect it had.
TEST(TrackingDeliveryTest, PendingMessagesFollowTheRedirectAfterTrackingOff) {
  FakeDelivery d;
  Tracking t(d);
  Client& a = d.AddClient(1, 2);
  d.AddClient(2, 3);
  TrackingOptions redirect;
  redirect.redirect = 2;
  ASSERT_EQ(t.Enable(a, redirect), "");
  t.TrackRead(a, GetSpec(), std::vector<std::string_view>{"get", "q"});
  t.KeyWritten("q", /*current=*/1, /*by_server=*/false);
  t.Flushed(/*current=*/1);
  t.Disable(a);
  Client& other = d.AddClient(3, 3);  // another tracking client closed meanwhile
  ASSERT_EQ(t.Enable(other, {}), "");
  t.Disable(other);
  t.FlushPending(a);
  EXPECT_EQ(d.Take(1), "");
  EXPECT_EQ(d.Take(2),
            ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nq\r\n"
            ">2\r\n$10\r\ninvalidate\r\n$-1\r\n");  // the null in a's protocol
  // Nothing of it is left for a later command.
  t.Flushed(/*current=*/1);
  t.FlushPending(a);
  EXPECT_EQ(d.Take(2), "");
}

TEST(TrackingDeliveryTest, FlushTellsEveryoneEverythingTheRunningClientLast) {
  FakeDelivery d;
  Tracking t(d);
  Client& a = d.AddClient(1, 3);
  Client& b = d.AddClient(2, 3);
  ASSERT_EQ(t.Enable(a, {}), "");
  ASSERT_EQ(t.Enable(b, {}), "");
  t.TrackRead(a, GetSpec(), std::vector<std::string_view>{"get", "k"});
  t.Flushed(/*current=*/2);
  EXPECT_EQ(t.keys(), 0u);  // a flush (FLUSHDB too, as in Redis) forgets the table
  EXPECT_EQ(d.Take(1), ">2\r\n$10\r\ninvalidate\r\n_\r\n");
  EXPECT_EQ(d.Take(2), "");
  t.FlushPending(b);
  EXPECT_EQ(d.Take(2), ">2\r\n$10\r\ninvalidate\r\n_\r\n");
}

// The running client's own messages go after its reply in the order they
// happened, one per flush, and to it alone -- even when it turned tracking
// off since (inside EXEC), as Redis sends them.
TEST(TrackingDeliveryTest, TheRunningClientsMessagesKeepTheirOrderAndOwner) {
  FakeDelivery d;
  Tracking t(d);
  Client& a = d.AddClient(1, 3);
  Client& b = d.AddClient(2, 3);
  ASSERT_EQ(t.Enable(a, {}), "");
  t.TrackRead(a, GetSpec(), std::vector<std::string_view>{"get", "k"});
  t.Flushed(/*current=*/1);
  t.TrackRead(a, GetSpec(), std::vector<std::string_view>{"get", "k"});
  t.KeyWritten("k", /*current=*/1, /*by_server=*/false);
  t.Flushed(/*current=*/1);
  t.FlushPending(a);
  EXPECT_EQ(d.Take(1),
            ">2\r\n$10\r\ninvalidate\r\n_\r\n"
            ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"
            ">2\r\n$10\r\ninvalidate\r\n_\r\n");

  t.Flushed(/*current=*/1);
  t.Disable(a);
  t.FlushPending(a);
  EXPECT_EQ(d.Take(1), ">2\r\n$10\r\ninvalidate\r\n_\r\n");
  ASSERT_EQ(t.Enable(b, {}), "");
  t.FlushPending(b);
  EXPECT_EQ(d.Take(2), "");  // nothing of a's left for b
}

TEST(TrackingDeliveryTest, TheTableLimitEvictsKeysTellingTheirReaders) {
  FakeDelivery d;
  Tracking t(d);
  Config config;
  t.BindConfig(config);
  std::string error;
  ASSERT_TRUE(config.SetFromCommand({{"tracking-table-max-keys", "1"}}, &error)) << error;
  Client& a = d.AddClient(1, 3);
  ASSERT_EQ(t.Enable(a, {}), "");
  const CommandSpec get = GetSpec();
  t.TrackRead(a, get, std::vector<std::string_view>{"get", "x"});
  t.TrackRead(a, get, std::vector<std::string_view>{"get", "y"});
  EXPECT_EQ(t.keys(), 2u);
  t.LimitTable();
  EXPECT_EQ(t.keys(), 1u);
  EXPECT_NE(d.Take(1).find("invalidate"), std::string::npos);
}

TEST(TrackingDeliveryTest, BroadcastsGoOutAtTheEndOfTheTurnAndClosingClientsAreSkipped) {
  FakeDelivery d;
  Tracking t(d);
  Client& a = d.AddClient(1, 3);
  Client& b = d.AddClient(2, 3);
  TrackingOptions bcast;
  bcast.bcast = true;
  bcast.prefixes = {"user:"};
  ASSERT_EQ(t.Enable(a, bcast), "");
  ASSERT_EQ(t.Enable(b, bcast), "");
  b.closing = true;
  t.KeyWritten("user:1", 0, false);
  t.KeyWritten("other", 0, false);
  EXPECT_EQ(d.Take(1), "");  // queued until the end of the turn
  ASSERT_TRUE(t.has_broadcasts());
  t.Broadcast();
  EXPECT_EQ(d.Take(1), ">2\r\n$10\r\ninvalidate\r\n*1\r\n$6\r\nuser:1\r\n");
  EXPECT_EQ(d.Take(2), "");
  t.Disable(a);
  EXPECT_FALSE(a.tracking);
  EXPECT_EQ(t.clients(), 1u);
}

}  // namespace
}  // namespace ringkv::server

// PubSub (server/pubsub/pubsub.h) driven through a fake server: a message
// reaches channel subscribers then pattern subscribers, encoded as RESP2
// arrays or RESP3 pushes; closing clients get nothing; a client whose
// replies wait for an fsync gets it on its held path; a subscriber past
// client-output-buffer-limit pubsub is closed through the hook once the
// delivery ends; SPUBLISH and a slot leaving the shard; keyspace
// notifications. No socket: the clients' connections belong to an I/O
// thread that does not run (thread 1), so what the main thread writes for
// them stays in their main-thread buffers, read back here.
#include "server/pubsub/pubsub.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/key_slot.h"
#include "server/keyspace_events.h"
#include "tests/server/fake_server_parts.h"

namespace ringkv::server::pubsub_test {
namespace {

using Kind = PubSub::Kind;

class FakeServer final : public PubSub::Hooks, public test_fakes::NoPersistenceHooks, public core::KeyspaceObserver {
 public:
  // ---- PubSub::Hooks ----
  void CloseSlowSubscriber(Client& c, int64_t) override {
    c.closing = true;
    log.push_back("close " + std::to_string(c.id()));
  }
  void WeighSubscriber(Client& c, int64_t) override { weighed.push_back(c.id()); }

  // ---- core::KeyspaceObserver (not called here) ----
  void OnKeyExpired(int, std::string_view) override {}
  void OnKeyEvicted(int, std::string_view) override {}

  std::vector<std::string> log;
  std::vector<uint64_t> weighed;  // subscribers weighed for maxmemory-clients
};

using test_fakes::Set;

class PubSubTest : public ::testing::Test {
 protected:
  // A client of I/O thread 1 speaking `resp`.
  Client& AddClient(uint64_t id, int resp = 2) {
    auto conn = std::make_unique<io::Connection>();
    conn->id = id;
    conn->thread = 1;
    conn->mutable_extras();
    auto c = std::make_unique<Client>();
    c->conn = conn.get();
    c->resp = static_cast<uint8_t>(resp);
    Client& ref = *c;
    conns_.push_back(std::move(conn));
    clients_.Add(std::move(c));
    return ref;
  }
  void Subscribe(Client& c, Kind kind, std::string_view name) {
    if (pubsub_.Subscribe(c.id(), kind, name)) c.pubsub = true;
  }
  // What was written for `c` since the last call.
  static std::string Sent(Client& c) {
    io::OutBuffer& out = c.conn->mutable_extras().main_out;
    std::string s = out.ToString();
    out.Clear();
    return s;
  }

  std::vector<std::unique_ptr<io::Connection>> conns_;  // outlive the clients
  io::IoSystem io_{nullptr};
  FakeServer server_;
  Config config_;
  core::Keyspace keyspace_{16};
  uint64_t dirty_ = 0;
  LatencyMonitor latency_;
  Persistence persistence_{server_, config_, keyspace_, dirty_, latency_};
  OutputLimits limits_{config_};
  ClientRegistry clients_;
  HeldPushes held_;
  PubSub pubsub_{server_, config_, server_, clients_, persistence_, io_, limits_, held_};
};

TEST_F(PubSubTest, ChannelSubscribersThenPatternsInEachProtocol) {
  Client& a = AddClient(1);
  Client& b = AddClient(2, 3);
  Client& p = AddClient(3);
  Subscribe(a, Kind::kChannel, "news");
  Subscribe(b, Kind::kChannel, "news");
  Subscribe(p, Kind::kPattern, "n*");
  Subscribe(b, Kind::kPattern, "*s");
  EXPECT_EQ(pubsub_.Publish(Kind::kChannel, "news", "hi"), 4u);
  EXPECT_EQ(Sent(a), "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n");
  EXPECT_EQ(Sent(b),
            ">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n"
            ">4\r\n$8\r\npmessage\r\n$2\r\n*s\r\n$4\r\nnews\r\n$2\r\nhi\r\n");
  EXPECT_EQ(Sent(p), "*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$2\r\nhi\r\n");
  EXPECT_EQ(pubsub_.Publish(Kind::kChannel, "other", "x"), 0u);
  EXPECT_TRUE(server_.log.empty());
}

TEST_F(PubSubTest, ClosingAndUnknownClientsGetNothingButAreCounted) {
  Client& a = AddClient(1);
  Client& b = AddClient(2);
  Subscribe(a, Kind::kChannel, "c");
  Subscribe(b, Kind::kChannel, "c");
  pubsub_.Subscribe(99, Kind::kChannel, "c");  // not (or no longer) a client
  b.closing = true;
  EXPECT_EQ(pubsub_.Publish(Kind::kChannel, "c", "m"), 3u);
  EXPECT_EQ(Sent(a), "*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n");
  EXPECT_EQ(Sent(b), "");
}

TEST_F(PubSubTest, HeldRepliesKeepMessagesBehindThem) {
  Client& a = AddClient(1);
  Subscribe(a, Kind::kChannel, "c");
  a.held_replies = true;  // an earlier reply waits for an fsync
  EXPECT_EQ(pubsub_.Publish(Kind::kChannel, "c", "m"), 1u);
  EXPECT_EQ(Sent(a), "");
  EXPECT_EQ(persistence_.held_bytes(1), std::string_view("*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n").size());
}

// The running command's own client, after the point where Redis writes its
// reply (HeldPushes): its messages wait in the open segment, in order, and
// go out when released; others get theirs at once. Once every segment is
// released, a message goes out as usual again.
TEST_F(PubSubTest, TheRunningClientsMessagesWaitInItsHeldSegments) {
  Client& a = AddClient(1, 3);
  Client& b = AddClient(2, 3);
  Subscribe(a, Kind::kChannel, "c");
  Subscribe(b, Kind::kChannel, "c");
  held_.Hold(a);
  EXPECT_EQ(pubsub_.Publish(Kind::kChannel, "c", "1"), 2u);
  held_.Hold(a);  // a second reply point: a second segment
  EXPECT_EQ(pubsub_.Publish(Kind::kChannel, "c", "2"), 2u);
  const std::string one = ">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\n1\r\n";
  const std::string two = ">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\n2\r\n";
  EXPECT_EQ(Sent(a), "");
  EXPECT_EQ(Sent(b), one + two);
  io::OutBuffer out;
  out.Append("reply-part;");
  EXPECT_TRUE(held_.ReleaseNext(&out));
  out.Append("reply-rest;");
  held_.ReleaseAll(&out);
  EXPECT_EQ(out.ToString(), "reply-part;" + one + "reply-rest;" + two);
  EXPECT_EQ(held_.holder(), nullptr);
  held_.Hold(a);
  EXPECT_TRUE(held_.ReleaseNext(&out));
  EXPECT_FALSE(held_.ReleaseNext(&out));
  EXPECT_EQ(pubsub_.Publish(Kind::kChannel, "c", "1"), 2u);  // all released: sent at once
  EXPECT_EQ(Sent(a), one);
  held_.ReleaseAll(nullptr);
}

TEST_F(PubSubTest, SlowSubscribersAreClosedAfterTheDelivery) {
  Set(config_, "client-output-buffer-limit", "pubsub 100 0 0");
  Client& a = AddClient(1);
  Client& b = AddClient(2);
  Subscribe(a, Kind::kChannel, "c");
  Subscribe(a, Kind::kPattern, "*");  // listed twice: closed once
  Subscribe(b, Kind::kChannel, "c");
  EXPECT_EQ(pubsub_.Publish(Kind::kChannel, "c", "m"), 3u);  // a: 31 + 39 bytes, under 100
  EXPECT_TRUE(server_.log.empty());
  Sent(b);  // b reads what it got; a does not
  EXPECT_EQ(pubsub_.Publish(Kind::kChannel, "c", "m"), 3u);
  // a is past it twice in this delivery and closed once, looked up by id
  // after the delivery (a close may free the client at once).
  EXPECT_EQ(server_.log, (std::vector<std::string>{"close 1"}));
  EXPECT_TRUE(a.closing);
  EXPECT_FALSE(b.closing);
  // A limit of 0 is none.
  Set(config_, "client-output-buffer-limit", "pubsub 0 0 0");
  server_.log.clear();
  b.closing = false;
  for (int i = 0; i < 10; ++i) pubsub_.Publish(Kind::kChannel, "c", "m");
  EXPECT_TRUE(server_.log.empty());
}

// maxmemory-clients: every receiver of a delivery is weighed after it, so
// that subscribers that do not read are evicted as their output grows.
TEST_F(PubSubTest, ReceiversAreWeighedOnlyWhileClientEvictionIsOn) {
  Client& a = AddClient(1);
  Client& b = AddClient(2);
  Subscribe(a, Kind::kChannel, "c");
  Subscribe(b, Kind::kPattern, "*");
  pubsub_.Publish(Kind::kChannel, "c", "m");
  EXPECT_TRUE(server_.weighed.empty());  // no limit set: nothing to weigh
  Set(config_, "maxmemory-clients", "1mb");
  pubsub_.Publish(Kind::kChannel, "c", "m");
  EXPECT_EQ(server_.weighed, (std::vector<uint64_t>{1, 2}));
}

TEST_F(PubSubTest, ShardChannelsAndASlotLeavingTheShard) {
  Client& a = AddClient(1, 3);
  Client& p = AddClient(2);
  Subscribe(a, Kind::kShard, "s1");
  Subscribe(a, Kind::kShard, "{s1}x");
  Subscribe(a, Kind::kChannel, "s1");
  Subscribe(p, Kind::kPattern, "*");
  EXPECT_EQ(pubsub_.Publish(Kind::kShard, "s1", "m"), 1u);  // no patterns, no plain channel
  EXPECT_EQ(Sent(a), ">3\r\n$8\r\nsmessage\r\n$2\r\ns1\r\n$1\r\nm\r\n");
  EXPECT_EQ(Sent(p), "");

  pubsub_.UnsubscribeShardChannelsInSlot(core::KeyHashSlot("s1"));
  const std::string sent = Sent(a);
  EXPECT_NE(sent.find(">3\r\n$12\r\nsunsubscribe\r\n$2\r\ns1\r\n:"), std::string::npos) << sent;
  EXPECT_NE(sent.find(">3\r\n$12\r\nsunsubscribe\r\n$5\r\n{s1}x\r\n:"), std::string::npos) << sent;
  EXPECT_NE(sent.find(":0\r\n"), std::string::npos) << sent;  // the last one leaves none
  EXPECT_EQ(pubsub_.NumChannels(Kind::kShard), 0u);
  EXPECT_TRUE(a.pubsub);  // still on channel s1
  pubsub_.Unsubscribe(a.id(), Kind::kChannel, "s1");
  EXPECT_FALSE(pubsub_.Subscribed(a.id()));
}

TEST_F(PubSubTest, KeyspaceNotificationsFollowTheConfig) {
  Client& a = AddClient(1);
  Subscribe(a, Kind::kPattern, "__key*__:*");
  pubsub_.NotifyKeyspaceEvent(notify::kGeneric, "del", 0, "k");
  EXPECT_EQ(Sent(a), "");  // off by default
  EXPECT_EQ(server_.created_key_watchers, 0);

  Set(config_, "notify-keyspace-events", "KEgn");
  EXPECT_NE(server_.created_key_watchers, 0);
  EXPECT_FALSE(server_.wants_key_misses);
  pubsub_.NotifyKeyspaceEvent(notify::kGeneric, "del", 3, "k");
  EXPECT_EQ(Sent(a),
            "*4\r\n$8\r\npmessage\r\n$10\r\n__key*__:*\r\n$16\r\n__keyspace@3__:k\r\n$3\r\ndel\r\n"
            "*4\r\n$8\r\npmessage\r\n$10\r\n__key*__:*\r\n$18\r\n__keyevent@3__:del\r\n$1\r\nk\r\n");
  pubsub_.NotifyKeyspaceEvent(notify::kString, "set", 3, "k");  // class $ not enabled
  EXPECT_EQ(Sent(a), "");

  Set(config_, "notify-keyspace-events", "E$");
  pubsub_.NotifyKeyspaceEvent(notify::kString, "set", 0, "k");
  EXPECT_EQ(Sent(a), "*4\r\n$8\r\npmessage\r\n$10\r\n__key*__:*\r\n$18\r\n__keyevent@0__:set\r\n$1\r\nk\r\n");
  EXPECT_EQ(server_.created_key_watchers, 0);

  // With A, CONFIG GET shows no n (as Redis prints it), yet new keys are announced.
  Set(config_, "notify-keyspace-events", "KEAn");
  EXPECT_NE(server_.created_key_watchers, 0);
}

}  // namespace
}  // namespace ringkv::server::pubsub_test

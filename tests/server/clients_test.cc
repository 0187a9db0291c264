// Clients: CLIENT PAUSE's holds and their replay in order, the pause's end
// from the cron, the idle timeout, maxmemory-clients (biggest first, NO-EVICT
// spared) and client-output-buffer-limit -- driven through a fake server that
// records what the component asked of it.
#include "server/clients.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/connection.h"
#include "tests/server/fake_server_parts.h"

namespace ringkv::server {
namespace {

class ClientsTest : public ::testing::Test, public Clients::Hooks {
 protected:
  Client& Add(uint64_t id) { return test_fakes::AddFakeClient(id, conns_, clients_.registry()); }
  void Defer(Client& c, std::vector<std::string_view> argv) { clients_.Defer(c, argv); }

  // ---- Clients::Hooks ----
  std::string DescribeClient(const Client& c, int64_t) override { return "id=" + std::to_string(c.id()); }
  uint64_t ClientMemory(const Client& c) override { return memory_[c.id()]; }
  uint64_t UnsentOutput(const Client& c) override { return unsent_[c.id()]; }
  void CloseNow(Client& c) override {
    c.closing = true;
    closed_.push_back(c.id());
  }
  void ResumeClient(Client& c) override {
    resumed_.push_back(c.id());
    c.deferred.reset();
  }
  void PauseStarted() override { ++pauses_started_; }
  void PauseEnded() override { ++pauses_ended_; }

  std::vector<std::unique_ptr<io::Connection>> conns_;  // outlive the clients
  Config config_;
  OutputLimits limits_{config_};
  uint64_t evicted_ = 0;
  Clients clients_{*this, config_, limits_, evicted_};
  std::map<uint64_t, uint64_t> memory_, unsent_;
  std::vector<uint64_t> closed_, resumed_;
  int pauses_started_ = 0, pauses_ended_ = 0;
};

TEST_F(ClientsTest, APauseHoldsClientsAndItsEndResumesThemInOrder) {
  Client& a = Add(1);
  Client& b = Add(2);
  Client& blocked = Add(3);
  blocked.blocked = true;
  clients_.Pause(5000, /*all=*/false);
  EXPECT_EQ(pauses_started_, 1);
  EXPECT_TRUE(clients_.pause().Holds(cmd::kWrite));
  EXPECT_FALSE(clients_.pause().Holds(cmd::kReadonly));
  Defer(b, {"SET", "k", "1"});
  Defer(a, {"SET", "k", "2"});
  Defer(b, {"INCR", "k"});  // listed once
  Defer(blocked, {"SET", "k", "3"});  // waits behind its blocked command, not the pause
  EXPECT_EQ(clients_.held_waiting(), 2u);
  ASSERT_TRUE(b.deferred);
  EXPECT_EQ(b.deferred->commands.size(), 2u);
  clients_.Unpause();
  EXPECT_EQ(pauses_ended_, 1);
  EXPECT_EQ(resumed_, (std::vector<uint64_t>{2, 1}));  // the order they were held in
  EXPECT_FALSE(a.paused_wait);
  EXPECT_EQ(clients_.held_waiting(), 0u);
  EXPECT_TRUE(blocked.deferred);  // still behind its blocked command
}

TEST_F(ClientsTest, TheCronEndsAPauseThatRanOut) {
  Client& a = Add(1);
  clients_.Pause(1000, /*all=*/true);
  EXPECT_EQ(clients_.NextWakeMs(5000), 1000);
  EXPECT_EQ(clients_.NextWakeMs(500), 500);
  Defer(a, {"GET", "k"});
  clients_.Cron(999);
  EXPECT_TRUE(clients_.pause().active());
  EXPECT_TRUE(resumed_.empty());
  clients_.Cron(1000);
  EXPECT_FALSE(clients_.pause().active());
  EXPECT_EQ(resumed_, (std::vector<uint64_t>{1}));
  EXPECT_EQ(clients_.NextWakeMs(5000), 5000);
}

TEST_F(ClientsTest, IdleClientsAreClosedAfterTimeout) {
  test_fakes::Set(config_, "timeout", "10");
  Add(1).last_interaction_s = 0;
  Add(2).last_interaction_s = 100;
  clients_.Cron(105'000);
  EXPECT_EQ(closed_, (std::vector<uint64_t>{1}));
  test_fakes::Set(config_, "timeout", "0");  // off: nobody is idle
  clients_.Cron(1'000'000);
  EXPECT_EQ(closed_.size(), 1u);
}

TEST_F(ClientsTest, MaxclientsRefusesTheNextConnection) {
  test_fakes::Set(config_, "maxclients", "2");
  Add(1);
  EXPECT_FALSE(clients_.Full());
  Add(2);
  EXPECT_TRUE(clients_.Full());
}

TEST_F(ClientsTest, ClientEvictionClosesTheBiggestUntilUnderTheLimit) {
  test_fakes::Set(config_, "maxmemory-clients", "200000");
  Add(1);
  Add(2);
  Client& small = Add(3);
  Add(4).no_evict = true;
  memory_ = {{1, 100'000}, {2, 150'000}, {3, 10'000}, {4, 90'000}};
  // A client under the limit alone triggers no pass.
  clients_.LimitOutput(small, 0);
  EXPECT_TRUE(closed_.empty());
  clients_.Cron(0);
  // 350,000 held: the NO-EVICT one is counted but spared; 2 (200,000 left:
  // not under), then 1; 3 stays.
  EXPECT_EQ(closed_, (std::vector<uint64_t>{2, 1}));
  EXPECT_EQ(evicted_, 2u);
}

TEST_F(ClientsTest, OutputLimitClosesAClientOnce) {
  test_fakes::Set(config_, "client-output-buffer-limit", "normal 100 0 0");
  Client& c = Add(1);
  unsent_[1] = 50;
  clients_.LimitOutput(c, 0);
  EXPECT_TRUE(closed_.empty());
  unsent_[1] = 200;
  clients_.LimitOutput(c, 0);
  EXPECT_EQ(closed_, (std::vector<uint64_t>{1}));
  clients_.CloseForOutputLimit(c, 0);  // already closing: not again
  EXPECT_EQ(closed_.size(), 1u);
}

TEST_F(ClientsTest, TheCronClosesAClientStillOverItsSoftLimitWithoutNewOutput) {
  test_fakes::Set(config_, "client-output-buffer-limit", "normal 0 100 2");
  Client& quiet = Add(1);
  Client& drained = Add(2);
  unsent_ = {{1, 500}, {2, 500}};
  clients_.LimitOutput(quiet, 1'000);  // over the soft limit: its clock starts
  clients_.LimitOutput(drained, 1'000);
  EXPECT_TRUE(closed_.empty());
  unsent_[2] = 0;  // sent meanwhile: its clock stops
  clients_.Cron(2'500);  // 1.5 s: not yet
  EXPECT_TRUE(closed_.empty());
  // No command ran since: the cron alone judges the soft limit's seconds.
  clients_.Cron(3'100);
  EXPECT_EQ(closed_, (std::vector<uint64_t>{1}));
  EXPECT_FALSE(drained.over_soft_limit);
}

}  // namespace
}  // namespace ringkv::server

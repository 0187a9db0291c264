// Primary::Cron against a fake host: the backlog's time to live without
// replicas, keep-alive newlines, PINGs on the period, replicas dropped for
// a timeout; and the "good replicas" count of min-replicas-to-write.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/connection.h"
#include "replication/primary.h"
#include "replication/primary_host.h"
#include "tests/replication/fake_primary_host.h"

namespace ringkv::repl::primary_cron_test {
namespace {

constexpr uint64_t kPingBytes = 14;  // "*1\r\n$4\r\nPING\r\n"

using FakeHost = FakePrimaryHost;

class PrimaryCronTest : public ::testing::Test {
 protected:
  ReplicaLink& AddReplica(uint64_t id, ReplicaState state, int64_t last_ack_ms = 0) {
    conns_.push_back(std::make_unique<io::Connection>());
    ReplicaLink& r = primary_->Attach(id, conns_.back().get());
    r.state = state;
    r.last_ack_ms = last_ack_ms;
    r.announced_ip = "10.0.0." + std::to_string(id);
    r.listening_port = 6379;
    return r;
  }

  std::vector<std::unique_ptr<io::Connection>> conns_;  // outlive primary_ (declared first)
  std::unique_ptr<Primary> primary_ = std::make_unique<Primary>(1 << 16, 1000);
  FakeHost host_{primary_};
  PrimaryCronSettings settings_;
};

TEST_F(PrimaryCronTest, BacklogFreedAfterTtlWithoutReplicas) {
  settings_.backlog_ttl_s = 2;
  EXPECT_TRUE(primary_->Cron(host_, settings_, 10'000));  // counting from here
  EXPECT_TRUE(primary_->Cron(host_, settings_, 12'000));  // not past the ttl yet
  EXPECT_FALSE(primary_->Cron(host_, settings_, 12'001));
  EXPECT_EQ(primary_, nullptr);
  EXPECT_EQ(host_.freed_at, 1000);
}

TEST_F(PrimaryCronTest, BacklogKeptWhileReplicasOrAsReplica) {
  settings_.backlog_ttl_s = 1;
  settings_.is_replica = true;
  EXPECT_TRUE(primary_->Cron(host_, settings_, 10'000));
  EXPECT_TRUE(primary_->Cron(host_, settings_, 20'000));
  settings_.is_replica = false;
  AddReplica(1, ReplicaState::kHandshake);
  EXPECT_TRUE(primary_->Cron(host_, settings_, 30'000));
  primary_->Detach(1);
  EXPECT_TRUE(primary_->Cron(host_, settings_, 40'000));  // the count restarts
  EXPECT_TRUE(primary_->Cron(host_, settings_, 41'000));
  EXPECT_FALSE(primary_->Cron(host_, settings_, 41'001));
}

TEST_F(PrimaryCronTest, PingOncePerPeriodSecond) {
  settings_.ping_period_s = 10;
  AddReplica(1, ReplicaState::kOnline, 10'000);
  const uint64_t start = primary_->offset();
  EXPECT_TRUE(primary_->Cron(host_, settings_, 9'950));  // second 9
  EXPECT_EQ(primary_->offset(), start);
  EXPECT_TRUE(primary_->Cron(host_, settings_, 10'050));  // second 10
  EXPECT_EQ(primary_->offset(), start + kPingBytes);
  EXPECT_TRUE(primary_->Cron(host_, settings_, 10'150));  // still second 10: once
  EXPECT_EQ(primary_->offset(), start + kPingBytes);
  settings_.stream_frozen = true;  // a failover's pause
  EXPECT_TRUE(primary_->Cron(host_, settings_, 20'050));
  EXPECT_EQ(primary_->offset(), start + kPingBytes);
  settings_.stream_frozen = false;
  settings_.is_replica = true;  // a replica relays its primary's stream only
  EXPECT_TRUE(primary_->Cron(host_, settings_, 30'050));
  EXPECT_EQ(primary_->offset(), start + kPingBytes);
  EXPECT_TRUE(host_.dropped.empty());
}

TEST_F(PrimaryCronTest, KeepAliveOnceASecondToReplicasWaitingForASnapshot) {
  AddReplica(1, ReplicaState::kWaitBgsaveStart);
  AddReplica(2, ReplicaState::kWaitBgsaveEnd);
  AddReplica(3, ReplicaState::kHandshake);
  EXPECT_TRUE(primary_->Cron(host_, settings_, 5'050));  // first tick of second 5 (hz 10)
  EXPECT_EQ(host_.keep_alive, (std::vector<uint64_t>{1, 2}));
  host_.keep_alive.clear();
  EXPECT_TRUE(primary_->Cron(host_, settings_, 5'150));
  EXPECT_TRUE(host_.keep_alive.empty());
  settings_.diskless_transfer = true;  // the newline would land inside the payload
  EXPECT_TRUE(primary_->Cron(host_, settings_, 6'050));
  EXPECT_EQ(host_.keep_alive, (std::vector<uint64_t>{1}));
}

TEST_F(PrimaryCronTest, TimedOutOnlineReplicasDropped) {
  settings_.timeout_ms = 60'000;
  AddReplica(1, ReplicaState::kOnline, 1'000);
  AddReplica(2, ReplicaState::kOnline, 1'000).old_sync = true;  // SYNC: never ACKs
  AddReplica(3, ReplicaState::kOnline, 30'000);
  EXPECT_EQ(primary_->ReplicaName(1), "10.0.0.1:6379");
  EXPECT_TRUE(primary_->Cron(host_, settings_, 61'000));
  EXPECT_TRUE(host_.dropped.empty());
  EXPECT_TRUE(primary_->Cron(host_, settings_, 61'001));
  EXPECT_EQ(host_.dropped, (std::vector<uint64_t>{1}));
  EXPECT_EQ(primary_->ReplicaName(1), "?");
}

TEST(PrimaryGoodReplicasTest, OnlineAndAckedWithinTheLag) {
  std::vector<std::unique_ptr<io::Connection>> conns;
  Primary primary(1 << 16, 0);
  auto add = [&](uint64_t id, ReplicaState state, int64_t last_ack_ms) {
    conns.push_back(std::make_unique<io::Connection>());
    ReplicaLink& r = primary.Attach(id, conns.back().get());
    r.state = state;
    r.last_ack_ms = last_ack_ms;
  };
  add(1, ReplicaState::kOnline, 95'000);
  add(2, ReplicaState::kOnline, 80'000);
  add(3, ReplicaState::kSendBulk, 99'000);
  EXPECT_EQ(primary.GoodReplicas(100'000, 10), 1);
  EXPECT_EQ(primary.GoodReplicas(100'000, 20), 2);
}

}  // namespace
}  // namespace ringkv::repl::primary_cron_test

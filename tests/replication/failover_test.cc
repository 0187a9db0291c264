// Failover's decisions without a server: who may start one, which replica
// it picks, when it hands over and when it gives up.
#include "replication/failover.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "io/connection.h"

namespace ringkv::repl {
namespace {

class FailoverTest : public ::testing::Test {
 protected:
  // A replica announced as `ip`:`port`, online, that acknowledged `acked`.
  ReplicaLink& AddReplica(uint64_t id, const std::string& ip, int port, uint64_t acked,
                          ReplicaState state = ReplicaState::kOnline) {
    conns_.push_back(std::make_unique<io::Connection>());
    ReplicaLink& r = primary_.Attach(id, conns_.back().get());
    r.announced_ip = ip;
    r.listening_port = port;
    r.ack_offset = acked;
    r.state = state;
    return r;
  }

  std::vector<std::unique_ptr<io::Connection>> conns_;  // outlive primary_ (declared first)
  Primary primary_{1 << 16, 1000};
};

TEST_F(FailoverTest, RefusalsAreRedisErrors) {
  EXPECT_EQ(Failover::Refusal(true, false, nullptr, "", 0), "ERR FAILOVER is not valid when server is a replica.");
  EXPECT_EQ(Failover::Refusal(false, true, nullptr, "", 0), "ERR FAILOVER already in progress.");
  EXPECT_EQ(Failover::Refusal(false, false, nullptr, "", 0), "ERR FAILOVER requires connected replicas.");
  AddReplica(1, "10.0.0.2", 6380, 0, ReplicaState::kWaitBgsaveEnd);
  EXPECT_EQ(Failover::Refusal(false, false, &primary_, "", 0), "ERR FAILOVER requires connected replicas.");
  AddReplica(2, "10.0.0.3", 6381, 0);
  EXPECT_EQ(Failover::Refusal(false, false, &primary_, "", 0), "");
  EXPECT_EQ(Failover::Refusal(false, false, &primary_, "10.0.0.3", 6381), "");
  // Only an online replica can be the target.
  EXPECT_EQ(Failover::Refusal(false, false, &primary_, "10.0.0.2", 6380),
            "ERR FAILOVER target HOST and PORT is not a replica.");
}

TEST_F(FailoverTest, AnyReplicaMeansTheFirstInSync) {
  AddReplica(1, "10.0.0.2", 6380, 900);
  AddReplica(2, "10.0.0.3", 6381, 1000);
  Failover f("", 0, false, 0);
  EXPECT_STREQ(f.StateName(), "waiting-for-sync");
  const Failover::Step step = f.Cron(&primary_, 1000, 5000);
  EXPECT_EQ(step.kind, Failover::Step::Kind::kHandOver);
  EXPECT_EQ(f.host(), "10.0.0.3");
  EXPECT_EQ(f.port(), 6381);
  EXPECT_TRUE(f.in_progress());
  EXPECT_STREQ(f.StateName(), "failover-in-progress");
  // In progress, the sync decides: the cron waits.
  EXPECT_EQ(f.Cron(&primary_, 1000, 6000).kind, Failover::Step::Kind::kWait);
}

TEST_F(FailoverTest, ANamedTargetIsWaitedForUntilTheDeadline) {
  AddReplica(1, "10.0.0.2", 6380, 900);
  Failover f("10.0.0.2", 6380, false, 2000);
  EXPECT_EQ(f.Cron(&primary_, 1000, 1999).kind, Failover::Step::Kind::kWait);
  const Failover::Step step = f.Cron(&primary_, 1000, 2000);
  EXPECT_EQ(step.kind, Failover::Step::Kind::kAbort);
  EXPECT_EQ(step.why, "timeout waiting for the target to catch up");
  EXPECT_FALSE(f.in_progress());
}

TEST_F(FailoverTest, ForceHandsOverToABehindTargetAtTheDeadline) {
  AddReplica(1, "10.0.0.2", 6380, 900);
  Failover f("10.0.0.2", 6380, true, 2000);
  EXPECT_EQ(f.Cron(&primary_, 1000, 1500).kind, Failover::Step::Kind::kWait);
  EXPECT_EQ(f.Cron(&primary_, 1000, 2000).kind, Failover::Step::Kind::kHandOver);
  EXPECT_TRUE(f.in_progress());
}

TEST_F(FailoverTest, NoReplicasEndsIt) {
  Failover f("", 0, false, 0);
  const Failover::Step step = f.Cron(nullptr, 0, 0);
  EXPECT_EQ(step.kind, Failover::Step::Kind::kAbort);
  EXPECT_EQ(step.why, "no replicas");
}

TEST_F(FailoverTest, TheGetackIsAskedOnce) {
  Failover f("", 0, false, 0);
  EXPECT_FALSE(f.ack_requested());
  f.set_ack_requested();
  EXPECT_TRUE(f.ack_requested());
}

}  // namespace
}  // namespace ringkv::repl

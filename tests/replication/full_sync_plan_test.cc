// PlanFullSync: which waiting replicas one snapshot serves, disk or
// diskless, the repl-diskless-sync-delay wait and its max-replicas cut,
// and filtered snapshots (streamed always, refused without EOF).
#include "replication/full_sync_plan.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "io/connection.h"

namespace ringkv::repl {
namespace {

using Kind = FullSyncPlan::Kind;

class FullSyncPlanTest : public ::testing::Test {
 protected:
  ReplicaLink& AddWaiting(uint64_t id, bool capa_eof, int64_t requested_ms = 1'000) {
    conns_.push_back(std::make_unique<io::Connection>());
    ReplicaLink& r = primary_.Attach(id, conns_.back().get());
    r.state = ReplicaState::kWaitBgsaveStart;
    r.capa_eof = capa_eof;
    r.sync_requested_ms = requested_ms;
    return r;
  }
  static std::vector<uint64_t> Ids(const std::vector<ReplicaLink*>& links) {
    std::vector<uint64_t> ids;
    for (const ReplicaLink* r : links) ids.push_back(r->client_id);
    return ids;
  }

  std::vector<std::unique_ptr<io::Connection>> conns_;  // outlive primary_ (declared first)
  Primary primary_{1 << 16, 0};
  FullSyncSettings settings_;
};

TEST_F(FullSyncPlanTest, NothingWithoutWaitingReplicas) {
  AddWaiting(1, true).state = ReplicaState::kOnline;
  EXPECT_EQ(PlanFullSync(primary_, settings_, 5'000).kind, Kind::kNone);
}

TEST_F(FullSyncPlanTest, DiskUnlessDisklessAndEveryReplicaReadsEof) {
  AddWaiting(1, true);
  AddWaiting(2, false);
  FullSyncPlan plan = PlanFullSync(primary_, settings_, 1'000);
  EXPECT_EQ(plan.kind, Kind::kDisk);
  EXPECT_EQ(Ids(plan.replicas), (std::vector<uint64_t>{1, 2}));
  settings_.diskless_sync = true;  // replica 2 cannot read the EOF form
  EXPECT_EQ(PlanFullSync(primary_, settings_, 1'000).kind, Kind::kDisk);
  primary_.Detach(2);
  EXPECT_EQ(PlanFullSync(primary_, settings_, 1'000).kind, Kind::kDelay);
}

TEST_F(FullSyncPlanTest, DisklessWaitsTheDelayOrForEnoughReplicas) {
  settings_.diskless_sync = true;
  settings_.delay_s = 5;
  AddWaiting(1, true, 1'000);
  AddWaiting(2, true, 3'000);
  EXPECT_EQ(PlanFullSync(primary_, settings_, 5'999).kind, Kind::kDelay);  // from the first request
  FullSyncPlan plan = PlanFullSync(primary_, settings_, 6'000);
  EXPECT_EQ(plan.kind, Kind::kDiskless);
  EXPECT_EQ(Ids(plan.replicas), (std::vector<uint64_t>{1, 2}));
  settings_.max_replicas = 2;
  EXPECT_EQ(PlanFullSync(primary_, settings_, 1'500).kind, Kind::kDiskless);
  settings_.max_replicas = 3;
  EXPECT_EQ(PlanFullSync(primary_, settings_, 1'500).kind, Kind::kDelay);
}

TEST_F(FullSyncPlanTest, OneSnapshotPerRequestFilteredStreamedAndRefusedWithoutEof) {
  ReplicaLink& a = AddWaiting(1, true);
  a.exclude_data = true;
  AddWaiting(2, true);  // the full snapshot: after the filtered one
  ReplicaLink& c = AddWaiting(3, false);
  c.exclude_data = true;
  FullSyncPlan plan = PlanFullSync(primary_, settings_, 1'000);  // disk-based: streamed at once
  EXPECT_EQ(plan.kind, Kind::kDiskless);
  EXPECT_EQ(Ids(plan.replicas), (std::vector<uint64_t>{1}));
  EXPECT_EQ(Ids(plan.refused), (std::vector<uint64_t>{3}));
  settings_.diskless_sync = true;  // a diskless primary delays it like any streamed transfer
  EXPECT_EQ(PlanFullSync(primary_, settings_, 1'000).kind, Kind::kDelay);
}

TEST_F(FullSyncPlanTest, OnlyRefusedLeavesNothingToStart) {
  AddWaiting(1, false).exclude_functions = true;
  FullSyncPlan plan = PlanFullSync(primary_, settings_, 1'000);
  EXPECT_EQ(plan.kind, Kind::kNone);
  EXPECT_EQ(Ids(plan.refused), (std::vector<uint64_t>{1}));
  EXPECT_TRUE(plan.replicas.empty());
}

}  // namespace
}  // namespace ringkv::repl

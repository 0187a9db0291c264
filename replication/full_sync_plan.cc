#include "replication/full_sync_plan.h"

#include <algorithm>
#include <utility>

namespace ringkv::repl {
namespace {

// Every replica of one diskless transfer must read the EOF-marked form.
bool UseDiskless(const FullSyncSettings& settings, const std::vector<ReplicaLink*>& replicas) {
  if (!settings.diskless_sync) return false;
  for (const ReplicaLink* r : replicas) {
    if (!r->capa_eof) return false;
  }
  return true;
}

}  // namespace

FullSyncPlan PlanFullSync(const Primary& primary, const FullSyncSettings& settings, int64_t now_ms) {
  FullSyncPlan plan;
  std::vector<ReplicaLink*> waiting;
  for (const auto& r : primary.replicas()) {
    if (r->state == ReplicaState::kWaitBgsaveStart) waiting.push_back(r.get());
  }
  if (waiting.empty()) return plan;
  const ReplicaLink* first = waiting.front();
  std::erase_if(waiting, [first](const ReplicaLink* r) { return !r->SameSnapshotAs(*first); });
  if (first->filtered()) {
    std::vector<ReplicaLink*> streamable;
    for (ReplicaLink* r : waiting) (r->capa_eof ? streamable : plan.refused).push_back(r);
    waiting = std::move(streamable);
  }
  if (waiting.empty()) return plan;
  if (UseDiskless(settings, waiting) || waiting.front()->filtered()) {
    const int64_t delay_ms = settings.delay_s * 1000;
    int64_t first_ms = now_ms;
    for (const ReplicaLink* r : waiting) first_ms = std::min(first_ms, r->sync_requested_ms);
    const bool enough = settings.max_replicas > 0 && static_cast<int64_t>(waiting.size()) >= settings.max_replicas;
    // (A filtered request on a disk-based primary is streamed at once.)
    const bool delayed = settings.diskless_sync;
    plan.kind = delayed && now_ms - first_ms < delay_ms && !enough ? FullSyncPlan::Kind::kDelay
                                                                   : FullSyncPlan::Kind::kDiskless;
  } else {
    plan.kind = FullSyncPlan::Kind::kDisk;
  }
  plan.replicas = std::move(waiting);
  return plan;
}

}  // namespace ringkv::repl

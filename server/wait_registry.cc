#include "server/wait_registry.h"

#include <cassert>

namespace ringkv::server {

WaitRegistry::Part WaitRegistry::NextPart(const WaitSpec& s, Part from, const Progress& now) {
  if (from == Part::kReplicas && s.numreplicas > 0 &&
      now.nth_ack(s.numreplicas, s.aof) < static_cast<int64_t>(s.repl_target)) {
    return Part::kReplicas;
  }
  if (s.aof && s.numlocal > 0) {
    if (s.numlocal > 1 || !now.aof_on) return Part::kNever;  // only the deadline ends it
    if (now.aof_synced < s.aof_target) return Part::kLocal;
  }
  return Part::kDone;
}

void WaitRegistry::Index(Waiter& w) {
  if (w.part_ == Part::kReplicas) {
    by_replicas_[{w.spec.numreplicas, w.spec.aof}].Insert({w.spec.repl_target, w.seq_}, &w);
  } else if (w.part_ == Part::kLocal) {
    by_aof_.Insert({w.spec.aof_target, w.seq_}, &w);
  }
}

void WaitRegistry::Unindex(const Waiter& w) {
  if (w.part_ == Part::kReplicas) {
    auto it = by_replicas_.find({w.spec.numreplicas, w.spec.aof});
    if (it != by_replicas_.end()) {
      it->second.Erase({w.spec.repl_target, w.seq_});
      if (it->second.empty() && by_replicas_.size() > kKeptIndexes) by_replicas_.erase(it);
    }
  } else if (w.part_ == Part::kLocal) {
    by_aof_.Erase({w.spec.aof_target, w.seq_});
  }
}

void WaitRegistry::Add(Waiter& w, const Progress& now) {
  assert(w.part_ == Part::kDone);
  w.part_ = NextPart(w.spec, Part::kReplicas, now);
  assert(w.part_ != Part::kDone);  // nothing would release it: PrimarySide::WaitFor answers at once
  w.seq_ = ++next_seq_;
  ++size_;
  Index(w);
}

void WaitRegistry::Remove(Waiter& w) {
  if (w.part_ == Part::kDone) return;
  Unindex(w);
  w.part_ = Part::kDone;
  --size_;
}

void WaitRegistry::Take(const Progress& now, std::vector<Taken>* out) {
  // Replica parts: per required count, the targets at or below the n-th
  // highest acknowledgement, in order; stop at the first one above it.
  std::vector<Waiter*> advanced;
  for (auto& [key, targets] : by_replicas_) {
    if (targets.empty()) continue;  // a kept index (kKeptIndexes): no ACK count to work out
    const int64_t reached = now.nth_ack(key.first, key.second);
    targets.ForEachWhile([&](const std::pair<uint64_t, uint64_t>& target, Waiter* w) {
      if (static_cast<int64_t>(target.first) > reached) return false;
      advanced.push_back(w);
      return true;
    });
  }
  if (now.aof_on) {
    by_aof_.ForEachWhile([&](const std::pair<uint64_t, uint64_t>& target, Waiter* w) {
      if (target.first > now.aof_synced) return false;
      advanced.push_back(w);
      return true;
    });
  }
  // Each waiter is in one index, so once in `advanced`; it moves on to its
  // next part's index, or is done.
  for (Waiter* w : advanced) {
    Unindex(*w);
    w->part_ = NextPart(w->spec, w->part_ == Part::kReplicas ? Part::kReplicas : Part::kLocal, now);
    if (w->part_ == Part::kDone) {
      --size_;
      out->push_back({w->id, w->seq_, w->spec});
    } else {
      Index(*w);
    }
  }
}

}  // namespace ringkv::server

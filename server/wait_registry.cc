#include "server/wait_registry.h"

#include <algorithm>

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

void WaitRegistry::Index(uint64_t id, Entry& e) {
  if (e.part == Part::kReplicas) {
    by_replicas_[{e.spec.numreplicas, e.spec.aof}].emplace(e.spec.repl_target, id);
  } else if (e.part == Part::kLocal) {
    by_aof_.emplace(e.spec.aof_target, id);
  }
}

void WaitRegistry::Unindex(uint64_t id, const Entry& e) {
  if (e.part == Part::kReplicas) {
    auto it = by_replicas_.find({e.spec.numreplicas, e.spec.aof});
    if (it != by_replicas_.end()) {
      it->second.erase({e.spec.repl_target, id});
      if (it->second.empty()) by_replicas_.erase(it);
    }
  } else if (e.part == Part::kLocal) {
    by_aof_.erase({e.spec.aof_target, id});
  }
}

void WaitRegistry::Add(uint64_t id, const WaitSpec& spec, const Progress& now) {
  Entry& e = waiters_[id];
  e.spec = spec;
  e.part = NextPart(spec, Part::kReplicas, now);
  Index(id, e);
}

void WaitRegistry::Remove(uint64_t id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return;
  Unindex(id, it->second);
  waiters_.erase(it);
}

void WaitRegistry::Take(const Progress& now, std::vector<std::pair<uint64_t, WaitSpec>>* taken) {
  std::vector<uint64_t> ids;
  std::vector<uint64_t>* out = &ids;
  const size_t first = 0;
  // Replica parts: per required count, the targets at or below the n-th
  // highest acknowledgement, in order; stop at the first one above it.
  std::vector<uint64_t> advanced;
  for (auto& [key, targets] : by_replicas_) {
    const int64_t reached = now.nth_ack(key.first, key.second);
    for (auto it = targets.begin(); it != targets.end() && static_cast<int64_t>(it->first) <= reached; ++it) {
      advanced.push_back(it->second);
    }
  }
  for (auto it = by_aof_.begin(); it != by_aof_.end() && it->first <= now.aof_synced && now.aof_on; ++it) {
    advanced.push_back(it->second);
  }
  for (uint64_t id : advanced) {
    auto w = waiters_.find(id);
    if (w == waiters_.end()) continue;
    Entry& e = w->second;
    Unindex(id, e);
    e.part = NextPart(e.spec, e.part == Part::kReplicas ? Part::kReplicas : Part::kLocal, now);
    if (e.part == Part::kDone) {
      out->push_back(id);
    } else {
      Index(id, e);
    }
  }
  std::sort(out->begin() + static_cast<std::ptrdiff_t>(first), out->end());
  out->erase(std::unique(out->begin() + static_cast<std::ptrdiff_t>(first), out->end()), out->end());
  for (size_t i = first; i < out->size(); ++i) {
    auto w = waiters_.find((*out)[i]);
    if (w == waiters_.end()) continue;
    taken->emplace_back((*out)[i], w->second.spec);
    Remove((*out)[i]);
  }
}

}  // namespace ringkv::server

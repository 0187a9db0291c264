#include "server/commands/set_ops.h"

#include <algorithm>

namespace ringkv::server {

using core::OpResult;
using core::OpStatus;
using core::SetValue;

namespace {

// The sets at `keys`, in order (nullptr: a missing key, an empty set). A
// missing key does not stop the type checks of the others, as in Redis.
OpResult<std::vector<const SetValue*>> LookupOperands(const OpArgs& op, std::span<const std::string_view> keys,
                                                      core::Access access) {
  std::vector<const SetValue*> sets;
  sets.reserve(keys.size());
  for (std::string_view key : keys) {
    OpResult<SetValue*> s = core::FindTyped<SetValue>(op.db, key, op.now_ms, access);
    if (s.status() == OpStatus::kWrongType) return OpStatus::kWrongType;
    sets.push_back(s.ok() ? s.value() : nullptr);
  }
  return sets;
}

// The members of the intersection, in the iteration order of the smallest
// set; stops after `limit` members (0: no limit).
std::vector<std::string> Intersect(std::vector<const SetValue*> sets, size_t limit) {
  std::vector<std::string> out;
  if (sets.empty() || std::find(sets.begin(), sets.end(), nullptr) != sets.end()) return out;
  std::stable_sort(sets.begin(), sets.end(), [](const SetValue* a, const SetValue* b) { return a->size() < b->size(); });
  sets[0]->ForEach([&](std::string_view m) {
    if (limit != 0 && out.size() >= limit) return;
    for (size_t i = 1; i < sets.size(); ++i) {
      if (sets[i] != sets[0] && !sets[i]->Contains(m)) return;
    }
    out.emplace_back(m);
  });
  return out;
}

// A union or difference built into a fresh set, which starts as an intset
// as Redis's does -- so results of integers come out ascending, as there.
SetValue UnionOrDiff(const std::vector<const SetValue*>& sets, bool diff, const core::SetLimits& limits) {
  SetValue result;
  if (!diff) {
    for (const SetValue* s : sets) {
      if (s != nullptr) s->ForEach([&](std::string_view m) { result.Add(m, limits); });
    }
    return result;
  }
  if (sets.empty() || sets[0] == nullptr) return result;
  sets[0]->ForEach([&](std::string_view m) {
    for (size_t i = 1; i < sets.size(); ++i) {
      if (sets[i] == sets[0] || (sets[i] != nullptr && sets[i]->Contains(m))) return;
    }
    result.Add(m, limits);
  });
  return result;
}

}  // namespace

OpResult<int64_t> OpSadd(const OpArgs& op, std::string_view key, std::span<const std::string_view> members) {
  OpResult<SetValue*> s = core::FindOrCreate<SetValue>(
      op.db, key, op.now_ms, [&] { return core::Value(SetValue::ForFirstMember(members[0])); });
  if (!s.ok()) return s.status();
  int64_t added = 0;
  for (std::string_view m : members) added += s.value()->Add(m, op.limits().set);
  if (added > 0) op.Changed(notify::kSet, "sadd", key, static_cast<uint64_t>(added));
  return added;
}

OpResult<int64_t> OpSrem(const OpArgs& op, std::string_view key, std::span<const std::string_view> members) {
  return RemoveItems(op, key, members, &SetValue::Remove, notify::kSet, "srem");
}

OpStatus OpSpop(const OpArgs& op, std::string_view key, absl::FunctionRef<void(std::string_view)> popped) {
  OpResult<SetValue*> s = core::FindTyped<SetValue>(op.db, key, op.now_ms);
  if (!s.ok()) return s.status();
  std::vector<std::string> srem = {"SREM", std::string(key), s.value()->PopRandom(op.keyspace.rng())};
  // Redis: the event, the reply, then the "del" and the signal.
  op.Notified(notify::kSet, "spop", key, 1);
  popped(srem.back());
  DeleteIfEmpty(op, key, *s.value());
  op.Signaled(key);
  op.effects.PropagateAs(std::move(srem));
  return OpStatus::kOk;
}

OpResult<size_t> OpSpopCount(const OpArgs& op, std::string_view key, uint64_t count,
                             absl::FunctionRef<void(size_t)> begin, absl::FunctionRef<void(std::string_view)> each) {
  OpResult<SetValue*> found = core::FindTyped<SetValue>(op.db, key, op.now_ms);
  if (!found.ok()) return found.status();
  SetValue& s = *found.value();
  if (count == 0) {
    begin(0);
    return size_t{0};
  }
  // Redis: the event, the reply, then the "del" and the signal.
  if (count >= s.size()) {  // the whole set
    const size_t n = s.size();
    op.Notified(notify::kSet, "spop", key, n);
    begin(n);
    s.ForEach(each);
    op.db.Erase(key);
    op.Notified(notify::kGeneric, "del", key, 0);
    op.Signaled(key);
    op.effects.PropagateAs({op.effects.lazy_server_del() ? "UNLINK" : "DEL", std::string(key)});
    return n;
  }
  absl::BitGen& rng = op.keyspace.rng();
  std::vector<std::string> srem = {"SREM", std::string(key)};
  srem.reserve(2 + count);
  op.Notified(notify::kSet, "spop", key, count);
  begin(count);
  for (uint64_t i = 0; i < count; ++i) {
    srem.push_back(s.PopRandom(rng));
    each(srem.back());
  }
  DeleteIfEmpty(op, key, s);
  op.Signaled(key);
  op.effects.PropagateAs(std::move(srem));
  return static_cast<size_t>(count);
}

OpResult<bool> OpSmove(const OpArgs& op, std::string_view src_key, std::string_view dst_key,
                       std::string_view member) {
  OpResult<SetValue*> src = core::FindTyped<SetValue>(op.db, src_key, op.now_ms);
  OpResult<SetValue*> dst = core::FindTyped<SetValue>(op.db, dst_key, op.now_ms);
  if (src.status() == OpStatus::kNotFound) return OpStatus::kNotFound;
  if (!src.ok()) return src.status();
  if (dst.status() == OpStatus::kWrongType) return OpStatus::kWrongType;
  if (dst.ok() && dst.value() == src.value()) return src.value()->Contains(member);  // same key: nothing moves
  if (!src.value()->Remove(member)) return false;
  // Redis: the source's events, its signal, then the destination's.
  op.Notified(notify::kSet, "srem", src_key, 1);
  DeleteIfEmpty(op, src_key, *src.value());
  if (!dst.ok()) {
    dst = core::FindOrCreate<SetValue>(op.db, dst_key, op.now_ms,
                                       [&] { return core::Value(SetValue::ForFirstMember(member)); });
  }
  op.Signaled(src_key);
  if (dst.value()->Add(member, op.limits().set)) op.Changed(notify::kSet, "sadd", dst_key, 1);
  return true;
}

OpResult<std::vector<std::string>> OpSinter(const OpArgs& op, std::span<const std::string_view> keys,
                                            core::Access access, size_t limit) {
  OpResult<std::vector<const SetValue*>> sets = LookupOperands(op, keys, access);
  if (!sets.ok()) return sets.status();
  return Intersect(std::move(sets.value()), limit);
}

OpResult<SetValue> OpSunionOrDiff(const OpArgs& op, std::span<const std::string_view> keys, bool diff,
                                  core::Access access) {
  OpResult<std::vector<const SetValue*>> sets = LookupOperands(op, keys, access);
  if (!sets.ok()) return sets.status();
  return UnionOrDiff(sets.value(), diff, op.limits().set);
}

OpResult<int64_t> OpSinterstore(const OpArgs& op, std::string_view dst, std::span<const std::string_view> keys) {
  // The sources are read lookups, as in Redis 7.0 (keyspace_hits / misses).
  OpResult<std::vector<std::string>> members = OpSinter(op, keys, core::Access::kRead);
  if (!members.ok()) return members.status();
  SetValue result;
  for (const std::string& m : members.value()) result.Add(m, op.limits().set);
  const size_t n = result.size();
  return StoreValue(op, dst, core::Value(std::move(result)), n, notify::kSet, "sinterstore", 1,
                    StoreReply::kBetweenDelFirst);
}

OpResult<int64_t> OpSunionOrDiffStore(const OpArgs& op, std::string_view dst, std::span<const std::string_view> keys,
                                      bool diff) {
  OpResult<SetValue> result = OpSunionOrDiff(op, keys, diff, core::Access::kRead);
  if (!result.ok()) return result.status();
  const size_t n = result.value().size();
  return StoreValue(op, dst, core::Value(std::move(result.value())), n, notify::kSet,
                    diff ? "sdiffstore" : "sunionstore", 1, StoreReply::kBetween);
}

}  // namespace ringkv::server

#include "server/commands/zset_ops.h"

#include <algorithm>
#include <string>

#include "core/strings.h"

namespace ringkv::server {

using core::OpResult;
using core::OpStatus;
using core::ZSetValue;

namespace {

// After ranks [start, end] of the set at `key` went: the event, then the
// emptied key's deletion.
void Removed(const OpArgs& op, std::string_view key, const ZSetValue& z, std::string_view event, size_t n) {
  op.Changed(notify::kZSet, event, key, n);
  DeleteIfEmpty(op, key, z);
}

// Pops up to `count` elements of `z`, the set at `key`. Redis reports the
// pop and signals the key between the reply's header and its elements, and
// the emptied key's "del" after them.
size_t PopFrom(const OpArgs& op, std::string_view key, ZSetValue& z, uint64_t count, bool max,
               absl::FunctionRef<void(size_t)> begin, ZElementSink each) {
  const size_t n = std::min<uint64_t>(count, z.size());
  begin(n);
  op.Notified(notify::kZSet, max ? "zpopmax" : "zpopmin", key, n);
  op.Signaled(key);
  size_t i = 0;
  z.Walk(0, max, [&](std::string_view m, double score) {
    if (i++ == n) return false;
    each(m, score);
    return true;
  });
  if (max) {
    z.RemoveRanks(z.size() - n, z.size() - 1);
  } else {
    z.RemoveRanks(0, n - 1);
  }
  DeleteIfEmpty(op, key, z);
  return n;
}

// ZREMRANGEBY*: resolve(z, &start, &end) picks the ranks to remove from
// the set at `key` (false: none).
template <typename Resolve>
OpResult<int64_t> RemoveRange(const OpArgs& op, std::string_view key, std::string_view event, Resolve resolve) {
  OpResult<ZSetValue*> found = core::FindTyped<ZSetValue>(op.db, key, op.now_ms);
  if (found.status() == OpStatus::kNotFound) return int64_t{0};
  if (!found.ok()) return found.status();
  ZSetValue& z = *found.value();
  size_t start, end;
  if (!resolve(z, &start, &end)) return int64_t{0};
  z.RemoveRanks(start, end);
  const size_t removed = end - start + 1;
  Removed(op, key, z, event, removed);
  return static_cast<int64_t>(removed);
}

}  // namespace

OpResult<ZAddResult> OpZadd(const OpArgs& op, std::string_view key, const core::ZAddFlags& flags,
                            std::span<const double> scores, std::span<const std::string_view> elements) {
  OpResult<ZSetValue*> found =
      flags.xx ? core::FindTyped<ZSetValue>(op.db, key, op.now_ms)
               : core::FindOrCreate<ZSetValue>(op.db, key, op.now_ms, [] { return core::Value(ZSetValue()); });
  ZAddResult result;
  if (found.status() == OpStatus::kNotFound) {  // XX and no key: nothing to do
    result.skipped = true;
    return result;
  }
  if (!found.ok()) return found.status();
  ZSetValue& z = *found.value();
  for (size_t j = 0; j < scores.size(); ++j) {
    double new_score = 0;
    switch (z.Add(elements[2 * j + 1], scores[j], flags, op.limits().zset, &new_score)) {
      case core::ZAddOutcome::kAdded: ++result.added; break;
      case core::ZAddOutcome::kUpdated: ++result.updated; break;
      case core::ZAddOutcome::kUnchanged: break;
      case core::ZAddOutcome::kSkipped: result.skipped = true; break;
      case core::ZAddOutcome::kNaN:
        core::DeleteIfEmpty(op.db, key, z);  // created for nothing
        return OpStatus::kNanOrInf;
    }
    result.score = new_score;
  }
  core::DeleteIfEmpty(op.db, key, z);  // created for nothing (no event: it never held anything)
  const int64_t changed = result.added + result.updated;
  if (changed > 0) {
    op.ReplyPoint();  // Redis replies, then signals and notifies
    op.Changed(notify::kZSet, flags.incr ? "zincr" : "zadd", key, static_cast<uint64_t>(changed));
  }
  return result;
}

OpResult<int64_t> OpZrem(const OpArgs& op, std::string_view key, std::span<const std::string_view> members) {
  return RemoveItems(op, key, members, &ZSetValue::Remove, notify::kZSet, "zrem", /*signal_last=*/true);
}

OpResult<int64_t> OpZremRangeByRank(const OpArgs& op, std::string_view key, int64_t start, int64_t end) {
  return RemoveRange(op, key, "zremrangebyrank", [&](const ZSetValue& z, size_t* first, size_t* last) {
    const int64_t n = static_cast<int64_t>(z.size());
    if (start < 0) start += n;
    if (end < 0) end += n;
    if (start < 0) start = 0;
    if (start > end || start >= n) return false;
    if (end >= n) end = n - 1;
    *first = static_cast<size_t>(start);
    *last = static_cast<size_t>(end);
    return true;
  });
}

OpResult<int64_t> OpZremRangeByScore(const OpArgs& op, std::string_view key, const core::ScoreRange& range) {
  return RemoveRange(op, key, "zremrangebyscore", [&](const ZSetValue& z, size_t* first, size_t* last) {
    *first = z.RankOfFirstIn(range, false);
    if (*first >= z.size()) return false;
    *last = z.size() - 1 - z.RankOfFirstIn(range, true);
    return true;
  });
}

OpResult<int64_t> OpZremRangeByLex(const OpArgs& op, std::string_view key, const core::LexRange& range) {
  return RemoveRange(op, key, "zremrangebylex", [&](const ZSetValue& z, size_t* first, size_t* last) {
    *first = z.RankOfFirstIn(range, false);
    if (*first >= z.size()) return false;
    // A lex range is the run from its first element (ZSetValue::LexRun):
    // with differing scores its members need not be in order.
    *last = *first + z.LexRun(range, *first, false, SIZE_MAX) - 1;
    return true;
  });
}

OpResult<size_t> OpZpop(const OpArgs& op, std::string_view key, uint64_t count, bool max,
                        absl::FunctionRef<void(size_t)> begin, ZElementSink each) {
  OpResult<ZSetValue*> z = core::FindTyped<ZSetValue>(op.db, key, op.now_ms);
  if (!z.ok()) return z.status();
  if (count == 0) {
    begin(0);
    return size_t{0};
  }
  return PopFrom(op, key, *z.value(), count, max, begin, each);
}

OpResult<size_t> OpZmpop(const OpArgs& op, std::span<const std::string_view> keys, uint64_t count, bool max,
                         absl::FunctionRef<void(std::string_view, size_t)> begin, ZElementSink each) {
  ZSetValue* z;
  OpResult<size_t> i = FindFirst(op, keys, &z);
  if (!i.ok()) return i.status();
  const std::string_view key = keys[i.value()];
  const size_t n = PopFrom(op, key, *z, count, max, [&](size_t m) { begin(key, m); }, each);
  // Propagated with the count it popped, as Redis (a replica has no more).
  op.effects.PropagateAs({max ? "ZPOPMAX" : "ZPOPMIN", std::string(key), StrCat(n)});
  return n;
}

OpStatus OpBlockingZpop(const OpArgs& op, std::span<const std::string_view> keys, bool max,
                        absl::FunctionRef<void(std::string_view)> begin, ZElementSink each) {
  ZSetValue* z;
  OpResult<size_t> i = FindFirst(op, keys, &z);
  if (!i.ok()) return i.status();
  const std::string_view key = keys[i.value()];
  PopFrom(op, key, *z, 1, max, [&](size_t) { begin(key); }, each);
  op.effects.PropagateAs({max ? "ZPOPMAX" : "ZPOPMIN", std::string(key)});
  return OpStatus::kOk;
}

int64_t OpZstore(const OpArgs& op, std::string_view dst, ZSetValue result, std::string_view event) {
  const size_t n = result.size();
  return StoreValue(op, dst, core::Value(std::move(result)), n, notify::kZSet, event, 1, StoreReply::kBetween);
}

}  // namespace ringkv::server

#include "server/commands/list_ops.h"

#include <algorithm>
#include <memory>

#include "core/list_value.h"
#include "core/strings.h"

namespace ringkv::server {

using core::ListValue;
using core::OpResult;
using core::OpStatus;

namespace {

OpResult<ListValue*> FindOrCreateList(const OpArgs& op, std::string_view key) {
  return core::FindOrCreate<ListValue>(op.db, key, op.now_ms,
                                       [&] { return core::Value(std::make_unique<ListValue>(op.limits().list)); });
}

std::string_view PopEvent(bool head) { return head ? "lpop" : "rpop"; }

// Pops up to `count` elements of the list at `key` (which holds `l`).
size_t PopCountFrom(const OpArgs& op, std::string_view key, ListValue& l, bool head, uint64_t count,
                    absl::FunctionRef<void(size_t)> begin, ElementSink each) {
  const size_t n = std::min<uint64_t>(count, l.size());
  begin(n);
  std::string v;
  for (size_t i = 0; i < n; ++i) {
    l.Pop(head, &v);
    each(v);
  }
  // Redis's listElementsRemoved: the events, then the signal.
  if (n > 0) {
    op.Notified(notify::kList, PopEvent(head), key, n);
    DeleteIfEmpty(op, key, l);
    op.Signaled(key);
  }
  return n;
}

// One element of the list at `key` (which holds `l`).
// Redis replies with it before the events and the signal.
std::string PopOneFrom(const OpArgs& op, std::string_view key, ListValue& l, bool head) {
  std::string v;
  l.Pop(head, &v);
  op.ReplyPoint();
  op.Notified(notify::kList, PopEvent(head), key, 1);
  DeleteIfEmpty(op, key, l);
  op.Signaled(key);
  return v;
}

}  // namespace

bool ClipListRange(int64_t n, int64_t* start, int64_t* end) {
  if (*start < 0) *start += n;
  if (*end < 0) *end += n;
  if (*start < 0) *start = 0;
  if (*start > *end || *start >= n) return false;
  if (*end >= n) *end = n - 1;
  return true;
}

OpResult<int64_t> OpPush(const OpArgs& op, std::string_view key, bool head, std::span<const std::string_view> values,
                         bool only_existing) {
  OpResult<ListValue*> l =
      only_existing ? core::FindTyped<ListValue>(op.db, key, op.now_ms) : FindOrCreateList(op, key);
  if (l.status() == OpStatus::kNotFound) return int64_t{0};
  if (!l.ok()) return l.status();
  for (std::string_view v : values) l.value()->Push(head, v);
  op.ReplyPoint();  // Redis replies, then signals and notifies
  op.Changed(notify::kList, head ? "lpush" : "rpush", key, values.size());
  return static_cast<int64_t>(l.value()->size());
}

OpResult<std::string> OpPop(const OpArgs& op, std::string_view key, bool head) {
  OpResult<ListValue*> l = core::FindTyped<ListValue>(op.db, key, op.now_ms);
  if (!l.ok()) return l.status();
  return PopOneFrom(op, key, *l.value(), head);
}

OpResult<size_t> OpPopCount(const OpArgs& op, std::string_view key, bool head, uint64_t count,
                            absl::FunctionRef<void(size_t)> begin, ElementSink each) {
  OpResult<ListValue*> l = core::FindTyped<ListValue>(op.db, key, op.now_ms);
  if (!l.ok()) return l.status();
  return PopCountFrom(op, key, *l.value(), head, count, begin, each);
}

OpResult<size_t> OpMpop(const OpArgs& op, std::span<const std::string_view> keys, bool head, uint64_t count,
                        absl::FunctionRef<void(std::string_view, size_t)> begin, ElementSink each) {
  ListValue* l;
  OpResult<size_t> i = FindFirst(op, keys, &l);
  if (!i.ok()) return i.status();
  const std::string_view key = keys[i.value()];
  const size_t n = PopCountFrom(op, key, *l, head, count, [&](size_t m) { begin(key, m); }, each);
  // Propagated with the count it popped, as Redis (a replica has no more).
  op.effects.PropagateAs({head ? "LPOP" : "RPOP", std::string(key), StrCat(n)});
  return n;
}

OpResult<std::string> OpBlockingPop(const OpArgs& op, std::span<const std::string_view> keys, bool head,
                                    absl::FunctionRef<void(std::string_view)> begin) {
  ListValue* l;
  OpResult<size_t> i = FindFirst(op, keys, &l);
  if (!i.ok()) return i.status();
  const std::string_view key = keys[i.value()];
  begin(key);
  std::string v = PopOneFrom(op, key, *l, head);
  op.effects.PropagateAs({head ? "LPOP" : "RPOP", std::string(key)});
  return v;
}

OpStatus OpLset(const OpArgs& op, std::string_view key, std::string_view index, std::string_view value) {
  OpResult<ListValue*> l = core::FindTyped<ListValue>(op.db, key, op.now_ms);
  if (!l.ok()) return l.status();
  int64_t i;
  if (!core::StringToInt64(index, &i)) return OpStatus::kNotInteger;
  if (!l.value()->Set(i, value)) return OpStatus::kOutOfRange;
  op.ReplyPoint();  // Redis replies, then signals and notifies
  op.Changed(notify::kList, "lset", key, 1);
  return OpStatus::kOk;
}

OpResult<int64_t> OpLinsert(const OpArgs& op, std::string_view key, bool after, std::string_view pivot,
                            std::string_view value) {
  OpResult<ListValue*> l = core::FindTyped<ListValue>(op.db, key, op.now_ms);
  if (l.status() == OpStatus::kNotFound) return int64_t{0};
  if (!l.ok()) return l.status();
  if (!l.value()->Insert(pivot, value, after)) return int64_t{-1};
  op.Changed(notify::kList, "linsert", key, 1);
  return static_cast<int64_t>(l.value()->size());
}

OpResult<int64_t> OpLrem(const OpArgs& op, std::string_view key, int64_t count, std::string_view value) {
  OpResult<ListValue*> l = core::FindTyped<ListValue>(op.db, key, op.now_ms);
  if (l.status() == OpStatus::kNotFound) return int64_t{0};
  if (!l.ok()) return l.status();
  const size_t removed = l.value()->Remove(value, count);
  if (removed > 0) op.Changed(notify::kList, "lrem", key, removed);
  DeleteIfEmpty(op, key, *l.value());
  return static_cast<int64_t>(removed);
}

OpStatus OpLtrim(const OpArgs& op, std::string_view key, int64_t start, int64_t end) {
  OpResult<ListValue*> found = core::FindTyped<ListValue>(op.db, key, op.now_ms);
  if (found.status() == OpStatus::kNotFound) return OpStatus::kOk;
  if (!found.ok()) return found.status();
  ListValue& l = *found.value();
  const int64_t n = static_cast<int64_t>(l.size());
  int64_t kept = 0;
  if (ClipListRange(n, &start, &end)) {
    l.Keep(static_cast<size_t>(start), static_cast<size_t>(end));
    kept = end - start + 1;
  }
  // Redis: the events, then the signal, then the reply.
  op.Notified(notify::kList, "ltrim", key, static_cast<uint64_t>(n - kept));
  if (kept == 0) {  // nothing kept
    op.db.Erase(key);
    op.Notified(notify::kGeneric, "del", key, 0);
  }
  op.Signaled(key);
  return OpStatus::kOk;
}

OpResult<std::string> OpLmove(const OpArgs& op, std::string_view src_key, std::string_view dst_key, bool from_head,
                              bool to_head, MoveForm form) {
  OpResult<ListValue*> src = core::FindTyped<ListValue>(op.db, src_key, op.now_ms);
  if (!src.ok()) return src.status();
  OpResult<ListValue*> dst = core::FindTyped<ListValue>(op.db, dst_key, op.now_ms);  // checked before anything moves
  if (dst.status() == OpStatus::kWrongType) return OpStatus::kWrongType;
  std::string v;
  src.value()->Pop(from_head, &v);
  if (!dst.ok()) dst = FindOrCreateList(op, dst_key);
  dst.value()->Push(to_head, v);
  // Redis (lmoveHandlePush): the destination's signal and event, the reply,
  // then the source's events and signal.
  op.Changed(notify::kList, to_head ? "lpush" : "rpush", dst_key, 1);
  op.ReplyPoint();
  op.Notified(notify::kList, PopEvent(from_head), src_key, 0);
  if (src.value() != dst.value()) DeleteIfEmpty(op, src_key, *src.value());
  op.Signaled(src_key);
  if (form == MoveForm::kRpoplpush) {
    op.effects.PropagateAs({"RPOPLPUSH", std::string(src_key), std::string(dst_key)});
  } else if (form == MoveForm::kLmove) {
    op.effects.PropagateAs({"LMOVE", std::string(src_key), std::string(dst_key), from_head ? "LEFT" : "RIGHT",
                            to_head ? "LEFT" : "RIGHT"});
  }
  return v;
}

}  // namespace ringkv::server

#include "server/commands/hash_ops.h"

#include <cmath>

#include "core/hash_value.h"
#include "core/string_ops.h"
#include "core/strings.h"

namespace ringkv::server {

using core::HashValue;
using core::OpResult;
using core::OpStatus;

namespace {

OpResult<HashValue*> FindOrCreateHash(const OpArgs& op, std::string_view key) {
  return core::FindOrCreate<HashValue>(op.db, key, op.now_ms, [] { return core::Value(HashValue()); });
}

}  // namespace

OpResult<int64_t> OpHset(const OpArgs& op, std::string_view key, std::span<const std::string_view> pairs) {
  OpResult<HashValue*> h = FindOrCreateHash(op, key);
  if (!h.ok()) return h.status();
  int64_t added = 0;
  for (size_t i = 0; i + 1 < pairs.size(); i += 2) added += h.value()->Set(pairs[i], pairs[i + 1], op.limits().hash);
  op.ReplyPoint();  // Redis replies, then signals and notifies
  op.Changed(notify::kHash, "hset", key, pairs.size() / 2);
  return added;
}

OpResult<bool> OpHsetnx(const OpArgs& op, std::string_view key, std::string_view field, std::string_view value) {
  OpResult<HashValue*> h = FindOrCreateHash(op, key);
  if (!h.ok()) return h.status();
  if (h.value()->Contains(field)) return false;
  h.value()->Set(field, value, op.limits().hash);
  op.ReplyPoint();  // Redis replies, then signals and notifies
  op.Changed(notify::kHash, "hset", key, 1);
  return true;
}

OpResult<int64_t> OpHdel(const OpArgs& op, std::string_view key, std::span<const std::string_view> fields) {
  return RemoveItems(op, key, fields, &HashValue::Delete, notify::kHash, "hdel");
}

OpResult<int64_t> OpHincrby(const OpArgs& op, std::string_view key, std::string_view field, int64_t delta) {
  OpResult<HashValue*> h = FindOrCreateHash(op, key);
  if (!h.ok()) return h.status();
  int64_t current = 0;
  std::string old;
  OpStatus failure = OpStatus::kOk;
  if (h.value()->Get(field, &old) && !core::StringToInt64(old, &current)) {
    failure = OpStatus::kNotInteger;
  } else if ((delta < 0 && current < 0 && delta < INT64_MIN - current) ||
             (delta > 0 && current > 0 && delta > INT64_MAX - current)) {
    failure = OpStatus::kOverflow;
  }
  if (failure != OpStatus::kOk) {
    core::DeleteIfEmpty(op.db, key, *h.value());  // created for nothing
    return failure;
  }
  const int64_t next = current + delta;
  h.value()->Set(field, StrCat(next), op.limits().hash);
  op.ReplyPoint();  // Redis replies, then signals and notifies
  op.Changed(notify::kHash, "hincrby", key, 1);
  return next;
}

OpResult<std::string> OpHincrbyfloat(const OpArgs& op, std::string_view key, std::string_view field,
                                     long double delta) {
  OpResult<HashValue*> h = FindOrCreateHash(op, key);
  if (!h.ok()) return h.status();
  long double current = 0;
  std::string old;
  OpStatus failure = OpStatus::kOk;
  if (h.value()->Get(field, &old) && !core::StringToLongDouble(old, &current)) {
    failure = OpStatus::kNotFloat;
  }
  const long double next = current + delta;
  if (failure == OpStatus::kOk && (std::isnan(next) || std::isinf(next))) failure = OpStatus::kNanOrInf;
  if (failure != OpStatus::kOk) {
    core::DeleteIfEmpty(op.db, key, *h.value());  // created for nothing
    return failure;
  }
  std::string text = core::FormatLongDouble(next);
  h.value()->Set(field, text, op.limits().hash);
  op.ReplyPoint();  // Redis replies, then signals and notifies
  op.Changed(notify::kHash, "hincrbyfloat", key, 1);
  // Replayed as HSET with the result, so float formatting on a replica or
  // an AOF reload cannot drift (as Redis propagates it).
  op.effects.PropagateAs({"HSET", std::string(key), std::string(field), text});
  return text;
}

}  // namespace ringkv::server

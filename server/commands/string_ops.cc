#include "server/commands/string_ops.h"

#include <cmath>

#include "core/string_ops.h"
#include "core/string_value.h"
#include "core/strings.h"

namespace ringkv::server {

using core::Entry;
using core::OpResult;
using core::OpStatus;
using core::StringValue;

namespace {

bool ValueAsInt(const StringValue& v, int64_t* out) {
  if (v.is_int()) {
    *out = v.int_value();
    return true;
  }
  char scratch[24];
  return core::StringToInt64(v.View(scratch), out);
}

// The live string entry at `key` (nullptr when missing), kWrongType for
// another type.
OpResult<Entry*> FindString(const OpArgs& op, std::string_view key) {
  Entry* e = op.db.Find(key, op.now_ms);
  if (e != nullptr && !e->value.is_string()) return OpStatus::kWrongType;
  return e;
}

// As FindString, for the commands that read the value before changing the
// key (GETDEL, GETEX, SET ... GET): Redis looks their key up as a read
// (getGenericCommand), counted in keyspace_hits / keyspace_misses.
OpResult<Entry*> FindStringToRead(const OpArgs& op, std::string_view key) {
  Entry* e = op.db.Find(key, op.now_ms);
  op.db.CountReadLookUp(key, e != nullptr);
  if (e != nullptr && !e->value.is_string()) return OpStatus::kWrongType;
  return e;
}

}  // namespace

OpResult<SetResult> OpSet(const OpArgs& op, std::string_view key, std::string_view value, const SetOptions& opts) {
  core::Database& db = op.db;
  SetResult result;
  Entry* e;
  bool created;
  if (opts.condition == SetOptions::Condition::kAlways && !opts.get) {
    // The common SET: one probe; a new key's node sized for the value.
    e = db.FindOrInsert(key, op.now_ms, &created, core::StringValue::SlotBytesFor(value));
  } else {
    e = db.Find(key, op.now_ms);
    if (opts.get) db.CountReadLookUp(key, e != nullptr);  // getGenericCommand's read
    if (opts.get && e != nullptr) {
      if (!e->value.is_string()) return OpStatus::kWrongType;
      result.previous = e->value.str().ToString();
    }
    // GET: Redis replies with the old value before anything is set.
    if (opts.get) op.ReplyPoint();
    if ((opts.condition == SetOptions::Condition::kIfMissing && e != nullptr) ||
        (opts.condition == SetOptions::Condition::kIfExists && e == nullptr)) {
      return result;
    }
    if (e == nullptr) e = db.FindOrInsert(key, op.now_ms, &created, core::StringValue::SlotBytesFor(value));
  }
  e->value.SetString(value);
  if (!opts.keep_ttl) db.SetExpire(key, e, -1);
  // A deadline already past is set all the same (Redis 7.0): the key expires
  // on its next access or in the active cycle, and its DEL is propagated then.
  if (opts.expire_at_ms >= 0) db.SetExpire(key, e, opts.expire_at_ms);
  result.written = true;
  op.Changed(notify::kString, "set", key, 1);
  if (opts.expire_at_ms >= 0) {
    op.Changed(notify::kGeneric, "expire", key, 0);
    op.effects.PropagateAs({"SET", std::string(key), std::string(value), "PXAT", StrCat(opts.expire_at_ms)});
  }
  return result;
}

OpResult<SetResult> OpGetset(const OpArgs& op, std::string_view key, std::string_view value) {
  SetOptions opts;
  opts.get = true;
  OpResult<SetResult> r = OpSet(op, key, value, opts);
  // Propagated as SET (Redis 7.0 rewrites GETSET so): replicas count it so.
  if (r.ok()) op.effects.PropagateAs({"SET", std::string(key), std::string(value)});
  return r;
}

bool OpMset(const OpArgs& op, std::span<const std::string_view> pairs, bool nx) {
  if (nx) {
    for (size_t i = 0; i < pairs.size(); i += 2) {
      if (op.db.Find(pairs[i], op.now_ms) != nullptr) return false;
    }
  }
  const SetOptions opts;
  for (size_t i = 0; i + 1 < pairs.size(); i += 2) OpSet(op, pairs[i], pairs[i + 1], opts);
  return true;
}

OpStatus OpGetdel(const OpArgs& op, std::string_view key, absl::FunctionRef<void(std::string_view)> value) {
  OpResult<Entry*> e = FindStringToRead(op, key);
  if (!e.ok()) return e.status();
  if (e.value() == nullptr) return OpStatus::kNotFound;
  char scratch[24];
  value(e.value()->value.str().View(scratch));  // first: Erase frees the value
  op.db.Erase(key);
  op.Changed(notify::kGeneric, "del", key, 1);
  op.effects.PropagateAs({"DEL", std::string(key)});
  return OpStatus::kOk;
}

OpStatus OpGetex(const OpArgs& op, std::string_view key, const GetexChange& change,
                 absl::FunctionRef<void(std::string_view)> value) {
  OpResult<Entry*> found = FindStringToRead(op, key);
  if (!found.ok()) return found.status();
  Entry* e = found.value();
  if (e == nullptr) return OpStatus::kNotFound;
  if (change.kind == GetexChange::kCheck) return OpStatus::kOk;
  char scratch[24];
  value(e->value.str().View(scratch));
  if (change.kind == GetexChange::kExpire) {
    OpSetDeadline(op, key, e, change.when);
  } else if (change.kind == GetexChange::kPersist && op.db.GetExpire(e) >= 0) {
    op.db.SetExpire(key, e, -1);
    op.Changed(notify::kGeneric, "persist", key, 1);
    op.effects.PropagateAs({"PERSIST", std::string(key)});
  }
  return OpStatus::kOk;
}

void OpSetDeadline(const OpArgs& op, std::string_view key, Entry* e, int64_t when) {
  if (when <= op.now_ms && op.keyspace.expiry_mode() == core::ExpiryMode::kDelete) {
    op.db.Erase(key);
    op.Changed(notify::kGeneric, "del", key, 1);
    op.effects.PropagateAs({op.effects.lazy_expire() ? "UNLINK" : "DEL", std::string(key)});
    return;
  }
  op.db.SetExpire(key, e, when);
  op.ReplyPoint();  // Redis replies, then signals and notifies
  op.Changed(notify::kGeneric, "expire", key, 1);
  op.effects.PropagateAs({"PEXPIREAT", std::string(key), StrCat(when)});
}

OpResult<int64_t> OpIncrBy(const OpArgs& op, std::string_view key, int64_t delta) {
  OpResult<Entry*> found = FindString(op, key);
  if (!found.ok()) return found.status();
  Entry* e = found.value();
  int64_t cur = 0;
  if (e != nullptr && !ValueAsInt(e->value.str(), &cur)) return OpStatus::kNotInteger;
  if ((delta < 0 && cur < 0 && delta < INT64_MIN - cur) || (delta > 0 && cur > 0 && delta > INT64_MAX - cur)) {
    return OpStatus::kOverflow;
  }
  const int64_t next = cur + delta;
  bool created;
  if (e == nullptr) e = op.db.FindOrInsert(key, op.now_ms, &created);
  e->value = StringValue::FromInt(next);
  op.Changed(notify::kString, "incrby", key, 1);  // DECR* too, as Redis
  return next;
}

OpResult<std::string> OpIncrByFloat(const OpArgs& op, std::string_view key, std::string_view delta_text) {
  OpResult<Entry*> found = FindString(op, key);
  if (!found.ok()) return found.status();
  Entry* e = found.value();
  long double cur = 0, delta;
  char scratch[24];
  if (e != nullptr && !core::StringToLongDouble(e->value.str().View(scratch), &cur)) return OpStatus::kNotFloat;
  if (!core::StringToLongDouble(delta_text, &delta)) return OpStatus::kNotFloat;
  const long double next = cur + delta;
  if (std::isnan(next) || std::isinf(next)) return OpStatus::kNanOrInf;
  bool created;
  if (e == nullptr) e = op.db.FindOrInsert(key, op.now_ms, &created);
  std::string text = core::FormatLongDouble(next);
  // Not int-encoded even when integral: Redis keeps the text it formatted
  // (OBJECT ENCODING embstr), without tryObjectEncoding.
  e->value = StringValue::Text(text);
  op.Changed(notify::kString, "incrbyfloat", key, 1);
  // Replayed as the resulting value: float arithmetic must not be redone.
  op.effects.PropagateAs({"SET", std::string(key), text, "KEEPTTL"});
  return text;
}

OpResult<int64_t> OpAppend(const OpArgs& op, std::string_view key, std::string_view value, int64_t max_len) {
  OpResult<Entry*> found = FindString(op, key);
  if (!found.ok()) return found.status();
  Entry* e = found.value();
  int64_t total;
  if (e == nullptr) {
    bool created;
    e = op.db.FindOrInsert(key, op.now_ms, &created);
    e->value = StringValue(value);
    total = static_cast<int64_t>(value.size());
  } else {
    total = static_cast<int64_t>(e->value.str().size() + value.size());
    if (total > max_len) return OpStatus::kTooBig;
    e->value.str().Append(value);
  }
  op.Changed(notify::kString, "append", key, 1);
  return total;
}

OpResult<int64_t> OpSetRange(const OpArgs& op, std::string_view key, int64_t offset, std::string_view value,
                             int64_t max_len) {
  // offset + size without overflow: offset may be up to INT64_MAX.
  const bool too_big =
      static_cast<int64_t>(value.size()) > max_len || offset > max_len - static_cast<int64_t>(value.size());
  OpResult<Entry*> found = FindString(op, key);
  if (!found.ok()) return found.status();
  Entry* e = found.value();
  if (e == nullptr) {
    if (value.empty()) return int64_t{0};
    if (too_big) return OpStatus::kTooBig;
    bool created;
    e = op.db.FindOrInsert(key, op.now_ms, &created);
    e->value = StringValue::Raw("");
  } else {
    const int64_t len = static_cast<int64_t>(e->value.str().size());
    if (value.empty()) return len;
    if (too_big) return OpStatus::kTooBig;
  }
  e->value.str().SetRange(static_cast<size_t>(offset), value);
  op.Changed(notify::kString, "setrange", key, 1);
  return static_cast<int64_t>(e->value.str().size());
}

}  // namespace ringkv::server

#include "server/commands/stream_ops.h"

#include <memory>

#include "server/errors.h"

namespace ringkv::server {

using core::StreamId;
using core::StreamValue;

namespace {

constexpr size_t kStreamListpackMaxSize = size_t{1} << 30;

// The ID XADD gives an entry (Redis's streamAppendItem), or false when it
// would not be above the stream's last ID. *seq_overflow: `<ms>-*` found no
// sequence left (Redis 7.0 then reports "Elements are too large").
bool NextId(const StreamValue& s, const XaddArgs& args, int64_t now_ms, StreamId* id, bool* seq_overflow) {
  const StreamId last = s.last_id();
  if (!args.id_given) {
    const uint64_t ms = static_cast<uint64_t>(now_ms);
    if (ms > last.ms) {
      *id = {ms, 0};
    } else {
      *id = last;
      if (!id->Incr()) return false;
    }
  } else if (!args.seq_given) {
    if (last.ms == args.id.ms) {
      if (last.seq == UINT64_MAX) {
        *seq_overflow = true;
        return false;
      }
      *id = {last.ms, last.seq + 1};
    } else {
      *id = args.id;
    }
  } else {
    *id = args.id;
  }
  return *id > last;
}

}  // namespace

TrimOutcome TrimStream(StreamValue& s, const StreamTrim& trim) {
  TrimOutcome out;
  if (trim.strategy == StreamTrim::Strategy::kNone) return out;
  if (trim.strategy == StreamTrim::Strategy::kMaxLen) {
    out.removed = s.TrimByLength(trim.maxlen, trim.approx, trim.limit);
    if (trim.approx) out.exact_threshold = std::to_string(s.size());
  } else {
    out.removed = s.TrimByMinId(trim.minid, trim.approx, trim.limit);
    if (trim.approx) {
      StreamId first;
      if (!s.EdgeId(true, &first)) first = StreamId::Max();
      out.exact_threshold = first.ToString();
    }
  }
  return out;
}

StreamResult<XaddOutcome> OpXadd(const OpArgs& op, std::string_view key, const XaddArgs& args,
                                 core::FieldValues fv) {
  using R = StreamResult<XaddOutcome>;
  if (args.id_given && args.seq_given && args.id.is_zero()) {
    return R::Error("ERR The ID specified in XADD must be greater than 0-0");
  }
  StreamValue* s;
  if (args.nomkstream) {
    core::OpResult<StreamValue*> found = core::FindTyped<StreamValue>(op.db, key, op.now_ms);
    if (found.status() == core::OpStatus::kNotFound) return R::Missing();
    if (!found.ok()) return R::Error(errors::kWrongType);
    s = found.value();
  } else {
    core::OpResult<StreamValue*> found = core::FindOrCreate<StreamValue>(
        op.db, key, op.now_ms, [] { return core::Value(std::make_unique<StreamValue>()); });
    if (!found.ok()) return R::Error(errors::kWrongType);
    s = found.value();
  }
  if (s->last_id() == StreamId::Max()) {
    return R::Error("ERR The stream has exhausted the last possible ID, unable to add more items");
  }
  XaddOutcome out;
  size_t total = 0;
  for (std::string_view x : fv) total += x.size();
  bool seq_overflow = false;
  if (!NextId(*s, args, op.now_ms, &out.id, &seq_overflow)) {
    return R::Error(seq_overflow ? "ERR Elements are too large to be stored"
                                 : "ERR The ID specified in XADD is equal or smaller than the target stream top item");
  }
  if (total > kStreamListpackMaxSize) return R::Error("ERR Elements are too large to be stored");
  s->Append(out.id, fv, op.limits().stream);
  op.ReplyPoint();  // Redis replies, then signals and notifies
  op.Changed(notify::kStream, "xadd", key, 1);
  out.trim = TrimStream(*s, args.trim);
  if (out.trim.removed > 0) op.Changed(notify::kStream, "xtrim", key, 0);
  R r;
  r.value = std::move(out);
  return r;
}

StreamResult<TrimOutcome> OpXtrim(const OpArgs& op, std::string_view key, const StreamTrim& trim) {
  using R = StreamResult<TrimOutcome>;
  core::OpResult<StreamValue*> found = core::FindTyped<StreamValue>(op.db, key, op.now_ms);
  if (found.status() == core::OpStatus::kNotFound) return R{};
  if (!found.ok()) return R::Error(errors::kWrongType);
  R r;
  r.value = TrimStream(*found.value(), trim);
  if (r.value.removed > 0) {
    op.Notified(notify::kStream, "xtrim", key, static_cast<uint64_t>(r.value.removed));  // then the signal, as Redis
    op.Signaled(key);
  }
  return r;
}

StreamResult<int64_t> OpXdel(const OpArgs& op, std::string_view key, const std::vector<StreamId>& ids) {
  using R = StreamResult<int64_t>;
  core::OpResult<StreamValue*> found = core::FindTyped<StreamValue>(op.db, key, op.now_ms);
  if (found.status() == core::OpStatus::kNotFound) return R{};
  if (!found.ok()) return R::Error(errors::kWrongType);
  R r;
  for (StreamId id : ids) r.value += found.value()->Delete(id) ? 1 : 0;
  if (r.value > 0) op.Changed(notify::kStream, "xdel", key, static_cast<uint64_t>(r.value));
  return r;
}

StreamResult<bool> OpXsetid(const OpArgs& op, std::string_view key, StreamId last, int64_t entries_added,
                            StreamId max_deleted) {
  using R = StreamResult<bool>;
  core::OpResult<StreamValue*> found = core::FindTyped<StreamValue>(op.db, key, op.now_ms);
  if (found.status() == core::OpStatus::kNotFound) return R::Error(errors::kNoSuchKey);
  if (!found.ok()) return R::Error(errors::kWrongType);
  StreamValue& s = *found.value();
  // Redis 7.0 checks the new last ID against the top entry only, not against
  // the stream's recorded max_deleted_entry_id (7.2 added that check): an
  // emptied stream may be set back below the IDs it deleted.
  if (s.size() > 0) {
    StreamId top;
    s.EdgeId(false, &top);
    if (last < top) return R::Error("ERR The ID specified in XSETID is smaller than the target stream top item");
    if (entries_added != -1 && s.size() > static_cast<uint64_t>(entries_added)) {
      return R::Error("ERR The entries_added specified in XSETID is smaller than the target stream length");
    }
  }
  s.set_last_id(last);
  if (entries_added != -1) s.set_entries_added(static_cast<uint64_t>(entries_added));
  if (!max_deleted.is_zero()) s.set_max_deleted_id(max_deleted);
  op.ReplyPoint();  // Redis replies, then notifies; no signal
  op.Notified(notify::kStream, "xsetid", key, 1);
  R r;
  r.value = true;
  return r;
}

}  // namespace ringkv::server

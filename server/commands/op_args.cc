#include "server/commands/op_args.h"

namespace ringkv::server {

int64_t StoreValue(const OpArgs& op, std::string_view dst, core::Value value, size_t size, uint32_t type,
                   std::string_view event, uint64_t dirty, StoreReply reply) {
  if (size == 0) {
    if (reply == StoreReply::kBetween) op.ReplyPoint();  // a kBetweenDelFirst reply comes after
    if (op.effects.DeleteKey(op.db, dst, op.now_ms, op.effects.lazy_server_del())) {
      op.Changed(notify::kGeneric, "del", dst, 1);
    }
    return 0;
  }
  // Redis's setKey: an existing key is overwritten (no "new" event), its
  // TTL removed; a missing one is added.
  if (core::Entry* e = op.db.Find(dst, op.now_ms); e != nullptr) {
    op.effects.ReplaceValue(*e, std::move(value), op.effects.lazy_server_del());
    op.db.SetExpire(dst, e, -1);
  } else {
    bool created;
    op.db.FindOrInsert(dst, op.now_ms, &created, value.slot_bytes_wanted())->value = std::move(value);
  }
  op.Signaled(dst);
  if (reply != StoreReply::kAfter) op.ReplyPoint();
  op.Notified(type, event, dst, dirty);
  return static_cast<int64_t>(size);
}

}  // namespace ringkv::server

#include "server/commands/key_ops.h"

#include <string>
#include <vector>

#include "core/access_policy.h"
#include "core/strings.h"

#include "server/commands/string_ops.h"

namespace ringkv::server {

namespace {

// Moves key `from` of the op's database to key `to` of `dst`, keeping value,
// TTL and access clock; a value `to` held is deleted first.
void MoveEntry(const OpArgs& op, std::string_view from, core::Database& dst, std::string_view to) {
  core::Database& src = op.db;
  core::Entry* e = src.Find(from, op.now_ms);
  // The value moves out of its node: a short string's bytes go to the heap
  // until the new node, sized for them, takes them in.
  core::Value value = std::move(e->value);
  const int64_t when = src.GetExpire(e);
  const uint32_t lru = e->lru();
  const std::string from_copy(from);  // `from` may alias memory freed by Erase
  src.Erase(from_copy);
  op.effects.DeleteKey(dst, to, op.now_ms, op.effects.lazy_server_del());
  bool created;
  core::Entry* n = dst.FindOrInsert(to, op.now_ms, &created, value.slot_bytes_wanted());
  n->value = std::move(value);
  n->set_lru(lru);
  if (when >= 0) dst.SetExpire(to, n, when);
}

}  // namespace

int64_t OpDel(const OpArgs& op, std::span<const std::string_view> keys, bool lazy) {
  int64_t n = 0;
  for (std::string_view key : keys) {
    if (!op.effects.DeleteKey(op.db, key, op.now_ms, lazy)) continue;
    ++n;
    op.Changed(notify::kGeneric, "del", key, 1);
  }
  return n;
}

bool OpExpire(const OpArgs& op, std::string_view key, int64_t when, const ExpireFlags& flags) {
  core::Entry* e = op.db.Find(key, op.now_ms);
  if (e == nullptr) return false;
  const int64_t current = op.db.GetExpire(e);
  if ((flags.nx && current >= 0) || (flags.xx && current < 0) || (flags.gt && (current < 0 || when <= current)) ||
      (flags.lt && current >= 0 && when >= current)) {
    return false;
  }
  OpSetDeadline(op, key, e, when);
  return true;
}

bool OpPersist(const OpArgs& op, std::string_view key) {
  core::Entry* e = op.db.Find(key, op.now_ms);
  if (e == nullptr || op.db.GetExpire(e) < 0) return false;
  op.db.SetExpire(key, e, -1);
  op.Changed(notify::kGeneric, "persist", key, 1);
  return true;
}

core::OpResult<bool> OpRename(const OpArgs& op, std::string_view src, std::string_view dst, bool nx) {
  if (op.db.Find(src, op.now_ms) == nullptr) return core::OpStatus::kNotFound;
  if (src == dst) return false;
  if (nx && op.db.Find(dst, op.now_ms) != nullptr) return false;
  MoveEntry(op, src, op.db, dst);
  // Redis: both keys signaled, then both events.
  op.Signaled(src);
  op.Signaled(dst);
  op.Notified(notify::kGeneric, "rename_from", src, 1);
  op.Notified(notify::kGeneric, "rename_to", dst, 0);
  return true;
}

bool OpMove(const OpArgs& op, std::string_view key, core::Database& dst) {
  if (op.db.Find(key, op.now_ms) == nullptr || dst.Find(key, op.now_ms) != nullptr) return false;
  MoveEntry(op, key, dst, key);
  op.Changed(notify::kGeneric, "move_from", key, 1);
  op.effects.Changed(dst.index(), notify::kGeneric, "move_to", key, 0);
  return true;
}

bool OpCopy(const OpArgs& op, std::string_view src, core::Database& dst, std::string_view dst_key, bool replace) {
  core::Entry* from = op.db.FindForRead(src, op.now_ms);
  if (from == nullptr) return false;
  if (dst.FindNoTouch(dst_key, op.now_ms) != nullptr) {
    if (!replace) return false;
    dst.Erase(dst_key);
  }
  // Copy before inserting: the insert may rehash, but never moves `from`.
  core::Value value = from->value.CopyForCopyCommand();
  const int64_t when = op.db.GetExpire(from);
  bool created;
  core::Entry* to = dst.FindOrInsert(dst_key, op.now_ms, &created, value.slot_bytes_wanted());
  to->value = std::move(value);
  if (when >= 0) dst.SetExpire(dst_key, to, when);
  op.effects.Changed(dst.index(), notify::kGeneric, "copy_to", dst_key, 1);
  return true;
}

void OpRestore(const OpArgs& op, std::string_view key, core::Value value, bool replace, int64_t ttl, bool relative,
               int64_t idle, int64_t freq, std::span<const std::string_view> command) {
  const bool deleted = replace && op.db.Erase(key);
  if (ttl && relative) ttl += op.now_ms;
  if (ttl && ttl <= op.now_ms && op.keyspace.expiry_mode() == core::ExpiryMode::kDelete) {
    // Already expired: nothing is created; a replaced key is gone.
    if (deleted) {
      op.Changed(notify::kGeneric, "del", key, 1);
      op.effects.PropagateAs({"DEL", std::string(key)});
    }
    return;
  }
  bool created;
  core::Entry* e = op.db.FindOrInsert(key, op.now_ms, &created, value.slot_bytes_wanted());
  e->value = std::move(value);
  e->set_lru(core::RestoredAccess(op.keyspace.access_policy(), idle, static_cast<int>(freq), op.now_ms, e->lru()));
  if (ttl) {
    op.db.SetExpire(key, e, ttl);
    if (relative) {  // propagated with an absolute time, as Redis does
      std::vector<std::string> argv(command.begin(), command.end());
      argv[2] = StrCat(ttl);
      argv.push_back("ABSTTL");
      op.effects.PropagateAs(std::move(argv));
    }
  }
  op.Changed(notify::kGeneric, "restore", key, 1);
}

}  // namespace ringkv::server

#include "server/commands/bitmap_ops.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/string_value.h"

namespace ringkv::server {

using core::Entry;
using core::OpResult;
using core::OpStatus;
using core::StringValue;

namespace {

// Redis's lookupStringForBitCommand: the string at `key` holding at least
// `bytes` bytes (created, or zero-grown, and made raw in place): its bytes
// and, in *len, their count. *changed tells whether it was created or grew.
OpResult<char*> StringForBits(const OpArgs& op, std::string_view key, size_t bytes, bool* changed, size_t* len) {
  Entry* e = op.db.Find(key, op.now_ms);
  if (e != nullptr && !e->value.is_string()) return OpStatus::kWrongType;
  if (e == nullptr) {
    bool created;
    e = op.db.FindOrInsert(key, op.now_ms, &created);
    e->value = StringValue::Raw("");
    *changed = true;
  } else {
    *changed = e->value.str().size() < bytes;
  }
  char* p = e->value.str().MutableBytes(bytes);
  *len = e->value.str().size();
  return p;
}

}  // namespace

OpResult<int64_t> OpSetBit(const OpArgs& op, std::string_view key, uint64_t offset, bool on) {
  bool changed;
  size_t len;
  OpResult<char*> bytes = StringForBits(op, key, static_cast<size_t>(offset >> 3) + 1, &changed, &len);
  if (!bytes.ok()) return bytes.status();
  auto* p = reinterpret_cast<uint8_t*>(bytes.value());
  const uint8_t mask = static_cast<uint8_t>(1u << (7 - (offset & 7)));
  uint8_t& byte = p[offset >> 3];
  const bool old = (byte & mask) != 0;
  if (changed || old != on) {
    byte = on ? static_cast<uint8_t>(byte | mask) : static_cast<uint8_t>(byte & ~mask);
    op.Changed(notify::kString, "setbit", key, 1);
  }
  return int64_t{old ? 1 : 0};
}

OpResult<int64_t> OpBitOp(const OpArgs& op, core::BitOpKind kind, std::string_view dest,
                          std::span<const std::string_view> sources) {
  // Integer-encoded sources are read through their text, kept here.
  std::vector<std::string> texts;
  std::vector<std::string_view> views;
  texts.reserve(sources.size());
  views.reserve(sources.size());
  for (std::string_view key : sources) {
    Entry* e = op.db.FindForRead(key, op.now_ms);
    if (e == nullptr) {
      views.emplace_back();
      continue;
    }
    if (!e->value.is_string()) return OpStatus::kWrongType;
    const StringValue& s = e->value.str();
    if (s.is_int()) {
      texts.push_back(s.ToString());
      views.emplace_back(texts.back());
    } else {
      char scratch[24];
      views.push_back(s.View(scratch));
    }
  }
  std::string result = core::BitOp(kind, views);
  const auto len = static_cast<int64_t>(result.size());
  if (result.empty()) {
    if (op.effects.DeleteKey(op.db, dest, op.now_ms, op.effects.lazy_server_del())) op.Changed(notify::kGeneric, "del", dest, 1);
    return len;
  }
  bool created;
  Entry* e = op.db.FindOrInsert(dest, op.now_ms, &created);
  e->value = StringValue::Raw(result);
  op.db.SetExpire(dest, e, -1);
  op.Changed(notify::kString, "set", dest, 1);
  return len;
}

std::vector<std::optional<int64_t>> RunBitfield(uint8_t* p, size_t len, std::span<const BitfieldOp> ops, bool grown,
                                                uint64_t* changes) {
  std::vector<std::optional<int64_t>> out;
  out.reserve(ops.size());
  for (const BitfieldOp& f : ops) {
    if (f.kind == BitfieldOp::kGet) {
      // Up to 9 bytes copied, zero-padded: a field may run past the end.
      uint8_t buf[9] = {};
      const uint64_t first = f.offset >> 3;
      for (uint64_t i = 0; i < 9 && first + i < len; ++i) buf[i] = p[first + i];
      const uint64_t at = f.offset - first * 8;
      out.emplace_back(f.is_signed ? core::GetSignedField(buf, at, f.bits)
                                   : static_cast<int64_t>(core::GetUnsignedField(buf, at, f.bits)));
      continue;
    }
    bool overflow;
    int64_t reply;
    uint64_t stored;
    bool differs;
    if (f.is_signed) {
      const int64_t old = core::GetSignedField(p, f.offset, f.bits);
      int64_t next = f.kind == BitfieldOp::kIncrBy ? old : f.value;
      int64_t limited = 0;
      overflow = core::SignedFieldOverflows(next, f.kind == BitfieldOp::kIncrBy ? f.value : 0, f.bits, f.overflow,
                                            &limited);
      if (overflow) {
        next = limited;
      } else if (f.kind == BitfieldOp::kIncrBy) {
        next = static_cast<int64_t>(static_cast<uint64_t>(old) + static_cast<uint64_t>(f.value));
      }
      reply = f.kind == BitfieldOp::kIncrBy ? next : old;
      stored = static_cast<uint64_t>(next);
      differs = next != old;
    } else {
      const uint64_t old = core::GetUnsignedField(p, f.offset, f.bits);
      uint64_t next = f.kind == BitfieldOp::kIncrBy ? old : static_cast<uint64_t>(f.value);
      uint64_t limited = 0;
      overflow = core::UnsignedFieldOverflows(next, f.kind == BitfieldOp::kIncrBy ? f.value : 0, f.bits, f.overflow,
                                              &limited);
      if (overflow) {
        next = limited;
      } else if (f.kind == BitfieldOp::kIncrBy) {
        next = old + static_cast<uint64_t>(f.value);
      }
      reply = static_cast<int64_t>(f.kind == BitfieldOp::kIncrBy ? next : old);
      stored = next;
      differs = next != old;
    }
    if (overflow && f.overflow == core::Overflow::kFail) {
      out.emplace_back(std::nullopt);
      continue;
    }
    core::SetField(p, f.offset, f.bits, stored);
    if (grown || differs) ++*changes;
    out.emplace_back(reply);
  }
  return out;
}

OpResult<std::vector<std::optional<int64_t>>> OpBitfield(const OpArgs& op, std::string_view key,
                                                         std::span<const BitfieldOp> ops) {
  uint64_t highest = 0;
  for (const BitfieldOp& f : ops) {
    if (f.kind != BitfieldOp::kGet) highest = std::max(highest, f.offset + f.bits - 1);
  }
  bool changed;
  size_t len;
  OpResult<char*> bytes = StringForBits(op, key, static_cast<size_t>(highest >> 3) + 1, &changed, &len);
  if (!bytes.ok()) return bytes.status();
  uint64_t changes = 0;
  auto out = RunBitfield(reinterpret_cast<uint8_t*>(bytes.value()), len, ops, changed, &changes);
  if (changes > 0) {
    op.ReplyPoint();  // Redis replies, then signals and notifies
    op.Changed(notify::kString, "setbit", key, changes);
  }
  return out;
}

}  // namespace ringkv::server

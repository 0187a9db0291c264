// The HyperLogLog family: PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST.
// An HLL is a plain string in Redis's format (core/hyperloglog.h); the Op*
// functions here change the keyspace and report through OpArgs, the Cmd*
// handlers reply. Checks, their order and error texts follow Redis 7.0's
// hyperloglog.c.
//
// REQUIRES: main thread.
#include <string>
#include <vector>

#include "core/hyperloglog.h"
#include "core/string_value.h"
#include "core/strings.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/errors.h"

namespace ringkv::server {
namespace {

namespace hll = core::hll;
using core::Entry;
using core::StringValue;

constexpr char kNotHll[] = "WRONGTYPE Key is not a valid HyperLogLog string value.";
constexpr char kCorrupted[] = "INVALIDOBJ Corrupted HLL object detected";

// How an HLL operation ended.
enum class HllStatus : uint8_t { kOk, kWrongType, kNotHll, kCorrupted };

// The value of a reply or an error.
struct HllResult {
  HllStatus status = HllStatus::kOk;
  int64_t value = 0;
};

// Redis's isHLLObjectOrReply for the live entry e.
HllStatus CheckHll(const Entry* e) {
  if (!e->value.is_string()) return HllStatus::kWrongType;
  const StringValue& s = e->value.str();
  if (s.is_int()) return HllStatus::kNotHll;
  char scratch[24];
  return hll::LooksValid(s.View(scratch)) ? HllStatus::kOk : HllStatus::kNotHll;
}

std::string_view HllBytes(const Entry* e) {
  char scratch[24];  // unused: an HLL is never integer-encoded
  return e->value.str().View(scratch);
}

// hll-sparse-max-bytes (bound to CollectionLimits), read when a sparse HLL may grow.
size_t SparseMaxBytes(CommandContext& ctx) { return ctx.keyspace.limits().hll_sparse_max_bytes; }

// PFADD: 1 when a register changed or the key was created ("pfadd", one
// dirty change per update), else 0.
HllResult OpPfAdd(const OpArgs& op, std::string_view key, Argv elements, size_t sparse_max) {
  Entry* e = op.db.Find(key, op.now_ms);
  int64_t updated = 0;
  if (e == nullptr) {
    bool created;
    e = op.db.FindOrInsert(key, op.now_ms, &created);
    e->value = StringValue::Raw(hll::NewSparse());
    updated = 1;
  } else if (HllStatus st = CheckHll(e); st != HllStatus::kOk) {
    return {st, 0};
  }
  StringValue& sv = e->value.str();
  // Both encodings end alike: a change drops the cached cardinality and is
  // reported once, whatever the number of registers it moved.
  const auto finish = [&]() -> HllResult {
    if (updated == 0) return {HllStatus::kOk, 0};
    hll::InvalidateCache(sv.MutableBytes(0));
    op.Changed(notify::kString, "pfadd", key, static_cast<uint64_t>(updated));
    return {HllStatus::kOk, 1};
  };
  if (hll::EncodingOf(HllBytes(e)) == hll::kDense) {
    // The common case: the bytes stay put, made writable once.
    auto* regs = reinterpret_cast<uint8_t*>(sv.MutableBytes(0) + hll::kHeaderSize);
    for (std::string_view el : elements) updated += hll::DenseAdd(regs, el) ? 1 : 0;
    return finish();
  }
  std::string s(HllBytes(e));
  for (std::string_view el : elements) {
    const int r = hll::Add(&s, el, sparse_max);
    if (r < 0) {
      sv = StringValue::Raw(s);
      return {HllStatus::kCorrupted, 0};
    }
    updated += r;
  }
  sv = StringValue::Raw(s);
  return finish();
}

// PFCOUNT of one key: the cached cardinality, or a fresh estimate stored
// in the cache -- a write (the key is signalled, one dirty change, so the
// command propagates) though the command is read-only, as in Redis.
HllResult OpPfCountOne(const OpArgs& op, std::string_view key) {
  Entry* e = op.db.FindForRead(key, op.now_ms);
  if (e == nullptr) return {};
  if (HllStatus st = CheckHll(e); st != HllStatus::kOk) return {st, 0};
  op.db.PrepareChange(key, *e);  // unshared (made raw) here and its cache written below, as Redis
  char* bytes = e->value.str().MutableBytes(0);
  uint64_t card;
  if (hll::CachedCardinality(HllBytes(e), &card)) return {HllStatus::kOk, static_cast<int64_t>(card)};
  bool invalid = false;
  card = hll::Count(HllBytes(e), &invalid);
  if (invalid) return {HllStatus::kCorrupted, 0};
  hll::StoreCardinality(bytes, card);
  op.Changed(0, "", key, 1);  // no event class: signalled and counted only
  return {HllStatus::kOk, static_cast<int64_t>(card)};
}

// The union of the HLLs at `keys` into max (missing keys are empty). Sets
// *any_dense when one of them is dense.
HllStatus MergeKeys(const OpArgs& op, Argv keys, uint8_t* max, bool* any_dense) {
  for (std::string_view key : keys) {
    Entry* e = op.db.FindForRead(key, op.now_ms);
    if (e == nullptr) continue;
    if (HllStatus st = CheckHll(e); st != HllStatus::kOk) return st;
    if (hll::EncodingOf(HllBytes(e)) == hll::kDense) *any_dense = true;
    if (!hll::MergeInto(max, HllBytes(e))) return HllStatus::kCorrupted;
  }
  return HllStatus::kOk;
}

// PFMERGE dest [source ...]: dest (itself a source) becomes the union,
// dense when a source was; "pfadd", one dirty change.
HllStatus OpPfMerge(const OpArgs& op, std::string_view dest, Argv sources, size_t sparse_max) {
  std::vector<uint8_t> max(hll::kRegisters);
  bool any_dense = false;
  if (HllStatus st = MergeKeys(op, sources, max.data(), &any_dense); st != HllStatus::kOk) return st;
  Entry* e = op.db.Find(dest, op.now_ms);
  if (e == nullptr) {
    bool created;
    e = op.db.FindOrInsert(dest, op.now_ms, &created);
    e->value = StringValue::Raw(hll::NewSparse());
  }
  std::string s(HllBytes(e));
  if (any_dense && !hll::SparseToDense(&s)) return HllStatus::kCorrupted;
  for (uint32_t i = 0; i < hll::kRegisters; ++i) {
    if (max[i] != 0) hll::Set(&s, i, max[i], sparse_max);
  }
  hll::InvalidateCache(s.data());
  e->value.str() = StringValue::Raw(s);
  op.Changed(notify::kString, "pfadd", dest, 1);
  return HllStatus::kOk;
}

// Replies the error of a failed HLL operation.
void ReplyHllError(CommandContext& ctx, HllStatus status) {
  switch (status) {
    case HllStatus::kWrongType:
      return ctx.reply.Error(errors::kWrongType);
    case HllStatus::kNotHll:
      return ctx.reply.Error(kNotHll);
    case HllStatus::kCorrupted:
      return ctx.reply.Error(kCorrupted);
    case HllStatus::kOk:
      return;
  }
}

void CmdPfadd(CommandContext& ctx) {
  HllResult r = OpPfAdd(OpArgsOf(ctx), ctx.argv[1], ctx.argv.subspan(2), SparseMaxBytes(ctx));
  if (r.status != HllStatus::kOk) return ReplyHllError(ctx, r.status);
  ctx.reply.Integer(r.value);
}

void CmdPfcount(CommandContext& ctx) {
  const OpArgs op = OpArgsOf(ctx);
  if (ctx.argv.size() == 2) {
    HllResult r = OpPfCountOne(op, ctx.argv[1]);
    if (r.status != HllStatus::kOk) return ReplyHllError(ctx, r.status);
    return ctx.reply.Integer(r.value);
  }
  std::vector<uint8_t> max(hll::kRegisters);
  bool any_dense = false;
  if (HllStatus st = MergeKeys(op, ctx.argv.subspan(1), max.data(), &any_dense); st != HllStatus::kOk) {
    return ReplyHllError(ctx, st);
  }
  ctx.reply.Integer(static_cast<int64_t>(hll::CountRegisters(max.data())));
}

void CmdPfmerge(CommandContext& ctx) {
  HllStatus st = OpPfMerge(OpArgsOf(ctx), ctx.argv[1], ctx.argv.subspan(1), SparseMaxBytes(ctx));
  if (st != HllStatus::kOk) return ReplyHllError(ctx, st);
  ctx.reply.Ok();
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key. The key is looked up (and its
// type checked) before the subcommand's name, as Redis does. GETREG and
// TODENSE make a sparse HLL dense, a change counted as dirty (propagated)
// with no event.
void CmdPfdebug(CommandContext& ctx) {
  const OpArgs op = OpArgsOf(ctx);
  std::string_view sub = ctx.argv[1], key = ctx.argv[2];
  Entry* e = op.db.Find(key, op.now_ms);
  if (e == nullptr) return ctx.reply.Error("ERR The specified key does not exist");
  if (HllStatus st = CheckHll(e); st != HllStatus::kOk) return ReplyHllError(ctx, st);
  e->value.str().MutableBytes(0);  // made raw, as Redis unshares it
  const bool sparse = hll::EncodingOf(HllBytes(e)) == hll::kSparse;
  auto to_dense = [&] {
    std::string s(HllBytes(e));
    if (!hll::SparseToDense(&s)) return false;
    e->value.str() = StringValue::Raw(s);
    op.effects.Dirty(1);
    return true;
  };
  if (Is(sub, "GETREG")) {
    if (sparse && !to_dense()) return ctx.reply.Error(kCorrupted);
    const auto* regs = reinterpret_cast<const uint8_t*>(HllBytes(e).data() + hll::kHeaderSize);
    ctx.reply.ArrayHeader(hll::kRegisters);
    for (uint32_t i = 0; i < hll::kRegisters; ++i) ctx.reply.Integer(hll::DenseGet(regs, i));
  } else if (Is(sub, "DECODE")) {
    if (!sparse) return ctx.reply.Error("ERR HLL encoding is not sparse");
    ctx.reply.Bulk(hll::DecodeSparse(HllBytes(e)));
  } else if (Is(sub, "ENCODING")) {
    ctx.reply.SimpleString(sparse ? "sparse" : "dense");
  } else if (Is(sub, "TODENSE")) {
    if (sparse && !to_dense()) return ctx.reply.Error(kCorrupted);
    ctx.reply.Integer(sparse ? 1 : 0);
  } else {
    ctx.reply.Error(StrCat("ERR Unknown PFDEBUG subcommand '", sub, "'"));
  }
}

void CmdPfselftest(CommandContext& ctx) {
  std::string error;
  if (!hll::SelfTest(&error)) return ctx.reply.Error(error);
  ctx.reply.Ok();
}

}  // namespace

void RegisterHyperLogLogCommands(CommandTable& t) {
  using namespace cmd;
  t.Add(Cmd("pfadd", -2, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @hyperloglog @fast", "hyperloglog", "Adds the specified elements to the specified HyperLogLog.", "2.8.9", CmdPfadd));
  t.Add(Cmd("pfcount", -2, kReadonly | kMayReplicate, 1, -1, 1, "@read @hyperloglog @slow", "hyperloglog", "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).", "2.8.9", CmdPfcount));
  t.Add(Cmd("pfmerge", -2, kWrite | kDenyOom, 1, -1, 1, "@write @hyperloglog @slow", "hyperloglog", "Merge N different HyperLogLogs into a single one.", "2.8.9", CmdPfmerge));
  t.Add(Cmd("pfdebug", 3, kWrite | kDenyOom | kAdmin, 2, 2, 1, "@write @hyperloglog @admin @slow @dangerous", "hyperloglog", "Internal commands for debugging HyperLogLog values", "2.8.9", CmdPfdebug));
  t.Add(Cmd("pfselftest", 1, kAdmin, 0, 0, 0, "@hyperloglog @admin @slow @dangerous", "hyperloglog", "An internal command for testing HyperLogLog values", "2.8.9", CmdPfselftest));
}

}  // namespace ringkv::server

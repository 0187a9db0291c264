// The bitmap family: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD,
// BITFIELD_RO. Bitmaps are plain strings; argument checks, their order and
// their error texts follow Redis 7.0's bitops.c.
#include <string>
#include <vector>

#include "core/bitops.h"
#include "core/strings.h"
#include "server/client.h"
#include "server/command_table.h"
#include "server/commands/bitmap_ops.h"
#include "server/commands/util.h"
#include "server/errors.h"

namespace ringkv::server {
namespace {

constexpr char kBadOffset[] = "ERR bit offset is not an integer or out of range";
constexpr char kBadBit[] = "ERR bit is not an integer or out of range";
constexpr char kBadFieldType[] =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";

int64_t MaxBitmapBytes(CommandContext& ctx) { return ctx.keyspace.limits().max_string_len; }

// A bit offset (Redis's getBitOffsetFromArgument): an int64 >= 0 whose byte
// lies within proto-max-bulk-len -- not checked for the primary's link and
// the AOF loader, which must obey (Redis's mustObeyClient); with
// `field_bits` > 0, "#N" means N fields of that width. Replies the error and
// returns false otherwise.
bool ParseBitOffset(CommandContext& ctx, std::string_view arg, unsigned field_bits, uint64_t* out) {
  const bool fields = field_bits > 0 && !arg.empty() && arg[0] == '#';
  int64_t v;
  bool ok = core::StringToInt64(fields ? arg.substr(1) : arg, &v);
  if (ok && fields) ok = !__builtin_mul_overflow(v, static_cast<int64_t>(field_bits), &v);
  const bool must_obey = ctx.client.is_master || (ctx.client.id() == 0 && !ctx.client.is_script);
  if (!ok || v < 0 || (!must_obey && (v >> 3) >= MaxBitmapBytes(ctx))) {
    ctx.reply.Error(kBadOffset);
    return false;
  }
  *out = static_cast<uint64_t>(v);
  return true;
}

// The bytes of a string entry (through `scratch` for an integer).
std::string_view BitmapBytes(const core::Entry* e, char* scratch) { return e->value.str().View(scratch); }

// GETBIT's and SETBIT's value prefetcher: the byte holding the bit, when the
// value is a string that already has it (anything else: nothing to hint).
void PrefetchBitByte(const core::Value& value, std::span<const std::string_view> argv) {
  int64_t offset;
  if (argv.size() < 3 || !value.is_string() || !core::StringToInt64(argv[2], &offset) || offset < 0) return;
  char scratch[24];
  const std::string_view s = value.str().View(scratch);
  const uint64_t byte = static_cast<uint64_t>(offset) >> 3;
  if (byte < s.size()) __builtin_prefetch(s.data() + byte);
}

// Resolves a [start, end] range of BITCOUNT / BITPOS (negative counts from
// the end, clamped) over `total` units; false when it is empty.
bool ClampRange(int64_t total, int64_t* start, int64_t* end) {
  if (*start < 0) *start += total;
  if (*end < 0) *end += total;
  if (*start < 0) *start = 0;
  if (*end < 0) *end = 0;
  if (*end >= total) *end = total - 1;
  return *start <= *end;
}

// BIT or BYTE at argv[i]; replies a syntax error otherwise.
bool ParseBitUnit(CommandContext& ctx, size_t i, bool* is_bit) {
  if (Is(ctx.argv[i], "BIT")) {
    *is_bit = true;
  } else if (Is(ctx.argv[i], "BYTE")) {
    *is_bit = false;
  } else {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  return true;
}

void CmdSetbit(CommandContext& ctx) {
  uint64_t offset;
  if (!ParseBitOffset(ctx, ctx.argv[2], 0, &offset)) return;
  int64_t on;
  if (!core::StringToInt64(ctx.argv[3], &on) || (on & ~int64_t{1}) != 0) {
    ctx.reply.Error(kBadBit);
    return;
  }
  ReplyInteger(ctx, OpSetBit(OpArgsOf(ctx), ctx.argv[1], offset, on == 1));
}

void CmdGetbit(CommandContext& ctx) {
  uint64_t offset;
  if (!ParseBitOffset(ctx, ctx.argv[2], 0, &offset)) return;
  core::Entry* e = ctx.db.FindForRead(ctx.argv[1], ctx.now_ms);
  if (!CheckType(ctx, e, core::ValueType::kString)) return;
  int64_t bit = 0;
  if (e != nullptr) {
    char scratch[24];
    std::string_view s = BitmapBytes(e, scratch);
    const uint64_t byte = offset >> 3;
    if (byte < s.size()) bit = (static_cast<uint8_t>(s[byte]) >> (7 - (offset & 7))) & 1;
  }
  ctx.reply.Integer(bit);
}

// BITCOUNT key [start end [BYTE|BIT]]. As Redis 7.0, a missing key answers
// 0 before the arguments are looked at.
void CmdBitcount(CommandContext& ctx) {
  core::Entry* e = ctx.db.FindForRead(ctx.argv[1], ctx.now_ms);
  if (e == nullptr) return ctx.reply.Integer(0);
  if (!CheckType(ctx, e, core::ValueType::kString)) return;
  char scratch[24];
  std::string_view s = BitmapBytes(e, scratch);
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const size_t argc = ctx.argv.size();
  if (argc == 2) return ctx.reply.Integer(static_cast<int64_t>(core::PopCount(p, s.size())));
  if (argc != 4 && argc != 5) return ctx.reply.Error(errors::kSyntax);
  int64_t start, end;
  if (!ParseInt(ctx, ctx.argv[2], &start) || !ParseInt(ctx, ctx.argv[3], &end)) return;
  if (start < 0 && end < 0 && start > end) return ctx.reply.Integer(0);
  bool is_bit = false;
  if (argc == 5 && !ParseBitUnit(ctx, 4, &is_bit)) return;
  const auto len = static_cast<int64_t>(s.size());
  if (!ClampRange(is_bit ? len * 8 : len, &start, &end)) return ctx.reply.Integer(0);
  const uint64_t first = is_bit ? start : start * 8, last = is_bit ? end : end * 8 + 7;
  ctx.reply.Integer(static_cast<int64_t>(core::PopCountBits(p, s.size(), first, last)));
}

// BITPOS key bit [start [end [BYTE|BIT]]].
void CmdBitpos(CommandContext& ctx) {
  int64_t bit;
  if (!ParseInt(ctx, ctx.argv[2], &bit)) return;
  if (bit != 0 && bit != 1) return ctx.reply.Error("ERR The bit argument must be 1 or 0.");
  // A missing key is an endless run of zeros.
  core::Entry* e = ctx.db.FindForRead(ctx.argv[1], ctx.now_ms);
  if (e == nullptr) return ctx.reply.Integer(bit ? -1 : 0);
  if (!CheckType(ctx, e, core::ValueType::kString)) return;
  char scratch[24];
  std::string_view s = BitmapBytes(e, scratch);
  const auto len = static_cast<int64_t>(s.size());
  const size_t argc = ctx.argv.size();
  int64_t start = 0, end = len - 1;
  bool is_bit = false, end_given = false;
  if (argc >= 4 && argc <= 6) {
    if (!ParseInt(ctx, ctx.argv[3], &start)) return;
    if (argc == 6 && !ParseBitUnit(ctx, 5, &is_bit)) return;
    if (argc >= 5) {
      if (!ParseInt(ctx, ctx.argv[4], &end)) return;
      end_given = true;
    } else {
      end = is_bit ? len * 8 + 7 : len - 1;
    }
  } else if (argc != 3) {
    return ctx.reply.Error(errors::kSyntax);
  }
  if (!ClampRange(is_bit ? len * 8 : len, &start, &end)) return ctx.reply.Integer(-1);
  const uint64_t first = is_bit ? start : start * 8, last = is_bit ? end : end * 8 + 7;
  int64_t pos = core::FindBit(reinterpret_cast<const uint8_t*>(s.data()), s.size(), bit == 1, first, last);
  // Without an explicit end, the string reads as followed by zeros.
  if (pos < 0 && bit == 0 && !end_given) pos = static_cast<int64_t>(last + 1);
  ctx.reply.Integer(pos);
}

// BITOP operation destkey key [key ...].
void CmdBitop(CommandContext& ctx) {
  std::string_view name = ctx.argv[1];
  core::BitOpKind kind;
  if (Is(name, "AND")) {
    kind = core::BitOpKind::kAnd;
  } else if (Is(name, "OR")) {
    kind = core::BitOpKind::kOr;
  } else if (Is(name, "XOR")) {
    kind = core::BitOpKind::kXor;
  } else if (Is(name, "NOT")) {
    kind = core::BitOpKind::kNot;
  } else {
    return ctx.reply.Error(errors::kSyntax);
  }
  if (kind == core::BitOpKind::kNot && ctx.argv.size() != 4) {
    return ctx.reply.Error("ERR BITOP NOT must be called with a single source key.");
  }
  ReplyInteger(ctx, OpBitOp(OpArgsOf(ctx), kind, ctx.argv[2], ctx.argv.subspan(3)));
}

// A field type: i1..i64 or u1..u63 (lower case, as Redis).
bool ParseFieldType(CommandContext& ctx, std::string_view arg, bool* is_signed, unsigned* bits) {
  int64_t n = 0;
  const bool ok = !arg.empty() && (arg[0] == 'i' || arg[0] == 'u') && core::StringToInt64(arg.substr(1), &n) &&
                  n >= 1 && n <= (arg[0] == 'i' ? 64 : 63);
  if (!ok) {
    ctx.reply.Error(kBadFieldType);
    return false;
  }
  *is_signed = arg[0] == 'i';
  *bits = static_cast<unsigned>(n);
  return true;
}

// BITFIELD key [GET type offset | SET type offset value | INCRBY type offset
// increment | OVERFLOW WRAP|SAT|FAIL] ...; BITFIELD_RO takes GETs only.
// Every subcommand is parsed before the key is looked up.
void Bitfield(CommandContext& ctx, bool read_only_command) {
  std::vector<BitfieldOp> ops;
  core::Overflow overflow = core::Overflow::kWrap;
  bool writes = false;
  for (size_t j = 2; j < ctx.argv.size(); ++j) {
    const size_t left = ctx.argv.size() - j - 1;
    std::string_view sub = ctx.argv[j];
    BitfieldOp f;
    if (Is(sub, "GET") && left >= 2) {
      f.kind = BitfieldOp::kGet;
    } else if (Is(sub, "SET") && left >= 3) {
      f.kind = BitfieldOp::kSet;
    } else if (Is(sub, "INCRBY") && left >= 3) {
      f.kind = BitfieldOp::kIncrBy;
    } else if (Is(sub, "OVERFLOW") && left >= 1) {
      std::string_view how = ctx.argv[++j];
      if (Is(how, "WRAP")) {
        overflow = core::Overflow::kWrap;
      } else if (Is(how, "SAT")) {
        overflow = core::Overflow::kSat;
      } else if (Is(how, "FAIL")) {
        overflow = core::Overflow::kFail;
      } else {
        return ctx.reply.Error("ERR Invalid OVERFLOW type specified");
      }
      continue;
    } else {
      return ctx.reply.Error(errors::kSyntax);
    }
    if (!ParseFieldType(ctx, ctx.argv[j + 1], &f.is_signed, &f.bits)) return;
    if (!ParseBitOffset(ctx, ctx.argv[j + 2], f.bits, &f.offset)) return;
    if (f.kind != BitfieldOp::kGet) {
      writes = true;
      if (!ParseInt(ctx, ctx.argv[j + 3], &f.value)) return;
    }
    f.overflow = overflow;
    ops.push_back(f);
    j += f.kind == BitfieldOp::kGet ? 2 : 3;
  }
  std::vector<std::optional<int64_t>> results;
  if (!writes) {
    core::Entry* e = ctx.db.FindForRead(ctx.argv[1], ctx.now_ms);
    if (!CheckType(ctx, e, core::ValueType::kString)) return;
    char scratch[24];
    std::string_view s = e != nullptr ? BitmapBytes(e, scratch) : std::string_view();
    // Only GETs: RunBitfield writes nothing.
    uint64_t changes = 0;
    results = RunBitfield(reinterpret_cast<uint8_t*>(const_cast<char*>(s.data())), s.size(), ops, false, &changes);
  } else {
    if (read_only_command) return ctx.reply.Error("ERR BITFIELD_RO only supports the GET subcommand");
    auto r = OpBitfield(OpArgsOf(ctx), ctx.argv[1], ops);
    if (!r.ok()) return ReplyOpError(ctx, r.status());
    results = std::move(r.value());
  }
  ctx.reply.ArrayHeader(static_cast<int64_t>(results.size()));
  for (const std::optional<int64_t>& v : results) {
    if (v) {
      ctx.reply.Integer(*v);
    } else {
      ctx.reply.Null();
    }
  }
}
void CmdBitfield(CommandContext& ctx) { Bitfield(ctx, false); }
void CmdBitfieldRo(CommandContext& ctx) { Bitfield(ctx, true); }

}  // namespace

void RegisterBitmapCommands(CommandTable& t) {
  using namespace cmd;
  t.Add(PrefetchValue(Cmd("setbit", 4, kWrite | kDenyOom, 1, 1, 1, "@write @bitmap @slow", "bitmap", "Sets or clears the bit at offset in the string value stored at key", "2.2.0", CmdSetbit), PrefetchBitByte));
  t.Add(PrefetchValue(Cmd("getbit", 3, kReadonly | kFast, 1, 1, 1, "@read @bitmap @fast", "bitmap", "Returns the bit value at offset in the string value stored at key", "2.2.0", CmdGetbit), PrefetchBitByte));
  t.Add(Cmd("bitcount", -2, kReadonly, 1, 1, 1, "@read @bitmap @slow", "bitmap", "Count set bits in a string", "2.6.0", CmdBitcount));
  t.Add(Cmd("bitpos", -3, kReadonly, 1, 1, 1, "@read @bitmap @slow", "bitmap", "Find first bit set or clear in a string", "2.8.7", CmdBitpos));
  t.Add(Cmd("bitop", -4, kWrite | kDenyOom, 2, -1, 1, "@write @bitmap @slow", "bitmap", "Perform bitwise operations between strings", "2.6.0", CmdBitop));
  t.Add(Cmd("bitfield", -2, kWrite | kDenyOom, 1, 1, 1, "@write @bitmap @slow", "bitmap", "Perform arbitrary bitfield integer operations on strings", "3.2.0", CmdBitfield));
  t.Add(Cmd("bitfield_ro", -2, kReadonly | kFast, 1, 1, 1, "@read @bitmap @fast", "bitmap", "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD", "6.0.0", CmdBitfieldRo));
}

}  // namespace ringkv::server

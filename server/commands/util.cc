#include "server/commands/util.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/glob.h"
#include "core/string_ops.h"
#include "core/string_value.h"
#include "core/strings.h"
#include "server/errors.h"

namespace ringkv::server {

void BlockOnKeys(CommandContext& ctx, BlockKind kind, std::vector<std::string> keys, int64_t deadline_us,
                 std::vector<std::pair<std::string, core::StreamId>> read_after) {
  if (ctx.effects.BlockOnKeys(ctx.client, kind, ctx.argv, std::move(keys), deadline_us, std::move(read_after))) {
    return;
  }
  if (Is(ctx.argv[0], "blmove") || Is(ctx.argv[0], "brpoplpush")) {
    ctx.reply.Null();
  } else {
    ctx.reply.NullArray();  // every key-blocking command's timeout, as in Redis 7.0
  }
}

bool ParseInt(CommandContext& ctx, std::string_view arg, int64_t* out) {
  if (core::StringToInt64(arg, out)) return true;
  ctx.reply.Error(errors::kNotInteger);
  return false;
}

bool ParseInt32(CommandContext& ctx, std::string_view arg, int32_t* out, std::string_view error) {
  int64_t v;
  const bool integer = core::StringToInt64(arg, &v);
  if (integer && v >= INT32_MIN && v <= INT32_MAX) {
    *out = static_cast<int32_t>(v);
    return true;
  }
  if (!error.empty()) {
    ctx.reply.Error(error);
  } else if (integer) {
    ctx.reply.Error("ERR value is out of range, value must between -2147483648 and 2147483647");
  } else {
    ctx.reply.Error(errors::kNotInteger);
  }
  return false;
}

bool ParseDouble(std::string_view s, double* out) {
  // string2d: no leading space, whole string consumed, not NaN.
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  const std::string buf(s);
  errno = 0;
  char* end;
  const double v = std::strtod(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size() || std::isnan(v)) return false;
  if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || std::fpclassify(v) == FP_ZERO)) return false;
  *out = v;
  return true;
}

bool ParseFloat(CommandContext& ctx, std::string_view arg, long double* out) {
  if (core::StringToLongDouble(arg, out)) return true;
  ctx.reply.Error(errors::kNotFloat);
  return false;
}

void ReplyHelp(CommandContext& ctx, std::span<const char* const> lines) {
  ctx.reply.ArrayHeader(static_cast<int64_t>(lines.size()) + 3);
  ctx.reply.SimpleString(
      StrCat(AsciiUpper(ctx.argv[0]), " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"));
  for (const char* l : lines) ctx.reply.SimpleString(l);
  ctx.reply.SimpleString("HELP");
  ctx.reply.SimpleString("    Prints this help.");
}

void ReplySubcommandSyntaxError(CommandContext& ctx) {
  ctx.reply.Error(StrCat("ERR unknown subcommand or wrong number of arguments for '",
                         errors::UpToNul(ctx.argv[1].substr(0, 128)),
                         "'. Try ", AsciiUpper(ctx.argv[0]), " HELP."));
}

bool ScanOptions::Matches(std::string_view s) const {
  return !has_pattern || pattern == "*" || core::GlobMatch(pattern, s);
}

bool ParseScanCursor(CommandContext& ctx, std::string_view arg, uint64_t* cursor) {
  // As Redis: strtoul semantics, no leading space, the whole string.
  std::string s(arg);
  char* end = nullptr;
  errno = 0;
  *cursor = std::strtoull(s.c_str(), &end, 10);
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0])) || *end != '\0' || errno == ERANGE) {
    ctx.reply.Error("ERR invalid cursor");
    return false;
  }
  return true;
}

bool ParseScanOptions(CommandContext& ctx, size_t first, bool allow_type, ScanOptions* opts) {
  for (size_t i = first; i < ctx.argv.size(); i += 2) {
    if (i + 1 >= ctx.argv.size()) {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
    std::string_view opt = ctx.argv[i], val = ctx.argv[i + 1];
    if (Is(opt, "COUNT")) {
      if (!ParseInt(ctx, val, &opts->count)) return false;
      if (opts->count < 1) {
        ctx.reply.Error(errors::kSyntax);
        return false;
      }
    } else if (Is(opt, "MATCH")) {
      opts->pattern = val;
      opts->has_pattern = true;
    } else if (Is(opt, "TYPE") && allow_type) {
      opts->type = val;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

void ReplyScan(CommandContext& ctx, uint64_t cursor, const std::vector<std::string>& items) {
  ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(StrCat(cursor));
  ctx.reply.ArrayHeader(static_cast<int64_t>(items.size()));
  for (const std::string& item : items) ctx.reply.Bulk(item);
}

bool ParseMpopArgs(CommandContext& ctx, size_t numkeys_index, std::string_view first_end, std::string_view other_end,
                   MpopArgs* out) {
  int64_t numkeys;
  if (!core::StringToInt64(ctx.argv[numkeys_index], &numkeys) || numkeys <= 0) {
    ctx.reply.Error("ERR numkeys should be greater than 0");
    return false;
  }
  size_t i = numkeys_index + 1 + static_cast<size_t>(numkeys);
  if (numkeys > static_cast<int64_t>(ctx.argv.size()) || i >= ctx.argv.size()) {  // no room for <end>
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  out->keys = ctx.argv.subspan(numkeys_index + 1, static_cast<size_t>(numkeys));
  if (Is(ctx.argv[i], first_end)) {
    out->first_end = true;
  } else if (Is(ctx.argv[i], other_end)) {
    out->first_end = false;
  } else {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  bool has_count = false;
  for (++i; i < ctx.argv.size(); ++i) {
    if (Is(ctx.argv[i], "COUNT") && i + 1 < ctx.argv.size() && !has_count) {
      has_count = true;
      if (!core::StringToInt64(ctx.argv[++i], &out->count) || out->count <= 0) {
        ctx.reply.Error("ERR count should be greater than 0");
        return false;
      }
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

bool ParseRandomCountArgs(CommandContext& ctx, std::string_view with_word, int64_t* count, bool* with) {
  if (!ParseInt(ctx, ctx.argv[2], count)) return false;
  if (*count == INT64_MIN) {
    ctx.reply.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
    return false;
  }
  if (ctx.argv.size() > 4 || (ctx.argv.size() == 4 && !Is(ctx.argv[3], with_word))) {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  *with = ctx.argv.size() == 4;
  if (*with && (*count < -INT64_MAX / 2 || *count > INT64_MAX / 2)) {
    ctx.reply.Error("ERR value is out of range");
    return false;
  }
  return true;
}

bool CheckType(CommandContext& ctx, const core::Entry* e, core::ValueType type) {
  if (e == nullptr || e->value.type() == type) return true;
  ctx.reply.Error(errors::kWrongType);
  return false;
}

void ReplyOpError(CommandContext& ctx, core::OpStatus status) {
  switch (status) {
    case core::OpStatus::kWrongType: ctx.reply.Error(errors::kWrongType); break;
    case core::OpStatus::kNotInteger: ctx.reply.Error(errors::kNotInteger); break;
    case core::OpStatus::kNotFloat: ctx.reply.Error(errors::kNotFloat); break;
    case core::OpStatus::kOverflow: ctx.reply.Error(errors::kOverflow); break;
    case core::OpStatus::kNanOrInf: ctx.reply.Error(errors::kNanOrInf); break;
    case core::OpStatus::kTooBig: ctx.reply.Error(errors::kStringTooLong); break;
    case core::OpStatus::kNotFound: ctx.reply.Error(errors::kNoSuchKey); break;
    case core::OpStatus::kOutOfRange: ctx.reply.Error(errors::kIndexRange); break;
    default: ctx.reply.Error("ERR internal error"); break;
  }
}

}  // namespace ringkv::server

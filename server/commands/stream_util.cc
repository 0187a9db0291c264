#include "server/commands/stream_util.h"

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "core/string_value.h"

namespace ringkv::server {
namespace {

// Redis's string2ull: string2ll for canonical int64 text (negatives refused),
// otherwise strtoull on the whole text (which takes a leading '+', spaces,
// "-0" and leading zeros, as Redis does).
bool ParseU64(const std::string& s, uint64_t* out) {
  int64_t ll;
  if (core::StringToInt64(s, &ll)) {
    if (ll < 0) return false;
    *out = static_cast<uint64_t>(ll);
    return true;
  }
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno == EINVAL || errno == ERANGE || *end != '\0') return false;
  *out = v;
  return true;
}

}  // namespace

bool ParseStreamId(std::string_view arg, uint64_t missing_seq, bool strict, bool* seq_given, core::StreamId* out) {
  if (arg.size() > 127) return false;
  // Redis works on a C string: text after an embedded NUL is ignored.
  std::string buf(arg.substr(0, arg.find('\0')));
  if (strict && (buf == "-" || buf == "+")) return false;
  if (seq_given != nullptr) *seq_given = true;
  if (buf == "-") {
    *out = core::StreamId::Min();
    return true;
  }
  if (buf == "+") {
    *out = core::StreamId::Max();
    return true;
  }
  const size_t dash = buf.find('-');
  uint64_t ms, seq = missing_seq;
  if (!ParseU64(buf.substr(0, dash), &ms)) return false;
  if (dash != std::string::npos) {
    const std::string rest = buf.substr(dash + 1);
    if (seq_given != nullptr && rest == "*") {
      seq = 0;
      *seq_given = false;
    } else if (!ParseU64(rest, &seq)) {
      return false;
    }
  }
  *out = {ms, seq};
  return true;
}

bool ParseStreamIdOrReply(CommandContext& ctx, std::string_view arg, uint64_t missing_seq, bool strict,
                          core::StreamId* out) {
  if (ParseStreamId(arg, missing_seq, strict, nullptr, out)) return true;
  ctx.reply.Error(kInvalidStreamId);
  return false;
}

void ReplyStreamEntry(CommandContext& ctx, core::StreamId id, core::FieldValues fv) {
  ctx.reply.ArrayHeader(2);
  ctx.reply.Bulk(id.ToString());
  ctx.reply.ArrayHeader(static_cast<int64_t>(fv.size()));
  for (std::string_view s : fv) ctx.reply.Bulk(s);
}

size_t ReplyStreamRange(CommandContext& ctx, const core::StreamValue& s, core::StreamId start, core::StreamId end,
                        size_t count, bool reverse) {
  // The count is known only after the walk: collect IDs first when it is
  // bounded by neither `count` nor the stream's length.
  std::vector<std::pair<core::StreamId, std::vector<std::string>>> rows;
  s.Range(start, end, reverse, [&](core::StreamId id, core::FieldValues fv) {
    rows.emplace_back(id, std::vector<std::string>(fv.begin(), fv.end()));
    return count == 0 || rows.size() < count;
  });
  ctx.reply.ArrayHeader(static_cast<int64_t>(rows.size()));
  for (const auto& [id, fv] : rows) {
    ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk(id.ToString());
    ctx.reply.ArrayHeader(static_cast<int64_t>(fv.size()));
    for (const std::string& x : fv) ctx.reply.Bulk(x);
  }
  return rows.size();
}

}  // namespace ringkv::server

#include "server/commands/stream_util.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string>
#include <utility>
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
  // The count is known only after the walk: the entries are gathered first,
  // their fields and values copied into one buffer (not a string each).
  struct Row {
    core::StreamId id;
    size_t first;  // index of its first span
    size_t n;
  };
  std::vector<Row> rows;
  std::vector<std::pair<size_t, size_t>> spans;  // offset and length in `text`
  std::string text;
  s.Range(start, end, reverse, [&](core::StreamId id, core::FieldValues fv) {
    rows.push_back({id, spans.size(), fv.size()});
    for (std::string_view x : fv) {
      spans.emplace_back(text.size(), x.size());
      text.append(x);
    }
    return count == 0 || rows.size() < count;
  });
  ctx.reply.ArrayHeader(static_cast<int64_t>(rows.size()));
  for (const Row& row : rows) {
    ctx.reply.ArrayHeader(2);
    char id[48];
    char* p = std::to_chars(id, id + 20, row.id.ms).ptr;
    *p++ = '-';
    p = std::to_chars(p, p + 20, row.id.seq).ptr;
    ctx.reply.Bulk(std::string_view(id, static_cast<size_t>(p - id)));
    ctx.reply.ArrayHeader(static_cast<int64_t>(row.n));
    for (size_t i = row.first; i < row.first + row.n; ++i) {
      ctx.reply.Bulk(std::string_view(text.data() + spans[i].first, spans[i].second));
    }
  }
  return rows.size();
}

}  // namespace ringkv::server

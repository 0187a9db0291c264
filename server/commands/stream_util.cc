#include "server/commands/stream_util.h"

#include <cerrno>
#include <charconv>
#include <cstring>
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

// Digits only, parsed as a uint64 (false when empty, another character or
// out of range): what string2ull gives such text, leading zeros included.
bool ParseDigits(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
  }
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// Writes "<type><n>\r\n" at p; returns the end. Stream replies are mostly
// short fields and values: lengths below 100 skip the general formatting.
char* PutHeader(char* p, char type, size_t n) {
  *p++ = type;
  if (n < 10) {
    *p++ = static_cast<char>('0' + n);
  } else if (n < 100) {
    *p++ = static_cast<char>('0' + n / 10);
    *p++ = static_cast<char>('0' + n % 10);
  } else {
    p = std::to_chars(p, p + 20, n).ptr;
  }
  *p++ = '\r';
  *p++ = '\n';
  return p;
}

char* PutBulk(char* p, std::string_view s) {
  p = PutHeader(p, '$', s.size());
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  p += s.size();
  *p++ = '\r';
  *p++ = '\n';
  return p;
}

}  // namespace

bool ParseStreamId(std::string_view arg, uint64_t missing_seq, bool strict, bool* seq_given, core::StreamId* out) {
  if (arg.size() > 127) return false;
  // The common `<ms>-<seq>` / `<ms>` of plain digits, without a copy; other
  // text (signs, spaces, `*`, a NUL) takes the general path below.
  if (!arg.empty() && arg[0] >= '0' && arg[0] <= '9') {
    const size_t dash = arg.find('-');
    uint64_t ms, seq = missing_seq;
    if (ParseDigits(arg.substr(0, dash), &ms) &&
        (dash == std::string_view::npos || ParseDigits(arg.substr(dash + 1), &seq))) {
      if (seq_given != nullptr) *seq_given = true;
      *out = {ms, seq};
      return true;
    }
  }
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

void AppendStreamEntryResp(core::StreamId id, core::FieldValues fv, std::string* out) {
  // Room for every header (at most 25 bytes each), then written through a
  // pointer and trimmed: no capacity check per piece.
  size_t room = 4 + 25 + core::StreamId::kMaxText + 2 + 25;
  for (std::string_view x : fv) room += 25 + x.size() + 2;
  const size_t at = out->size();
  out->resize(at + room);
  char* const begin = out->data() + at;
  char* p = begin;
  char idtext[core::StreamId::kMaxText];
  p = PutHeader(p, '*', 2);
  p = PutBulk(p, std::string_view(idtext, id.Format(idtext)));
  p = PutHeader(p, '*', fv.size());
  for (std::string_view x : fv) p = PutBulk(p, x);
  out->resize(at + static_cast<size_t>(p - begin));
}

size_t ReplyStreamRange(CommandContext& ctx, const core::StreamValue& s, core::StreamId start, core::StreamId end,
                        size_t count, bool reverse) {
  // The count is known only after the walk: the entries are encoded into
  // one buffer as they are read (their reply is the same in RESP2 and
  // RESP3), then sent behind the array's header.
  std::string resp;
  resp.reserve(4096);
  size_t n = 0;
  s.Range(start, end, reverse, [&](core::StreamId id, core::FieldValues fv) {
    AppendStreamEntryResp(id, fv, &resp);
    ++n;
    return count == 0 || n < count;
  });
  ctx.reply.ArrayHeader(static_cast<int64_t>(n));
  ctx.reply.Raw(resp);
  return n;
}

}  // namespace ringkv::server

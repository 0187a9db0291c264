#include "io/reply_builder.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

namespace ringkv::io {

int FormatInt(int64_t v, char* buf) {
  auto r = std::to_chars(buf, buf + 21, v);
  return static_cast<int>(r.ptr - buf);
}

int FormatDouble(double v, char* buf) {
  if (std::isinf(v)) {
    const char* s = v > 0 ? "inf" : "-inf";
    int n = v > 0 ? 3 : 4;
    std::memcpy(buf, s, n);
    return n;
  }
  // Redis 7.0 uses "%.17g" for replies of doubles: a NaN prints with its
  // sign, "-nan" for Lua's 0/0 on x86.
  return std::snprintf(buf, 32, "%.17g", v);
}

void ReplyBuilder::Header(char type, int64_t n) {
  char* p = out_->Reserve(24);
  p[0] = type;
  int len = FormatInt(n, p + 1);
  p[len + 1] = '\r';
  p[len + 2] = '\n';
  out_->Commit(len + 3);
}

void ReplyBuilder::SimpleString(std::string_view s) {
  out_->Append("+");
  out_->Append(s);
  out_->Append("\r\n");
}

void ReplyBuilder::WriteError(std::string_view msg, bool update_stats) {
  out_->Append("-");
  std::string clean;
  if (msg.find_first_of("\r\n") != std::string_view::npos) {
    // As Redis's addReplyErrorFormat: CR and LF trimmed off the end, the
    // others made spaces (a reply line cannot hold them).
    while (!msg.empty() && (msg.back() == '\r' || msg.back() == '\n')) msg.remove_suffix(1);
    clean.assign(msg);
    for (char& c : clean)
      if (c == '\r' || c == '\n') c = ' ';
    msg = clean;
  }
  out_->Append(msg);
  out_->Append("\r\n");
  if (errors_ != nullptr) errors_->OnErrorReply(msg, update_stats);
}

void ReplyBuilder::Integer(int64_t v) {
  // Hot for small values: one Reserve, no second append.
  Header(':', v);
}

void ReplyBuilder::Bulk(std::string_view s) {
  if (s.size() <= 512) {
    char* p = out_->Reserve(s.size() + 32);
    p[0] = '$';
    int len = FormatInt(static_cast<int64_t>(s.size()), p + 1);
    char* q = p + 1 + len;
    *q++ = '\r';
    *q++ = '\n';
    if (!s.empty()) std::memcpy(q, s.data(), s.size());  // an empty view may have a null data()
    q += s.size();
    *q++ = '\r';
    *q++ = '\n';
    out_->Commit(q - p);
    return;
  }
  Header('$', static_cast<int64_t>(s.size()));
  out_->Append(s);
  out_->Append("\r\n");
}

void ReplyBuilder::Null() { out_->Append(resp_ >= 3 ? std::string_view("_\r\n") : std::string_view("$-1\r\n")); }

void ReplyBuilder::NullArray() { out_->Append(resp_ >= 3 ? std::string_view("_\r\n") : std::string_view("*-1\r\n")); }

void ReplyBuilder::ArrayHeader(int64_t n) { Header('*', n); }

void ReplyBuilder::MapHeader(int64_t pairs) {
  if (resp_ >= 3) {
    Header('%', pairs);
  } else {
    Header('*', pairs * 2);
  }
}

void ReplyBuilder::SetHeader(int64_t n) { Header(resp_ >= 3 ? '~' : '*', n); }

void ReplyBuilder::PushHeader(int64_t n) { Header(resp_ >= 3 ? '>' : '*', n); }

void ReplyBuilder::Double(double v) {
  char buf[40];
  if (resp_ >= 3) {
    buf[0] = ',';
    int n = FormatDouble(v, buf + 1);
    buf[n + 1] = '\r';
    buf[n + 2] = '\n';
    out_->Append({buf, static_cast<size_t>(n + 3)});
    return;
  }
  int n = FormatDouble(v, buf);
  Bulk({buf, static_cast<size_t>(n)});
}

void ReplyBuilder::Bool(bool v) {
  if (resp_ >= 3) {
    out_->Append(v ? "#t\r\n" : "#f\r\n");
  } else {
    out_->Append(v ? ":1\r\n" : ":0\r\n");
  }
}

void ReplyBuilder::Verbatim(std::string_view s, std::string_view format) {
  if (resp_ < 3) {
    Bulk(s);
    return;
  }
  Header('=', static_cast<int64_t>(s.size() + 4));
  out_->Append(format);
  out_->Append(":");
  out_->Append(s);
  out_->Append("\r\n");
}

void ReplyBuilder::BigNumber(std::string_view digits) {
  if (resp_ < 3) {
    Bulk(digits);
    return;
  }
  out_->Append("(");
  out_->Append(digits);
  out_->Append("\r\n");
}

}  // namespace ringkv::io

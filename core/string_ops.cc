#include "core/string_ops.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ringkv::core {
namespace {

bool ValueAsInt(const StringValue& v, int64_t* out) {
  if (v.is_int()) {
    *out = v.int_value();
    return true;
  }
  char scratch[24];
  return StringToInt64(v.View(scratch), out);
}

bool ValueAsLongDouble(const StringValue& v, long double* out) {
  char scratch[24];
  std::string s(v.View(scratch));
  if (s.empty() || s.size() > 5000 || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  char* end;
  errno = 0;
  long double d = strtold(s.c_str(), &end);
  if (end != s.c_str() + s.size() || std::isnan(d)) return false;
  *out = d;
  return true;
}

}  // namespace

std::string FormatLongDouble(long double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[5200];
  int n = snprintf(buf, sizeof(buf), "%.17Lf", v);
  if (n <= 0 || n >= static_cast<int>(sizeof(buf))) return "0";
  std::string s(buf, n);
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

OpResult<SetResult> OpSet(Database& db, std::string_view key, std::string_view value, const SetOptions& opts,
                          int64_t now_ms) {
  SetResult result;
  Entry* e;
  bool created;
  if (opts.condition == SetOptions::Condition::kAlways && !opts.get) {
    e = db.FindOrInsert(key, now_ms, &created);  // the common SET: one probe
  } else {
    e = db.Find(key, now_ms);
    if (opts.get && e != nullptr) result.previous = e->value.ToString();
    if ((opts.condition == SetOptions::Condition::kIfMissing && e != nullptr) ||
        (opts.condition == SetOptions::Condition::kIfExists && e == nullptr)) {
      return result;
    }
    if (e == nullptr) e = db.FindOrInsert(key, now_ms, &created);
  }
  e->value = StringValue(value);
  e->lru = static_cast<uint32_t>(now_ms / 1000);
  if (!opts.keep_ttl) db.SetExpire(key, e, -1);
  if (opts.expire_at_ms >= 0) {
    if (opts.expire_at_ms <= now_ms) {
      db.Erase(key);  // a deadline in the past deletes the key at once, as Redis does
    } else {
      db.SetExpire(key, e, opts.expire_at_ms);
    }
  }
  result.written = true;
  return result;
}

OpResult<std::string> OpGet(Database& db, std::string_view key, int64_t now_ms) {
  Entry* e = db.Find(key, now_ms);
  if (e == nullptr) return OpStatus::kNotFound;
  return e->value.ToString();
}

OpResult<int64_t> OpIncrBy(Database& db, std::string_view key, int64_t delta, int64_t now_ms) {
  bool created;
  Entry* e = db.Find(key, now_ms);
  int64_t cur = 0;
  if (e != nullptr && !ValueAsInt(e->value, &cur)) return OpStatus::kNotInteger;
  if ((delta < 0 && cur < 0 && delta < INT64_MIN - cur) || (delta > 0 && cur > 0 && delta > INT64_MAX - cur)) {
    return OpStatus::kOverflow;
  }
  int64_t next = cur + delta;
  if (e == nullptr) e = db.FindOrInsert(key, now_ms, &created);
  e->value = StringValue::FromInt(next);
  return next;
}

OpResult<long double> OpIncrByFloat(Database& db, std::string_view key, long double delta, int64_t now_ms) {
  Entry* e = db.Find(key, now_ms);
  long double cur = 0;
  if (e != nullptr && !ValueAsLongDouble(e->value, &cur)) return OpStatus::kNotFloat;
  long double next = cur + delta;
  if (std::isnan(next) || std::isinf(next)) return OpStatus::kNanOrInf;
  bool created;
  if (e == nullptr) e = db.FindOrInsert(key, now_ms, &created);
  e->value = StringValue(FormatLongDouble(next));
  return next;
}

OpResult<int64_t> OpAppend(Database& db, std::string_view key, std::string_view value, int64_t max_len,
                           int64_t now_ms) {
  Entry* e = db.Find(key, now_ms);
  if (e == nullptr) {
    bool created;
    e = db.FindOrInsert(key, now_ms, &created);
    e->value = StringValue(value);
    return static_cast<int64_t>(value.size());
  }
  int64_t total = static_cast<int64_t>(e->value.size() + value.size());
  if (total > max_len) return OpStatus::kTooBig;
  e->value.Append(value);
  return total;
}

OpResult<int64_t> OpSetRange(Database& db, std::string_view key, int64_t offset, std::string_view value,
                             int64_t max_len, int64_t now_ms) {
  Entry* e = db.Find(key, now_ms);
  if (e == nullptr) {
    if (value.empty()) return int64_t{0};
    if (offset + static_cast<int64_t>(value.size()) > max_len) return OpStatus::kTooBig;
    bool created;
    e = db.FindOrInsert(key, now_ms, &created);
    e->value = StringValue::Raw("");
  } else {
    int64_t len = static_cast<int64_t>(e->value.size());
    if (value.empty()) return len;
    if (offset + static_cast<int64_t>(value.size()) > max_len) return OpStatus::kTooBig;
  }
  e->value.SetRange(static_cast<size_t>(offset), value);
  return static_cast<int64_t>(e->value.size());
}

std::string_view SliceRange(std::string_view s, int64_t start, int64_t end) {
  int64_t len = static_cast<int64_t>(s.size());
  if (start < 0 && end < 0 && start > end) return {};
  if (start < 0) start = len + start;
  if (end < 0) end = len + end;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= len) end = len - 1;
  if (start > end || len == 0) return {};
  return s.substr(static_cast<size_t>(start), static_cast<size_t>(end - start + 1));
}

}  // namespace ringkv::core

// SORT and SORT_RO: sorting the elements of a list, set or sorted set
// numerically or lexicographically, by their own value or by keys built
// from a pattern (BY), with LIMIT, GET patterns (hash fields with "->"),
// ASC/DESC and STORE into a list. Semantics follow Redis 7.0's sort.c,
// including its quirks: a BY pattern without '*' means "don't sort", a set
// is still sorted (ALPHA) when stored or returned to a script, and a sorted
// set is converted to its skiplist encoding.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/hash_value.h"
#include "core/list_value.h"
#include "core/set_value.h"
#include "core/strings.h"
#include "core/zset_value.h"
#include "server/acl/acl_clients.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

// Looks a pattern up for `element`: "#" is the element itself; otherwise
// the first '*' is replaced by the element and the key read -- a string,
// or with "->field" after the '*' a hash's field. nullopt when there is no
// '*', no key, or a key of the wrong type (Redis's lookupKeyByPattern).
std::optional<std::string> LookupByPattern(ServerCommandContext& ctx, std::string_view pattern, std::string_view element) {
  if (pattern == "#") return std::string(element);
  const size_t star = pattern.find('*');
  if (star == std::string_view::npos) return std::nullopt;
  std::string_view field;
  std::string_view rest = pattern.substr(star + 1);
  const size_t arrow = rest.find("->");
  if (arrow != std::string_view::npos && arrow + 2 < rest.size()) {
    field = rest.substr(arrow + 2);
    rest = rest.substr(0, arrow);
  }
  const std::string key = StrCat(pattern.substr(0, star), element, rest);
  core::Entry* e = ctx.db.FindForRead(key, ctx.now_ms);
  if (e == nullptr) return std::nullopt;
  if (!field.empty()) {
    if (e->value.type() != core::ValueType::kHash) return std::nullopt;
    std::string v;
    if (!e->value.hash().Get(field, &v)) return std::nullopt;
    return v;
  }
  if (!e->value.is_string()) return std::nullopt;
  return e->value.str().ToString();
}

struct SortItem {
  explicit SortItem(std::string_view e) : element(e) {}
  std::string element;
  double score = 0;                  // numeric sorts
  std::optional<std::string> by;     // ALPHA with BY: the compared value
};

// Two texts as SORT ... ALPHA compares them: with STORE, their bytes
// (compareStringObjects); without, strcoll in the server's LC_COLLATE (set
// from the environment at start-up, as Redis does), which reads each as a C
// string: up to its first NUL byte.
int CompareText(const std::string& a, const std::string& b, bool store) {
  const int c = store ? a.compare(b) : std::strcoll(a.c_str(), b.c_str());
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

// Redis's sortCompare: numbers, ties broken by the element's bytes; or texts
// (of the BY value when there is one, a missing one sorting first).
int Compare(const SortItem& a, const SortItem& b, bool alpha, bool by_pattern, bool store) {
  if (!alpha) {
    if (a.score != b.score) return a.score > b.score ? 1 : -1;
    return a.element.compare(b.element) < 0 ? -1 : a.element.compare(b.element) > 0 ? 1 : 0;
  }
  if (by_pattern) {
    if (!a.by || !b.by) return a.by == b.by ? 0 : !a.by ? -1 : 1;
    return CompareText(*a.by, *b.by, store);
  }
  return CompareText(a.element, b.element, store);
}

// SORT's options, as parsed from the command line.
struct SortOptions {
  bool desc = false;
  bool alpha = false;
  bool dontsort = false;  // BY a pattern without '*': keep the stored order
  int64_t limit_start = 0;
  int64_t limit_count = -1;
  std::optional<std::string_view> store;
  std::optional<std::string_view> by;
  std::vector<std::string_view> gets;
};

// SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC]
// [ALPHA] [STORE destination]. False after replying with an error.
bool ParseSortOptions(ServerCommandContext& ctx, bool readonly, SortOptions* o) {
  // BY with a pattern and GET read keys the arguments do not name: only for
  // a user that may read every key (Redis's user_has_full_key_access).
  auto full_key_read = [&] {
    return AclMayReadAnyKey(ctx.server, ctx.client, *ctx.client.last_command, ctx.argv);
  };
  for (size_t j = 2; j < ctx.argv.size(); ++j) {
    const size_t left = ctx.argv.size() - j - 1;
    std::string_view a = ctx.argv[j];
    if (Is(a, "ASC")) {
      o->desc = false;
    } else if (Is(a, "DESC")) {
      o->desc = true;
    } else if (Is(a, "ALPHA")) {
      o->alpha = true;
    } else if (Is(a, "LIMIT") && left >= 2) {
      if (!ParseInt(ctx, ctx.argv[j + 1], &o->limit_start) || !ParseInt(ctx, ctx.argv[j + 2], &o->limit_count)) {
        return false;
      }
      j += 2;
    } else if (!readonly && Is(a, "STORE") && left >= 1) {
      o->store = ctx.argv[++j];
    } else if (Is(a, "BY") && left >= 1) {
      o->by = ctx.argv[++j];
      o->dontsort = o->by->find('*') == std::string_view::npos;  // a constant key: nothing to sort by
      if (!o->dontsort && !full_key_read()) {
        ctx.reply.Error("ERR BY option of SORT denied due to insufficient ACL permissions.");
        return false;
      }
    } else if (Is(a, "GET") && left >= 1) {
      if (!full_key_read()) {
        ctx.reply.Error("ERR GET option of SORT denied due to insufficient ACL permissions.");
        return false;
      }
      o->gets.push_back(ctx.argv[++j]);
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

// The inclusive range [start, end] of the sorted elements that LIMIT selects
// out of `len` (empty when end < start), clamped as Redis clamps it.
struct SortRange {
  int64_t start;
  int64_t end;
  int64_t count() const { return end >= start ? end - start + 1 : 0; }
};

SortRange LimitRange(const SortOptions& o, int64_t len) {
  int64_t start = std::min(std::max<int64_t>(o.limit_start, 0), len);
  const int64_t limit_count = std::min(std::max<int64_t>(o.limit_count, -1), len);
  int64_t end = limit_count < 0 ? len - 1 : start + limit_count - 1;
  if (start >= len) {
    start = len - 1;
    end = len - 2;
  }
  if (end >= len) end = len - 1;
  return {start, end};
}

int64_t SortableSize(const core::Value& v) {
  switch (v.type()) {
    case core::ValueType::kList:
      return static_cast<int64_t>(v.list().size());
    case core::ValueType::kSet:
      return static_cast<int64_t>(v.set().size());
    default:
      return static_cast<int64_t>(v.zset().size());
  }
}

// Every element of a list, set or sorted set, in its stored order.
void LoadAll(const core::Value& v, std::vector<SortItem>* items) {
  switch (v.type()) {
    case core::ValueType::kList:
      v.list().Walk(0, false, [&](std::string_view e) {
        items->push_back(SortItem(e));
        return true;
      });
      break;
    case core::ValueType::kSet:
      v.set().ForEach([&](std::string_view m) { items->push_back(SortItem(m)); });
      break;
    default:
      v.zset().Walk(0, false, [&](std::string_view m, double) {
        items->push_back(SortItem(m));
        return true;
      });
  }
}

// A list or sorted set that is not sorted keeps its own order: only the LIMIT
// range is loaded (walked backwards for DESC), and the range is rebased to
// the loaded items.
void LoadRange(const core::Value& v, bool desc, SortRange* range, std::vector<SortItem>* items) {
  if (range->end < range->start) return;
  size_t left = static_cast<size_t>(range->count());
  auto take = [&](std::string_view e) {
    items->push_back(SortItem(e));
    return --left > 0;
  };
  if (v.type() == core::ValueType::kList) {
    v.list().Walk(static_cast<size_t>(range->start), desc, take);
  } else {
    v.zset().Walk(static_cast<size_t>(range->start), desc, [&](std::string_view m, double) { return take(m); });
  }
  range->end -= range->start;
  range->start = 0;
}

// Fills each item's sort key (its score, or with ALPHA and BY the compared
// value) and sorts. False when a score is not a number (the sort still ran,
// as in Redis, whose error comes after).
bool SortItems(ServerCommandContext& ctx, const SortOptions& o, std::vector<SortItem>* items) {
  bool conversion_error = false;
  for (SortItem& item : *items) {
    std::optional<std::string> byval = o.by ? LookupByPattern(ctx, *o.by, item.element) : item.element;
    if (!byval) continue;  // a missing BY key: score 0 / sorts first
    if (o.alpha) {
      if (o.by) item.by = std::move(byval);
      continue;
    }
    char* endp;
    errno = 0;
    item.score = std::strtod(byval->c_str(), &endp);
    if (*endp != '\0' || errno == ERANGE || std::isnan(item.score)) conversion_error = true;
  }
  std::stable_sort(items->begin(), items->end(), [&](const SortItem& a, const SortItem& b) {
    const int c = Compare(a, b, o.alpha, o.by.has_value(), o.store.has_value());
    return o.desc ? c > 0 : c < 0;
  });
  return !conversion_error;
}

void ReplySorted(ServerCommandContext& ctx, const SortOptions& o, const std::vector<SortItem>& items, SortRange range) {
  ctx.reply.ArrayHeader(o.gets.empty() ? range.count() : range.count() * static_cast<int64_t>(o.gets.size()));
  for (int64_t j = range.start; j <= range.end; ++j) {
    const std::string& element = items[static_cast<size_t>(j)].element;
    if (o.gets.empty()) ctx.reply.Bulk(element);
    for (std::string_view pattern : o.gets) {
      std::optional<std::string> v = LookupByPattern(ctx, pattern, element);
      if (v) {
        ctx.reply.Bulk(*v);
      } else {
        ctx.reply.Null();
      }
    }
  }
}

void StoreSorted(ServerCommandContext& ctx, const SortOptions& o, const std::vector<SortItem>& items, SortRange range) {
  const int64_t output_len = o.gets.empty() ? range.count() : range.count() * static_cast<int64_t>(o.gets.size());
  auto list = std::make_unique<core::ListValue>(ctx.keyspace.limits().list);
  for (int64_t j = range.start; j <= range.end; ++j) {
    const std::string& element = items[static_cast<size_t>(j)].element;
    if (o.gets.empty()) list->PushBack(element);
    for (std::string_view pattern : o.gets) list->PushBack(LookupByPattern(ctx, pattern, element).value_or(""));
  }
  // Redis counts a change per element stored.
  StoreValue(OpArgsOf(ctx), *o.store, core::Value(std::move(list)), static_cast<size_t>(output_len), notify::kList,
             "sortstore", static_cast<uint64_t>(output_len));
  ctx.reply.Integer(output_len);
}

void Sort(ServerCommandContext& ctx, bool readonly) {
  SortOptions o;
  if (!ParseSortOptions(ctx, readonly, &o)) return;
  core::Entry* e = ctx.db.FindForRead(ctx.argv[1], ctx.now_ms);
  const core::ValueType type = e ? e->value.type() : core::ValueType::kList;
  if (e != nullptr && type != core::ValueType::kList && type != core::ValueType::kSet &&
      type != core::ValueType::kZSet) {
    ctx.reply.Error(errors::kWrongType);
    return;
  }
  // A set has no order of its own: when the result is stored, or returned
  // to a script, it is sorted anyway, so replicas and the AOF see the same
  // list (Redis 7.0 keeps this from its script-replication days).
  if (o.dontsort && type == core::ValueType::kSet && (o.store || ctx.client.is_script)) {
    o.dontsort = false;
    o.alpha = true;
    o.by.reset();
  }
  if (e != nullptr && type == core::ValueType::kZSet) e->value.zset().ConvertToSkiplist();  // as Redis does

  SortRange range = LimitRange(o, e == nullptr ? 0 : SortableSize(e->value));
  std::vector<SortItem> items;
  if (e != nullptr && o.dontsort && type != core::ValueType::kSet) {
    LoadRange(e->value, o.desc, &range, &items);
  } else if (e != nullptr) {
    LoadAll(e->value, &items);
  }
  if (!o.dontsort && !SortItems(ctx, o, &items)) {
    ctx.reply.Error("ERR One or more scores can't be converted into double");
    return;
  }
  if (o.store) {
    StoreSorted(ctx, o, items, range);
  } else {
    ReplySorted(ctx, o, items, range);
  }
}

void CmdSort(ServerCommandContext& ctx) { Sort(ctx, false); }
void CmdSortRo(ServerCommandContext& ctx) { Sort(ctx, true); }

}  // namespace

void RegisterSortCommands(CommandTable& t) {
  using namespace cmd;
  t.Add(MovableKeys(Cmd("sort", -2, kWrite | kDenyOom, 1, 1, 1, "@write @set @sortedset @list @slow @dangerous", "generic",
            "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.", "1.0.0", CmdSort), keys::SortKeys));
  t.Add(Cmd("sort_ro", -2, kReadonly, 1, 1, 1, "@read @set @sortedset @list @slow @dangerous", "generic",
            "Returns the sorted elements of a list, a set, or a sorted set.", "7.0.0", CmdSortRo));
}

}  // namespace ringkv::server

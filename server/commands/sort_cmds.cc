// SORT and SORT_RO: sorting the elements of a list, set or sorted set
// numerically or lexicographically, by their own value or by keys built
// from a pattern (BY), with LIMIT, GET patterns (hash fields with "->"),
// ASC/DESC and STORE into a list. Semantics follow Redis 7.0's sort.c,
// including its quirks: a BY pattern without '*' means "don't sort", a set
// is still sorted (ALPHA) when stored or returned to a script, and a sorted set is converted to its
// skiplist encoding.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/hash_value.h"
#include "core/list_value.h"
#include "core/set_value.h"
#include "core/strings.h"
#include "core/zset_value.h"
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
std::optional<std::string> LookupByPattern(CommandContext& ctx, std::string_view pattern, std::string_view element) {
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
  core::Entry* e = ctx.server.db(ctx.client).FindForRead(key, ctx.now_ms);
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

// Redis's sortCompare: numbers, ties broken by the element's bytes; or bytes
// (of the BY value when there is one, a missing one sorting first).
int Compare(const SortItem& a, const SortItem& b, bool alpha, bool by_pattern) {
  if (!alpha) {
    if (a.score != b.score) return a.score > b.score ? 1 : -1;
    return a.element.compare(b.element) < 0 ? -1 : a.element.compare(b.element) > 0 ? 1 : 0;
  }
  if (by_pattern) {
    if (!a.by || !b.by) return a.by == b.by ? 0 : !a.by ? -1 : 1;
    const int c = a.by->compare(*b.by);
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  const int c = a.element.compare(b.element);
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

// SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC]
// [ALPHA] [STORE destination]
void Sort(CommandContext& ctx, bool readonly) {
  bool desc = false, alpha = false, dontsort = false;
  int64_t limit_start = 0, limit_count = -1;
  std::optional<std::string_view> store, by;
  std::vector<std::string_view> gets;
  for (size_t j = 2; j < ctx.argv.size(); ++j) {
    const size_t left = ctx.argv.size() - j - 1;
    std::string_view a = ctx.argv[j];
    if (Is(a, "ASC")) {
      desc = false;
    } else if (Is(a, "DESC")) {
      desc = true;
    } else if (Is(a, "ALPHA")) {
      alpha = true;
    } else if (Is(a, "LIMIT") && left >= 2) {
      if (!ParseInt(ctx, ctx.argv[j + 1], &limit_start) || !ParseInt(ctx, ctx.argv[j + 2], &limit_count)) return;
      j += 2;
    } else if (!readonly && Is(a, "STORE") && left >= 1) {
      store = ctx.argv[++j];
    } else if (Is(a, "BY") && left >= 1) {
      by = ctx.argv[++j];
      dontsort = by->find('*') == std::string_view::npos;  // a constant key: nothing to sort by
    } else if (Is(a, "GET") && left >= 1) {
      gets.push_back(ctx.argv[++j]);
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  core::Entry* e = ctx.server.db(ctx.client).FindForRead(ctx.argv[1], ctx.now_ms);
  const core::ValueType type = e ? e->value.type() : core::ValueType::kList;
  if (e != nullptr && type != core::ValueType::kList && type != core::ValueType::kSet &&
      type != core::ValueType::kZSet) {
    ctx.reply.Error(errors::kWrongType);
    return;
  }
  // A set has no order of its own: when the result is stored, or returned
  // to a script, it is sorted anyway, so replicas and the AOF see the same
  // list (Redis 7.0 keeps this from its script-replication days).
  if (dontsort && type == core::ValueType::kSet && (store || ctx.client.is_script)) {
    dontsort = false;
    alpha = true;
    by.reset();
  }
  if (e != nullptr && type == core::ValueType::kZSet) e->value.zset().ConvertToSkiplist();  // as Redis does

  const int64_t len = e == nullptr                       ? 0
                      : type == core::ValueType::kList ? static_cast<int64_t>(e->value.list().size())
                      : type == core::ValueType::kSet  ? static_cast<int64_t>(e->value.set().size())
                                                       : static_cast<int64_t>(e->value.zset().size());
  int64_t start = std::min(std::max<int64_t>(limit_start, 0), len);
  limit_count = std::min(std::max<int64_t>(limit_count, -1), len);
  int64_t end = limit_count < 0 ? len - 1 : start + limit_count - 1;
  if (start >= len) {
    start = len - 1;
    end = len - 2;
  }
  if (end >= len) end = len - 1;

  // Load the elements. Lists and sorted sets that are not sorted keep their
  // own order, and only the LIMIT range is loaded (reversed for DESC).
  std::vector<SortItem> items;
  const bool ordered = type == core::ValueType::kList || type == core::ValueType::kZSet;
  if (e != nullptr && ordered && dontsort) {
    if (end >= start) {
      size_t left = static_cast<size_t>(end - start + 1);
      auto take = [&](std::string_view v) {
        items.push_back(SortItem(v));
        return --left > 0;
      };
      if (type == core::ValueType::kList) {
        e->value.list().Walk(static_cast<size_t>(start), desc, take);
      } else {
        e->value.zset().Walk(static_cast<size_t>(start), desc, [&](std::string_view m, double) { return take(m); });
      }
      end -= start;
      start = 0;
    }
  } else if (e != nullptr) {
    switch (type) {
      case core::ValueType::kList:
        e->value.list().Walk(0, false, [&](std::string_view v) {
          items.push_back(SortItem(v));
          return true;
        });
        break;
      case core::ValueType::kSet:
        e->value.set().ForEach([&](std::string_view m) { items.push_back(SortItem(m)); });
        break;
      default:
        e->value.zset().Walk(0, false, [&](std::string_view m, double) {
          items.push_back(SortItem(m));
          return true;
        });
    }
  }

  bool conversion_error = false;
  if (!dontsort) {
    for (SortItem& item : items) {
      std::optional<std::string> byval = by ? LookupByPattern(ctx, *by, item.element) : item.element;
      if (!byval) continue;  // a missing BY key: score 0 / sorts first
      if (alpha) {
        if (by) item.by = std::move(byval);
        continue;
      }
      char* endp;
      errno = 0;
      item.score = std::strtod(byval->c_str(), &endp);
      if (*endp != '\0' || errno == ERANGE || std::isnan(item.score)) conversion_error = true;
    }
    std::stable_sort(items.begin(), items.end(), [&](const SortItem& a, const SortItem& b) {
      const int c = Compare(a, b, alpha, by.has_value());
      return desc ? c > 0 : c < 0;
    });
  }

  const int64_t count = end >= start ? end - start + 1 : 0;
  const int64_t output_len = gets.empty() ? count : count * static_cast<int64_t>(gets.size());
  if (conversion_error) {
    ctx.reply.Error("ERR One or more scores can't be converted into double");
    return;
  }
  if (!store) {
    ctx.reply.ArrayHeader(output_len);
    for (int64_t j = start; j <= end; ++j) {
      const std::string& element = items[static_cast<size_t>(j)].element;
      if (gets.empty()) ctx.reply.Bulk(element);
      for (std::string_view pattern : gets) {
        std::optional<std::string> v = LookupByPattern(ctx, pattern, element);
        if (v) {
          ctx.reply.Bulk(*v);
        } else {
          ctx.reply.Null();
        }
      }
    }
    return;
  }
  auto list = std::make_unique<core::ListValue>(ctx.server.keyspace().limits().list);
  for (int64_t j = start; j <= end; ++j) {
    const std::string& element = items[static_cast<size_t>(j)].element;
    if (gets.empty()) list->PushBack(element);
    for (std::string_view pattern : gets) list->PushBack(LookupByPattern(ctx, pattern, element).value_or(""));
  }
  // Redis counts a change per element stored.
  StoreValue(OpArgsOf(ctx), *store, core::Value(std::move(list)), static_cast<size_t>(output_len), notify::kList,
             "sortstore", static_cast<uint64_t>(output_len));
  ctx.reply.Integer(output_len);
}

void CmdSort(CommandContext& ctx) { Sort(ctx, false); }
void CmdSortRo(CommandContext& ctx) { Sort(ctx, true); }

}  // namespace

void RegisterSortCommands(CommandTable& t) {
  using namespace cmd;
  t.Add(Cmd("sort", -2, kWrite | kDenyOom, 1, 1, 1, "@write @set @sortedset @list @slow @dangerous", "generic",
            "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.", "1.0.0", CmdSort));
  t.Add(Cmd("sort_ro", -2, kReadonly, 1, 1, 1, "@read @set @sortedset @list @slow @dangerous", "generic",
            "Returns the sorted elements of a list, a set, or a sorted set.", "7.0.0", CmdSortRo));
}

}  // namespace ringkv::server

#include "core/zset_value.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>

namespace ringkv::core {

std::string ZScoreToString(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  if (v == 0) return "0";  // -0 too: Redis stores any integral score as an integer
  constexpr double kMin = -4503599627370495.0;  // -(2^52 - 1)
  constexpr double kMax = 4503599627370496.0;   // 2^52
  if (v > kMin && v < kMax && v == static_cast<double>(static_cast<int64_t>(v))) {
    return std::to_string(static_cast<int64_t>(v));
  }
  char buf[32];
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", v);
  return std::string(buf, static_cast<size_t>(n));
}

ZSetValue::~ZSetValue() = default;
ZSetValue::ZSetValue(ZSetValue&&) noexcept = default;
ZSetValue& ZSetValue::operator=(ZSetValue&&) noexcept = default;

size_t ZSetValue::size() const { return !rep_.table() ? rep_.packed().size() / 2 : rep_.table()->list.size(); }

size_t ZSetValue::FindPacked(std::string_view member) const {
  return rep_.packed().Find(rep_.packed().First(), member, /*skip=*/1);
}

double ZSetValue::PackedScore(size_t member_pos) const {
  const ListpackValue v = rep_.packed().Get(rep_.packed().Next(member_pos));
  if (v.is_int) return static_cast<double>(v.int_value);
  char buf[64];  // scores are written by ZScoreToString: at most 24 bytes
  const size_t n = std::min(v.str.size(), sizeof(buf) - 1);
  std::memcpy(buf, v.str.data(), n);
  buf[n] = '\0';
  return std::strtod(buf, nullptr);  // "inf" and "-inf" included
}

ZSetValue ZSetValue::FromSorted(const std::vector<std::pair<std::string, double>>& elements, const ZSetLimits& limits) {
  ZSetValue z;
  bool packed = elements.size() <= limits.max_listpack_entries;
  for (size_t i = 0; packed && i < elements.size(); ++i) packed = elements[i].first.size() <= limits.max_listpack_value;
  if (packed) {
    for (const auto& [member, score] : elements) {
      z.rep_.packed().Append(member);
      z.rep_.packed().Append(ZScoreToString(score));
    }
    return z;
  }
  z.ConvertToSkiplist();
  z.rep_.table()->scores.Reserve(elements.size());
  for (const auto& [member, score] : elements) {
    z.rep_.table()->list.Insert(score, member);
    *z.rep_.table()->scores.Insert(member).first = score;
  }
  return z;
}

bool ZSetValue::Score(std::string_view member, double* score) const {
  if (rep_.table()) {
    const double* found = rep_.table()->scores.Find(member);
    if (found == nullptr) return false;
    *score = *found;
    return true;
  }
  const size_t pos = FindPacked(member);
  if (pos == Listpack::kEnd) return false;
  *score = PackedScore(pos);
  return true;
}

void ZSetValue::InsertPacked(std::string_view member, double score) {
  // Before the first element ordered after (score, member).
  size_t pos = rep_.packed().First();
  while (pos != Listpack::kEnd) {
    const double s = PackedScore(pos);
    if (score < s) break;
    if (score == s) {  // same score: by member bytes (ints formatted for the comparison)
      const ListpackValue v = rep_.packed().Get(pos);
      char scratch[24];
      std::string_view m = v.str;
      if (v.is_int) m = std::string_view(scratch, static_cast<size_t>(std::snprintf(scratch, sizeof(scratch), "%lld",
                                                                                      static_cast<long long>(v.int_value))));
      if (member.compare(m) < 0) break;
    }
    pos = rep_.packed().Next(rep_.packed().Next(pos));
  }
  const std::string text = ZScoreToString(score);
  const size_t at = rep_.packed().InsertBefore(pos, member);
  rep_.packed().InsertBefore(rep_.packed().Next(at), text);
}

ZAddOutcome ZSetValue::Add(std::string_view member, double score, const ZAddFlags& flags, const ZSetLimits& limits,
                           double* new_score) {
  double current;
  if (Score(member, &current)) {
    if (flags.nx) return ZAddOutcome::kSkipped;
    double target = score;
    if (flags.incr) {
      target = current + score;
      if (std::isnan(target)) return ZAddOutcome::kNaN;
    }
    if ((flags.gt && target <= current) || (flags.lt && target >= current)) return ZAddOutcome::kSkipped;
    *new_score = target;
    if (target == current) return ZAddOutcome::kUnchanged;
    if (rep_.table()) {
      rep_.table()->list.UpdateScore(current, member, target);
      *rep_.table()->scores.Find(member) = target;
    } else {
      rep_.packed().Delete(FindPacked(member), 2);
      InsertPacked(member, target);
    }
    return ZAddOutcome::kUpdated;
  }
  if (flags.xx) return ZAddOutcome::kSkipped;
  *new_score = score;
  if (!rep_.table() &&
      (member.size() > limits.max_listpack_value || size() + 1 > limits.max_listpack_entries)) {
    ConvertToSkiplist();
  }
  if (rep_.table()) {
    rep_.table()->list.Insert(score, member);
    *rep_.table()->scores.Insert(member).first = score;
  } else {
    InsertPacked(member, score);
  }
  return ZAddOutcome::kAdded;
}

bool ZSetValue::Remove(std::string_view member) {
  if (rep_.table()) {
    const double* found = rep_.table()->scores.Find(member);
    if (found == nullptr) return false;
    rep_.table()->list.Delete(*found, member);
    rep_.table()->scores.Erase(member);
    return true;
  }
  const size_t pos = FindPacked(member);
  if (pos == Listpack::kEnd) return false;
  rep_.packed().Delete(pos, 2);
  return true;
}

int64_t ZSetValue::Rank(std::string_view member, bool reverse) const {
  int64_t rank = -1;
  if (rep_.table()) {
    const double* found = rep_.table()->scores.Find(member);
    if (found == nullptr) return -1;
    rank = static_cast<int64_t>(rep_.table()->list.Rank(*found, member)) - 1;
  } else {
    int64_t i = 0;
    for (size_t pos = rep_.packed().First(); pos != Listpack::kEnd; pos = rep_.packed().Next(rep_.packed().Next(pos)), ++i) {
      if (rep_.packed().Get(pos).Equals(member)) {
        rank = i;
        break;
      }
    }
    if (rank < 0) return -1;
  }
  return reverse ? static_cast<int64_t>(size()) - 1 - rank : rank;
}

void ZSetValue::ConvertToSkiplist() {
  if (rep_.table()) return;
  auto table = std::make_unique<Table>();
  table->scores.Reserve(rep_.packed().size() / 2);
  for (size_t pos = rep_.packed().First(); pos != Listpack::kEnd; pos = rep_.packed().Next(rep_.packed().Next(pos))) {
    const std::string member = rep_.packed().Get(pos).ToString();
    const double score = PackedScore(pos);
    table->list.Insert(score, member);
    *table->scores.Insert(member).first = score;
  }
  rep_.SetTable(std::move(table));
}

ZSetValue ZSetValue::Clone() const {
  if (!rep_.table()) return ZSetValue(Listpack(rep_.packed()));
  ZSetValue copy;
  copy.ConvertToSkiplist();
  copy.rep_.table()->scores.Reserve(rep_.table()->scores.size());
  Walk(0, /*reverse=*/false, [&](std::string_view member, double score) {
    copy.rep_.table()->list.Insert(score, member);
    *copy.rep_.table()->scores.Insert(member).first = score;
    return true;
  });
  return copy;
}

size_t ZSetValue::heap_bytes() const {
  if (!rep_.table()) return PackedBuffer::RoundUp(rep_.packed().byte_size());
  // Per member: a skiplist node (header, ~1.33 levels on average, the
  // member's bytes) and a dict node with its own copy of the member.
  size_t bytes = rep_.table()->scores.bucket_bytes() +
                 rep_.table()->scores.size() * (sizeof(Dict<double>::Node) + sizeof(Skiplist::Node) + 22);
  rep_.table()->scores.ForEach([&](const Key& member, double&) { bytes += member.view().size() + member.heap_bytes(); });
  return bytes;
}

void ZSetValue::Walk(size_t start, bool reverse, const std::function<bool(std::string_view, double)>& fn) const {
  const size_t n = size();
  if (start >= n) return;
  if (rep_.table()) {
    const Skiplist::Node* node = rep_.table()->list.ByRank(reverse ? n - start : start + 1);
    while (node != nullptr && fn(node->member(), node->score)) node = reverse ? node->prev() : node->next();
    return;
  }
  char scratch[24];
  size_t pos = rep_.packed().Seek(static_cast<int64_t>(2 * (reverse ? n - 1 - start : start)));
  while (pos != Listpack::kEnd) {
    const ListpackValue v = rep_.packed().Get(pos);
    std::string_view member = v.str;
    if (v.is_int) {
      const int len = std::snprintf(scratch, sizeof(scratch), "%lld", static_cast<long long>(v.int_value));
      member = std::string_view(scratch, static_cast<size_t>(len));
    }
    if (!fn(member, PackedScore(pos))) return;
    if (reverse) {
      pos = rep_.packed().Prev(pos);
      if (pos != Listpack::kEnd) pos = rep_.packed().Prev(pos);
    } else {
      pos = rep_.packed().Next(rep_.packed().Next(pos));
    }
  }
}

namespace {

// The first-in-range rank on a listpack or for the generic case: walk until
// the first element past the near bound, then check the far one.
template <typename Near, typename Far>
size_t WalkToRange(const ZSetValue& z, bool reverse, Near near_ok, Far far_ok) {
  size_t rank = 0;
  bool found = false;
  z.Walk(0, reverse, [&](std::string_view m, double score) {
    if (!near_ok(m, score)) {
      ++rank;
      return true;
    }
    found = far_ok(m, score);
    return false;
  });
  return found ? rank : z.size();
}

}  // namespace

size_t ZSetValue::RankOfFirstIn(const ScoreRange& range, bool reverse) const {
  if (range.Empty()) return size();
  if (rep_.table()) {
    const Skiplist::Node* node = reverse ? rep_.table()->list.LastInRange(range) : rep_.table()->list.FirstInRange(range);
    if (node == nullptr) return size();
    const uint64_t rank = rep_.table()->list.Rank(node->score, node->member());
    return reverse ? size() - rank : rank - 1;
  }
  auto above = [&](std::string_view, double s) { return range.AboveMin(s); };
  auto below = [&](std::string_view, double s) { return range.BelowMax(s); };
  return reverse ? WalkToRange(*this, true, below, above) : WalkToRange(*this, false, above, below);
}

size_t ZSetValue::RankOfFirstIn(const LexRange& range, bool reverse) const {
  if (range.Empty()) return size();
  if (rep_.table()) {
    const Skiplist::Node* node = reverse ? rep_.table()->list.LastInLexRange(range) : rep_.table()->list.FirstInLexRange(range);
    if (node == nullptr) return size();
    const uint64_t rank = rep_.table()->list.Rank(node->score, node->member());
    return reverse ? size() - rank : rank - 1;
  }
  bool ends_in_range = false;  // stays false for an empty set
  Walk(0, true, [&](std::string_view last, double) {
    ends_in_range = range.AboveMin(last);
    return false;
  });
  if (ends_in_range) {
    Walk(0, false, [&](std::string_view first, double) {
      ends_in_range = range.BelowMax(first);
      return false;
    });
  }
  if (!ends_in_range) return size();
  auto above = [&](std::string_view m, double) { return range.AboveMin(m); };
  auto below = [&](std::string_view m, double) { return range.BelowMax(m); };
  return reverse ? WalkToRange(*this, true, below, above) : WalkToRange(*this, false, above, below);
}

size_t ZSetValue::Count(const ScoreRange& range) const {
  const size_t below = RankOfFirstIn(range, false);
  if (below >= size()) return 0;
  return size() - below - RankOfFirstIn(range, true);
}

size_t ZSetValue::Count(const LexRange& range) const {
  const size_t below = RankOfFirstIn(range, false);
  if (below >= size()) return 0;
  if (!rep_.table()) return LexRun(range, below, false, SIZE_MAX);
  // Redis counts a skiplist by the ranks of the first and last elements in
  // range, O(log n). Only with differing scores can the last come before
  // the first; that counts none.
  const size_t above = RankOfFirstIn(range, true);
  return size() - below >= above ? size() - below - above : 0;
}

size_t ZSetValue::LexRun(const LexRange& range, size_t start, bool reverse, size_t limit) const {
  size_t run = 0;
  if (start >= size() || limit == 0) return 0;
  Walk(start, reverse, [&](std::string_view m, double) {
    if (!(reverse ? range.AboveMin(m) : range.BelowMax(m))) return false;
    return ++run < limit;
  });
  return run;
}

void ZSetValue::RemoveRanks(size_t start, size_t end) {
  if (rep_.table()) {
    rep_.table()->list.DeleteRangeByRank(start + 1, end + 1, [&](std::string_view member) { rep_.table()->scores.Erase(member); });
    return;
  }
  rep_.packed().DeleteRange(static_cast<int64_t>(2 * start), 2 * (end - start + 1));
}

void ZSetValue::RandomElement(absl::BitGen& rng, std::string* member, double* score) const {
  const size_t rank = absl::Uniform<size_t>(rng, 0, size());
  Walk(rank, false, [&](std::string_view m, double s) {
    member->assign(m);
    *score = s;
    return false;
  });
}

uint64_t ZSetValue::ScanTable(uint64_t cursor, const std::function<void(std::string_view, double)>& fn) const {
  return rep_.table()->scores.Scan(cursor, [&](const Key& member, double& score) { fn(member.view(), score); });
}

}  // namespace ringkv::core

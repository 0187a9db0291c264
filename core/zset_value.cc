#include "core/zset_value.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ringkv::core {

std::string ZScoreToString(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
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

size_t ZSetValue::size() const { return encoding_ == Encoding::kListpack ? packed_.size() / 2 : skiplist_->size(); }

size_t ZSetValue::FindPacked(std::string_view member) const {
  return packed_.Find(packed_.First(), member, /*skip=*/1);
}

double ZSetValue::PackedScore(size_t member_pos) const {
  const ListpackValue v = packed_.Get(packed_.Next(member_pos));
  if (v.is_int) return static_cast<double>(v.int_value);
  return std::strtod(std::string(v.str).c_str(), nullptr);  // "inf" and "-inf" included
}

bool ZSetValue::Score(std::string_view member, double* score) const {
  if (encoding_ == Encoding::kSkiplist) {
    auto it = scores_.find(member);
    if (it == scores_.end()) return false;
    *score = it->second;
    return true;
  }
  const size_t pos = FindPacked(member);
  if (pos == Listpack::kEnd) return false;
  *score = PackedScore(pos);
  return true;
}

void ZSetValue::InsertPacked(std::string_view member, double score) {
  // Before the first element ordered after (score, member).
  size_t pos = packed_.First();
  while (pos != Listpack::kEnd) {
    const double s = PackedScore(pos);
    const std::string m = packed_.Get(pos).ToString();
    if (ElementLess(score, member, s, m)) break;
    pos = packed_.Next(packed_.Next(pos));
  }
  const std::string text = ZScoreToString(score);
  const size_t at = packed_.InsertBefore(pos, member);
  packed_.InsertBefore(packed_.Next(at), text);
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
    if (encoding_ == Encoding::kSkiplist) {
      skiplist_->UpdateScore(current, member, target);
      scores_[member] = target;
    } else {
      packed_.Delete(FindPacked(member), 2);
      InsertPacked(member, target);
    }
    return ZAddOutcome::kUpdated;
  }
  if (flags.xx) return ZAddOutcome::kSkipped;
  *new_score = score;
  if (encoding_ == Encoding::kListpack &&
      (member.size() > limits.max_listpack_value || size() + 1 > limits.max_listpack_entries)) {
    ConvertToSkiplist();
  }
  if (encoding_ == Encoding::kSkiplist) {
    skiplist_->Insert(score, member);
    scores_.emplace(member, score);
  } else {
    InsertPacked(member, score);
  }
  return ZAddOutcome::kAdded;
}

bool ZSetValue::Remove(std::string_view member) {
  if (encoding_ == Encoding::kSkiplist) {
    auto it = scores_.find(member);
    if (it == scores_.end()) return false;
    skiplist_->Delete(it->second, member);
    scores_.erase(it);
    return true;
  }
  const size_t pos = FindPacked(member);
  if (pos == Listpack::kEnd) return false;
  packed_.Delete(pos, 2);
  return true;
}

int64_t ZSetValue::Rank(std::string_view member, bool reverse) const {
  int64_t rank = -1;
  if (encoding_ == Encoding::kSkiplist) {
    auto it = scores_.find(member);
    if (it == scores_.end()) return -1;
    rank = static_cast<int64_t>(skiplist_->Rank(it->second, member)) - 1;
  } else {
    int64_t i = 0;
    for (size_t pos = packed_.First(); pos != Listpack::kEnd; pos = packed_.Next(packed_.Next(pos)), ++i) {
      if (packed_.Get(pos).Equals(member)) {
        rank = i;
        break;
      }
    }
    if (rank < 0) return -1;
  }
  return reverse ? static_cast<int64_t>(size()) - 1 - rank : rank;
}

void ZSetValue::RangeByRank(size_t start, size_t end, bool reverse,
                            const std::function<void(std::string_view, double)>& fn) const {
  const size_t n = size();
  if (start > end || start >= n) return;
  const size_t count = std::min(end, n - 1) - start + 1;
  if (encoding_ == Encoding::kSkiplist) {
    const Skiplist::Node* node = skiplist_->ByRank(reverse ? n - start : start + 1);
    for (size_t i = 0; i < count && node != nullptr; ++i) {
      fn(node->member(), node->score);
      node = reverse ? node->prev() : node->next();
    }
    return;
  }
  const int64_t first = reverse ? static_cast<int64_t>(n - 1 - start) : static_cast<int64_t>(start);
  size_t pos = packed_.Seek(2 * first);
  for (size_t i = 0; i < count && pos != Listpack::kEnd; ++i) {
    fn(packed_.Get(pos).ToString(), PackedScore(pos));
    if (reverse) {
      pos = packed_.Prev(pos);
      if (pos != Listpack::kEnd) pos = packed_.Prev(pos);
    } else {
      pos = packed_.Next(packed_.Next(pos));
    }
  }
}

void ZSetValue::ConvertToSkiplist() {
  if (encoding_ == Encoding::kSkiplist) return;
  skiplist_ = std::make_unique<Skiplist>();
  scores_.reserve(packed_.size() / 2);
  for (size_t pos = packed_.First(); pos != Listpack::kEnd; pos = packed_.Next(packed_.Next(pos))) {
    const std::string member = packed_.Get(pos).ToString();
    const double score = PackedScore(pos);
    skiplist_->Insert(score, member);
    scores_.emplace(member, score);
  }
  packed_ = Listpack();
  encoding_ = Encoding::kSkiplist;
}

std::unique_ptr<ZSetValue> ZSetValue::Clone() const {
  if (encoding_ == Encoding::kListpack) return std::make_unique<ZSetValue>(Listpack(packed_));
  auto copy = std::make_unique<ZSetValue>();
  copy->ConvertToSkiplist();
  copy->scores_.reserve(scores_.size());
  RangeByRank(0, size() - 1, /*reverse=*/false, [&](std::string_view member, double score) {
    copy->skiplist_->Insert(score, member);
    copy->scores_.emplace(member, score);
  });
  return copy;
}

size_t ZSetValue::heap_bytes() const {
  if (encoding_ == Encoding::kListpack) return packed_.byte_size();
  // Per member: a skiplist node (score, member copy, ~1.33 levels on
  // average) and a hash-table slot with its own copy of the member.
  size_t bytes = scores_.capacity() * (sizeof(std::string) + sizeof(double) + 1);
  for (const auto& [member, score] : scores_) {
    (void)score;
    bytes += 2 * member.size() + 48;
  }
  return bytes;
}

}  // namespace ringkv::core

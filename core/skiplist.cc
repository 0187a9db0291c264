#include "core/skiplist.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace ringkv::core {

bool LexRange::AboveMin(std::string_view m) const {
  if (nothing) return false;
  if (min_unbounded) return true;
  const int c = m.compare(min);
  return min_exclusive ? c > 0 : c >= 0;
}

bool LexRange::BelowMax(std::string_view m) const {
  if (max_unbounded) return true;
  const int c = m.compare(max);
  return max_exclusive ? c < 0 : c <= 0;
}

bool LexRange::Empty() const {
  if (nothing) return true;
  if (min_unbounded || max_unbounded) return false;
  const int c = min.compare(max);
  return c > 0 || (c == 0 && (min_exclusive || max_exclusive));
}

Skiplist::Node* Skiplist::NewNode(int height, double score, std::string_view member) {
  static_assert(sizeof(Node) % alignof(Node::Level) == 0);
  const size_t bytes = sizeof(Node) + static_cast<size_t>(height) * sizeof(Node::Level) + member.size();
  void* mem = ::operator new(bytes);
  Node* n = new (mem) Node();
  n->score = score;
  n->height_ = height;
  n->member_len_ = static_cast<uint32_t>(member.size());
  for (int i = 0; i < height; ++i) n->levels()[i] = {nullptr, 0};
  if (!member.empty()) std::memcpy(reinterpret_cast<char*>(n->levels() + height), member.data(), member.size());
  return n;
}

void Skiplist::FreeNode(Node* n) {
  n->~Node();
  ::operator delete(n);
}

Skiplist::Skiplist() : header_(NewNode(kMaxLevel, 0, {})) {}

Skiplist::~Skiplist() {
  Node* n = header_->levels()[0].forward;
  while (n != nullptr) {
    Node* next = n->levels()[0].forward;
    FreeNode(n);
    n = next;
  }
  FreeNode(header_);
}

int Skiplist::RandomHeight() {
  // xorshift64*; each extra level with probability 1/4 (Redis's ZSKIPLIST_P).
  int height = 1;
  while (height < kMaxLevel) {
    rng_state_ ^= rng_state_ >> 12;
    rng_state_ ^= rng_state_ << 25;
    rng_state_ ^= rng_state_ >> 27;
    if (((rng_state_ * 0x2545F4914F6CDD1Dull) >> 32 & 0xFFFF) >= 0xFFFF / 4) break;
    ++height;
  }
  return height;
}

const Skiplist::Node* Skiplist::Insert(double score, std::string_view member) {
  Node* update[kMaxLevel];
  uint64_t rank[kMaxLevel];
  Node* x = header_;
  for (int i = height_ - 1; i >= 0; --i) {
    rank[i] = i == height_ - 1 ? 0 : rank[i + 1];
    while (x->levels()[i].forward != nullptr &&
           ElementLess(x->levels()[i].forward->score, x->levels()[i].forward->member(), score, member)) {
      rank[i] += x->levels()[i].span;
      x = x->levels()[i].forward;
    }
    update[i] = x;
  }
  const int height = RandomHeight();
  if (height > height_) {
    for (int i = height_; i < height; ++i) {
      rank[i] = 0;
      update[i] = header_;
      update[i]->levels()[i].span = length_;
    }
    height_ = height;
  }
  x = NewNode(height, score, member);
  for (int i = 0; i < height; ++i) {
    x->levels()[i].forward = update[i]->levels()[i].forward;
    update[i]->levels()[i].forward = x;
    x->levels()[i].span = update[i]->levels()[i].span - (rank[0] - rank[i]);
    update[i]->levels()[i].span = (rank[0] - rank[i]) + 1;
  }
  for (int i = height; i < height_; ++i) ++update[i]->levels()[i].span;
  x->backward_ = update[0] == header_ ? nullptr : update[0];
  if (x->levels()[0].forward != nullptr) {
    x->levels()[0].forward->backward_ = x;
  } else {
    tail_ = x;
  }
  ++length_;
  return x;
}

void Skiplist::Unlink(Node* x, Node** update) {
  for (int i = 0; i < height_; ++i) {
    if (update[i]->levels()[i].forward == x) {
      update[i]->levels()[i].span += x->levels()[i].span - 1;
      update[i]->levels()[i].forward = x->levels()[i].forward;
    } else {
      --update[i]->levels()[i].span;
    }
  }
  if (x->levels()[0].forward != nullptr) {
    x->levels()[0].forward->backward_ = x->backward_;
  } else {
    tail_ = x->backward_;
  }
  while (height_ > 1 && header_->levels()[height_ - 1].forward == nullptr) --height_;
  --length_;
}

Skiplist::Node* Skiplist::FindWithPath(double score, std::string_view member, Node** update) {
  Node* x = header_;
  for (int i = height_ - 1; i >= 0; --i) {
    while (x->levels()[i].forward != nullptr &&
           ElementLess(x->levels()[i].forward->score, x->levels()[i].forward->member(), score, member)) {
      x = x->levels()[i].forward;
    }
    update[i] = x;
  }
  return x->levels()[0].forward;
}

bool Skiplist::Delete(double score, std::string_view member) {
  Node* update[kMaxLevel];
  Node* x = FindWithPath(score, member, update);
  if (x == nullptr || x->score != score || x->member() != member) return false;
  Unlink(x, update);
  FreeNode(x);
  return true;
}

const Skiplist::Node* Skiplist::UpdateScore(double score, std::string_view member, double new_score) {
  Node* update[kMaxLevel];
  Node* x = FindWithPath(score, member, update);
  // Still in order with the new score: change it in place (no relinking).
  if ((x->backward_ == nullptr || x->backward_->score < new_score) &&
      (x->levels()[0].forward == nullptr || x->levels()[0].forward->score > new_score)) {
    x->score = new_score;
    return x;
  }
  const std::string kept(x->member());
  Unlink(x, update);
  FreeNode(x);
  return Insert(new_score, kept);
}

uint64_t Skiplist::Rank(double score, std::string_view member) const {
  uint64_t rank = 0;
  const Node* x = header_;
  for (int i = height_ - 1; i >= 0; --i) {
    while (x->levels()[i].forward != nullptr &&
           !ElementLess(score, member, x->levels()[i].forward->score, x->levels()[i].forward->member())) {
      rank += x->levels()[i].span;
      x = x->levels()[i].forward;
    }
    if (x != header_ && x->score == score && x->member() == member) return rank;
  }
  return 0;
}

const Skiplist::Node* Skiplist::ByRank(uint64_t rank) const {
  if (rank == 0 || rank > length_) return nullptr;
  uint64_t traversed = 0;
  const Node* x = header_;
  for (int i = height_ - 1; i >= 0; --i) {
    while (x->levels()[i].forward != nullptr && traversed + x->levels()[i].span <= rank) {
      traversed += x->levels()[i].span;
      x = x->levels()[i].forward;
    }
    if (traversed == rank) return x;
  }
  return nullptr;
}

template <typename Range, typename Key>
const Skiplist::Node* Skiplist::FirstIn(const Range& range, Key key) const {
  if (range.Empty() || tail_ == nullptr || !range.AboveMin(key(*tail_))) return nullptr;
  const Node* x = header_;
  for (int i = height_ - 1; i >= 0; --i) {
    while (x->levels()[i].forward != nullptr && !range.AboveMin(key(*x->levels()[i].forward))) {
      x = x->levels()[i].forward;
    }
  }
  x = x->levels()[0].forward;
  return x != nullptr && range.BelowMax(key(*x)) ? x : nullptr;
}

template <typename Range, typename Key>
const Skiplist::Node* Skiplist::LastIn(const Range& range, Key key) const {
  const Node* first = First();
  if (range.Empty() || first == nullptr || !range.BelowMax(key(*first))) return nullptr;
  const Node* x = header_;
  for (int i = height_ - 1; i >= 0; --i) {
    while (x->levels()[i].forward != nullptr && range.BelowMax(key(*x->levels()[i].forward))) {
      x = x->levels()[i].forward;
    }
  }
  return x != header_ && range.AboveMin(key(*x)) ? x : nullptr;
}

namespace {
double ScoreOf(const Skiplist::Node& n) { return n.score; }
std::string_view MemberOf(const Skiplist::Node& n) { return n.member(); }
}  // namespace

const Skiplist::Node* Skiplist::FirstInRange(const ScoreRange& range) const { return FirstIn(range, ScoreOf); }
const Skiplist::Node* Skiplist::LastInRange(const ScoreRange& range) const { return LastIn(range, ScoreOf); }
const Skiplist::Node* Skiplist::FirstInLexRange(const LexRange& range) const { return FirstIn(range, MemberOf); }
const Skiplist::Node* Skiplist::LastInLexRange(const LexRange& range) const { return LastIn(range, MemberOf); }

template <typename AboveMin, typename BelowMax>
size_t Skiplist::DeleteBetween(AboveMin above_min, BelowMax below_max, const RemovedFn& removed) {
  Node* update[kMaxLevel];
  Node* x = header_;
  for (int i = height_ - 1; i >= 0; --i) {
    while (x->levels()[i].forward != nullptr && !above_min(*x->levels()[i].forward)) x = x->levels()[i].forward;
    update[i] = x;
  }
  x = x->levels()[0].forward;
  size_t n = 0;
  while (x != nullptr && below_max(*x)) {
    Node* next = x->levels()[0].forward;
    removed(x->member());
    Unlink(x, update);
    FreeNode(x);
    ++n;
    x = next;
  }
  return n;
}

size_t Skiplist::DeleteRangeByScore(const ScoreRange& range, const RemovedFn& removed) {
  return DeleteBetween([&](const Node& n) { return range.AboveMin(n.score); },
                       [&](const Node& n) { return range.BelowMax(n.score); }, removed);
}

size_t Skiplist::DeleteRangeByLex(const LexRange& range, const RemovedFn& removed) {
  return DeleteBetween([&](const Node& n) { return range.AboveMin(n.member()); },
                       [&](const Node& n) { return range.BelowMax(n.member()); }, removed);
}

size_t Skiplist::DeleteRangeByRank(uint64_t start, uint64_t end, const RemovedFn& removed) {
  Node* update[kMaxLevel];
  uint64_t traversed = 0;
  Node* x = header_;
  for (int i = height_ - 1; i >= 0; --i) {
    while (x->levels()[i].forward != nullptr && traversed + x->levels()[i].span < start) {
      traversed += x->levels()[i].span;
      x = x->levels()[i].forward;
    }
    update[i] = x;
  }
  ++traversed;
  x = x->levels()[0].forward;
  size_t n = 0;
  while (x != nullptr && traversed <= end) {
    Node* next = x->levels()[0].forward;
    removed(x->member());
    Unlink(x, update);
    FreeNode(x);
    ++n;
    ++traversed;
    x = next;
  }
  return n;
}

}  // namespace ringkv::core

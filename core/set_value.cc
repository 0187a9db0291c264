#include "core/set_value.h"

#include <algorithm>
#include <charconv>

#include "core/string_value.h"

namespace ringkv::core {
namespace {

std::string IntText(int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

}  // namespace

SetValue SetValue::ForFirstMember(std::string_view member) {
  SetValue set;
  int64_t v;
  if (!StringToInt64(member, &v)) set.ConvertToTable();
  return set;
}

bool SetValue::Contains(std::string_view member) const {
  if (rep_.table()) return rep_.table()->Find(member) != nullptr;
  int64_t v;
  return StringToInt64(member, &v) && rep_.packed().Contains(v);
}

bool SetValue::Add(std::string_view member, const SetLimits& limits) {
  if (!rep_.table()) {
    int64_t v;
    if (StringToInt64(member, &v)) {
      if (!rep_.packed().Add(v)) return false;
      if (rep_.packed().size() > limits.max_intset_entries) ConvertToTable(rep_.packed().size());
      return true;
    }
    // Redis sizes the table for the members it already has plus this one.
    ConvertToTable(rep_.packed().size() + 1);
  }
  return rep_.table()->Insert(member).second;
}

bool SetValue::Remove(std::string_view member) {
  if (rep_.table()) return rep_.table()->Erase(member);
  int64_t v;
  return StringToInt64(member, &v) && rep_.packed().Remove(v);
}

void SetValue::ForEach(const std::function<void(std::string_view)>& fn) const {
  if (rep_.table()) {
    rep_.table()->ForEach([&](const Key& k, Member&) { fn(k.view()); });
    return;
  }
  char buf[24];
  for (size_t i = 0; i < rep_.packed().size(); ++i) {
    auto r = std::to_chars(buf, buf + sizeof(buf), rep_.packed().Get(i));
    fn(std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
  }
}

uint64_t SetValue::ScanTable(uint64_t cursor, const std::function<void(std::string_view)>& fn) const {
  return rep_.table()->Scan(cursor, [&](const Key& k, Member&) { fn(k.view()); });
}

std::string SetValue::RandomMember(absl::BitGen& rng) const {
  if (rep_.table()) return std::string(rep_.table()->FairRandomNode(rng)->key().view());
  return IntText(rep_.packed().Get(absl::Uniform<size_t>(rng, 0, rep_.packed().size())));
}

std::string SetValue::PopRandom(absl::BitGen& rng) {
  std::string member = RandomMember(rng);
  Remove(member);
  return member;
}

void SetValue::ConvertToTable(size_t expected) {
  if (rep_.table()) return;
  auto table = std::make_unique<Dict<Member>>();
  table->Reserve(std::max(expected, rep_.packed().size()));
  for (size_t i = 0; i < rep_.packed().size(); ++i) table->Insert(IntText(rep_.packed().Get(i)));
  rep_.SetTable(std::move(table));
}

SetValue SetValue::Clone() const {
  if (!rep_.table()) return SetValue(Intset(rep_.packed()));
  SetValue copy;
  copy.ConvertToTable(size());
  rep_.table()->ForEach([&](const Key& k, Member&) { copy.rep_.table()->Insert(k.view()); });
  return copy;
}

size_t SetValue::heap_bytes() const {
  if (!rep_.table()) return PackedBuffer::RoundUp(rep_.packed().bytes().size());
  size_t bytes = rep_.table()->bucket_bytes() + rep_.table()->size() * sizeof(Dict<Member>::Node);
  rep_.table()->ForEach([&](const Key& k, Member&) { bytes += k.heap_bytes(); });
  return bytes;
}

}  // namespace ringkv::core

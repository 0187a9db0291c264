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

std::unique_ptr<SetValue> SetValue::ForFirstMember(std::string_view member) {
  auto set = std::make_unique<SetValue>();
  int64_t v;
  if (!StringToInt64(member, &v)) set->ConvertToTable();
  return set;
}

bool SetValue::Contains(std::string_view member) const {
  if (table_) return table_->Find(member) != nullptr;
  int64_t v;
  return StringToInt64(member, &v) && ints_.Contains(v);
}

bool SetValue::Add(std::string_view member, const SetLimits& limits) {
  if (!table_) {
    int64_t v;
    if (StringToInt64(member, &v)) {
      if (!ints_.Add(v)) return false;
      if (ints_.size() > limits.max_intset_entries) ConvertToTable(ints_.size());
      return true;
    }
    // Redis sizes the table for the members it already has plus this one.
    ConvertToTable(ints_.size() + 1);
  }
  return table_->Insert(member).second;
}

bool SetValue::Remove(std::string_view member) {
  if (table_) return table_->Erase(member);
  int64_t v;
  return StringToInt64(member, &v) && ints_.Remove(v);
}

void SetValue::ForEach(const std::function<void(std::string_view)>& fn) const {
  if (table_) {
    table_->ForEach([&](const Key& k, Member&) { fn(k.view()); });
    return;
  }
  char buf[24];
  for (size_t i = 0; i < ints_.size(); ++i) {
    auto r = std::to_chars(buf, buf + sizeof(buf), ints_.Get(i));
    fn(std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
  }
}

uint64_t SetValue::ScanTable(uint64_t cursor, const std::function<void(std::string_view)>& fn) const {
  return table_->Scan(cursor, [&](const Key& k, Member&) { fn(k.view()); });
}

std::string SetValue::RandomMember(absl::BitGen& rng) const {
  if (table_) return std::string(table_->RandomNode(rng)->key.view());
  return IntText(ints_.Get(absl::Uniform<size_t>(rng, 0, ints_.size())));
}

std::string SetValue::PopRandom(absl::BitGen& rng) {
  std::string member = RandomMember(rng);
  Remove(member);
  return member;
}

void SetValue::ConvertToTable(size_t expected) {
  if (table_) return;
  auto table = std::make_unique<Dict<Member>>();
  table->Reserve(std::max(expected, ints_.size()));
  for (size_t i = 0; i < ints_.size(); ++i) table->Insert(IntText(ints_.Get(i)));
  ints_ = Intset();
  table_ = std::move(table);
}

std::unique_ptr<SetValue> SetValue::Clone() const {
  auto copy = std::make_unique<SetValue>();
  if (!table_) {
    copy->ints_ = ints_;
    return copy;
  }
  copy->ConvertToTable(size());
  table_->ForEach([&](const Key& k, Member&) { copy->table_->Insert(k.view()); });
  return copy;
}

size_t SetValue::heap_bytes() const {
  if (!table_) return PackedBuffer::RoundUp(ints_.bytes().size());
  size_t bytes = table_->bucket_bytes() + table_->size() * sizeof(Dict<Member>::Node);
  table_->ForEach([&](const Key& k, Member&) { bytes += k.heap_bytes(); });
  return bytes;
}

}  // namespace ringkv::core

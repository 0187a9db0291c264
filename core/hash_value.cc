#include "core/hash_value.h"

namespace ringkv::core {

size_t HashValue::FindPacked(std::string_view field) const {
  return packed_.Find(packed_.First(), field, /*skip=*/1);
}

bool HashValue::Contains(std::string_view field) const {
  if (encoding_ == Encoding::kHashtable) return table_.contains(field);
  return FindPacked(field) != Listpack::kEnd;
}

bool HashValue::Get(std::string_view field, std::string* value) const {
  if (encoding_ == Encoding::kHashtable) {
    auto it = table_.find(field);
    if (it == table_.end()) return false;
    *value = it->second;
    return true;
  }
  const size_t pos = FindPacked(field);
  if (pos == Listpack::kEnd) return false;
  *value = packed_.Get(packed_.Next(pos)).ToString();
  return true;
}

bool HashValue::Set(std::string_view field, std::string_view value, const HashLimits& limits) {
  if (encoding_ == Encoding::kListpack &&
      (field.size() > limits.max_listpack_value || value.size() > limits.max_listpack_value)) {
    ConvertToTable();
  }
  if (encoding_ == Encoding::kHashtable) {
    auto [it, inserted] = table_.try_emplace(field, value);
    if (!inserted) it->second.assign(value);
    return inserted;
  }
  const size_t pos = FindPacked(field);
  if (pos != Listpack::kEnd) {
    packed_.Replace(packed_.Next(pos), value);
    return false;
  }
  packed_.Append(field);
  packed_.Append(value);
  // Redis checks the length after adding (hashTypeTryConversion's rule for
  // entries is "more than the limit").
  if (size() > limits.max_listpack_entries) ConvertToTable();
  return true;
}

bool HashValue::Delete(std::string_view field) {
  if (encoding_ == Encoding::kHashtable) return table_.erase(field) == 1;
  const size_t pos = FindPacked(field);
  if (pos == Listpack::kEnd) return false;
  packed_.Delete(pos, 2);
  return true;
}

void HashValue::ForEach(const std::function<void(std::string_view, std::string_view)>& fn) const {
  if (encoding_ == Encoding::kHashtable) {
    for (const auto& [f, v] : table_) fn(f, v);
    return;
  }
  for (size_t pos = packed_.First(); pos != Listpack::kEnd; pos = packed_.Next(packed_.Next(pos))) {
    const std::string f = packed_.Get(pos).ToString();
    const std::string v = packed_.Get(packed_.Next(pos)).ToString();
    fn(f, v);
  }
}

void HashValue::ConvertToTable() {
  if (encoding_ == Encoding::kHashtable) return;
  table_.reserve(packed_.size() / 2);
  for (size_t pos = packed_.First(); pos != Listpack::kEnd; pos = packed_.Next(packed_.Next(pos))) {
    table_.emplace(packed_.Get(pos).ToString(), packed_.Get(packed_.Next(pos)).ToString());
  }
  packed_ = Listpack();
  encoding_ = Encoding::kHashtable;
}

}  // namespace ringkv::core

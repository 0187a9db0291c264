#include "core/hash_value.h"

#include <charconv>

namespace ringkv::core {
namespace {

// A packed element as text: integers are formatted into `scratch` (>= 21 bytes).
std::string_view PackedText(const ListpackValue& v, char* scratch) {
  if (!v.is_int) return v.str;
  auto r = std::to_chars(scratch, scratch + 21, v.int_value);
  return {scratch, static_cast<size_t>(r.ptr - scratch)};
}

}  // namespace

size_t HashValue::FindPacked(std::string_view field) const {
  return packed_.Find(packed_.First(), field, /*skip=*/1);
}

bool HashValue::Contains(std::string_view field) const {
  if (table_) return table_->Find(field) != nullptr;
  return FindPacked(field) != Listpack::kEnd;
}

bool HashValue::GetView(std::string_view field, char* scratch, std::string_view* value) const {
  if (table_) {
    const std::string* v = table_->Find(field);
    if (v == nullptr) return false;
    *value = *v;
    return true;
  }
  const size_t pos = FindPacked(field);
  if (pos == Listpack::kEnd) return false;
  *value = PackedText(packed_.Get(packed_.Next(pos)), scratch);
  return true;
}

bool HashValue::Get(std::string_view field, std::string* value) const {
  char scratch[24];
  std::string_view v;
  if (!GetView(field, scratch, &v)) return false;
  value->assign(v);
  return true;
}

bool HashValue::Set(std::string_view field, std::string_view value, const HashLimits& limits) {
  if (!table_ &&
      (field.size() > limits.max_listpack_value || value.size() > limits.max_listpack_value)) {
    ConvertToTable();
  }
  if (table_) {
    auto [v, inserted] = table_->Insert(field);
    v->assign(value);
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
  if (table_) return table_->Erase(field);
  const size_t pos = FindPacked(field);
  if (pos == Listpack::kEnd) return false;
  packed_.Delete(pos, 2);
  return true;
}

void HashValue::ForEach(const std::function<void(std::string_view, std::string_view)>& fn) const {
  if (table_) {
    table_->ForEach([&](const Key& f, std::string& v) { fn(f.view(), v); });
    return;
  }
  char fs[24], vs[24];
  for (size_t pos = packed_.First(); pos != Listpack::kEnd; pos = packed_.Next(packed_.Next(pos))) {
    fn(PackedText(packed_.Get(pos), fs), PackedText(packed_.Get(packed_.Next(pos)), vs));
  }
}

uint64_t HashValue::ScanTable(uint64_t cursor,
                              const std::function<void(std::string_view, std::string_view)>& fn) const {
  return table_->Scan(cursor, [&](const Key& f, std::string& v) { fn(f.view(), v); });
}

void HashValue::RandomPair(absl::BitGen& rng, std::string* field, std::string* value) const {
  if (table_) {
    const auto* node = table_->RandomNode(rng);
    field->assign(node->key.view());
    value->assign(node->value);
    return;
  }
  PackedPair(absl::Uniform<size_t>(rng, 0, size()), field, value);
}

void HashValue::PackedPair(size_t i, std::string* field, std::string* value) const {
  const size_t pos = packed_.Seek(static_cast<int64_t>(2 * i));
  *field = packed_.Get(pos).ToString();
  *value = packed_.Get(packed_.Next(pos)).ToString();
}

std::unique_ptr<HashValue> HashValue::Clone() const {
  auto copy = std::make_unique<HashValue>();
  if (!table_) {
    copy->packed_ = Listpack::FromBytes(std::string(packed_.bytes()));
    return copy;
  }
  copy->table_ = std::make_unique<Dict<std::string>>();
  copy->packed_ = Listpack();
  copy->table_->Reserve(table_->size());
  table_->ForEach([&](const Key& f, std::string& v) { copy->table_->Insert(f.view()).first->assign(v); });
  return copy;
}

size_t HashValue::heap_bytes() const {
  if (!table_) return PackedBuffer::RoundUp(packed_.byte_size());
  size_t bytes = table_->bucket_bytes() + table_->size() * sizeof(Dict<std::string>::Node);
  table_->ForEach([&](const Key& f, std::string& v) {
    bytes += f.heap_bytes() + (v.capacity() > 15 ? v.capacity() + 1 : 0);
  });
  return bytes;
}

void HashValue::ConvertToTable() {
  if (table_) return;
  auto table = std::make_unique<Dict<std::string>>();
  table->Reserve(packed_.size() / 2);
  char fs[24], vs[24];
  for (size_t pos = packed_.First(); pos != Listpack::kEnd; pos = packed_.Next(packed_.Next(pos))) {
    table->Insert(PackedText(packed_.Get(pos), fs)).first->assign(PackedText(packed_.Get(packed_.Next(pos)), vs));
  }
  packed_ = Listpack();
  table_ = std::move(table);
}

}  // namespace ringkv::core

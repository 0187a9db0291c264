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
  return rep_.packed().Find(rep_.packed().First(), field, /*skip=*/1);
}

bool HashValue::Contains(std::string_view field) const {
  if (rep_.table()) return rep_.table()->Find(field) != nullptr;
  return FindPacked(field) != Listpack::kEnd;
}

bool HashValue::GetView(std::string_view field, char* scratch, std::string_view* value) const {
  if (rep_.table()) {
    const std::string* v = rep_.table()->Find(field);
    if (v == nullptr) return false;
    *value = *v;
    return true;
  }
  const size_t pos = FindPacked(field);
  if (pos == Listpack::kEnd) return false;
  *value = PackedText(rep_.packed().Get(rep_.packed().Next(pos)), scratch);
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
  if (!rep_.table() &&
      (field.size() > limits.max_listpack_value || value.size() > limits.max_listpack_value)) {
    ConvertToTable();
  }
  if (rep_.table()) {
    auto [v, inserted] = rep_.table()->Insert(field);
    v->assign(value);
    return inserted;
  }
  const size_t pos = FindPacked(field);
  if (pos != Listpack::kEnd) {
    rep_.packed().Replace(rep_.packed().Next(pos), value);
    return false;
  }
  rep_.packed().Append(field);
  rep_.packed().Append(value);
  // Redis checks the length after adding (hashTypeTryConversion's rule for
  // entries is "more than the limit").
  if (size() > limits.max_listpack_entries) ConvertToTable();
  return true;
}

bool HashValue::Delete(std::string_view field) {
  if (rep_.table()) return rep_.table()->Erase(field);
  const size_t pos = FindPacked(field);
  if (pos == Listpack::kEnd) return false;
  rep_.packed().Delete(pos, 2);
  return true;
}

void HashValue::ForEach(const std::function<void(std::string_view, std::string_view)>& fn) const {
  if (rep_.table()) {
    rep_.table()->ForEach([&](const Key& f, std::string& v) { fn(f.view(), v); });
    return;
  }
  char fs[24], vs[24];
  for (size_t pos = rep_.packed().First(); pos != Listpack::kEnd; pos = rep_.packed().Next(rep_.packed().Next(pos))) {
    fn(PackedText(rep_.packed().Get(pos), fs), PackedText(rep_.packed().Get(rep_.packed().Next(pos)), vs));
  }
}

uint64_t HashValue::ScanTable(uint64_t cursor,
                              const std::function<void(std::string_view, std::string_view)>& fn) const {
  return rep_.table()->Scan(cursor, [&](const Key& f, std::string& v) { fn(f.view(), v); });
}

void HashValue::RandomPair(absl::BitGen& rng, std::string* field, std::string* value) const {
  if (rep_.table()) {
    const auto* node = rep_.table()->FairRandomNode(rng);
    field->assign(node->key().view());
    value->assign(node->value);
    return;
  }
  PackedPair(absl::Uniform<size_t>(rng, 0, size()), field, value);
}

void HashValue::PackedPair(size_t i, std::string* field, std::string* value) const {
  const size_t pos = rep_.packed().Seek(static_cast<int64_t>(2 * i));
  *field = rep_.packed().Get(pos).ToString();
  *value = rep_.packed().Get(rep_.packed().Next(pos)).ToString();
}

HashValue HashValue::Clone() const {
  if (!rep_.table()) return HashValue(Listpack::FromBytes(std::string(rep_.packed().bytes())));
  auto table = std::make_unique<Dict<std::string>>();
  table->Reserve(rep_.table()->size());
  rep_.table()->ForEach([&](const Key& f, std::string& v) { table->Insert(f.view()).first->assign(v); });
  HashValue copy;
  copy.rep_.SetTable(std::move(table));
  return copy;
}

size_t HashValue::heap_bytes() const {
  if (!rep_.table()) return PackedBuffer::RoundUp(rep_.packed().byte_size());
  size_t bytes = rep_.table()->bucket_bytes() + rep_.table()->size() * sizeof(Dict<std::string>::Node);
  rep_.table()->ForEach([&](const Key& f, std::string& v) {
    bytes += f.heap_bytes() + (v.capacity() > 15 ? v.capacity() + 1 : 0);
  });
  return bytes;
}

void HashValue::ConvertToTable() {
  if (rep_.table()) return;
  auto table = std::make_unique<Dict<std::string>>();
  table->Reserve(rep_.packed().size() / 2);
  char fs[24], vs[24];
  for (size_t pos = rep_.packed().First(); pos != Listpack::kEnd; pos = rep_.packed().Next(rep_.packed().Next(pos))) {
    table->Insert(PackedText(rep_.packed().Get(pos), fs)).first->assign(PackedText(rep_.packed().Get(rep_.packed().Next(pos)), vs));
  }
  rep_.SetTable(std::move(table));
}

}  // namespace ringkv::core

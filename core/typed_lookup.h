// Typed lookups: the one way a command finds the value of a given type at a
// key -- missing, wrong type, or found -- creates it when missing, and
// removes it once emptied (Redis never keeps an empty collection).
//
// Example (an Op* function of the hash family):
//   OpResult<HashValue*> h = FindOrCreate<HashValue>(db, key, now_ms, [] { return Value(HashValue()); });
//   if (!h.ok()) return h.status();          // kWrongType
//   h.value()->Set(field, value, limits);
//   ...
//   DeleteIfEmpty(db, key, *h.value());
//
// A pointer returned here is valid until the key is erased or renamed
// (entries live in dict nodes, which resizes do not move).
//
// REQUIRES: main thread (the keyspace's owner).
#pragma once

#include <memory>
#include <string_view>
#include <type_traits>

#include "core/hash_value.h"
#include "core/keyspace.h"
#include "core/list_value.h"
#include "core/op_result.h"
#include "core/set_value.h"
#include "core/stream_value.h"
#include "core/value.h"
#include "core/zset_value.h"

namespace ringkv::core {

// Which ValueType a C++ type stands for, and how a Value yields it.
template <typename T>
inline constexpr ValueType kTypeOf = ValueType::kString;  // StringValue
template <>
inline constexpr ValueType kTypeOf<HashValue> = ValueType::kHash;
template <>
inline constexpr ValueType kTypeOf<ListValue> = ValueType::kList;
template <>
inline constexpr ValueType kTypeOf<SetValue> = ValueType::kSet;
template <>
inline constexpr ValueType kTypeOf<ZSetValue> = ValueType::kZSet;
template <>
inline constexpr ValueType kTypeOf<StreamValue> = ValueType::kStream;

// REQUIRES: v.type() == kTypeOf<T>.
template <typename T>
T* ValueAs(Value& v) {
  if constexpr (std::is_same_v<T, HashValue>) {
    return &v.hash();
  } else if constexpr (std::is_same_v<T, ListValue>) {
    return &v.list();
  } else if constexpr (std::is_same_v<T, SetValue>) {
    return &v.set();
  } else if constexpr (std::is_same_v<T, ZSetValue>) {
    return &v.zset();
  } else if constexpr (std::is_same_v<T, StreamValue>) {
    return &v.stream();
  } else {
    static_assert(std::is_same_v<T, StringValue>, "not a value type");
    return &v.str();
  }
}

// How a lookup counts: a write's lookup (Database::Find), a read's
// (FindForRead: keyspace_hits / keyspace_misses and "keymiss"), or a read's
// that counts nothing (FindForReadUncounted: a blocked reader served).
enum class Access : uint8_t { kWrite, kRead, kReadUncounted };

// The value of type T at `key`: kNotFound when missing, kWrongType when the
// key holds another type.
template <typename T>
OpResult<T*> FindTyped(Database& db, std::string_view key, int64_t now_ms, Access access = Access::kWrite) {
  Entry* e = access == Access::kRead             ? db.FindForRead(key, now_ms)
             : access == Access::kReadUncounted ? db.FindForReadUncounted(key, now_ms)
                                                : db.Find(key, now_ms);
  if (e == nullptr) return OpStatus::kNotFound;
  if (e->value.type() != kTypeOf<T>) return OpStatus::kWrongType;
  return ValueAs<T>(e->value);
}

// The value of type T at `key`, created from make() (a Value holding an
// empty T) when missing -- one probe of the table; creation tells the
// keyspace observer ("new") as every insert does. kWrongType when the key
// holds another type (nothing is created then). *created, when given, says
// whether it was made here.
template <typename T, typename Make>
OpResult<T*> FindOrCreate(Database& db, std::string_view key, int64_t now_ms, Make make, bool* created = nullptr) {
  bool inserted;
  Entry* e = db.FindOrInsert(key, now_ms, &inserted);
  if (created != nullptr) *created = inserted;
  if (inserted) {
    e->value = make();
  } else if (e->value.type() != kTypeOf<T>) {
    return OpStatus::kWrongType;
  }
  return ValueAs<T>(e->value);
}

// Erases `key` when `value` (the collection it holds) is empty; true when
// it did. Events are the caller's to report.
template <typename T>
bool DeleteIfEmpty(Database& db, std::string_view key, const T& value) {
  if (value.size() != 0) return false;
  return db.Erase(key);
}

}  // namespace ringkv::core

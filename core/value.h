// Value: what a key holds -- a string, stored inline as a StringValue, or a
// collection -- in the same 24 bytes a string takes, host bytes included,
// so that a keyspace entry is 24 bytes (core/keyspace_node.h). Hashes, sets
// and sorted sets (16 bytes each: their packed buffer or a table pointer)
// live inside the Value, so a small one costs its packed bytes and nothing
// more; a list or a stream is owned through a pointer.
//
// A Value is moved bitwise (the collections are trivially relocatable), so
// references from hash() & co. are valid only while the Value stays where
// it is -- in a dict node, until the key is erased or renamed.
//
// Contract: type() says which accessor is valid; calling str() on a hash (or
// hash() on a string) is a programming error (checked in debug builds).
// Commands check the type first and reply WRONGTYPE (core::OpStatus
// kWrongType). Assigning a StringValue replaces whatever was held.
//
// Thread-safety: none; owned by the keyspace. A Value may be destroyed on the
// lazy-free thread once detached from the keyspace.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <string_view>

#include "core/string_value.h"

namespace ringkv::core {

class HashValue;
class ListValue;
class SetValue;
class StreamValue;
class ZSetValue;

// Redis's object types, with Redis's OBJ_* numbers.
enum class ValueType : uint8_t { kString = 0, kList = 1, kSet = 2, kZSet = 3, kHash = 4, kStream = 6 };

// "string", "list", "set", "zset", "hash", "stream": TYPE's reply and SCAN's TYPE names.
const char* TypeName(ValueType type);

class Value {
 public:
  Value() = default;
  Value(StringValue s) : s_(std::move(s)) {}  // NOLINT: a string converts implicitly
  explicit Value(HashValue&& hash);
  explicit Value(SetValue&& set);
  explicit Value(ZSetValue&& zset);
  explicit Value(std::unique_ptr<ListValue> list);
  explicit Value(std::unique_ptr<StreamValue> stream);
  Value(Value&& o) noexcept = default;
  Value& operator=(Value&& o) noexcept {
    if (this != &o) {
      DropObject();
      s_ = std::move(o.s_);
    }
    return *this;
  }
  Value& operator=(StringValue&& s) noexcept {
    DropObject();
    s_ = std::move(s);
    return *this;
  }
  ~Value() { DropObject(); }
  // As `= StringValue(s)`, reusing a string's heap buffer when it fits
  // (StringValue::Assign).
  void SetString(std::string_view s) {
    if (is_string()) {
      s_.Assign(s);
    } else {
      *this = StringValue(s);
    }
  }

  // The slot's inline room and the host's bytes (core/string_value.h):
  // properties of where the value lives, kept whatever it becomes.
  size_t slot_words() const { return s_.slot_words(); }
  void set_slot_words(size_t words) { s_.set_slot_words(words); }
  size_t slot_bytes_wanted() const { return s_.slot_bytes_wanted(); }
  uint8_t* host_bytes() { return s_.host_bytes(); }
  const uint8_t* host_bytes() const { return s_.host_bytes(); }

  ValueType type() const {
    return s_.is_foreign() ? static_cast<ValueType>(s_.inline_len_) : ValueType::kString;
  }
  bool is_string() const { return !s_.is_foreign(); }

  StringValue& str() {
    assert(is_string());
    return s_;
  }
  const StringValue& str() const {
    assert(is_string());
    return s_;
  }
  HashValue& hash() const { return *static_cast<HashValue*>(Object(ValueType::kHash)); }
  ListValue& list() const { return *static_cast<ListValue*>(Object(ValueType::kList)); }
  SetValue& set() const { return *static_cast<SetValue*>(Object(ValueType::kSet)); }
  ZSetValue& zset() const { return *static_cast<ZSetValue*>(Object(ValueType::kZSet)); }
  StreamValue& stream() const { return *static_cast<StreamValue*>(Object(ValueType::kStream)); }

  // OBJECT REFCOUNT as Redis reports it (shared integers: INT_MAX, when
  // `integers_shared`: AccessPolicy::integers_shared).
  int64_t redis_refcount(bool integers_shared = true) const {
    return is_string() && integers_shared ? s_.redis_refcount() : 1;
  }
  // OBJECT ENCODING's name for the current representation.
  const char* encoding_name() const;
  // Heap bytes owned beyond the 24 inline ones (MEMORY USAGE).
  size_t heap_bytes() const;
  // Roughly how many allocations freeing the value takes: the elements of
  // a table-encoded collection, 1 otherwise (Redis's lazyfreeGetFreeEffort).
  size_t FreeEffort() const;
  // An independent copy, in the same encoding.
  Value Clone() const;
  // COPY's copy: as Clone, and a small integer is not Redis's shared one
  // (StringValue::MarkCopiedInt).
  Value CopyForCopyCommand() const {
    Value v = Clone();
    if (v.is_string()) v.s_.MarkCopiedInt();
    return v;
  }

 private:
  void* Object(ValueType expected) const {
    assert(type() == expected);
    return expected == ValueType::kList || expected == ValueType::kStream ? s_.foreign_ : s_.foreign_storage();
  }
  // Destroys the collection, if any, leaving an empty string.
  void DropObject() noexcept {
    if (s_.is_foreign()) DestroyObject();
  }
  void DestroyObject() noexcept;

  StringValue s_;
};
static_assert(sizeof(Value) == sizeof(StringValue), "Value must stay as small as a string");

}  // namespace ringkv::core

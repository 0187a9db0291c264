#include "core/value.h"

#include <limits>

#include "core/hash_value.h"
#include "core/list_value.h"
#include "core/set_value.h"
#include "core/zset_value.h"

namespace ringkv::core {

const char* TypeName(ValueType type) {
  switch (type) {
    case ValueType::kString: return "string";
    case ValueType::kList: return "list";
    case ValueType::kSet: return "set";
    case ValueType::kZSet: return "zset";
    case ValueType::kHash: return "hash";
  }
  return "none";
}

Value::Value(std::unique_ptr<HashValue> hash) { s_.SetForeign(hash.release(), static_cast<uint8_t>(ValueType::kHash)); }
Value::Value(std::unique_ptr<ListValue> list) { s_.SetForeign(list.release(), static_cast<uint8_t>(ValueType::kList)); }
Value::Value(std::unique_ptr<SetValue> set) { s_.SetForeign(set.release(), static_cast<uint8_t>(ValueType::kSet)); }
Value::Value(std::unique_ptr<ZSetValue> zset) { s_.SetForeign(zset.release(), static_cast<uint8_t>(ValueType::kZSet)); }

void Value::DestroyObject() noexcept {
  switch (type()) {
    case ValueType::kHash: delete &hash(); break;
    case ValueType::kSet: delete &set(); break;
    case ValueType::kZSet: delete &zset(); break;
    case ValueType::kList: delete &list(); break;
    case ValueType::kString: break;
  }
  s_ = StringValue();
}

const char* Value::encoding_name() const {
  switch (type()) {
    case ValueType::kString:
      switch (s_.encoding()) {
        case StringEncoding::kInt: return "int";
        case StringEncoding::kEmbstr: return "embstr";
        case StringEncoding::kRaw: return "raw";
      }
      return "raw";
    case ValueType::kHash: return hash().encoding_name();
    case ValueType::kSet: return set().encoding_name();
    case ValueType::kZSet: return zset().encoding_name();
    case ValueType::kList: return "quicklist";  // Redis 7.0 has no other list encoding
  }
  return "unknown";
}

size_t Value::heap_bytes() const {
  switch (type()) {
    case ValueType::kString: return s_.heap_bytes();
    case ValueType::kHash: return sizeof(HashValue) + hash().heap_bytes();
    case ValueType::kSet: return sizeof(SetValue) + set().heap_bytes();
    case ValueType::kZSet: return sizeof(ZSetValue) + zset().heap_bytes();
    case ValueType::kList: return sizeof(ListValue) + list().heap_bytes();
  }
  return 0;
}

size_t Value::FreeEffort() const {
  switch (type()) {
    case ValueType::kHash: return hash().encoding() == HashValue::Encoding::kHashtable ? hash().size() : 1;
    case ValueType::kSet: return set().encoding() == SetValue::Encoding::kHashtable ? set().size() : 1;
    case ValueType::kZSet: return zset().encoding() == ZSetValue::Encoding::kSkiplist ? zset().size() : 1;
    case ValueType::kList: return list().node_count();
    case ValueType::kString: break;
  }
  return 1;
}

Value Value::Clone() const {
  switch (type()) {
    case ValueType::kString:
      if (s_.is_int()) return StringValue::FromInt(s_.int_value());
      if (s_.encoding() == StringEncoding::kRaw) return StringValue::Raw(s_.ToString());
      return StringValue(s_.ToString());
    case ValueType::kHash: return Value(hash().Clone());
    case ValueType::kSet: return Value(set().Clone());
    case ValueType::kZSet: return Value(zset().Clone());
    case ValueType::kList: return Value(list().Clone());
  }
  return Value();
}

}  // namespace ringkv::core

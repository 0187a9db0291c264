#include "core/value.h"

#include <limits>
#include <new>

#include "core/hash_value.h"
#include "core/list_value.h"
#include "core/set_value.h"
#include "core/stream_value.h"
#include "core/zset_value.h"

namespace ringkv::core {

const char* TypeName(ValueType type) {
  switch (type) {
    case ValueType::kString: return "string";
    case ValueType::kList: return "list";
    case ValueType::kSet: return "set";
    case ValueType::kZSet: return "zset";
    case ValueType::kHash: return "hash";
    case ValueType::kStream: return "stream";
  }
  return "none";
}

static_assert(sizeof(HashValue) <= 16 && sizeof(SetValue) <= 16 && sizeof(ZSetValue) <= 16,
              "collections kept inside a Value must fit its 16-byte union");

Value::Value(HashValue&& hash) {
  new (s_.SetForeignInline(static_cast<uint8_t>(ValueType::kHash))) HashValue(std::move(hash));
}
Value::Value(SetValue&& set) {
  new (s_.SetForeignInline(static_cast<uint8_t>(ValueType::kSet))) SetValue(std::move(set));
}
Value::Value(ZSetValue&& zset) {
  new (s_.SetForeignInline(static_cast<uint8_t>(ValueType::kZSet))) ZSetValue(std::move(zset));
}
Value::Value(std::unique_ptr<ListValue> list) { s_.SetForeign(list.release(), static_cast<uint8_t>(ValueType::kList)); }
Value::Value(std::unique_ptr<StreamValue> stream) {
  s_.SetForeign(stream.release(), static_cast<uint8_t>(ValueType::kStream));
}

void Value::DestroyObject() noexcept {
  switch (type()) {
    case ValueType::kHash: hash().~HashValue(); break;
    case ValueType::kSet: set().~SetValue(); break;
    case ValueType::kZSet: zset().~ZSetValue(); break;
    case ValueType::kList: delete &list(); break;
    case ValueType::kStream: delete &stream(); break;
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
    case ValueType::kStream: return "stream";
  }
  return "unknown";
}

size_t Value::heap_bytes() const {
  switch (type()) {
    case ValueType::kString: return s_.heap_bytes();
    case ValueType::kHash: return hash().heap_bytes();
    case ValueType::kSet: return set().heap_bytes();
    case ValueType::kZSet: return zset().heap_bytes();
    case ValueType::kList: return sizeof(ListValue) + list().heap_bytes();
    case ValueType::kStream: return sizeof(StreamValue) + stream().heap_bytes();
  }
  return 0;
}

size_t Value::FreeEffort() const {
  switch (type()) {
    case ValueType::kHash: return hash().encoding() == HashValue::Encoding::kHashtable ? hash().size() : 1;
    case ValueType::kSet: return set().encoding() == SetValue::Encoding::kHashtable ? set().size() : 1;
    case ValueType::kZSet: return zset().encoding() == ZSetValue::Encoding::kSkiplist ? zset().size() : 1;
    case ValueType::kList: return list().node_count();
    case ValueType::kStream: return stream().node_count() + stream().groups().size();
    case ValueType::kString: break;
  }
  return 1;
}

Value Value::Clone() const {
  switch (type()) {
    case ValueType::kString:
      if (s_.is_int()) return StringValue::FromInt(s_.int_value());
      // The same encoding, as Redis's dupStringObject: an embstr that reads
      // as a number (INCRBYFLOAT's "3") stays an embstr.
      if (s_.encoding() == StringEncoding::kRaw) return StringValue::Raw(s_.ToString());
      return StringValue::Text(s_.ToString());
    case ValueType::kHash: return Value(hash().Clone());
    case ValueType::kSet: return Value(set().Clone());
    case ValueType::kZSet: return Value(zset().Clone());
    case ValueType::kList: return Value(list().Clone());
    case ValueType::kStream: return Value(stream().Clone());
  }
  return Value();
}

}  // namespace ringkv::core

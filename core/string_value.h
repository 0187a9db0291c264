// StringValue: a Redis string in 24 bytes.
//
// Three representations, chosen as Redis chooses its encodings:
//   kInt     the value is the decimal text of an int64 ("123", "-7"); stored as
//            the number. OBJECT ENCODING "int".
//   kEmbstr  written whole by SET & co. and at most 44 bytes. Up to 15 bytes
//            live inline (no allocation); longer ones on the heap.
//   kRaw     longer than 44 bytes, or modified in place (APPEND, SETRANGE).
// The reported encoding follows Redis's rules; the storage is ours and never
// allocates for short values.
//
// Thread-safety: none; owned by the keyspace (main thread).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace ringkv::core {

enum class StringEncoding : uint8_t { kInt, kEmbstr, kRaw };

// Parses s as Redis's string2ll does: the exact decimal text of an int64 (no
// spaces, no '+', no leading zeros, at most 20 chars). True on success.
bool StringToInt64(std::string_view s, int64_t* out);

class StringValue {
 public:
  static constexpr size_t kInlineMax = 15;
  static constexpr size_t kEmbstrMax = 44;

  StringValue() : encoding_(StringEncoding::kEmbstr), inline_(1), inline_len_(0) {}
  // Stores s, as an integer when it is one (SET's behaviour).
  explicit StringValue(std::string_view s) { Init(s, /*try_int=*/true); }
  static StringValue FromInt(int64_t v);
  static StringValue Raw(std::string_view s);  // never int-encoded
  // The text as Redis's createStringObject keeps it: never int-encoded,
  // embstr up to 44 bytes (INCRBYFLOAT's result, for one).
  static StringValue Text(std::string_view s);
  // Makes this value what StringValue(s) would be (the same encoding), in
  // the heap buffer it already has when `s` fits it closely (its capacity
  // at most an eighth over s's size): overwriting a value with one of about
  // its size -- SET on an existing key -- allocates and frees nothing.
  // heap_bytes() (MEMORY USAGE) then counts the buffer, up to that eighth
  // more than a fresh value's.
  // REQUIRES: not a collection's storage (Value::SetString checks).
  void Assign(std::string_view s);

  StringValue(const StringValue&) = delete;
  StringValue& operator=(const StringValue&) = delete;
  StringValue(StringValue&& o) noexcept { MoveFrom(o); }
  StringValue& operator=(StringValue&& o) noexcept {
    if (this != &o) {
      Free();
      MoveFrom(o);
    }
    return *this;
  }
  ~StringValue() { Free(); }

  StringEncoding encoding() const { return encoding_; }
  bool is_int() const { return encoding_ == StringEncoding::kInt; }
  int64_t int_value() const { return int_; }
  size_t size() const;
  // The bytes. For kInt, `scratch` (at least 21 bytes) receives the text.
  // Inline: every string command reads its value through it.
  std::string_view View(char* scratch) const {
    if (encoding_ == StringEncoding::kInt) return IntView(scratch);
    if (inline_) return {inline_bytes_, inline_len_};
    return {heap_.data, heap_.size};
  }
  std::string ToString() const;
  // OBJECT REFCOUNT as Redis reports it: the integers 0..9999 are shared
  // objects there (OBJ_SHARED_INTEGERS) with refcount INT_MAX; others are 1.
  int64_t redis_refcount() const { return is_int() && int_ >= 0 && int_ < 10000 ? 2147483647 : 1; }
  // Heap bytes owned (for MEMORY USAGE).
  size_t heap_bytes() const { return (encoding_ != StringEncoding::kInt && !inline_) ? heap_.cap : 0; }

  // In-place edits; the value becomes kRaw (as in Redis).
  void Append(std::string_view s);
  void SetRange(size_t offset, std::string_view s);
  // The bytes for editing in place (SETBIT, BITFIELD): the value becomes
  // kRaw, zero-padded to at least min_size bytes. Valid until the next edit.
  char* MutableBytes(size_t min_size) {
    // Already raw on the heap and long enough (PFADD, SETBIT on a grown
    // bitmap): nothing to convert, pad or allocate.
    if (encoding_ == StringEncoding::kRaw && !inline_ && min_size <= heap_.size) return heap_.data;
    return MutableBytesSlow(min_size);
  }

 private:
  void Init(std::string_view s, bool try_int);
  void Free() {
    if (encoding_ != StringEncoding::kInt && !inline_) delete[] heap_.data;
  }
  // The state Value (core/value.h) uses for a non-string: the union holds
  // Value's collection pointer and inline_len_ its ValueType. inline_ is set
  // so that Free() leaves the pointer alone: Value owns it.
  friend class Value;
  static constexpr StringEncoding kForeign = static_cast<StringEncoding>(3);
  void SetForeign(void* object, uint8_t type) {
    MarkForeign(type);
    foreign_ = object;
  }
  // As SetForeign, for an object Value keeps in the 16 bytes of the union
  // itself: returns that storage, for Value to construct the object in.
  void* SetForeignInline(uint8_t type) {
    MarkForeign(type);
    return inline_bytes_;
  }
  void* foreign_storage() const { return const_cast<char*>(inline_bytes_); }
  void MarkForeign(uint8_t type) {
    Free();
    encoding_ = kForeign;
    inline_ = 1;
    inline_len_ = type;
  }
  bool is_foreign() const { return encoding_ == kForeign; }

  void MoveFrom(StringValue& o) {
    std::memcpy(static_cast<void*>(this), &o, sizeof(StringValue));
    o.encoding_ = StringEncoding::kInt;  // moved-from: owns nothing
    o.int_ = 0;
  }
  // Ensures heap storage of at least n bytes holding the current bytes.
  void MakeHeap(size_t n);
  std::string_view IntView(char* scratch) const;
  char* MutableBytesSlow(size_t min_size);

  union {
    int64_t int_;
    struct {
      char* data;
      uint32_t size;
      uint32_t cap;
    } heap_;
    char inline_bytes_[16];
    void* foreign_;
  };
  StringEncoding encoding_;
  uint8_t inline_ : 1;
  uint8_t inline_len_ : 7;
};
static_assert(sizeof(StringValue) <= 24, "StringValue must stay compact");

}  // namespace ringkv::core

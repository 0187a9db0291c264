// StringValue: a Redis string in 24 bytes.
//
// Three representations, chosen as Redis chooses its encodings:
//   kInt     the value is the decimal text of an int64 ("123", "-7"); stored as
//            the number. OBJECT ENCODING "int".
//   kEmbstr  written whole by SET & co. and at most 44 bytes.
//   kRaw     longer than 44 bytes, or modified in place (APPEND, SETRANGE).
// The reported encoding follows Redis's rules; the storage is ours: bytes
// that fit the value's inline room live there (no allocation), longer ones
// on the heap.
//
// Layout (24 bytes): byte 0 the encoding, byte 1 the inline flag and the
// slot's extra room, byte 2 the inline length, bytes 3-7 the host's, bytes
// 8-23 the payload (the number, the heap buffer, or the inline bytes).
//
//  * Inline room. 16 bytes, plus whatever room the slot the value lives in
//    was given past its end (slot_words(), in 8-byte words): a keyspace
//    entry allocated for a 32-byte value (core/keyspace_node.h) keeps the
//    bytes inside its node. The room belongs to the slot, not to the value:
//    moves and assignments keep each side's own, and a value moved to a
//    slot with less room takes its bytes to the heap.
//  * Host bytes. Five bytes the object that holds the value may use for its
//    own state (a keyspace entry keeps its access clock, snapshot mark and
//    key length there, so that an entry stays 24 bytes). The value never
//    reads or changes them after construction, which zeroes them.
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
  static constexpr size_t kInlineMax = 16;  // without slot room
  static constexpr size_t kEmbstrMax = 44;
  static constexpr size_t kHostBytes = 5;
  // The most slot room a value can be given: 56 extra bytes, 72 inline.
  static constexpr size_t kMaxSlotWords = 7;
  static constexpr size_t kMaxInline = kInlineMax + 8 * kMaxSlotWords;

  StringValue() = default;
  // Stores s, as an integer when it is one (SET's behaviour).
  explicit StringValue(std::string_view s) { Init(s, /*try_int=*/true); }
  static StringValue FromInt(int64_t v);
  static StringValue Raw(std::string_view s);  // never int-encoded
  // The text as Redis's createStringObject keeps it: never int-encoded,
  // embstr up to 44 bytes (INCRBYFLOAT's result, for one).
  static StringValue Text(std::string_view s);
  // Makes this value what StringValue(s) would be (the same encoding), in
  // its inline room when `s` fits there, or in the heap buffer it already
  // has when `s` fits that closely (its capacity at most an eighth over s's
  // size): overwriting a value with one of about its size -- SET on an
  // existing key -- allocates and frees nothing. `s` may view this value.
  // heap_bytes() (MEMORY USAGE) then counts the buffer, up to that eighth
  // more than a fresh value's.
  // REQUIRES: not a collection's storage (Value::SetString checks).
  void Assign(std::string_view s);

  StringValue(const StringValue&) = delete;
  StringValue& operator=(const StringValue&) = delete;
  // Moves and assignments leave both sides' slot room and host bytes as
  // they were (a new value's are zero). A string of 17-72 bytes moved out
  // of its room allocates its bytes on the heap: out of memory there ends
  // the process, as any allocation failure does in the server.
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
    if (inline_) return {payload(), inline_len_};
    return {heap_.data, heap_.size};
  }
  std::string ToString() const;
  // OBJECT REFCOUNT as Redis reports it: the integers 0..9999 are shared
  // objects there (OBJ_SHARED_INTEGERS) with refcount INT_MAX, unless the
  // value is a copy (MarkCopiedInt); others are 1.
  int64_t redis_refcount() const {
    return is_int() && inline_len_ == 0 && int_ >= 0 && int_ < 10000 ? 2147483647 : 1;
  }
  // COPY's value: Redis duplicates the object (dupStringObject), so a small
  // integer is no longer the shared one -- OBJECT REFCOUNT says 1 until the
  // value is replaced or reloaded. Moves keep the mark (RENAME, MOVE keep
  // Redis's object). Kept in inline_len_, which an integer does not use.
  void MarkCopiedInt() {
    if (is_int()) inline_len_ = 1;
  }
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

  // The bytes this value can hold inline: 16, plus the slot's room.
  size_t inline_capacity() const { return kInlineMax + 8 * slot_words_; }
  // The slot's room past the 24 bytes, in 8-byte words (0 for a value on
  // its own). Set once by the slot's owner, on an empty value, before the
  // value is used.
  // REQUIRES: words <= kMaxSlotWords, and that much memory after the value.
  size_t slot_words() const { return slot_words_; }
  void set_slot_words(size_t words) { slot_words_ = static_cast<uint8_t>(words & 7); }
  // The host's five bytes (see above).
  uint8_t* host_bytes() { return host_; }
  const uint8_t* host_bytes() const { return host_; }
  // How many bytes of slot room would keep this string inline: its size
  // past 16 for a string of 17-72 bytes (inline or not), 0 otherwise. What
  // a node for this value is created with (RENAME, COPY, loading).
  size_t slot_bytes_wanted() const {
    if (encoding_ == StringEncoding::kInt || encoding_ == kForeign) return 0;
    const size_t n = inline_ ? inline_len_ : heap_.size;
    return n > kInlineMax && n <= kMaxInline ? n - kInlineMax : 0;
  }
  // How many bytes of slot room a value would use inline if `s` were
  // stored with SET (0 when it fits 16 bytes, is an integer or is too long
  // for the room): what a keyspace node is allocated with.
  static size_t SlotBytesFor(std::string_view s);

 private:
  // Sets the representation of `s`; leaves the slot room and host bytes.
  // REQUIRES: nothing owned (freed or moved away).
  void Init(std::string_view s, bool try_int);
  // Init's bytes: inline when they fit, on the heap (exactly) otherwise;
  // the encoding is left as it is.
  void SetBytes(std::string_view s);
  // The payload's first byte: the inline bytes start here (the union has no
  // member for them) and run on into the slot's room.
  char* payload() { return reinterpret_cast<char*>(this) + kPayloadOffset; }
  const char* payload() const { return reinterpret_cast<const char*>(this) + kPayloadOffset; }
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
    return payload();
  }
  void* foreign_storage() const { return const_cast<char*>(payload()); }
  void MarkForeign(uint8_t type) {
    Free();
    encoding_ = kForeign;
    inline_ = 1;
    inline_len_ = type;
  }
  bool is_foreign() const { return encoding_ == kForeign; }

  // Takes o's value (this owns nothing), keeping this one's room and host
  // bytes; o is left an int 0, owning nothing. A string of more than 16
  // bytes goes into this slot's room when it fits (out of o's heap buffer
  // too), to the heap otherwise.
  void MoveFrom(StringValue& o) {
    encoding_ = o.encoding_;
    inline_ = o.inline_;
    inline_len_ = o.inline_len_;
    const bool text = encoding_ != StringEncoding::kInt && encoding_ != kForeign;
    if (text && ((o.inline_ && o.inline_len_ > kInlineMax) ||
                 (slot_words_ != 0 && !o.inline_ && o.heap_.size > kInlineMax && o.heap_.size <= inline_capacity()))) {
      TakeLongString(o);
    } else {
      std::memcpy(payload(), o.payload(), kPayloadSize);
    }
    o.encoding_ = StringEncoding::kInt;
    o.inline_ = 1;
    o.inline_len_ = 0;
    o.int_ = 0;
  }
  void TakeLongString(const StringValue& o);
  // Ensures heap storage of at least n bytes holding the current bytes.
  void MakeHeap(size_t n);
  std::string_view IntView(char* scratch) const;
  char* MutableBytesSlow(size_t min_size);

  static constexpr size_t kPayloadOffset = 8;
  static constexpr size_t kPayloadSize = 16;

  StringEncoding encoding_ = StringEncoding::kEmbstr;
  uint8_t inline_ : 1 = 1;
  uint8_t slot_words_ : 3 = 0;
  uint8_t inline_len_ = 0;  // the length inline; a collection's ValueType
  uint8_t host_[kHostBytes] = {};
  union {
    int64_t int_;
    struct {
      char* data;
      uint32_t size;
      uint32_t cap;
    } heap_;
    void* foreign_;
  };
};
static_assert(sizeof(StringValue) == 24, "StringValue must stay compact");

}  // namespace ringkv::core

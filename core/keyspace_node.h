// Entry and KeyspaceNode: a keyspace key, its value and its state in one
// allocation, sized to the key and to a short string value.
//
// A node is [next 8][Entry 24][slot room 0-56][key]:
//
//  * Entry is the Value (24 bytes) with the entry's own state in the
//    value's five host bytes (core/string_value.h): the access clock, the
//    snapshot mark, whether a deadline is set (the deadline itself lives in
//    the database's ExpireIndex), and the key's length code.
//  * The slot room extends the value's inline bytes: a node created for a
//    17-72 byte string keeps the string inside itself. It is fixed for the
//    node's life; a longer value goes to the heap as anywhere else.
//  * The key follows, its bytes inline whatever their length: up to 126
//    bytes with the length in the code, longer ones behind an 8-byte
//    length.
//
// So a 16-byte key with an integer value is a 48-byte node, and with a
// 32-byte string a 64-byte one; before, 64 bytes plus the string's own
// allocation.
//
// Pointers to a node's Entry stay valid until the node is destroyed:
// nodes never move (Dict relinks them when it rehashes).
//
// Thread-safety: none; owned by a Database.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string_view>

#include "core/key.h"
#include "core/value.h"

namespace ringkv::core {

class Entry {
 public:
  Value value;

  Entry() = default;
  // An entry's state belongs to its node: never copied or moved with it
  // (RENAME moves the value and sets the new entry's state itself).
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;

  // Access state (core/access_policy.h): OBJECT IDLETIME / FREQ; 24 bits.
  uint32_t lru() const {
    const uint8_t* h = value.host_bytes();
    return uint32_t{h[0]} | uint32_t{h[1]} << 8 | uint32_t{h[2]} << 16;
  }
  void set_lru(uint32_t v) {
    uint8_t* h = value.host_bytes();
    h[0] = static_cast<uint8_t>(v);
    h[1] = static_cast<uint8_t>(v >> 8);
    h[2] = static_cast<uint8_t>(v >> 16);
  }
  // Which snapshot has this entry (KeyspaceSnapshot): equal to its
  // database's snapshot epoch once written or created after the start.
  uint8_t snap() const { return value.host_bytes()[3]; }
  void set_snap(uint8_t epoch) { value.host_bytes()[3] = epoch; }
  // Whether the entry has a deadline in its database's ExpireIndex.
  bool has_expire() const { return (value.host_bytes()[4] & kExpireBit) != 0; }
  void set_has_expire(bool on) {
    uint8_t& b = value.host_bytes()[4];
    b = static_cast<uint8_t>(on ? (b | kExpireBit) : (b & ~kExpireBit));
  }

 private:
  friend class KeyspaceNode;
  static constexpr uint8_t kExpireBit = 0x80;
  uint8_t key_code() const { return value.host_bytes()[4] & 0x7F; }
  void set_key_code(uint8_t code) {
    uint8_t& b = value.host_bytes()[4];
    b = static_cast<uint8_t>((b & kExpireBit) | code);
  }
};
static_assert(sizeof(Entry) == 24);

// A node's key: the bytes inside the node.
class NodeKey {
 public:
  NodeKey(const char* data, size_t size) : data_(data), size_(size) {}
  std::string_view view() const { return {data_, size_}; }
  bool Equals(std::string_view k) const {
    if (k.size() != size_) return false;
    return size_ <= 24 ? ShortBytesEqual(data_, k.data(), size_) : std::memcmp(data_, k.data(), size_) == 0;
  }

 private:
  const char* data_;
  size_t size_;
};

class KeyspaceNode {
 public:
  KeyspaceNode* next = nullptr;
  Entry value;  // `value`, as every Dict node's

  // Up to this many bytes of key have their length in the entry's code.
  static constexpr size_t kShortKeyMax = 126;

  // A node for `key` with an empty value and room for `slot_bytes` bytes
  // of string past the value's own 16 (StringValue::SlotBytesFor), rounded
  // up to words and capped at StringValue::kMaxSlotWords.
  static KeyspaceNode* Create(std::string_view key, size_t slot_bytes) {
    const size_t words = std::min<size_t>((slot_bytes + 7) / 8, StringValue::kMaxSlotWords);
    const size_t bytes = AllocationSize(words, key.size());
    auto* n = new (::operator new(bytes)) KeyspaceNode();
    n->value.value.set_slot_words(words);
    char* k = n->tail() + 8 * words;
    if (key.size() <= kShortKeyMax) {
      n->value.set_key_code(static_cast<uint8_t>(key.size()));
    } else {
      n->value.set_key_code(kLongKeyCode);
      const uint64_t size = key.size();
      std::memcpy(k, &size, sizeof(size));
      k += sizeof(size);
    }
    if (!key.empty()) std::memcpy(k, key.data(), key.size());
    return n;
  }
  static void Destroy(KeyspaceNode* n) noexcept {
    n->~KeyspaceNode();
    ::operator delete(n);
  }

  // The node an entry is in. REQUIRES: `e` is a node's (every entry a
  // Database holds is).
  static const KeyspaceNode& Of(const Entry& e) {
    return *reinterpret_cast<const KeyspaceNode*>(reinterpret_cast<const char*>(&e) - kEntryOffset);
  }

  NodeKey key() const {
    const char* k = tail() + 8 * value.value.slot_words();
    const uint8_t code = value.key_code();
    if (code != kLongKeyCode) return {k, code};
    uint64_t size;
    std::memcpy(&size, k, sizeof(size));
    return {k + sizeof(size), static_cast<size_t>(size)};
  }

  // The bytes this node asked the allocator for (MEMORY USAGE).
  size_t allocated_bytes() const { return AllocationSize(value.value.slot_words(), key().view().size()); }
  static size_t AllocationSize(size_t slot_words, size_t key_size) {
    return sizeof(KeyspaceNode) + 8 * slot_words + key_size + (key_size > kShortKeyMax ? sizeof(uint64_t) : 0);
  }

 private:
  static constexpr uint8_t kLongKeyCode = 127;
  static constexpr size_t kEntryOffset = sizeof(KeyspaceNode*);
  KeyspaceNode() = default;
  ~KeyspaceNode() = default;
  // The slot room, then the key.
  char* tail() { return reinterpret_cast<char*>(this) + sizeof(KeyspaceNode); }
  const char* tail() const { return reinterpret_cast<const char*>(this) + sizeof(KeyspaceNode); }
};
static_assert(sizeof(KeyspaceNode) == 32);
static_assert(offsetof(KeyspaceNode, value) == sizeof(KeyspaceNode*));

}  // namespace ringkv::core

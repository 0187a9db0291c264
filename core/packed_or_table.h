// PackedOrTable<Packed, Table>: a collection's representation in 16 bytes --
// either its packed encoding (a Listpack or an Intset, each a 16-byte
// PackedBuffer) or, once it has converted, an owned pointer to its table.
//
// Why: a small hash, set or sorted set is one packed buffer. Holding "the
// buffer, and a pointer used only after conversion" took 24 bytes, too big
// to live inside a core::Value, so every small collection paid a separate
// 24-byte object on top of its buffer. At 16 bytes the collection lives in
// the Value itself (core/value.h) and a small collection is the dict node
// plus its packed bytes, as in Redis (robj -> listpack).
//
// How the two are told apart: the table form stores kTableMark where the
// packed form keeps its PackedBuffer's size. No buffer has that size (a
// packed encoding is bounded far below 4 GiB by the conversion limits).
//
// Contract: conversion goes one way (SetTable); the packed bytes are freed
// then. A moved-from object holds no table and no bytes; it may only be
// destroyed or assigned to. Trivially relocatable: a bitwise copy followed by
// forgetting the source is a valid move (core::Value relies on it).
//
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <utility>

#include "core/packed_buffer.h"

namespace ringkv::core {

template <typename Packed, typename Table>
class PackedOrTable {
  static_assert(sizeof(Packed) == sizeof(PackedBuffer), "Packed must be a PackedBuffer and nothing else");

 public:
  PackedOrTable() { new (&packed_) Packed(); }
  explicit PackedOrTable(Packed packed) { new (&packed_) Packed(std::move(packed)); }
  PackedOrTable(const PackedOrTable&) = delete;
  PackedOrTable& operator=(const PackedOrTable&) = delete;
  PackedOrTable(PackedOrTable&& o) noexcept { StealFrom(o); }
  PackedOrTable& operator=(PackedOrTable&& o) noexcept {
    if (this != &o) {
      Destroy();
      StealFrom(o);
    }
    return *this;
  }
  ~PackedOrTable() { Destroy(); }

  bool is_table() const { return table_.mark == kTableMark; }
  // The table, or nullptr while packed.
  Table* table() const { return is_table() ? table_.table : nullptr; }
  // REQUIRES: !is_table().
  Packed& packed() { return packed_; }
  const Packed& packed() const { return packed_; }

  // Frees the packed bytes and adopts `table`. REQUIRES: !is_table().
  void SetTable(std::unique_ptr<Table> table) {
    packed_.~Packed();
    table_.table = table.release();
    table_.mark = kTableMark;
  }

 private:
  static constexpr uint32_t kTableMark = UINT32_MAX;
  // Overlays PackedBuffer's layout: the pointer where its data pointer is,
  // the mark where its size is (checked by PackedBuffer::kSizeOffset).
  struct TableForm {
    Table* table;
    uint32_t mark;
    uint32_t unused;
  };
  static_assert(sizeof(TableForm) == sizeof(PackedBuffer) && offsetof(TableForm, mark) == PackedBuffer::kSizeOffset);

  void Destroy() noexcept {
    if (is_table()) {
      delete table_.table;
    } else {
      packed_.~Packed();
    }
  }
  // Bitwise move; the source is left as a table form holding nothing.
  void StealFrom(PackedOrTable& o) noexcept {
    std::memcpy(static_cast<void*>(this), static_cast<const void*>(&o), sizeof(*this));
    o.table_ = TableForm{nullptr, kTableMark, 0};
  }

  union {
    Packed packed_;
    TableForm table_;
  };
};

}  // namespace ringkv::core

// cmsgpack: MessagePack for Lua 5.1 scripts, as Redis 7.0 exposes it
// (lua-cmsgpack 0.4.0). Written for ringkv from the format and the observed
// behaviour of redis-server 7.0; everything a script can see matches:
//
// Encoding (pack):
//   - nil, functions, userdata, threads -> nil (0xc0); booleans -> c2/c3;
//     strings -> fixstr / str8 (d9) / str16 (da) / str32 (db), never bin.
//   - A number that is an integer in [-2^63, 2^63) -> the smallest integer
//     form (positive fixint, uint8..64 for n >= 0; negative fixint, int8..64
//     for n < 0); -0 packs as 0. Any other number -> float32 (ca) when the
//     conversion to float is exact (so +-inf and 2^70 are float32), else
//     float64 (cb); NaN is float64 with its bits kept.
//   - A table whose keys are exactly the numbers 1..n (n may be 0) -> array
//     (fixarray / dc / dd); any other table -> map (fixmap / de / df) in
//     lua_next order. That order is the interpreter's: Debian's Lua 5.1 and
//     Redis's agree except for string keys of 32 bytes or more, which
//     Redis's patched Lua hashes differently from stock Lua (stock samples
//     at most ~32 of their bytes), so maps with such keys can pack their
//     entries in another order than Redis. A table met at nesting depth 16 (the top-level value
//     is depth 0; map keys and values of a depth-d table are depth d+1) packs
//     as nil, which also cuts cycles.
//   - pack(...) packs each argument and concatenates; no argument is an
//     error ("MessagePack pack needs input.").
//
// Decoding (unpack*):
//   - Decodes nil, booleans, every integer width, float32/64, fixstr and
//     str8/16/32, and every array and map form. bin, ext, fixext and 0xc1
//     are "Bad data format in input."; input ending inside an object is
//     "Missing bytes in input.". Nothing is ever read past the input.
//   - Map entries are set with lua_settable: a nil or NaN key raises Lua's
//     "table index is nil" / "table index is NaN"; a repeated key keeps the
//     last value.
//   - Integers are Lua numbers (doubles); uint64 values >= 2^63 come back
//     negative (the 64 bits read as int64), as in Redis.
//   - unpack(s) returns every object; unpack_one(s [, offset]) and
//     unpack_limit(s, limit [, offset]) return the next offset (-1 when the
//     input is consumed) and then at most 1 / limit objects. A limit and an
//     offset both 0 mean "decode all, no offset returned", as in Redis. The
//     "Invalid request to unpack" error prints the input length where it
//     says limit, as Redis does.
//   - Lua stack limits are hit at the same points as Redis (the same
//     luaL_checkstack calls at the same stack heights): too many results or
//     too deep nesting raise "stack overflow (...)" with Redis's texts.
//
// Nothing that can raise a Lua error (a longjmp) skips a C++ destructor: the
// functions below keep only trivially destructible locals, and the pack
// buffer is a full userdata whose __gc frees its memory.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "server/scripting/lua_libs.h"
#include "server/scripting/lua_readonly.h"

extern "C" {
#include <lauxlib.h>
}

namespace ringkv::server::scripting {
namespace {

constexpr int kMaxNesting = 16;

// ---------------------------------------------------------------- packing --

// A growable byte buffer living in a full userdata (so a Lua error while
// packing frees it at the next collection). Memory comes from the state's
// allocator, as Redis's does.
struct PackBuffer {
  unsigned char* data;
  size_t len;
  size_t cap;
};

void FreeBufferMemory(lua_State* L, PackBuffer* buf) {
  if (buf->data != nullptr) {
    void* ud;
    lua_Alloc alloc = lua_getallocf(L, &ud);
    alloc(ud, buf->data, buf->cap, 0);
    buf->data = nullptr;
    buf->cap = 0;
    buf->len = 0;
  }
}

// __gc of the buffer userdata.
int BufferGc(lua_State* L) {
  auto* buf = static_cast<PackBuffer*>(lua_touserdata(L, 1));
  if (buf != nullptr) FreeBufferMemory(L, buf);
  return 0;
}

void Append(lua_State* L, PackBuffer* buf, const unsigned char* s, size_t n) {
  if (buf->cap - buf->len < n) {
    size_t need = buf->len + n;
    if (need < buf->len || need > std::numeric_limits<size_t>::max() / 2) {
      luaL_error(L, "MessagePack pack result too large");
    }
    size_t new_cap = need * 2 < 64 ? 64 : need * 2;
    void* ud;
    lua_Alloc alloc = lua_getallocf(L, &ud);
    void* grown = alloc(ud, buf->data, buf->cap, new_cap);
    if (grown == nullptr) {
      lua_pushliteral(L, "not enough memory");
      lua_error(L);
    }
    buf->data = static_cast<unsigned char*>(grown);
    buf->cap = new_cap;
  }
  if (n > 0) std::memcpy(buf->data + buf->len, s, n);
  buf->len += n;
}

void AppendByte(lua_State* L, PackBuffer* buf, unsigned char b) { Append(L, buf, &b, 1); }

// Appends `tag` followed by the low `width` bytes of `v`, big-endian.
void AppendTagged(lua_State* L, PackBuffer* buf, unsigned char tag, uint64_t v, int width) {
  unsigned char b[9];
  b[0] = tag;
  for (int i = 0; i < width; ++i) {
    b[width - i] = static_cast<unsigned char>(v >> (8 * i));
  }
  Append(L, buf, b, static_cast<size_t>(width) + 1);
}

void EncodeInt(lua_State* L, PackBuffer* buf, int64_t n) {
  uint64_t u = static_cast<uint64_t>(n);  // two's complement bits
  if (n >= 0) {
    if (n <= 127) {
      AppendByte(L, buf, static_cast<unsigned char>(n));
    } else if (n <= 0xff) {
      AppendTagged(L, buf, 0xcc, u, 1);
    } else if (n <= 0xffff) {
      AppendTagged(L, buf, 0xcd, u, 2);
    } else if (n <= 0xffffffffLL) {
      AppendTagged(L, buf, 0xce, u, 4);
    } else {
      AppendTagged(L, buf, 0xcf, u, 8);
    }
  } else {
    if (n >= -32) {
      AppendByte(L, buf, static_cast<unsigned char>(u & 0xff));
    } else if (n >= -128) {
      AppendTagged(L, buf, 0xd0, u, 1);
    } else if (n >= -32768) {
      AppendTagged(L, buf, 0xd1, u, 2);
    } else if (n >= -2147483648LL) {
      AppendTagged(L, buf, 0xd2, u, 4);
    } else {
      AppendTagged(L, buf, 0xd3, u, 8);
    }
  }
}

// float32 when the double survives the round trip through float, else
// float64. Finite values beyond float's range would become +-inf (x86), which
// is never equal, so they go to float64 without an out-of-range conversion.
void EncodeDouble(lua_State* L, PackBuffer* buf, double d) {
  bool as_float = false;
  float f = 0;
  if (!std::isfinite(d) || std::fabs(d) <= static_cast<double>(std::numeric_limits<float>::max())) {
    f = static_cast<float>(d);
    as_float = static_cast<double>(f) == d;  // false for NaN
  }
  if (as_float) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    AppendTagged(L, buf, 0xca, bits, 4);
  } else {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    AppendTagged(L, buf, 0xcb, bits, 8);
  }
}

// Redis's test: an integer value in int64's range (the C cast round-trips).
bool IsInt64Equivalent(double n) {
  return n >= -9223372036854775808.0 && n < 9223372036854775808.0 && std::trunc(n) == n;
}

void EncodeNumber(lua_State* L, PackBuffer* buf) {
  lua_Number n = lua_tonumber(L, -1);
  if (IsInt64Equivalent(n)) {
    EncodeInt(L, buf, static_cast<int64_t>(n));
  } else {
    EncodeDouble(L, buf, n);
  }
}

void EncodeString(lua_State* L, PackBuffer* buf) {
  size_t len;
  const char* s = lua_tolstring(L, -1, &len);
  if (len < 32) {
    AppendByte(L, buf, static_cast<unsigned char>(0xa0 | len));
  } else if (len <= 0xff) {
    AppendTagged(L, buf, 0xd9, len, 1);
  } else if (len <= 0xffff) {
    AppendTagged(L, buf, 0xda, len, 2);
  } else {
    AppendTagged(L, buf, 0xdb, len, 4);
  }
  Append(L, buf, reinterpret_cast<const unsigned char*>(s), len);
}

void EncodeContainerHeader(lua_State* L, PackBuffer* buf, uint64_t n, unsigned char fix,
                           unsigned char tag16, unsigned char tag32) {
  if (n <= 15) {
    AppendByte(L, buf, static_cast<unsigned char>(fix | n));
  } else if (n <= 65535) {
    AppendTagged(L, buf, tag16, n, 2);
  } else {
    AppendTagged(L, buf, tag32, n, 4);
  }
}

void EncodeValue(lua_State* L, PackBuffer* buf, int level);

// True when the table on top has only number keys that are integers in
// [1, INT_MAX] and as many of them as the largest: exactly 1..n.
bool TableIsArray(lua_State* L) {
  int top = lua_gettop(L);
  int64_t count = 0;
  int64_t max = 0;
  luaL_checkstack(L, 2, "in function table_is_an_array");
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pop(L, 1);  // keep the key
    if (lua_type(L, -1) != LUA_TNUMBER) {
      lua_settop(L, top);
      return false;
    }
    lua_Number n = lua_tonumber(L, -1);
    if (!(n > 0 && n <= std::numeric_limits<int>::max() && std::trunc(n) == n)) {
      lua_settop(L, top);
      return false;
    }
    if (n > max) max = static_cast<int64_t>(n);
    ++count;
  }
  lua_settop(L, top);
  return max == count;
}

void EncodeTableAsArray(lua_State* L, PackBuffer* buf, int level) {
  size_t len = lua_objlen(L, -1);
  EncodeContainerHeader(L, buf, len, 0x90, 0xdc, 0xdd);
  luaL_checkstack(L, 1, "in function mp_encode_lua_table_as_array");
  for (size_t j = 1; j <= len; ++j) {
    lua_pushnumber(L, static_cast<lua_Number>(j));
    lua_gettable(L, -2);
    EncodeValue(L, buf, level + 1);
  }
}

void EncodeTableAsMap(lua_State* L, PackBuffer* buf, int level) {
  uint64_t count = 0;
  luaL_checkstack(L, 3, "in function mp_encode_lua_table_as_map");
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pop(L, 1);
    ++count;
  }
  EncodeContainerHeader(L, buf, count, 0x80, 0xde, 0xdf);
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pushvalue(L, -2);             // ... key value key
    EncodeValue(L, buf, level + 1);   // the key copy
    EncodeValue(L, buf, level + 1);   // the value
  }
}

// Encodes the value on top of the stack and pops it.
void EncodeValue(lua_State* L, PackBuffer* buf, int level) {
  int type = lua_type(L, -1);
  if (type == LUA_TTABLE && level == kMaxNesting) type = LUA_TNIL;
  switch (type) {
    case LUA_TSTRING:
      EncodeString(L, buf);
      break;
    case LUA_TBOOLEAN:
      AppendByte(L, buf, lua_toboolean(L, -1) ? 0xc3 : 0xc2);
      break;
    case LUA_TNUMBER:
      EncodeNumber(L, buf);
      break;
    case LUA_TTABLE:
      ReplaceReadOnlyProxy(L, -1);  // Redis packs what a read-only table holds
      if (TableIsArray(L)) {
        EncodeTableAsArray(L, buf, level);
      } else {
        EncodeTableAsMap(L, buf, level);
      }
      break;
    default:
      AppendByte(L, buf, 0xc0);
      break;
  }
  lua_pop(L, 1);
}

// cmsgpack.pack(...). Upvalue 1: the buffer metatable. The buffer userdata
// takes argument 1's slot once argument 1 is copied out, so the stack is
// exactly as high as Redis's at every luaL_checkstack.
int Pack(lua_State* L) {
  int nargs = lua_gettop(L);
  if (nargs == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  if (!lua_checkstack(L, nargs)) {
    return luaL_argerror(L, 0, "Too many arguments for MessagePack pack.");
  }
  PackBuffer* buf = nullptr;
  for (int i = 1; i <= nargs; ++i) {
    luaL_checkstack(L, 1, "in function mp_check");
    lua_pushvalue(L, i);
    if (i == 1) {
      buf = static_cast<PackBuffer*>(lua_newuserdata(L, sizeof(PackBuffer)));
      buf->data = nullptr;
      buf->len = 0;
      buf->cap = 0;
      lua_pushvalue(L, lua_upvalueindex(1));
      lua_setmetatable(L, -2);
      lua_replace(L, 1);
    }
    EncodeValue(L, buf, 0);
    lua_pushlstring(L, reinterpret_cast<const char*>(buf->data), buf->len);
    buf->len = 0;
  }
  FreeBufferMemory(L, buf);
  lua_concat(L, nargs);
  return 1;
}

// -------------------------------------------------------------- unpacking --

enum class CursorError { kNone, kEof, kBadFormat };

struct Cursor {
  const unsigned char* p;
  size_t left;
  CursorError err;
};

bool Need(Cursor* c, size_t n) {
  if (c->left < n) {
    c->err = CursorError::kEof;
    return false;
  }
  return true;
}

void Consume(Cursor* c, size_t n) {
  c->p += n;
  c->left -= n;
}

// Big-endian unsigned integer of `width` bytes at p (p must hold them).
uint64_t ReadBig(const unsigned char* p, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) v = (v << 8) | p[i];
  return v;
}

void DecodeValue(lua_State* L, Cursor* c);

void DecodeArray(lua_State* L, Cursor* c, uint64_t len) {
  lua_newtable(L);
  luaL_checkstack(L, 1, "in function mp_decode_to_lua_array");
  lua_Number index = 1;
  while (len-- > 0) {
    lua_pushnumber(L, index);
    index += 1;
    DecodeValue(L, c);
    if (c->err != CursorError::kNone) return;
    lua_settable(L, -3);
  }
}

void DecodeMap(lua_State* L, Cursor* c, uint64_t len) {
  lua_newtable(L);
  while (len-- > 0) {
    DecodeValue(L, c);  // key
    if (c->err != CursorError::kNone) return;
    DecodeValue(L, c);  // value
    if (c->err != CursorError::kNone) return;
    lua_settable(L, -3);
  }
}

// Pushes a string of the length in the `width`-byte header after the tag.
void DecodeString(lua_State* L, Cursor* c, int width) {
  if (!Need(c, 1 + static_cast<size_t>(width))) return;
  uint64_t len = ReadBig(c->p + 1, width);
  Consume(c, 1 + static_cast<size_t>(width));
  if (!Need(c, len)) return;
  lua_pushlstring(L, reinterpret_cast<const char*>(c->p), len);
  Consume(c, len);
}

// Pushes the big-endian integer of `width` bytes (1, 2, 4 or 8) after the
// tag, sign-extended when `is_signed`.
void DecodeInteger(lua_State* L, Cursor* c, int width, bool is_signed) {
  if (!Need(c, 1 + static_cast<size_t>(width))) return;
  uint64_t raw = ReadBig(c->p + 1, width);
  if (is_signed && width < 8) {
    const int shift = 64 - 8 * width;
    raw = static_cast<uint64_t>(static_cast<int64_t>(raw << shift) >> shift);
  }
  lua_pushinteger(L, static_cast<lua_Integer>(raw));
  Consume(c, 1 + static_cast<size_t>(width));
}

// Pushes the IEEE-754 float (width 4) or double (width 8) after the tag.
void DecodeFloat(lua_State* L, Cursor* c, int width) {
  if (!Need(c, 1 + static_cast<size_t>(width))) return;
  const uint64_t bits = ReadBig(c->p + 1, width);
  if (width == 4) {
    const auto bits32 = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &bits32, sizeof f);
    lua_pushnumber(L, f);
  } else {
    double d;
    std::memcpy(&d, &bits, sizeof d);
    lua_pushnumber(L, d);
  }
  Consume(c, 1 + static_cast<size_t>(width));
}

// Decodes one object at the cursor and pushes it; on an error sets c->err
// (the stack then holds partial results, which the caller discards).
void DecodeValue(lua_State* L, Cursor* c) {
  if (!Need(c, 1)) return;
  // One more slot per object, as Redis: this is where too many results (or
  // too deep a nesting) stop.
  luaL_checkstack(L, 1,
                  "too many return values at once; "
                  "use unpack_one or unpack_limit instead.");
  const unsigned char tag = c->p[0];
  switch (tag) {
    case 0xcc:  // uint 8
    case 0xcd:  // uint 16
    case 0xce:  // uint 32
    case 0xcf:  // uint 64: pushed as lua_Integer, so >= 2^63 wraps negative
      DecodeInteger(L, c, 1 << (tag - 0xcc), /*is_signed=*/false);
      return;
    case 0xd0:  // int 8
    case 0xd1:  // int 16
    case 0xd2:  // int 32
      DecodeInteger(L, c, 1 << (tag - 0xd0), /*is_signed=*/true);
      return;
    case 0xd3:  // int 64, pushed as a number (a double), as lua-cmsgpack does
      if (!Need(c, 9)) return;
      lua_pushnumber(L, static_cast<lua_Number>(static_cast<int64_t>(ReadBig(c->p + 1, 8))));
      Consume(c, 9);
      return;
    case 0xc0:
      lua_pushnil(L);
      Consume(c, 1);
      return;
    case 0xc3:
    case 0xc2:
      lua_pushboolean(L, tag == 0xc3);
      Consume(c, 1);
      return;
    case 0xca:  // float 32
    case 0xcb:  // float 64
      DecodeFloat(L, c, tag == 0xca ? 4 : 8);
      return;
    case 0xd9:
      DecodeString(L, c, 1);
      return;
    case 0xda:
      DecodeString(L, c, 2);
      return;
    case 0xdb:
      DecodeString(L, c, 4);
      return;
    case 0xdc:  // array 16
    case 0xdd: {  // array 32
      const int width = tag == 0xdc ? 2 : 4;
      if (!Need(c, 1 + static_cast<size_t>(width))) return;
      uint64_t len = ReadBig(c->p + 1, width);
      Consume(c, 1 + static_cast<size_t>(width));
      DecodeArray(L, c, len);
      return;
    }
    case 0xde:  // map 16
    case 0xdf: {  // map 32
      const int width = tag == 0xde ? 2 : 4;
      if (!Need(c, 1 + static_cast<size_t>(width))) return;
      uint64_t len = ReadBig(c->p + 1, width);
      Consume(c, 1 + static_cast<size_t>(width));
      DecodeMap(L, c, len);
      return;
    }
    default:
      break;
  }
  if ((tag & 0x80) == 0) {  // positive fixint
    lua_pushinteger(L, tag);
    Consume(c, 1);
  } else if ((tag & 0xe0) == 0xe0) {  // negative fixint
    lua_pushinteger(L, static_cast<int8_t>(tag));
    Consume(c, 1);
  } else if ((tag & 0xe0) == 0xa0) {  // fixstr
    size_t len = tag & 0x1f;
    if (!Need(c, 1 + len)) return;
    lua_pushlstring(L, reinterpret_cast<const char*>(c->p + 1), len);
    Consume(c, 1 + len);
  } else if ((tag & 0xf0) == 0x90) {  // fixarray
    Consume(c, 1);
    DecodeArray(L, c, tag & 0x0f);
  } else if ((tag & 0xf0) == 0x80) {  // fixmap
    Consume(c, 1);
    DecodeMap(L, c, tag & 0x0f);
  } else {  // 0xc1, bin, ext, fixext
    c->err = CursorError::kBadFormat;
  }
}

// Decodes up to `limit` objects of argument 1 from `offset`. limit == 0 and
// offset == 0 together mean "all objects, no offset result"; otherwise the
// next offset (-1 at the end of the input) comes first.
int UnpackFull(lua_State* L, lua_Integer limit, lua_Integer offset) {
  const bool decode_all = limit == 0 && offset == 0;
  size_t len;
  const char* s = luaL_checklstring(L, 1, &len);
  if (offset < 0 || limit < 0) {
    // Redis prints the input length as the "limit".
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.",
                      static_cast<int>(offset), static_cast<int>(len));
  }
  if (static_cast<size_t>(offset) > len) {
    return luaL_error(L, "Start offset %d greater than input length %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  }
  if (decode_all) limit = std::numeric_limits<int>::max();

  Cursor c{reinterpret_cast<const unsigned char*>(s) + offset, len - static_cast<size_t>(offset),
           CursorError::kNone};
  int count = 0;
  for (; c.left > 0 && count < limit; ++count) {
    DecodeValue(L, &c);
    if (c.err == CursorError::kEof) return luaL_error(L, "Missing bytes in input.");
    if (c.err == CursorError::kBadFormat) return luaL_error(L, "Bad data format in input.");
  }
  if (!decode_all) {
    luaL_checkstack(L, 1, "in function mp_unpack_full");
    lua_pushinteger(L, c.left == 0 ? -1 : static_cast<lua_Integer>(len - c.left));
    lua_insert(L, 2);  // the offset goes before the objects
    ++count;
  }
  return count;
}

// cmsgpack.unpack(s): extra arguments stay on the stack (as in Redis), which
// only matters for where the stack limit bites.
int Unpack(lua_State* L) { return UnpackFull(L, 0, 0); }

int UnpackOne(lua_State* L) {
  lua_Integer offset = luaL_optinteger(L, 2, 0);
  lua_pop(L, lua_gettop(L) - 1);
  return UnpackFull(L, 1, offset);
}

int UnpackLimit(lua_State* L) {
  lua_Integer limit = luaL_checkinteger(L, 2);
  lua_Integer offset = luaL_optinteger(L, 3, 0);
  lua_pop(L, lua_gettop(L) - 1);
  return UnpackFull(L, limit, offset);
}

}  // namespace

int OpenCmsgpack(lua_State* L) {
  // Fields in Redis's order, so pairs(cmsgpack) walks them the same way.
  lua_newtable(L);
  lua_newtable(L);  // the pack buffer's metatable
  lua_pushcfunction(L, BufferGc);
  lua_setfield(L, -2, "__gc");
  lua_pushcclosure(L, Pack, 1);
  lua_setfield(L, -2, "pack");
  lua_pushcfunction(L, Unpack);
  lua_setfield(L, -2, "unpack");
  lua_pushcfunction(L, UnpackOne);
  lua_setfield(L, -2, "unpack_one");
  lua_pushcfunction(L, UnpackLimit);
  lua_setfield(L, -2, "unpack_limit");
  lua_pushliteral(L, "cmsgpack");
  lua_setfield(L, -2, "_NAME");
  lua_pushliteral(L, "lua-cmsgpack 0.4.0");
  lua_setfield(L, -2, "_VERSION");
  lua_pushliteral(L, "Copyright (C) 2012, Salvatore Sanfilippo");
  lua_setfield(L, -2, "_COPYRIGHT");
  lua_pushliteral(L, "MessagePack C implementation for Lua");
  lua_setfield(L, -2, "_DESCRIPTION");
  lua_pushvalue(L, -1);
  lua_setglobal(L, "cmsgpack");
  return 1;
}

}  // namespace ringkv::server::scripting

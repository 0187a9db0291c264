// struct: binary packing for Lua 5.1 scripts, as Redis 7.0 exposes it
// (Roberto Ierusalimschy's struct library, v1.4, with Redis's hardening:
// overflow-checked sizes, an offset of at least 1, a stack check per result).
// Written for ringkv from the library's documentation and the observed
// behaviour of redis-server 7.0 on x86-64 Linux.
//
// Format letters (a format is read up to its first NUL byte):
//   >  big endian        <  little endian (default: native, little here)
//   ![n] maximum alignment n (default 8; must be a power of 2)
//   x  one padding byte  ' ' ignored
//   b/B signed/unsigned char (1)    h/H short (2)    l/L long (8)
//   T  size_t (8)        i[n]/I[n] integer of n bytes (default 4, n <= 32)
//   f  float (4)         d  double (8)
//   c[n] n bytes of a string (default 1). pack: c0 is the whole string.
//        unpack: c0 takes its length from the previous result.
//   s  zero-terminated string (pack appends the zero, unpack strips it)
// An item of size s is aligned to min(s, the alignment) (c never is).
// pack(fmt, ...) returns the string; unpack(fmt, s [, i]) returns the values
// then the position after the last one; size(fmt) the packed size.
//
// Redis's exact results are kept where the C code relies on x86-64's
// handling of undefined operations, emulated here without UB:
//   - pack of an integer: a negative number converts through long (out of
//     range or NaN -> 0x8000000000000000), any other through unsigned long
//     (>= 2^64 -> 0); integers wider than 8 bytes are zero-filled above the
//     low 8 bytes, whatever the sign.
//   - unpack of a signed integer of n bytes keeps the low 8 bytes and
//     sign-extends from bit (8n - 1) mod 64 (so i9 extends from bit 7).
//   - c0's previous result converts to size_t as unsigned long would.
//   - the error texts, including "bad argument #k" counting in pack's
//     "string too short" (k is one past the string's argument).
#include <bit>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "server/scripting/lua_libs.h"

extern "C" {
#include <lauxlib.h>
}

namespace ringkv::server::scripting {
namespace {

constexpr int kMaxIntSize = 32;  // bytes, for i[n] / I[n]
constexpr int kMaxAlign = 8;     // max(alignment of double, sizeof(int))
constexpr int kDefaultIntSize = 4;
constexpr int kBig = 0;
constexpr int kLittle = 1;
constexpr int kNativeEndian = std::endian::native == std::endian::little ? kLittle : kBig;

struct Header {
  int endian;
  int align;
};

void DefaultOptions(Header* h) {
  h->endian = kNativeEndian;
  h->align = 1;
}

// The C locale's classes (Redis leaves LC_CTYPE at "C"); `c` may be a
// negative (signed char) byte, which is in no class.
bool IsDigit(int c) { return c >= '0' && c <= '9'; }
bool IsLower(int c) { return c >= 'a' && c <= 'z'; }
bool IsAlnum(int c) { return IsDigit(c) || IsLower(c) || (c >= 'A' && c <= 'Z'); }

// x86-64's cvttsd2si: out of range and NaN give INT64_MIN.
int64_t DoubleToInt64(double n) {
  if (n >= -9223372036854775808.0 && n < 9223372036854775808.0) return static_cast<int64_t>(n);
  return INT64_MIN;
}

// The double -> unsigned long conversion GCC emits on x86-64: below 2^63 (or
// NaN) through cvttsd2si, else cvttsd2si(n - 2^63) with bit 63 flipped.
uint64_t DoubleToUint64(double n) {
  if (n >= 9223372036854775808.0) {
    return static_cast<uint64_t>(DoubleToInt64(n - 9223372036854775808.0)) ^ (uint64_t{1} << 63);
  }
  return static_cast<uint64_t>(DoubleToInt64(n));
}

// Reads a decimal count at *fmt, or returns `df` when there is none.
int GetNum(lua_State* L, const char** fmt, int df) {
  if (!IsDigit(**fmt)) return df;
  int a = 0;
  do {
    int digit = **fmt - '0';
    if (a > INT_MAX / 10 || a * 10 > INT_MAX - digit) luaL_error(L, "integral size overflow");
    a = a * 10 + digit;
    ++*fmt;
  } while (IsDigit(**fmt));
  return a;
}

// The size in bytes of option `opt` (0 for options that are not items),
// reading its count from *fmt where it takes one.
size_t OptSize(lua_State* L, int opt, const char** fmt) {
  switch (opt) {
    case 'B':
    case 'b':
      return sizeof(char);
    case 'H':
    case 'h':
      return sizeof(short);
    case 'L':
    case 'l':
      return sizeof(long);
    case 'T':
      return sizeof(size_t);
    case 'f':
      return sizeof(float);
    case 'd':
      return sizeof(double);
    case 'x':
      return 1;
    case 'c':
      return static_cast<size_t>(GetNum(L, fmt, 1));
    case 'i':
    case 'I': {
      int size = GetNum(L, fmt, kDefaultIntSize);
      if (size > kMaxIntSize) {
        luaL_error(L, "integral size %d is larger than limit of %d", size, kMaxIntSize);
      }
      return static_cast<size_t>(size);
    }
    default:
      return 0;
  }
}

// Padding before an item of `size` bytes at offset `len`: items align to
// min(size, h->align); the arithmetic assumes a power of two, and for other
// sizes (i3, i5...) gives what the original does.
int GetToAlign(size_t len, const Header* h, int opt, size_t size) {
  if (size == 0 || opt == 'c') return 0;
  if (size > static_cast<size_t>(h->align)) size = static_cast<size_t>(h->align);
  return static_cast<int>((size - (len & (size - 1))) & (size - 1));
}

// Endianness, alignment and spaces; anything else is an invalid option.
void ControlOptions(lua_State* L, int opt, const char** fmt, Header* h) {
  switch (opt) {
    case ' ':
      return;
    case '>':
      h->endian = kBig;
      return;
    case '<':
      h->endian = kLittle;
      return;
    case '!': {
      int a = GetNum(L, fmt, kMaxAlign);
      if (a <= 0 || (a & (a - 1)) != 0) luaL_error(L, "alignment %d is not a power of 2", a);
      h->align = a;
      return;
    }
    default: {
      const char* msg = lua_pushfstring(L, "invalid format option '%c'", opt);
      luaL_argerror(L, 1, msg);
    }
  }
}

void CorrectBytes(unsigned char* b, size_t size, int endian) {
  if (endian == kNativeEndian || size < 2) return;
  for (size_t i = 0, j = size - 1; i < j; ++i, --j) {
    unsigned char t = b[i];
    b[i] = b[j];
    b[j] = t;
  }
}

void PutInteger(lua_State* L, luaL_Buffer* b, int arg, int endian, size_t size) {
  lua_Number n = luaL_checknumber(L, arg);
  uint64_t value = n < 0 ? static_cast<uint64_t>(DoubleToInt64(n)) : DoubleToUint64(n);
  unsigned char buff[kMaxIntSize];
  for (size_t i = 0; i < size; ++i) {
    unsigned char byte = i < 8 ? static_cast<unsigned char>(value >> (8 * i)) : 0;
    buff[endian == kLittle ? i : size - 1 - i] = byte;
  }
  luaL_addlstring(b, reinterpret_cast<const char*>(buff), size);
}

lua_Number GetInteger(const unsigned char* buff, int endian, bool is_signed, size_t size) {
  uint64_t l = 0;
  for (size_t i = 0; i < size; ++i) {  // most significant byte first
    l = (l << 8) | buff[endian == kBig ? i : size - 1 - i];
  }
  if (!is_signed) return static_cast<lua_Number>(l);
  const unsigned shift = static_cast<unsigned>(size * 8 - 1) & 63;  // as x86's shl
  const uint64_t mask = ~uint64_t{0} << shift;
  if ((l & mask) != 0) l |= mask;
  return static_cast<lua_Number>(static_cast<int64_t>(l));
}

// struct.pack(fmt, ...)
int StructPack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Header h;
  DefaultOptions(&h);
  int arg = 2;
  size_t total = 0;
  lua_pushnil(L);  // separates the arguments from the buffer's stack pieces
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  while (*fmt != '\0') {
    int opt = static_cast<signed char>(*fmt++);
    size_t size = OptSize(L, opt, &fmt);
    int toalign = GetToAlign(total, &h, opt, size);
    total += static_cast<size_t>(toalign);
    while (toalign-- > 0) luaL_addchar(&b, '\0');
    switch (opt) {
      case 'b':
      case 'B':
      case 'h':
      case 'H':
      case 'l':
      case 'L':
      case 'T':
      case 'i':
      case 'I':
        PutInteger(L, &b, arg++, h.endian, size);
        break;
      case 'x':
        luaL_addchar(&b, '\0');
        break;
      case 'f': {
        float f = static_cast<float>(luaL_checknumber(L, arg++));
        unsigned char bytes[sizeof f];
        std::memcpy(bytes, &f, sizeof f);
        CorrectBytes(bytes, sizeof bytes, h.endian);
        luaL_addlstring(&b, reinterpret_cast<const char*>(bytes), sizeof bytes);
        break;
      }
      case 'd': {
        double d = luaL_checknumber(L, arg++);
        unsigned char bytes[sizeof d];
        std::memcpy(bytes, &d, sizeof d);
        CorrectBytes(bytes, sizeof bytes, h.endian);
        luaL_addlstring(&b, reinterpret_cast<const char*>(bytes), sizeof bytes);
        break;
      }
      case 'c':
      case 's': {
        size_t l;
        const char* s = luaL_checklstring(L, arg++, &l);
        if (size == 0) size = l;
        luaL_argcheck(L, l >= size, arg, "string too short");  // arg is one past, as in Redis
        luaL_addlstring(&b, s, size);
        if (opt == 's') {
          luaL_addchar(&b, '\0');
          ++size;
        }
        break;
      }
      default:
        ControlOptions(L, opt, &fmt, &h);
    }
    total += size;
  }
  luaL_pushresult(&b);
  return 1;
}

// struct.unpack(fmt, s [, i]): the values, then the next position.
int StructUnpack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  size_t ld;
  const auto* data = reinterpret_cast<const unsigned char*>(luaL_checklstring(L, 2, &ld));
  // A negative start wraps to a huge size_t, as in Redis: it then fails the
  // length check, or with an empty format comes back as the next position.
  size_t pos = static_cast<size_t>(luaL_optinteger(L, 3, 1));
  luaL_argcheck(L, pos > 0, 3, "offset must be 1 or greater");
  --pos;
  Header h;
  DefaultOptions(&h);
  int n = 0;  // results pushed
  while (*fmt != '\0') {
    int opt = static_cast<signed char>(*fmt++);
    size_t size = OptSize(L, opt, &fmt);
    pos += static_cast<size_t>(GetToAlign(pos, &h, opt, size));
    luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
    luaL_checkstack(L, 2, "too many results");  // this item and the position
    switch (opt) {
      case 'b':
      case 'B':
      case 'h':
      case 'H':
      case 'l':
      case 'L':
      case 'T':
      case 'i':
      case 'I':
        lua_pushnumber(L, GetInteger(data + pos, h.endian, IsLower(opt), size));
        ++n;
        break;
      case 'x':
        break;
      case 'f': {
        unsigned char bytes[sizeof(float)];
        std::memcpy(bytes, data + pos, sizeof bytes);
        CorrectBytes(bytes, sizeof bytes, h.endian);
        float f;
        std::memcpy(&f, bytes, sizeof f);
        lua_pushnumber(L, f);
        ++n;
        break;
      }
      case 'd': {
        unsigned char bytes[sizeof(double)];
        std::memcpy(bytes, data + pos, sizeof bytes);
        CorrectBytes(bytes, sizeof bytes, h.endian);
        double d;
        std::memcpy(&d, bytes, sizeof d);
        lua_pushnumber(L, d);
        ++n;
        break;
      }
      case 'c':
        if (size == 0) {
          if (n == 0 || !lua_isnumber(L, -1)) luaL_error(L, "format 'c0' needs a previous size");
          size = DoubleToUint64(lua_tonumber(L, -1));
          lua_pop(L, 1);
          --n;
          luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
        }
        lua_pushlstring(L, reinterpret_cast<const char*>(data + pos), size);
        ++n;
        break;
      case 's': {
        const void* end = std::memchr(data + pos, '\0', ld - pos);
        if (end == nullptr) luaL_error(L, "unfinished string in data");
        size = static_cast<size_t>(static_cast<const unsigned char*>(end) - (data + pos)) + 1;
        lua_pushlstring(L, reinterpret_cast<const char*>(data + pos), size - 1);
        ++n;
        break;
      }
      default:
        ControlOptions(L, opt, &fmt, &h);
    }
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos + 1));
  return n + 1;
}

// struct.size(fmt). Unknown letters and digits count as nothing here (only
// non-alphanumeric options are checked), as in the original.
int Size(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Header h;
  DefaultOptions(&h);
  size_t pos = 0;
  while (*fmt != '\0') {
    int opt = static_cast<signed char>(*fmt++);
    size_t size = OptSize(L, opt, &fmt);
    pos += static_cast<size_t>(GetToAlign(pos, &h, opt, size));
    if (opt == 's') {
      luaL_argerror(L, 1, "option 's' has no fixed size");
    } else if (opt == 'c' && size == 0) {
      luaL_argerror(L, 1, "option 'c0' has no fixed size");
    }
    if (!IsAlnum(opt)) ControlOptions(L, opt, &fmt, &h);
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos));
  return 1;
}

constexpr luaL_Reg kStructFunctions[] = {
    {"pack", StructPack},
    {"unpack", StructUnpack},
    {"size", Size},
    {nullptr, nullptr},
};

}  // namespace

int OpenStruct(lua_State* L) {
  luaL_register(L, "struct", kStructFunctions);
  return 1;
}

}  // namespace ringkv::server::scripting

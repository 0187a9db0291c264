#include "server/scripting/lua_reply.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/string_value.h"
#include "core/strings.h"
#include "absl/strings/str_replace.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

namespace ringkv::server::scripting {
namespace {

// A command's reply (read into Lua) nests at most this deep; deeper ones
// are refused, never a crash.
constexpr int kMaxDepth = 1000;

class RespReader {
 public:
  RespReader(lua_State* L, std::string_view s) : L_(L), p_(s.data()), end_(s.data() + s.size()) {}

  // Pushes one value (or nothing for an attribute, which is skipped and
  // followed by the value it annotates). False on malformed input.
  bool Push(int depth) {
    if (depth > kMaxDepth || !lua_checkstack(L_, 4)) return false;
    if (p_ >= end_) return false;
    const char type = *p_++;
    std::string_view line;
    if (!Line(&line)) return false;
    switch (type) {
      case ':': {
        int64_t v;
        if (!ToInt(line, &v)) return false;
        lua_pushnumber(L_, static_cast<lua_Number>(v));
        return true;
      }
      case '$':
      case '=': {
        int64_t n;
        if (!ToInt(line, &n)) return false;
        if (n < 0) {
          lua_pushboolean(L_, 0);
          return true;
        }
        std::string_view body;
        if (!Body(n, &body)) return false;
        if (type == '$') {
          lua_pushlstring(L_, body.data(), body.size());
          return true;
        }
        // Verbatim: "fmt:text".
        if (body.size() < 4) return false;
        lua_newtable(L_);
        lua_pushstring(L_, "verbatim_string");
        lua_newtable(L_);
        lua_pushstring(L_, "format");
        lua_pushlstring(L_, body.data(), 3);
        lua_rawset(L_, -3);
        lua_pushstring(L_, "string");
        lua_pushlstring(L_, body.data() + 4, body.size() - 4);
        lua_rawset(L_, -3);
        lua_rawset(L_, -3);
        return true;
      }
      case '+':
        PushField("ok", line);
        return true;
      case '-':
        // The server counted this error when it replied it: a script
        // returning it (or failing with it) does not count it again.
        PushErrorTable(L_, ringkv::StrCat("-", line));
        lua_pushstring(L_, kErrorCountedField);
        lua_pushboolean(L_, 1);
        lua_rawset(L_, -3);
        return true;
      case '*':
      case '~':
      case '>': {
        int64_t n;
        if (!ToInt(line, &n)) return false;
        if (n < 0) {
          lua_pushboolean(L_, 0);
          return true;
        }
        if (type == '~') {
          lua_newtable(L_);
          lua_pushstring(L_, "set");
          lua_newtable(L_);
          for (int64_t i = 0; i < n; ++i) {
            if (!PushValue(depth)) return false;
            lua_pushboolean(L_, 1);
            lua_rawset(L_, -3);
          }
          lua_rawset(L_, -3);
          return true;
        }
        lua_createtable(L_, static_cast<int>(std::min<int64_t>(n, 1 << 16)), 0);
        for (int64_t i = 0; i < n; ++i) {
          if (!PushValue(depth)) return false;
          lua_rawseti(L_, -2, static_cast<int>(i + 1));
        }
        return true;
      }
      case '%': {
        int64_t n;
        if (!ToInt(line, &n) || n < 0) return false;
        lua_newtable(L_);
        lua_pushstring(L_, "map");
        lua_newtable(L_);
        for (int64_t i = 0; i < n; ++i) {
          if (!PushValue(depth) || !PushValue(depth)) return false;
          lua_rawset(L_, -3);
        }
        lua_rawset(L_, -3);
        return true;
      }
      case '_':
        lua_pushnil(L_);
        return true;
      case '#':
        if (line != "t" && line != "f") return false;
        lua_pushboolean(L_, line == "t");
        return true;
      case ',': {
        lua_createtable(L_, 0, 1);
        lua_pushstring(L_, "double");
        lua_pushnumber(L_, ParseDouble(line));
        lua_rawset(L_, -3);
        return true;
      }
      case '(':
        PushField("big_number", line);
        return true;
      case '|': {
        int64_t n;
        if (!ToInt(line, &n) || n < 0) return false;
        for (int64_t i = 0; i < 2 * n; ++i) {
          if (!PushValue(depth)) return false;
          lua_pop(L_, 1);
        }
        return Push(depth);
      }
      default:
        return false;
    }
  }

  bool at_end() const { return p_ == end_; }

 private:
  // A nested element: an attribute before it is skipped by Push itself.
  bool PushValue(int depth) { return Push(depth + 1); }

  // {field = value}: the table is made with room for its one field, so the
  // field goes in without growing it (lua_newtable's empty table was resized
  // on its first key: luaH_resize, about 290 instructions per status reply
  // of redis.call; docs/performance.md 22.2).
  void PushField(const char* field, std::string_view value) {
    lua_createtable(L_, 0, 1);
    lua_pushstring(L_, field);
    lua_pushlstring(L_, value.data(), value.size());
    lua_rawset(L_, -3);
  }

  bool Line(std::string_view* line) {
    const char* start = p_;
    while (p_ + 1 < end_ && !(p_[0] == '\r' && p_[1] == '\n')) ++p_;
    if (p_ + 1 >= end_) return false;
    *line = std::string_view(start, static_cast<size_t>(p_ - start));
    p_ += 2;
    return true;
  }

  bool Body(int64_t n, std::string_view* body) {
    if (n > end_ - p_ - 2 || p_[n] != '\r' || p_[n + 1] != '\n') return false;
    *body = std::string_view(p_, static_cast<size_t>(n));
    p_ += n + 2;
    return true;
  }

  static bool ToInt(std::string_view s, int64_t* v) {
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
    return ec == std::errc() && ptr == s.data() + s.size();
  }

  static double ParseDouble(std::string_view s) {
    if (s == "inf") return HUGE_VAL;
    if (s == "-inf") return -HUGE_VAL;
    std::string copy(s);
    return std::strtod(copy.c_str(), nullptr);
  }

  lua_State* L_;
  const char* p_;
  const char* end_;
};

// Redis's (long long) cast of a Lua number: truncation, and INT64_MIN for
// what does not fit (x86's answer to the undefined cast).
int64_t LuaNumberToInt(lua_Number n) {
  if (std::isnan(n) || n >= 9223372036854775808.0 || n < -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(n);
}

// t[field] when it has the given type; leaves it pushed and returns true, or
// pushes nothing.
bool RawField(lua_State* L, const char* field, int type) {
  lua_pushstring(L, field);
  lua_rawget(L, -2);
  if (lua_type(L, -1) == type) return true;
  lua_pop(L, 1);
  return false;
}

void WriteValue(lua_State* L, io::ReplyBuilder& rb, int script_resp);

// Entries of the table at the top of the stack (any keys).
int64_t TableEntries(lua_State* L) {
  int64_t n = 0;
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    ++n;
    lua_pop(L, 1);
  }
  return n;
}

// Pops the string at the top of the stack as one protocol line: CR and LF
// become spaces, as Redis writes status and big-number lines (an error's
// are left to ReplyBuilder::Error, which first trims them off its ends as
// Redis's addReplyErrorFormat does). Redis reads an error or status as a C
// string, so `up_to_nul` ends those at their first NUL byte; a big number
// is read whole.
std::string PopLine(lua_State* L, bool up_to_nul, bool map_line_ends = true) {
  std::string line(lua_tostring(L, -1), lua_objlen(L, -1));
  lua_pop(L, 1);
  if (up_to_nul) line.resize(std::min(line.size(), line.find('\0')));
  if (map_line_ends) absl::StrReplaceAll({{"\r", " "}, {"\n", " "}}, &line);
  return line;
}

void WriteTable(lua_State* L, io::ReplyBuilder& rb, int script_resp) {
  if (RawField(L, "err", LUA_TSTRING)) {
    const std::string error = PopLine(L, /*up_to_nul=*/true, /*map_line_ends=*/false);
    if (ErrorCounted(L)) {
      rb.ErrorNoStats(error);
    } else {
      rb.Error(error);
    }
    return;
  }
  if (RawField(L, "ok", LUA_TSTRING)) {
    rb.SimpleString(PopLine(L, /*up_to_nul=*/true));
    return;
  }
  if (RawField(L, "double", LUA_TNUMBER)) {
    rb.Double(lua_tonumber(L, -1));
    lua_pop(L, 1);
    return;
  }
  if (RawField(L, "big_number", LUA_TSTRING)) {
    rb.BigNumber(PopLine(L, /*up_to_nul=*/false));
    return;
  }
  if (RawField(L, "map", LUA_TTABLE)) {
    rb.MapHeader(TableEntries(L));
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
      lua_pushvalue(L, -2);  // the key, written first
      WriteValue(L, rb, script_resp);
      lua_pop(L, 1);
      WriteValue(L, rb, script_resp);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return;
  }
  if (RawField(L, "set", LUA_TTABLE)) {
    rb.SetHeader(TableEntries(L));
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
      lua_pop(L, 1);
      lua_pushvalue(L, -1);  // the key is the member (a copy, as Redis: it counts on the stack)
      WriteValue(L, rb, script_resp);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return;
  }
  if (RawField(L, "verbatim_string", LUA_TTABLE)) {
    const int v = lua_gettop(L);
    lua_pushstring(L, "format");
    lua_rawget(L, v);
    lua_pushstring(L, "string");
    lua_rawget(L, v);
    if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING) {
      std::string_view format(lua_tostring(L, -2), lua_objlen(L, -2));
      std::string_view text(lua_tostring(L, -1), lua_objlen(L, -1));
      rb.Verbatim(text, format.substr(0, 3));
      lua_settop(L, v - 1);
      return;
    }
    lua_settop(L, v - 1);
  }
  // An array: t[1], t[2], ... up to the first nil.
  int64_t n = 0;
  while (true) {
    lua_rawgeti(L, -1, static_cast<int>(n + 1));
    const bool end = lua_isnil(L, -1);
    lua_pop(L, 1);
    if (end) break;
    ++n;
  }
  rb.ArrayHeader(n);
  for (int64_t i = 1; i <= n; ++i) {
    lua_rawgeti(L, -1, static_cast<int>(i));
    WriteValue(L, rb, script_resp);
    lua_pop(L, 1);
  }
}

void WriteValue(lua_State* L, io::ReplyBuilder& rb, int script_resp) {
  // Redis's limit: room for 4 more values on the Lua stack (a map's entry
  // takes 4), so a table that holds itself nests about 8,000 deep.
  if (!lua_checkstack(L, 4)) {
    rb.Error("ERR reached lua stack limit");
    return;
  }
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
      size_t len;
      const char* s = lua_tolstring(L, -1, &len);
      rb.Bulk({s, len});
      return;
    }
    case LUA_TBOOLEAN:
      if (script_resp == 2) {
        if (lua_toboolean(L, -1)) {
          rb.Integer(1);
        } else {
          rb.Null();
        }
      } else {
        rb.Bool(lua_toboolean(L, -1) != 0);
      }
      return;
    case LUA_TNUMBER:
      rb.Integer(LuaNumberToInt(lua_tonumber(L, -1)));
      return;
    case LUA_TTABLE:
      WriteTable(L, rb, script_resp);
      return;
    default:
      rb.Null();
      return;
  }
}

}  // namespace

namespace {

// The scalar replies redis.call gets most -- an integer, a bulk string, a
// status -- read in place without the general reader. True when `resp` was
// one of them, complete and alone, and its value was pushed; false (nothing
// pushed) for anything else, which the general reader then reads (and
// rejects when malformed). Numbers are read as the server writes them
// (core::StringToInt64, Redis's string2ll: std::from_chars cost five times
// as much per reply); any other spelling goes to the general reader.
bool PushScalarReply(lua_State* L, std::string_view resp) {
  if (resp.size() < 4 || resp[resp.size() - 2] != '\r' || resp.back() != '\n') return false;
  const char* first = resp.data() + 1;
  const char* last = resp.data() + resp.size() - 2;  // the final CR
  switch (resp[0]) {
    case ':': {
      int64_t v;
      if (!core::StringToInt64(std::string_view(first, static_cast<size_t>(last - first)), &v)) return false;
      lua_pushnumber(L, static_cast<lua_Number>(v));
      return true;
    }
    case '$': {
      const auto* cr = static_cast<const char*>(std::memchr(first, '\r', static_cast<size_t>(last - first)));
      int64_t n;
      if (cr == nullptr || cr[1] != '\n' ||
          !core::StringToInt64(std::string_view(first, static_cast<size_t>(cr - first)), &n) || n < 0) {
        return false;
      }
      const char* body = cr + 2;
      if (last - body != n) return false;
      lua_pushlstring(L, body, static_cast<size_t>(n));
      return true;
    }
    case '+': {
      const std::string_view status(first, static_cast<size_t>(last - first));
      if (status.find('\r') != std::string_view::npos) return false;
      lua_createtable(L, 0, 1);
      lua_pushlstring(L, "ok", 2);
      lua_pushlstring(L, status.data(), status.size());
      lua_rawset(L, -3);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace

bool PushRespAsLua(lua_State* L, std::string_view resp) {
  if (PushScalarReply(L, resp)) return true;
  const int top = lua_gettop(L);
  RespReader reader(L, resp);
  if (!reader.Push(0) || !reader.at_end()) {
    lua_settop(L, top);
    return false;
  }
  return true;
}

void WriteLuaAsReply(lua_State* L, io::ReplyBuilder& rb, int script_resp) { WriteValue(L, rb, script_resp); }

bool ErrorCounted(lua_State* L) {
  lua_getfield(L, -1, kErrorCountedField);
  const bool counted = lua_isboolean(L, -1) && lua_toboolean(L, -1) != 0;  // a boolean only, as Redis
  lua_pop(L, 1);
  return counted;
}

void PushErrorTable(lua_State* L, std::string_view error) {
  std::string code = "ERR";
  std::string_view msg = error;
  if (!error.empty() && error[0] == '-') {
    const size_t space = error.find(' ');
    if (space == std::string_view::npos) {
      msg = error.substr(1);
    } else {
      code = std::string(error.substr(1, space - 1));
      msg = error.substr(space + 1);
    }
  }
  // sdstrim: CR and LF off both ends.
  while (!msg.empty() && (msg.back() == '\r' || msg.back() == '\n')) msg.remove_suffix(1);
  while (!msg.empty() && (msg.front() == '\r' || msg.front() == '\n')) msg.remove_prefix(1);
  const std::string text = StrCat(code, " ", msg);
  // Room for err and for kErrorCountedField, which a command's error gets
  // next (RespReader): neither grows the table.
  lua_createtable(L, 0, 2);
  lua_pushstring(L, "err");
  lua_pushlstring(L, text.data(), text.size());
  lua_rawset(L, -3);
}

}  // namespace ringkv::server::scripting

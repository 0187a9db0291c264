// PushRespAsLua: the reply of a redis.call as the script sees it. The
// scalar replies (integer, bulk string, status) take a path of their own;
// these cases pin that it reads exactly what the general reader reads,
// including the edges (a body with CR LF inside, 19-digit integers and one
// past, a second reply after the first), and rejects what is not one
// complete reply.
#include "server/scripting/lua_reply.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

namespace ringkv::server::scripting {
namespace {

class PushRespAsLuaTest : public ::testing::Test {
 protected:
  PushRespAsLuaTest() : L_(luaL_newstate()) {}
  ~PushRespAsLuaTest() override { lua_close(L_); }

  // The pushed value as text: n:<integer>, s:<bytes>, ok:<status>,
  // err:<error>, false, t{...} for an array; "rejected" when nothing was
  // pushed (and the stack is checked to be as it was).
  std::string Read(std::string_view resp) {
    const int top = lua_gettop(L_);
    if (!PushRespAsLua(L_, resp)) {
      EXPECT_EQ(lua_gettop(L_), top) << "a rejected reply pushed something";
      return "rejected";
    }
    EXPECT_EQ(lua_gettop(L_), top + 1);
    std::string text = Describe(-1);
    lua_settop(L_, top);
    return text;
  }

  std::string Describe(int index) {
    switch (lua_type(L_, index)) {
      case LUA_TNUMBER: {
        char buf[40];
        std::snprintf(buf, sizeof(buf), "%.17g", lua_tonumber(L_, index));
        return std::string("n:") + buf;
      }
      case LUA_TSTRING: {
        size_t len;
        const char* s = lua_tolstring(L_, index, &len);
        return "s:" + std::string(s, len);
      }
      case LUA_TBOOLEAN:
        return lua_toboolean(L_, index) ? "true" : "false";
      case LUA_TTABLE: {
        const int t = lua_gettop(L_) + (index < 0 ? index + 1 : 0);
        for (const char* field : {"ok", "err"}) {
          lua_getfield(L_, t, field);
          if (lua_isstring(L_, -1)) {
            std::string text = std::string(field) + ":" + lua_tostring(L_, -1);
            lua_pop(L_, 1);
            return text;
          }
          lua_pop(L_, 1);
        }
        std::string text = "t{";
        for (int i = 1;; ++i) {
          lua_rawgeti(L_, t, i);
          if (lua_isnil(L_, -1)) {
            lua_pop(L_, 1);
            break;
          }
          if (i > 1) text += ",";
          text += Describe(-1);
          lua_pop(L_, 1);
        }
        return text + "}";
      }
      default:
        return "other";
    }
  }

  lua_State* L_;
};

TEST_F(PushRespAsLuaTest, Integers) {
  EXPECT_EQ(Read(":42\r\n"), "n:42");
  EXPECT_EQ(Read(":0\r\n"), "n:0");
  EXPECT_EQ(Read(":-7\r\n"), "n:-7");
  EXPECT_EQ(Read(":-0\r\n"), "n:0");
  // 19 digits at both ends of the range (as a double: Lua numbers).
  EXPECT_EQ(Read(":-9223372036854775808\r\n"), "n:-9.2233720368547758e+18");
  EXPECT_EQ(Read(":9223372036854775807\r\n"), "n:9.2233720368547758e+18");
  EXPECT_EQ(Read(":1234567890123456789\r\n"), "n:1.2345678901234568e+18");
  // Out of range, twenty digits, no digits, junk: not an integer reply.
  EXPECT_EQ(Read(":9223372036854775808\r\n"), "rejected");
  EXPECT_EQ(Read(":12345678901234567890\r\n"), "rejected");
  EXPECT_EQ(Read(":\r\n"), "rejected");
  EXPECT_EQ(Read(":-\r\n"), "rejected");
  EXPECT_EQ(Read(":+1\r\n"), "rejected");
  EXPECT_EQ(Read(":1x\r\n"), "rejected");
  EXPECT_EQ(Read(":12"), "rejected");
  EXPECT_EQ(Read(":12\r"), "rejected");
  // One reply, not two.
  EXPECT_EQ(Read(":1\r\n:2\r\n"), "rejected");
}

TEST_F(PushRespAsLuaTest, BulkStrings) {
  EXPECT_EQ(Read("$3\r\nabc\r\n"), "s:abc");
  EXPECT_EQ(Read("$0\r\n\r\n"), "s:");
  // The body is counted, not scanned: CR LF inside it is data.
  EXPECT_EQ(Read("$4\r\na\r\nb\r\n"), "s:a\r\nb");
  EXPECT_EQ(Read("$5\r\na\r\nb\r\n"), "rejected");
  EXPECT_EQ(Read("$4\r\n\r\n\r\n\r\n"), "s:\r\n\r\n");
  EXPECT_EQ(Read("$-1\r\n"), "false");
  // Length and body disagree, or the body is not terminated.
  EXPECT_EQ(Read("$4\r\nabc\r\n"), "rejected");
  EXPECT_EQ(Read("$2\r\nabc\r\n"), "rejected");
  EXPECT_EQ(Read("$3\r\nabcde"), "rejected");
  EXPECT_EQ(Read("$3\r\n"), "rejected");
  EXPECT_EQ(Read("$x\r\nabc\r\n"), "rejected");
  EXPECT_EQ(Read("$9223372036854775807\r\nab\r\n"), "rejected");
  EXPECT_EQ(Read("$9223372036854775806\r\nab\r\n"), "rejected");
  EXPECT_EQ(Read("$3\r\nabc\r\n:1\r\n"), "rejected");
}

TEST_F(PushRespAsLuaTest, StatusesAndErrors) {
  EXPECT_EQ(Read("+OK\r\n"), "ok:OK");
  EXPECT_EQ(Read("+\r\n"), "ok:");
  EXPECT_EQ(Read("+QUEUED\r\n"), "ok:QUEUED");
  // A lone CR inside a status line is part of it (the general reader's answer).
  EXPECT_EQ(Read("+O\rK\r\n"), "ok:O\rK");
  EXPECT_EQ(Read("+OK\r\n+OK\r\n"), "rejected");
  EXPECT_EQ(Read("-ERR no such key\r\n"), "err:ERR no such key");
  EXPECT_EQ(Read("-WRONGTYPE Operation\r\n"), "err:WRONGTYPE Operation");
}

TEST_F(PushRespAsLuaTest, AggregatesTakeTheGeneralReader) {
  EXPECT_EQ(Read("*3\r\n:1\r\n$1\r\na\r\n+OK\r\n"), "t{n:1,s:a,ok:OK}");
  EXPECT_EQ(Read("*0\r\n"), "t{}");
  EXPECT_EQ(Read("*-1\r\n"), "false");
  EXPECT_EQ(Read("*2\r\n:1\r\n"), "rejected");
  EXPECT_EQ(Read(""), "rejected");
  EXPECT_EQ(Read("?\r\n"), "rejected");
}

}  // namespace
}  // namespace ringkv::server::scripting

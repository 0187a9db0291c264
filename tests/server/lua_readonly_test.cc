// Read-only proxies as the C libraries see them (server/scripting/lua_readonly.h):
// a bare Lua state with the table, cjson and cmsgpack libraries, and one proxy
// made as the sandbox makes them (an empty table whose metatable reads the
// real one), standing for a library-like table that holds a function.
#include "server/scripting/lua_readonly.h"

#include <gtest/gtest.h>

#include <string>

#include "server/scripting/lua_libs.h"

extern "C" {
#include <lauxlib.h>
#include <lualib.h>
int luaopen_cjson(lua_State* L);
}

namespace ringkv::server::scripting {
namespace {

class LuaReadOnlyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    L_ = luaL_newstate();
    luaL_openlibs(L_);
    lua_pushcfunction(L_, luaopen_cjson);
    lua_call(L_, 0, 1);
    lua_setglobal(L_, "cjson");
    lua_pushcfunction(L_, OpenCmsgpack);
    lua_call(L_, 0, 0);
    // lib = the proxy of {f = print}; proxies = {[lib] = the real table}.
    ASSERT_EQ(luaL_dostring(L_, R"lua(
      local real = {f = print}
      lib = setmetatable({}, {__index = real, __newindex = function() error('readonly', 0) end})
      proxies = setmetatable({[lib] = real}, {__mode = 'k'})
    )lua"), 0);
    lua_getglobal(L_, "proxies");
    SetReadOnlyProxies(L_, -1);
    lua_pop(L_, 1);
    lua_getglobal(L_, "table");
    lua_getglobal(L_, "cjson");
    GuardLibrariesAgainstProxies(L_, -2, -1);
    lua_pop(L_, 2);
    GuardBaseFunctionsAgainstProxies(L_);
  }
  void TearDown() override { lua_close(L_); }

  // Runs `code` (which returns one string) in protected mode; its result,
  // or "error: " and the error.
  std::string Run(const char* code) {
    if (luaL_loadstring(L_, code) != 0 || lua_pcall(L_, 0, 1, 0) != 0) {
      std::string e = std::string("error: ") + lua_tostring(L_, -1);
      lua_pop(L_, 1);
      return e;
    }
    std::string out = lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "(not a string)";
    lua_pop(L_, 1);
    return out;
  }

  lua_State* L_ = nullptr;
};

TEST_F(LuaReadOnlyTest, TableInsertRefusesAProxyAndLeavesOtherTablesAlone) {
  EXPECT_EQ(Run("table.insert(lib, 5) return 'inserted'"), "error: Attempt to modify a readonly table");
  EXPECT_EQ(Run("return tostring(rawget(lib, 1))"), "nil");
  EXPECT_EQ(Run("local t = {} table.insert(t, 'a') table.insert(t, 1, 'b') return table.concat(t, ',')"), "b,a");
  // Its argument checks come first, as the original's before its write.
  EXPECT_NE(Run("table.insert(lib) return ''").find("wrong number of arguments to 'insert'"), std::string::npos);
  EXPECT_NE(Run("table.insert(lib, 'x', 1) return ''").find("bad argument #2 to 'insert' (number expected"),
            std::string::npos);
  EXPECT_EQ(Run("table.insert(lib, 1, 5) return ''"), "error: Attempt to modify a readonly table");
  // The original's own errors, under its own name.
  EXPECT_NE(Run("table.insert() return ''").find("bad argument #1 to 'insert'"), std::string::npos);
}

TEST_F(LuaReadOnlyTest, BaseFunctionsSeeThroughAndRefuseAfterTheirOwnChecks) {
  EXPECT_EQ(Run("rawset(lib, 'x', 1) return 'set'"), "error: Attempt to modify a readonly table");
  EXPECT_EQ(Run("setmetatable(lib, {}) return 'set'"), "error: Attempt to modify a readonly table");
  EXPECT_EQ(Run("return tostring(rawget(lib, 'f') == print)"), "true");
  EXPECT_EQ(Run("return tostring(next(lib))"), "f");
  EXPECT_EQ(Run("local n = 0 for k in pairs(lib) do n = n + 1 end return tostring(n)"), "1");
  EXPECT_EQ(Run("return tostring(setmetatable({}, {__index = lib}).f == print)"), "true");  // (through the proxy)
  EXPECT_EQ(Run("return tostring(setmetatable({}, lib).f)"), "nil");  // lib's real table: no __index
  EXPECT_NE(Run("return rawset(5, 1, 2)").find("bad argument #1 to 'rawset' (table expected, got number)"),
            std::string::npos);
  EXPECT_NE(Run("return rawget({})").find("bad argument #2 to 'rawget' (value expected)"), std::string::npos);
  EXPECT_NE(Run("return pairs(5)").find("bad argument #1 to 'pairs' (table expected, got number)"),
            std::string::npos);
  EXPECT_NE(Run("return setmetatable({})").find("bad argument #2 to 'setmetatable' (nil or table expected)"),
            std::string::npos);
}

TEST_F(LuaReadOnlyTest, TableForeachWalksTheRealTable) {
  EXPECT_EQ(Run("local n = 0 table.foreach(lib, function(k) n = n + 1 end) return tostring(n)"), "1");
}

TEST_F(LuaReadOnlyTest, CjsonEncodeSeesTheRealTableAndPutsTheProxiesBack) {
  // With the caller's position, as the original raised it when called directly.
  EXPECT_EQ(Run("return cjson.encode(lib)"),
            "error: [string \"return cjson.encode(lib)\"]:1: Cannot serialise function: type not supported");
  EXPECT_EQ(Run("local t = {x = {y = lib}} local ok = pcall(cjson.encode, t) "
                "return tostring(rawequal(t.x.y, lib))"),
            "true");
  EXPECT_EQ(Run("return cjson.encode({a = {}, b = {1, 2}})"), "{\"a\":{},\"b\":[1,2]}");
  EXPECT_NE(Run("return cjson.encode(1, 2)").find("bad argument #1 to 'encode' (expected 1 argument)"),
            std::string::npos);
  // An instance from cjson.new() (and from its own new) too.
  EXPECT_NE(Run("return cjson.new().encode(lib)").find("Cannot serialise function"), std::string::npos);
  EXPECT_NE(Run("return cjson.new().new().encode({lib})").find("Cannot serialise function"), std::string::npos);
  EXPECT_EQ(Run("return cjson.new().encode({1, {}})"), "[1,{}]");
}

TEST_F(LuaReadOnlyTest, CmsgpackPacksTheRealTable) {
  // {f = <function>}: a map of one entry whose value packs as nil.
  EXPECT_EQ(Run("local s = cmsgpack.pack(lib) return (string.gsub(s, '.', function(c) "
                "return string.format('%02x', string.byte(c)) end))"),
            "81a166c0");
}

}  // namespace
}  // namespace ringkv::server::scripting

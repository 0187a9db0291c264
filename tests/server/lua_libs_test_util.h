// Shared by the cmsgpack and struct tests (lua_cmsgpack_test.cc,
// lua_struct_test.cc): the snippet prelude, the case row and the fixture.
//
// Every case is a Lua snippet run after kPrelude in a fresh state (Lua 5.1
// standard libraries + OpenCmsgpack + OpenStruct); it returns one string,
// compared with `want`. Each `want` is what redis-server 7.0.15 returned for
// EVAL of the same prelude + snippet: tests/server/lua_libs_golden.py
// re-checks them all against a live redis-server (--update rewrites them).
// Keep each case as a brace-enclosed name, R"lua(...)lua" snippet and
// R"want(...)want" text: that script parses exactly this form.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <span>
#include <string>

#include "server/scripting/lua_libs.h"

extern "C" {
#include <lauxlib.h>
#include <lualib.h>
}

namespace ringkv::server::scripting {
namespace lua_libs_test {

// Helpers shared by the snippets (locals, as Redis forbids new globals):
// hex(s), fromhex(h), dump(v) (a canonical text for any value: tables with
// sorted entries, numbers as %.17g, strings quoted or as x"hex"), dumpall(...)
// for several values, try(f, ...) = dumpall(pcall(f, ...)), packhex(...) =
// the hex of cmsgpack.pack(v) for each argument, and nest(n) = n nested
// one-element arrays around 1.
constexpr const char* kPrelude = R"prelude(
local function hex(s)
  return (string.gsub(s, '.', function(c) return string.format('%02x', string.byte(c)) end))
end
local function fromhex(h)
  h = string.gsub(h, '%s', '')
  return (string.gsub(h, '%x%x', function(x) return string.char(tonumber(x, 16)) end))
end
local function dump(v, depth)
  depth = depth or 0
  local t = type(v)
  if t == 'string' then
    if #v <= 200 and not string.find(v, '[^%w%p ]') then return string.format('%q', v) end
    return 'x"' .. hex(v) .. '"'
  elseif t == 'number' then
    return string.format('%.17g', v)
  elseif t == 'table' then
    if depth > 20 then return '{...}' end
    local items = {}
    for k, x in pairs(v) do items[#items + 1] = '[' .. dump(k, depth + 1) .. ']=' .. dump(x, depth + 1) end
    table.sort(items)
    return '{' .. table.concat(items, ',') .. '}'
  end
  return tostring(v)
end
local function dumpall(...)
  local out = {}
  for i = 1, select('#', ...) do out[i] = dump((select(i, ...))) end
  return table.concat(out, ', ')
end
local function try(f, ...) return dumpall(pcall(f, ...)) end
local function packhex(...)
  local out = {}
  for i = 1, select('#', ...) do out[i] = hex(cmsgpack.pack((select(i, ...)))) end
  return table.concat(out, ' ')
end
local function nest(n)
  local t = 1
  for _ = 1, n do t = {t} end
  return t
end
)prelude";

struct Case {
  const char* name;
  const char* lua;
  const char* want;
};

// ------------------------------------------------------------------ runner --

class LuaLibsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    L_ = luaL_newstate();
    ASSERT_NE(L_, nullptr);
    luaL_openlibs(L_);
    ASSERT_EQ(OpenCmsgpack(L_), 1);
    ASSERT_EQ(OpenStruct(L_), 1);
    lua_settop(L_, 0);
  }
  void TearDown() override { lua_close(L_); }

  // Runs kPrelude + `lua`; returns its string result, or "LUA ERROR: ..."
  // when the snippet itself fails (cases catch expected errors with pcall).
  std::string Run(const char* lua) {
    const std::string code = std::string(kPrelude) + lua;
    if (luaL_loadbuffer(L_, code.data(), code.size(), "=user_script") != 0 ||
        lua_pcall(L_, 0, 1, 0) != 0) {
      std::string err = std::string("LUA ERROR: ") + lua_tostring(L_, -1);
      lua_settop(L_, 0);
      return err;
    }
    size_t len = 0;
    const char* s = lua_tolstring(L_, -1, &len);
    std::string out = s == nullptr ? std::string("NOT A STRING") : std::string(s, len);
    lua_settop(L_, 0);
    return out;
  }

  void RunCases(std::span<const Case> cases) {
    for (const Case& c : cases) {
      SCOPED_TRACE(c.name);
      EXPECT_EQ(Run(c.lua), c.want) << "case " << c.name;
    }
  }

  lua_State* L_ = nullptr;
};

}  // namespace lua_libs_test
}  // namespace ringkv::server::scripting

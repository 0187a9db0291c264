// The cmsgpack Lua library against redis-server 7.0.15: every case's `want` is what
// redis-server returned for EVAL of the prelude + snippet
// (tests/server/lua_libs_golden.py re-checks them; --update rewrites them).
#include "tests/server/lua_libs_test_util.h"

#include <lauxlib.h>

namespace ringkv::server::scripting {
namespace lua_libs_test {
namespace {

// ------------------------------------------------------------ cmsgpack.pack --

constexpr Case kPackScalars[] = {
    {"positive_int_boundaries", R"lua(
return packhex(0, 1, 127, 128, 255, 256, 65535, 65536, 4294967295, 4294967296,
               2^53, 2^63 - 1024)
)lua", R"want(00 01 7f cc80 ccff cd0100 cdffff ce00010000 ceffffffff cf0000000100000000 cf0020000000000000 cf7ffffffffffffc00)want"},
    {"negative_int_boundaries", R"lua(
return packhex(-1, -32, -33, -128, -129, -32768, -32769, -2147483648, -2147483649,
               -2^53, -2^63)
)lua", R"want(ff e0 d0df d080 d1ff7f d18000 d2ffff7fff d280000000 d3ffffffff7fffffff d3ffe0000000000000 d38000000000000000)want"},
    {"int_edges_beyond_int64", R"lua(
return packhex(2^63, 2^64, -2^63 - 2048, -2^64, 1e20, -0.0)
)lua", R"want(ca5f000000 ca5f800000 cbc3e0000000000001 cadf800000 cb4415af1d78b58c40 00)want"},
    {"floats_and_doubles", R"lua(
return packhex(0.5, -0.5, 3.5, 0.1, 1/3, -1.25e-3, 1e300, -1e-300, 2^70, 2^-149, 2^-1074)
)lua", R"want(ca3f000000 cabf000000 ca40600000 cb3fb999999999999a cb3fd5555555555555 cbbf547ae147ae147b cb7e37e43c8800759c cb81a56e1fc2f8f359 ca62800000 ca00000001 cb0000000000000001)want"},
    {"float_range_edges", R"lua(
local fmax = (2 - 2^-23) * 2^127
return packhex(fmax, -fmax, fmax * (1 + 2^-30), 3.5e38, math.huge, -math.huge)
)lua", R"want(ca7f7fffff caff7fffff cb47efffffe0800000 cb47f074f8c4d3cd7b ca7f800000 caff800000)want"},
    {"nan", R"lua(
return packhex(0/0, -(0/0))
)lua", R"want(cbfff8000000000000 cb7ff8000000000000)want"},
    {"nil_booleans_and_non_data", R"lua(
return packhex(nil, true, false, string.len, function() end, coroutine.create(function() end))
)lua", R"want(c0 c3 c2 c0 c0 c0)want"},
    {"short_strings", R"lua(
return packhex('', 'a', 'hello', string.rep('x', 31))
)lua", R"want(a0 a161 a568656c6c6f bf78787878787878787878787878787878787878787878787878787878787878)want"},
    {"string_length_forms", R"lua(
local out = {}
for _, n in ipairs({31, 32, 255, 256, 65535, 65536, 100000}) do
  local s = string.rep('y', n)
  local p = cmsgpack.pack(s)
  out[#out + 1] = n .. ':' .. hex(string.sub(p, 1, #p - n)) .. ':' .. #p .. ':' ..
                  tostring(string.sub(p, #p - n + 1) == s and cmsgpack.unpack(p) == s)
end
return table.concat(out, ' ')
)lua", R"want(31:bf:32:true 32:d920:34:true 255:d9ff:257:true 256:da0100:259:true 65535:daffff:65538:true 65536:db00010000:65541:true 100000:db000186a0:100005:true)want"},
    {"binary_string", R"lua(
return packhex('\0\1\255')
)lua", R"want(a30001ff)want"},
    {"numeric_string_stays_string", R"lua(
return packhex('12', '1.5')
)lua", R"want(a23132 a3312e35)want"},
    {"several_arguments_concatenate", R"lua(
return hex(cmsgpack.pack(1, 'a', nil, true, {1}))
)lua", R"want(01a161c0c39101)want"},
    {"trailing_nil_argument_counts", R"lua(
return hex(cmsgpack.pack(1, nil))
)lua", R"want(01c0)want"},
    {"golden_from_brief", R"lua(
return hex(cmsgpack.pack({1,2,3}, 'a', 3.5, {a=1}))
)lua", R"want(93010203a161ca4060000081a16101)want"},
    {"no_argument_is_an_error", R"lua(
return try(cmsgpack.pack)
)lua", R"want(false, "bad argument #0 to '?' (MessagePack pack needs input.)")want"},
};

constexpr Case kPackTables[] = {
    {"empty_table_is_empty_array", R"lua(
return packhex({})
)lua", R"want(90)want"},
    {"arrays", R"lua(
return packhex({1, 2, 3}, {'a', {true}}, {[1] = 'x', [2] = 'y'})
)lua", R"want(93010203 92a16191c3 92a178a179)want"},
    {"array_filled_backwards", R"lua(
local t = {}
t[3] = 3; t[2] = 2; t[1] = 1
return packhex(t)
)lua", R"want(93010203)want"},
    {"single_key_maps", R"lua(
return packhex({a = 1}, {[0] = 1}, {[-1] = 1}, {[1.5] = 1}, {['1'] = 1}, {[2] = 1},
               {[true] = false}, {[2^31] = 1})
)lua", R"want(81a16101 810001 81ff01 81ca3fc0000001 81a13101 810201 81c3c2 81ce8000000001)want"},
    {"sparse_tables_are_maps", R"lua(
local a = cmsgpack.pack({1, 2, nil, 4})
local b = cmsgpack.pack({[1] = 1, [2] = 2, [4] = 4})
return hex(a) .. ' ' .. hex(b) .. ' ' .. dump(cmsgpack.unpack(a)) .. ' ' .. dump(cmsgpack.unpack(b))
)lua", R"want(83010102020404 83010102020404 {[1]=1,[2]=2,[4]=4} {[1]=1,[2]=2,[4]=4})want"},
    {"mixed_keys_are_a_map", R"lua(
local p = cmsgpack.pack({1, 2, x = 3})
return hex(string.sub(p, 1, 1)) .. ' ' .. #p .. ' ' .. dump(cmsgpack.unpack(p))
)lua", R"want(83 8 {["x"]=3,[1]=1,[2]=2})want"},
    {"map_order_follows_lua_next", R"lua(
return packhex({a = 1, b = 2, c = 3, d = 4}, {x = {y = {z = 'w'}}})
)lua", R"want(84a16101a16404a16303a16202 81a17881a17981a17aa177)want"},
    {"table_keys_in_maps", R"lua(
return packhex({[{}] = 1}, {[{1, 2}] = {a = 'b'}})
)lua", R"want(819001 8192010281a161a162)want"},
    {"array_length_forms", R"lua(
local out = {}
for _, n in ipairs({15, 16, 65535, 65536}) do
  local t = {}
  for i = 1, n do t[i] = i % 100 end
  local p = cmsgpack.pack(t)
  local u = cmsgpack.unpack(p)
  out[#out + 1] = n .. ':' .. hex(string.sub(p, 1, 5)) .. ':' .. #p .. ':' .. #u .. ':' .. u[n]
end
return table.concat(out, ' ')
)lua", R"want(15:9f01020304:16:15:15 16:dc00100102:19:16:16 65535:dcffff0102:65538:65535:35 65536:dd00010000:65541:65536:36)want"},
    {"map_length_forms", R"lua(
local out = {}
for _, n in ipairs({15, 16, 65535, 65536}) do
  local t = {}
  for i = 1, n do t['k' .. i] = i end
  local p = cmsgpack.pack(t)
  local u, count = cmsgpack.unpack(p), 0
  for k, v in pairs(u) do
    if t[k] ~= v then count = -1e9 end
    count = count + 1
  end
  out[#out + 1] = n .. ':' .. hex(string.sub(p, 1, 5)) .. ':' .. #p .. ':' .. count
end
return table.concat(out, ' ')
)lua", R"want(15:8fa36b3132:67:15 16:de0010a36b:74:16 65535:deffffa66b:643865:65535 65536:df00010000:643879:65536)want"},
    {"nesting_limit_16", R"lua(
return packhex(nest(14), nest(15), nest(16), nest(17), nest(30))
)lua", R"want(919191919191919191919191919101 91919191919191919191919191919101 9191919191919191919191919191919101 91919191919191919191919191919191c0 91919191919191919191919191919191c0)want"},
    {"nesting_limit_in_map_keys_and_values", R"lua(
local t = {}
local cur = t
for i = 1, 17 do local n = {}; cur.k = n; cur = n end
local keyed = {[nest(16)] = 1}
return packhex(t, keyed)
)lua", R"want(81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16b81a16bc0 81919191919191919191919191919191c001)want"},
    {"cycles_are_cut", R"lua(
local t = {}
t[1] = t
local m = {}
m.self = m
return packhex(t, m)
)lua", R"want(91919191919191919191919191919191c0 81a473656c6681a473656c6681a473656c6681a473656c6681a473656c6681a473656c6681a473656c6681a473656c6681a473656c6681a473656c6681a473656c6681a473656c6681a473656c6681a473656c6681a473656c6681a473656c66c0)want"},
    {"metatables_are_ignored", R"lua(
local t = setmetatable({1, 2}, {__index = function() return 'meta' end,
                                __len = function() return 10 end})
return packhex(t)
)lua", R"want(920102)want"},
    {"random_values_round_trip_digest", R"lua(
local seed = 777
local function rnd(n)
  seed = seed * 16807 % 2147483647  -- Park-Miller: exact in doubles
  return seed % n
end
local specials = {0, 1, -1, 127, 128, -32, -33, 255, 256, -128, -129, 65535, 65536, -32768, -32769,
                  4294967295, 4294967296, -2147483648, -2147483649, 2^53, -2^53, 2^63, -2^63, 2^64,
                  0.5, 0.1, 1/3, 1e300, -1e-300, 2^70, 2^-149, math.huge, -math.huge, 0/0, -0.0}
local function value(depth)
  local k = rnd(10)
  if k == 0 then return nil
  elseif k == 1 then return rnd(2) == 0
  elseif k == 2 then return specials[1 + rnd(#specials)]
  elseif k == 3 then return (rnd(2000000) - 1000000) * 2 ^ rnd(40) / 2 ^ rnd(20)
  elseif k == 4 then return string.rep(string.char(65 + rnd(26)), rnd(3) == 0 and rnd(300) or rnd(40))
  elseif rnd(depth + 1) == 0 then  -- fewer tables deeper down, so it ends
    local t = {}
    if rnd(2) == 0 then
      for i = 1, rnd(6) do t[i] = value(depth + 1) end
    else
      -- Keys whose lua_next order is the same in Redis's Lua and Debian's:
      -- no tables (their order depends on addresses), no strings of 32 bytes
      -- or more (Redis's Lua hashes them differently from Debian's),
      -- and no nil values (a key set to nil dies at a collection, so the
      -- layout would depend on GC timing).
      for _ = 1, rnd(6) do
        local key, v = value(depth + 1), value(depth + 1)
        if key ~= nil and key == key and type(key) ~= 'table' and v ~= nil and
           (type(key) ~= 'string' or #key < 32) then
          t[key] = v
        end
      end
    end
    return t
  end
  return rnd(100)
end
local digest, bytes = 0, 0
for _ = 1, 1500 do
  local p = cmsgpack.pack(value(0), value(5))
  local text = hex(p) .. try(cmsgpack.unpack, p)
  bytes = bytes + #p
  for i = 1, #text do digest = (digest * 31 + string.byte(text, i)) % 4294967296 end
end
return bytes .. ' digest=' .. string.format('%.0f', digest)
)lua", R"want(49654 digest=2514424299)want"},
    {"nested_round_trip", R"lua(
local v = {1, 'two', {3, {four = 4.5, five = {false, true}}}, {['k'] = {}}, -7, 2^40}
return dump(cmsgpack.unpack(cmsgpack.pack(v)))
)lua", R"want({[1]=1,[2]="two",[3]={[1]=3,[2]={["five"]={[1]=false,[2]=true},["four"]=4.5}},[4]={["k"]={}},[5]=-7,[6]=1099511627776})want"},
};

// ---------------------------------------------------------- cmsgpack.unpack --

constexpr Case kUnpackTypes[] = {
    {"integers_of_every_width", R"lua(
return dumpall(cmsgpack.unpack(fromhex(
  '00 7f cc00 ccff cd0000 cdffff ce00000000 ceffffffff cf0000000000000000 cf000fffffffffffff' ..
  'e0 ff d07f d080 d17fff d18000 d27fffffff d280000000 d37fffffffffffffff d38000000000000000')))
)lua", R"want(0, 127, 0, 255, 0, 65535, 0, 4294967295, 0, 4503599627370495, -32, -1, 127, -128, 32767, -32768, 2147483647, -2147483648, 9.2233720368547758e+18, -9.2233720368547758e+18)want"},
    {"uint64_above_int64_wraps_negative", R"lua(
return dumpall(cmsgpack.unpack(fromhex('cfffffffffffffffff cf8000000000000000 cf7fffffffffffffff')))
)lua", R"want(-1, -9.2233720368547758e+18, 9.2233720368547758e+18)want"},
    {"nil_and_booleans", R"lua(
return dumpall(select('#', cmsgpack.unpack(fromhex('c0c3c2'))), cmsgpack.unpack(fromhex('c0c3c2')))
)lua", R"want(3, nil, true, false)want"},
    {"floats", R"lua(
return dumpall(cmsgpack.unpack(fromhex(
  'ca3f800000 cabf000000 ca7f800000 caff800000 ca00000001 cb3fb999999999999a cb0000000000000001')))
)lua", R"want(1, -0.5, inf, -inf, 1.4012984643248171e-45, 0.10000000000000001, 4.9406564584124654e-324)want"},
    {"float_nan", R"lua(
local a, b = cmsgpack.unpack(fromhex('ca7fc00000 cbfff8000000000000'))
return dumpall(a ~= a, b ~= b)
)lua", R"want(true, true)want"},
    {"strings_of_every_form", R"lua(
return dumpall(cmsgpack.unpack(fromhex(
  'a0 a3616263 d900 d90278 7a da0000 da00027879 db00000000 db000000027879')))
)lua", R"want("", "abc", "", "xz", "", "xy", "", "xy")want"},
    {"arrays_of_every_form", R"lua(
return dumpall(cmsgpack.unpack(fromhex(
  '90 9201a161 dc0000 dc000201c0 dd00000000 dd0000000291c3 9203c0')))
)lua", R"want({}, {[1]=1,[2]="a"}, {}, {[1]=1}, {}, {[1]={[1]=true},[2]={[1]=3}})want"},
    {"maps_of_every_form", R"lua(
return dumpall(cmsgpack.unpack(fromhex(
  '80 82a16101a162c2 de0000 de000101c0 df00000000 df00000001a17892c3c2 81ff80')))
)lua", R"want({}, {["a"]=1,["b"]=false}, {}, {}, {}, {["x"]={[1]=true,[2]=false}}, {[-1]={}})want"},
    {"map_with_duplicate_keys_keeps_last", R"lua(
return dumpall(cmsgpack.unpack(fromhex('82a16101a16102')))
)lua", R"want({["a"]=2})want"},
    {"empty_input", R"lua(
return dumpall(select('#', cmsgpack.unpack('')))
)lua", R"want(0)want"},
    {"number_argument_is_converted", R"lua(
return dumpall(cmsgpack.unpack(123))
)lua", R"want(49, 50, 51)want"},
    {"round_trip_scalars", R"lua(
local vals = {0, 1, -1, 127, 128, -32, -33, 255, 256, 65535, 65536, -32768, -32769,
              2^31, -2^31, 2^32, 2^53, -2^53, 2^62, 0.5, -1e300, 1/3, 'x', true, false}
local out = {}
for i, v in ipairs(vals) do out[i] = tostring(cmsgpack.unpack(cmsgpack.pack(v)) == v) end
return table.concat(out, ',')
)lua", R"want(true,true,true,true,true,true,true,true,true,true,true,true,true,true,true,true,true,true,true,true,true,true,true,true,true)want"},
    {"unpack_bad_argument", R"lua(
return try(cmsgpack.unpack) .. ' | ' .. try(cmsgpack.unpack, nil) .. ' | ' .. try(cmsgpack.unpack, {})
)lua", R"want(false, "bad argument #1 to '?' (string expected, got no value)" | false, "bad argument #1 to '?' (string expected, got nil)" | false, "bad argument #1 to '?' (string expected, got table)")want"},
};

constexpr Case kUnpackErrors[] = {
    {"unsupported_types_are_bad_format", R"lua(
local out = {}
for _, h in ipairs({'c1', 'c40161', 'c5000161', 'c600000001', 'c70101ff', 'c8000101ff',
                    'c900000001ff', 'd401ff', 'd501ffff', 'd601ffffffff', 'd701ffffffffffffffff',
                    'd801ffffffffffffffffffffffffffffffff'}) do
  out[#out + 1] = h .. '=' .. try(cmsgpack.unpack, fromhex(h))
end
return table.concat(out, ' ')
)lua", R"want(c1=false, "Bad data format in input." c40161=false, "Bad data format in input." c5000161=false, "Bad data format in input." c600000001=false, "Bad data format in input." c70101ff=false, "Bad data format in input." c8000101ff=false, "Bad data format in input." c900000001ff=false, "Bad data format in input." d401ff=false, "Bad data format in input." d501ffff=false, "Bad data format in input." d601ffffffff=false, "Bad data format in input." d701ffffffffffffffff=false, "Bad data format in input." d801ffffffffffffffffffffffffffffffff=false, "Bad data format in input.")want"},
    {"bad_format_inside_containers", R"lua(
return try(cmsgpack.unpack, fromhex('9101c1')) .. ' ' .. try(cmsgpack.unpack, fromhex('81c101')) ..
       ' ' .. try(cmsgpack.unpack, fromhex('0102c1'))
)lua", R"want(false, "Bad data format in input." false, "Bad data format in input." false, "Bad data format in input.")want"},
    {"every_truncation_is_missing_bytes", R"lua(
local full = cmsgpack.pack({1, 300, -70000, 2^40, 'str', string.rep('z', 40), 0.1, 1.5,
                            {a = {true}}, {}, string.rep('w', 300)})
local out = {}
for n = 1, #full - 1 do
  local ok, err = pcall(cmsgpack.unpack, string.sub(full, 1, n))
  out[err] = (out[err] or 0) + 1
end
local keys = {}
for k, v in pairs(out) do keys[#keys + 1] = dump(k) .. '=' .. v end
table.sort(keys)
return #full .. ' ' .. table.concat(keys, ' ')
)lua", R"want(388 "Missing bytes in input."=387)want"},
    {"truncated_headers", R"lua(
local out = {}
for _, h in ipairs({'cc', 'cd00', 'ce000000', 'cf00000000000000', 'd0', 'd100', 'd2000000',
                    'd300000000000000', 'ca000000', 'cb00000000000000', 'a1', 'a27a', 'd9', 'd902',
                    'd9027a', 'da00', 'da000278', 'db000000', 'db0000000278', 'dc00', 'dc0001',
                    'dd000000', 'dd00000001', 'de00', 'de0001', 'de000101', 'df000000',
                    'df00000001', '91', '81', '8101', '9201'}) do
  out[#out + 1] = h .. '=' .. try(cmsgpack.unpack, fromhex(h))
end
return table.concat(out, ' ')
)lua", R"want(cc=false, "Missing bytes in input." cd00=false, "Missing bytes in input." ce000000=false, "Missing bytes in input." cf00000000000000=false, "Missing bytes in input." d0=false, "Missing bytes in input." d100=false, "Missing bytes in input." d2000000=false, "Missing bytes in input." d300000000000000=false, "Missing bytes in input." ca000000=false, "Missing bytes in input." cb00000000000000=false, "Missing bytes in input." a1=false, "Missing bytes in input." a27a=false, "Missing bytes in input." d9=false, "Missing bytes in input." d902=false, "Missing bytes in input." d9027a=false, "Missing bytes in input." da00=false, "Missing bytes in input." da000278=false, "Missing bytes in input." db000000=false, "Missing bytes in input." db0000000278=false, "Missing bytes in input." dc00=false, "Missing bytes in input." dc0001=false, "Missing bytes in input." dd000000=false, "Missing bytes in input." dd00000001=false, "Missing bytes in input." de00=false, "Missing bytes in input." de0001=false, "Missing bytes in input." de000101=false, "Missing bytes in input." df000000=false, "Missing bytes in input." df00000001=false, "Missing bytes in input." 91=false, "Missing bytes in input." 81=false, "Missing bytes in input." 8101=false, "Missing bytes in input." 9201=false, "Missing bytes in input.")want"},
    {"huge_lengths_with_little_data", R"lua(
return try(cmsgpack.unpack, fromhex('ddffffffff01')) .. ' ' ..
       try(cmsgpack.unpack, fromhex('dfffffffff0101')) .. ' ' ..
       try(cmsgpack.unpack, fromhex('dbffffffff41')) .. ' ' ..
       try(cmsgpack.unpack, fromhex('dcffff'))
)lua", R"want(false, "Missing bytes in input." false, "Missing bytes in input." false, "Missing bytes in input." false, "Missing bytes in input.")want"},
    {"nil_and_nan_map_keys", R"lua(
return try(cmsgpack.unpack, fromhex('81c001')) .. ' ' ..
       try(cmsgpack.unpack, fromhex('81cbfff800000000000001')) .. ' ' ..
       try(cmsgpack.unpack, fromhex('81c0'))
)lua", R"want(false, "table index is nil" false, "table index is NaN" false, "Missing bytes in input.")want"},
    {"error_mid_stream_returns_nothing", R"lua(
return try(cmsgpack.unpack, fromhex('0102c1')) .. ' ' .. try(cmsgpack.unpack, fromhex('0102cd01'))
)lua", R"want(false, "Bad data format in input." false, "Missing bytes in input.")want"},
    {"deterministic_mutation_fuzz", R"lua(
local seed = 12345
local function rnd(n)
  seed = seed * 16807 % 2147483647  -- Park-Miller: exact in doubles
  return seed % n
end
local base = cmsgpack.pack({1, -200, 70000, 'abc', {x = 1.5, y = {false, 'zz'}}, 2^40, -2^40,
                            0.1, string.rep('q', 33), {}})
local outcomes, digest = {}, 0
for iter = 1, 3000 do
  local bytes = {string.byte(base, 1, -1)}
  for _ = 1, 1 + rnd(3) do bytes[1 + rnd(#bytes)] = rnd(256) end
  local cut = #bytes - rnd(4)
  local s = string.char(unpack(bytes, 1, cut))
  local res = {pcall(cmsgpack.unpack, s)}
  local key = res[1] and 'ok' or res[2]
  outcomes[key] = (outcomes[key] or 0) + 1
  local text = dumpall(unpack(res, 1, table.maxn(res)))
  for i = 1, #text do digest = (digest * 31 + string.byte(text, i)) % 4294967296 end
end
local keys = {}
for k, v in pairs(outcomes) do keys[#keys + 1] = dump(k) .. '=' .. v end
table.sort(keys)
return table.concat(keys, ' ') .. ' digest=' .. string.format('%.0f', digest)
)lua", R"want("Bad data format in input."=49 "Missing bytes in input."=1990 "ok"=959 "table index is nil"=2 digest=3914250846)want"},
};

constexpr Case kUnpackOffsets[] = {
    {"unpack_one_walks_the_stream", R"lua(
local s = cmsgpack.pack(1, 'ab', {3})
local out = {}
for _, off in ipairs({0, 1, 4, 5, 6}) do out[#out + 1] = dumpall(cmsgpack.unpack_one(s, off)) end
return #s .. ' | ' .. table.concat(out, ' | ') .. ' | ' .. try(cmsgpack.unpack_one, s, 7)
)lua", R"want(6 | 1, 1 | 4, "ab" | -1, {[1]=3} | -1, 3 | -1 | false, "Start offset 7 greater than input length 6.")want"},
    {"unpack_one_default_offset", R"lua(
return dumpall(cmsgpack.unpack_one(cmsgpack.pack(9, 8)))
)lua", R"want(1, 9)want"},
    {"unpack_one_loop", R"lua(
local s = cmsgpack.pack(1, 2, 3, 'x', {y = 1})
local off, out = 0, {}
repeat
  local v
  off, v = cmsgpack.unpack_one(s, off)
  out[#out + 1] = dump(v)
until off == -1
return table.concat(out, ',')
)lua", R"want(1,2,3,"x",{["y"]=1})want"},
    {"unpack_limit_cases", R"lua(
local s = cmsgpack.pack(1, 2, 3)
return dumpall(cmsgpack.unpack_limit(s, 2)) .. ' | ' .. dumpall(cmsgpack.unpack_limit(s, 2, 2)) ..
       ' | ' .. dumpall(cmsgpack.unpack_limit(s, 10)) .. ' | ' .. dumpall(cmsgpack.unpack_limit(s, 1, 1)) ..
       ' | ' .. dumpall(cmsgpack.unpack_limit(s, 5, 3))
)lua", R"want(2, 1, 2 | -1, 3 | -1, 1, 2, 3 | 2, 2 | -1)want"},
    {"zero_limit_and_zero_offset_decode_all", R"lua(
local s = cmsgpack.pack(1, 2, 3)
return dumpall(cmsgpack.unpack_limit(s, 0)) .. ' | ' .. dumpall(cmsgpack.unpack_limit(s, 0, 0)) ..
       ' | ' .. dumpall(cmsgpack.unpack_limit(s, 0, 1)) .. ' | ' .. dumpall(cmsgpack.unpack_one(s, 0))
)lua", R"want(1, 2, 3 | 1, 2, 3 | 1 | 1, 1)want"},
    {"offset_errors", R"lua(
local s = cmsgpack.pack(1, 2, 3)
return try(cmsgpack.unpack_one, s, 4) .. ' | ' .. try(cmsgpack.unpack_one, s, -1) .. ' | ' ..
       try(cmsgpack.unpack_limit, s, -1) .. ' | ' .. try(cmsgpack.unpack_limit, s, -2, -3) .. ' | ' ..
       try(cmsgpack.unpack_limit, s, 1, 100) .. ' | ' .. try(cmsgpack.unpack_one, '', 0) .. ' | ' ..
       try(cmsgpack.unpack_one, '', 1)
)lua", R"want(false, "Start offset 4 greater than input length 3." | false, "Invalid request to unpack with offset of -1 and limit of 3." | false, "Invalid request to unpack with offset of 0 and limit of 3." | false, "Invalid request to unpack with offset of -3 and limit of 3." | false, "Start offset 100 greater than input length 3." | true, -1 | false, "Start offset 1 greater than input length 0.")want"},
    {"offset_argument_conversion", R"lua(
local s = cmsgpack.pack(1, 2, 3)
return try(cmsgpack.unpack_one, s, 1.9) .. ' | ' .. try(cmsgpack.unpack_one, s, '2') .. ' | ' ..
       try(cmsgpack.unpack_one, s, 'x') .. ' | ' .. try(cmsgpack.unpack_limit, s) .. ' | ' ..
       try(cmsgpack.unpack_limit, s, 'a') .. ' | ' .. try(cmsgpack.unpack_limit, s, 1, {}) .. ' | ' ..
       try(cmsgpack.unpack_one) .. ' | ' .. try(cmsgpack.unpack_one, nil, 'x')
)lua", R"want(true, 2, 2 | true, -1, 3 | false, "bad argument #2 to '?' (number expected, got string)" | false, "bad argument #2 to '?' (number expected, got no value)" | false, "bad argument #2 to '?' (number expected, got string)" | false, "bad argument #3 to '?' (number expected, got table)" | false, "bad argument #1 to '?' (string expected, got no value)" | false, "bad argument #2 to '?' (number expected, got string)")want"},
    {"offset_into_the_middle_of_an_object", R"lua(
local s = cmsgpack.pack('abc', 300)
return try(cmsgpack.unpack_one, s, 1) .. ' | ' .. try(cmsgpack.unpack_one, s, 5) .. ' | ' ..
       try(cmsgpack.unpack_one, s, 6)
)lua", R"want(true, 2, 97 | true, 6, 1 | true, -1, 44)want"},
    {"corrupt_after_the_first_object", R"lua(
local s = cmsgpack.pack(1) .. fromhex('c1')
return try(cmsgpack.unpack_one, s) .. ' | ' .. try(cmsgpack.unpack_one, s, 1) .. ' | ' ..
       try(cmsgpack.unpack_limit, s, 2)
)lua", R"want(true, 1, 1 | false, "Bad data format in input." | false, "Bad data format in input.")want"},
};

// Where Lua's 8000-slot C stack limit stops the library: the same
// luaL_checkstack calls at the same stack heights as Redis.
constexpr Case kCmsgpackStack[] = {
    {"many_results", R"lua(
return dumpall(select('#', cmsgpack.unpack(string.rep('a', 7999)))) .. ' ' ..
       try(cmsgpack.unpack, string.rep('a', 8000)) .. ' ' ..
       try(cmsgpack.unpack, string.rep('a', 7999), 'extra')
)lua", R"want(7999 false, "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)" false, "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)")want"},
    {"unpack_limit_many_results", R"lua(
local s = string.rep('a', 9000)
return dumpall(select('#', cmsgpack.unpack_limit(s, 7998))) .. ' ' .. try(cmsgpack.unpack_limit, s, 7999)
)lua", R"want(7999 false, "stack overflow (in function mp_unpack_full)")want"},
    {"deep_nesting", R"lua(
return try(cmsgpack.unpack, string.rep('\145', 5000)) .. ' ' ..
       try(cmsgpack.unpack, string.rep('\129\1', 5000)) .. ' ' ..
       try(cmsgpack.unpack, string.rep('\129', 9000)) .. ' ' ..
       dump(select('#', cmsgpack.unpack(string.rep('\145', 3000) .. '\1')))
)lua", R"want(false, "stack overflow (in function mp_decode_to_lua_array)" false, "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)" false, "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)" 1)want"},
    {"many_pack_arguments", R"lua(
local nums, tabs = {}, {}
for i = 1, 4100 do nums[i] = i; tabs[i] = {} end
local function n(t, k)
  local ok, r = pcall(cmsgpack.pack, unpack(t, 1, k))
  return ok and #r or r
end
return dumpall(n(nums, 4000), n(nums, 4001), n(tabs, 3997), n(tabs, 3998), n(tabs, 3999), n(tabs, 4000))
)lua", R"want(11618, "bad argument #0 to '?' (Too many arguments for MessagePack pack.)", 3997, 3998, 3999, "stack overflow (in function table_is_an_array)")want"},
};

constexpr Case kCmsgpackLibrary[] = {
    {"fields", R"lua(
local keys = {}
for k, v in pairs(cmsgpack) do keys[#keys + 1] = k .. ':' .. type(v) end
return table.concat(keys, ' ') .. ' | ' ..
       dumpall(cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION)
)lua", R"want(_DESCRIPTION:string pack:function _NAME:string unpack:function _COPYRIGHT:string _VERSION:string unpack_one:function unpack_limit:function | "cmsgpack", "lua-cmsgpack 0.4.0", "Copyright (C) 2012, Salvatore Sanfilippo", "MessagePack C implementation for Lua")want"},
};

// The fixture of lua_libs_test_util.h, under a suite name of this file's own
// (each module's suites are its own: add_unit_test, ../../CMakeLists.txt).
class LuaCmsgpackTest : public LuaLibsTest {};

TEST_F(LuaCmsgpackTest, CmsgpackPackScalars) { RunCases(kPackScalars); }
TEST_F(LuaCmsgpackTest, CmsgpackPackTables) { RunCases(kPackTables); }
TEST_F(LuaCmsgpackTest, CmsgpackUnpackTypes) { RunCases(kUnpackTypes); }
TEST_F(LuaCmsgpackTest, CmsgpackUnpackErrors) { RunCases(kUnpackErrors); }
TEST_F(LuaCmsgpackTest, CmsgpackUnpackOffsets) { RunCases(kUnpackOffsets); }
TEST_F(LuaCmsgpackTest, CmsgpackStackLimits) { RunCases(kCmsgpackStack); }
TEST_F(LuaCmsgpackTest, CmsgpackLibrary) { RunCases(kCmsgpackLibrary); }

// --------------------------------------------- ringkv-only (no golden) --

// The openers' contract: the table is left on top (one result) and is the
// global; struct is also package.loaded.struct; a name argument, as Redis's
// luaLoadLib passes, is ignored.
TEST(LuaLibsOpenTest, OpenersLeaveTheTableAndSetTheGlobal) {
  lua_State* L = luaL_newstate();
  luaL_openlibs(L);
  lua_pushcfunction(L, OpenCmsgpack);
  lua_pushstring(L, "cmsgpack");
  lua_call(L, 1, 1);
  ASSERT_TRUE(lua_istable(L, -1));
  lua_getglobal(L, "cmsgpack");
  EXPECT_TRUE(lua_rawequal(L, -1, -2));
  lua_settop(L, 0);

  EXPECT_EQ(OpenStruct(L), 1);
  ASSERT_EQ(lua_gettop(L), 1);
  ASSERT_TRUE(lua_istable(L, 1));
  lua_getglobal(L, "struct");
  EXPECT_TRUE(lua_rawequal(L, 1, 2));
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "loaded");
  lua_getfield(L, -1, "struct");
  EXPECT_TRUE(lua_rawequal(L, 1, -1));
  lua_getfield(L, -2, "cmsgpack");
  EXPECT_TRUE(lua_isnil(L, -1));  // as in Redis: a global only
  lua_close(L);
}

// Each pack call has its own buffer: a __gc handler that packs while another
// pack is running (Lua may collect inside lua_pushlstring) cannot corrupt it.
// Redis's sandbox has no newproxy, so this has no golden.
TEST_F(LuaCmsgpackTest, PackIsReentrantFromGcHandlers) {
  const char* lua = R"(
local packed_in_gc = 0
local function garbage(n)
  for i = 1, n do
    local p = newproxy(true)
    getmetatable(p).__gc = function()
      local s = cmsgpack.pack({i, 'gc', string.rep('g', 100)})
      if cmsgpack.unpack(s)[1] == i then packed_in_gc = packed_in_gc + 1 end
    end
  end
end
local ok = true
for round = 1, 100 do
  garbage(50)
  local v = {round, string.rep('v', 3000), {x = round}}
  for _ = 1, 20 do
    local a, b, c = cmsgpack.unpack(cmsgpack.pack(v, 'mid', v))
    if a[1] ~= round or a[2] ~= v[2] or b ~= 'mid' or c[3].x ~= round then ok = false end
  end
end
collectgarbage()
return tostring(ok) .. ' ' .. tostring(packed_in_gc == 5000)
)";
  EXPECT_EQ(Run(lua), "true true");
}

// A pack that fails half way (here: Lua's stack limit, after the buffer
// exists) frees its buffer at the next collection; LeakSanitizer checks the
// ASan build. The state stays usable.
TEST_F(LuaCmsgpackTest, FailedPackLeavesStateUsable) {
  const char* lua = R"(
local tabs = {}
for i = 1, 4000 do tabs[i] = {string.rep('t', 100)} end
local errors = 0
for _ = 1, 20 do
  if not pcall(cmsgpack.pack, unpack(tabs)) then errors = errors + 1 end
end
collectgarbage()
return errors .. ' ' .. hex(cmsgpack.pack({1}))
)";
  EXPECT_EQ(Run(lua), "20 9101");
}

}  // namespace
}  // namespace lua_libs_test
}  // namespace ringkv::server::scripting

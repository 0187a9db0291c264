// The struct Lua library against redis-server 7.0.15: every case's `want` is what
// redis-server returned for EVAL of the prelude + snippet
// (tests/server/lua_libs_golden.py re-checks them; --update rewrites them).
#include "tests/server/lua_libs_test_util.h"

#include <lauxlib.h>

namespace ringkv::server::scripting {
namespace lua_libs_test {
namespace {

// ------------------------------------------------------------------ struct --

constexpr Case kStructPack[] = {
    {"golden_from_brief", R"lua(
return hex(struct.pack('>iHd', -2, 65535, 1.5))
)lua", R"want(fffffffeffff3ff8000000000000)want"},
    {"bytes", R"lua(
return hex(struct.pack('bBbBbB', 0, 0, 127, 255, -128, -1)) .. ' ' .. hex(struct.pack('bBb', 128, 256, -129))
)lua", R"want(00007fff80ff 80007f)want"},
    {"shorts_longs_size_t", R"lua(
return hex(struct.pack('>hHhH', -2, 65534, 32767, 1)) .. ' ' .. hex(struct.pack('<hHhH', -2, 65534, 32767, 1)) ..
       ' ' .. hex(struct.pack('>lL', -2, 2^53)) .. ' ' .. hex(struct.pack('<lLT', -2, 2^53, 7))
)lua", R"want(fffefffe7fff0001 fefffeffff7f0100 fffffffffffffffe0020000000000000 feffffffffffffff00000000000020000700000000000000)want"},
    {"sized_integers", R"lua(
local out = {}
for n = 1, 8 do out[#out + 1] = hex(struct.pack('>i' .. n .. '<I' .. n, -2, 258)) end
return table.concat(out, ' ') .. ' ' .. hex(struct.pack('>i', 1)) .. ' ' .. hex(struct.pack('<I', 1)) ..
       ' ' .. hex(struct.pack('>i0', 5))
)lua", R"want(fe02 fffe0201 fffffe020100 fffffffe02010000 fffffffffe0201000000 fffffffffffe020100000000 fffffffffffffe02010000000000 fffffffffffffffe0201000000000000 00000001 01000000 )want"},
    {"wide_integers_zero_fill_above_8_bytes", R"lua(
return hex(struct.pack('>i16', -2)) .. ' ' .. hex(struct.pack('<i9', -1)) .. ' ' .. hex(struct.pack('>I32', 1))
)lua", R"want(0000000000000000fffffffffffffffe ffffffffffffffff00 0000000000000000000000000000000000000000000000000000000000000001)want"},
    {"integer_conversions", R"lua(
return hex(struct.pack('>bbI2i2', 3.7, -3.7, 65537, -32769)) .. ' ' ..
       hex(struct.pack('>LLLL', 0/0, 2^64, 2^63, 1e30)) .. ' ' ..
       hex(struct.pack('>llll', 2^63, -2^64, -(0/0), -0.5)) .. ' ' ..
       hex(struct.pack('>i', '12'))
)lua", R"want(03fd00017fff 8000000000000000000000000000000080000000000000000000000000000000 8000000000000000800000000000000080000000000000000000000000000000 0000000c)want"},
    {"floats_and_doubles", R"lua(
return hex(struct.pack('>fd<fd', 1.5, 0.1, -2, 1/3)) .. ' ' ..
       hex(struct.pack('>ffff', 1e300, -1e300, math.huge, 0.1)) .. ' ' .. hex(struct.pack('>d', 0/0))
)lua", R"want(3fc000003fb999999999999a000000c0555555555555d53f 7f800000ff8000007f8000003dcccccd fff8000000000000)want"},
    {"chars_and_strings", R"lua(
return hex(struct.pack('c', 'xyz')) .. ' ' .. hex(struct.pack('c3', 'abcdef')) .. ' ' ..
       hex(struct.pack('c0', 'whole')) .. ' ' .. hex(struct.pack('s', 'a\0b')) .. ' ' ..
       hex(struct.pack('s', '')) .. ' ' .. hex(struct.pack('c0', 123))
)lua", R"want(78 616263 77686f6c65 61006200 00 313233)want"},
    {"padding_and_spaces", R"lua(
return hex(struct.pack('b x b', 1, 2)) .. ' ' .. hex(struct.pack('xxx')) .. ' ' .. hex(struct.pack(''))
)lua", R"want(010002 000000 )want"},
    {"format_stops_at_nul", R"lua(
return hex(struct.pack('b\0b', 1, 2))
)lua", R"want(01)want"},
    {"alignment", R"lua(
return hex(struct.pack('!bd', 1, 2)) .. ' ' .. hex(struct.pack('!4 b i b h', 1, 2, 3, 4)) .. ' ' ..
       hex(struct.pack('!2bi', 1, 2)) .. ' ' .. hex(struct.pack('!1bi', 1, 2)) .. ' ' ..
       hex(struct.pack('!bc3i', 1, 'xyz', 2)) .. ' ' .. hex(struct.pack('b!4i3', 1, 2)) .. ' ' ..
       hex(struct.pack('bb!i', 1, 2, 3)) .. ' ' .. hex(struct.pack('!16bd', 1, 2)) .. ' ' ..
       hex(struct.pack('!8 b s i', 1, 'ab', 7))
)lua", R"want(01000000000000000000000000000040 010000000200000003000400 010002000000 0102000000 0178797a02000000 010000020000 0102000003000000 01000000000000000000000000000040 0161620007000000)want"},
    {"endianness_switches_mid_format", R"lua(
return hex(struct.pack('>h<h>h', 1, 1, 1)) .. ' ' .. hex(struct.pack('h', 1))
)lua", R"want(000101000001 0100)want"},
};

constexpr Case kStructUnpack[] = {
    {"golden_from_brief", R"lua(
return dumpall(struct.unpack('>iHd', fromhex('fffffffeffff3ff8000000000000')))
)lua", R"want(-2, 65535, 1.5, 15)want"},
    {"bytes_and_shorts", R"lua(
return dumpall(struct.unpack('bBbB>hH<hH', fromhex('7f7f80ff fffe fffe feff feff')))
)lua", R"want(127, 127, -128, 255, -2, 65534, -2, 65534, 13)want"},
    {"longs", R"lua(
return dumpall(struct.unpack('>lL<lLT', fromhex(
  'ffffffffffffffff ffffffffffffffff 0000000000000080 0100000000000000 0700000000000000')))
)lua", R"want(-1, 1.8446744073709552e+19, -9.2233720368547758e+18, 1, 7, 41)want"},
    {"sized_integers", R"lua(
local out = {}
for n = 1, 8 do
  out[#out + 1] = dumpall(struct.unpack('>i' .. n .. '<I' .. n, string.rep('\255', 2 * n)))
end
return table.concat(out, ' | ')
)lua", R"want(-1, 255, 3 | -1, 65535, 5 | -1, 16777215, 7 | -1, 4294967295, 9 | -1, 1099511627775, 11 | -1, 281474976710655, 13 | -1, 72057594037927936, 15 | -1, 1.8446744073709552e+19, 17)want"},
    {"wide_integers", R"lua(
return dumpall(struct.unpack('<i9', fromhex('010100000000000000'))) .. ' | ' ..
       dumpall(struct.unpack('<i16', string.rep('\255', 16))) .. ' | ' ..
       dumpall(struct.unpack('>I16', fromhex('ffffffffffffffff0000000000000001'))) .. ' | ' ..
       dumpall(struct.unpack('>i12', fromhex('000000000000000000000080'))) .. ' | ' ..
       dumpall(struct.unpack('<i0', '')) .. ' | ' .. dumpall(struct.unpack('>i3', fromhex('800000')))
)lua", R"want(-127, 10 | -1, 17 | 1, 17 | 128, 13 | 0, 1 | -8388608, 4)want"},
    {"floats_and_doubles", R"lua(
local f, d, f2, d2, nxt = struct.unpack('>fd<fd', struct.pack('>fd<fd', 1.5, 0.1, -2, 1/3))
local a, b = struct.unpack('>fd', fromhex('7fc00000 7ff8000000000000'))
return dumpall(f, d, f2, d2, nxt, a ~= a, b ~= b) .. ' ' ..
       dumpall(struct.unpack('<f', fromhex('0000807f')))
)lua", R"want(1.5, 0.10000000000000001, -2, 0.33333333333333331, 25, true, true inf, 5)want"},
    {"chars_and_strings", R"lua(
return dumpall(struct.unpack('c2c1', 'abc')) .. ' | ' .. dumpall(struct.unpack('sb', 'hi\0\7')) .. ' | ' ..
       dumpall(struct.unpack('bc0b', '\3xyz\9')) .. ' | ' .. dumpall(struct.unpack('c1c0', '2ab')) .. ' | ' ..
       dumpall(struct.unpack('s', '\0'))
)lua", R"want("ab", "c", 4 | "hi", 7, 5 | "xyz", 9, 6 | "ab", 4 | "", 2)want"},
    {"c0_size_conversions", R"lua(
return dumpall(struct.unpack('<dc0', struct.pack('<d', 2^64))) .. ' | ' ..
       dumpall(struct.unpack('<dc0', struct.pack('<d', -0.5))) .. ' | ' ..
       try(struct.unpack, '<dc0', struct.pack('<d', -1)) .. ' | ' ..
       try(struct.unpack, '<dc0', struct.pack('<d', 0/0))
)lua", R"want("", 9 | "", 9 | false, "bad argument #2 to '?' (data string too short)" | false, "bad argument #2 to '?' (data string too short)")want"},
    {"start_position", R"lua(
local s = struct.pack('>hhh', 1, 2, 3)
return dumpall(struct.unpack('>h', s, 3)) .. ' | ' .. dumpall(struct.unpack('>h', s, 5)) .. ' | ' ..
       dumpall(struct.unpack('', s, 7)) .. ' | ' .. dumpall(struct.unpack('', s, 100)) .. ' | ' ..
       dumpall(struct.unpack('', s, -5)) .. ' | ' .. dumpall(struct.unpack('>h', s, 2.9))
)lua", R"want(2, 5 | 3, 7 | 7 | 100 | -5 | 256, 4)want"},
    {"padding_and_alignment", R"lua(
return dumpall(struct.unpack('bxb', '\1\2\3')) .. ' | ' ..
       dumpall(struct.unpack('!4 b i', struct.pack('!4 b i', 5, 6))) .. ' | ' ..
       dumpall(struct.unpack('!4 i', 'abcdefgh', 2)) .. ' | ' ..
       dumpall(struct.unpack('!bd', struct.pack('!bd', 1, 2.5)))
)lua", R"want(1, 3, 4 | 5, 6, 9 | 1751606885, 9 | 1, 2.5, 17)want"},
    {"round_trips", R"lua(
local fmt = '<!4 b B h H l L T i I i2 I3 i8 f d c3 s c0'
local p = struct.pack(fmt, -5, 200, -300, 60000, -2^40, 2^40, 99, -70000, 70000, -2, 65536 * 255,
                      -2^50, 0.25, -1e100, 'abc', 'str', 'tail')
return #p .. ' ' .. struct.size('<!4 b B h H l L T i I i2 I3 i8 f d c3') .. ' ' ..
       dumpall(struct.unpack(string.sub(fmt, 1, -4), p))
)lua", R"want(79 71 -5, 200, -300, 60000, -1099511627776, 1099511627776, 99, -70000, 70000, -2, 16711680, -1125899906842624, 0.25, -1e+100, "abc", "str", 76)want"},
};

constexpr Case kStructSize[] = {
    {"sizes", R"lua(
return dumpall(struct.size(''), struct.size('b'), struct.size('>iHd'), struct.size('!bd'),
               struct.size('!4bd'), struct.size('c10'), struct.size('i7 x'), struct.size('!bh!8bl'),
               struct.size('z'), struct.size('q5'), struct.size('bi3'), struct.size('!4bi3'))
)lua", R"want(0, 1, 14, 16, 12, 10, 8, 16, 0, 0, 4, 6)want"},
};

constexpr Case kStructErrors[] = {
    {"integral_size_limit", R"lua(
return try(struct.pack, 'i33', 1) .. ' | ' .. try(struct.unpack, 'I33', '') .. ' | ' ..
       try(struct.size, 'i100') .. ' | ' .. dumpall(struct.size('i32'))
)lua", R"want(false, "integral size 33 is larger than limit of 32" | false, "integral size 33 is larger than limit of 32" | false, "integral size 100 is larger than limit of 32" | 32)want"},
    {"size_overflow", R"lua(
return try(struct.pack, 'i99999999999', 1) .. ' | ' .. try(struct.size, 'c2147483648') .. ' | ' ..
       try(struct.unpack, '!99999999999', '') .. ' | ' .. dumpall(struct.size('c2147483647'))
)lua", R"want(false, "integral size overflow" | false, "integral size overflow" | false, "integral size overflow" | 2147483647)want"},
    {"invalid_format_option", R"lua(
return try(struct.pack, 'z') .. ' | ' .. try(struct.unpack, 'q', 'a') .. ' | ' ..
       try(struct.size, '#') .. ' | ' .. try(struct.pack, 's5', 'a') .. ' | ' ..
       try(struct.pack, '\233') .. ' | ' .. try(struct.size, '\233')
)lua", R"want(false, "bad argument #1 to '?' (invalid format option 'z')" | false, "bad argument #1 to '?' (invalid format option 'q')" | false, "bad argument #1 to '?' (invalid format option '#')" | false, "bad argument #1 to '?' (invalid format option '5')" | false, x"62616420617267756d656e7420233120746f20273f272028696e76616c696420666f726d6174206f7074696f6e2027e92729" | false, x"62616420617267756d656e7420233120746f20273f272028696e76616c696420666f726d6174206f7074696f6e2027e92729")want"},
    {"alignment_not_power_of_two", R"lua(
return try(struct.pack, '!3b', 1) .. ' | ' .. try(struct.size, '!0') .. ' | ' .. try(struct.unpack, '!6', '')
)lua", R"want(false, "alignment 3 is not a power of 2" | false, "alignment 0 is not a power of 2" | false, "alignment 6 is not a power of 2")want"},
    {"pack_arguments", R"lua(
return try(struct.pack, 'b') .. ' | ' .. try(struct.pack, 'bb', 1) .. ' | ' .. try(struct.pack, 'b', 'x') ..
       ' | ' .. try(struct.pack, 'c5', 'ab') .. ' | ' .. try(struct.pack, 'bc5', 1, 'ab') .. ' | ' ..
       try(struct.pack, 's') .. ' | ' .. try(struct.pack, 'd', {}) .. ' | ' .. try(struct.pack) ..
       ' | ' .. try(struct.pack, {})
)lua", R"want(false, "bad argument #2 to '?' (number expected, got nil)" | false, "bad argument #3 to '?' (number expected, got nil)" | false, "bad argument #2 to '?' (number expected, got string)" | false, "bad argument #3 to '?' (string too short)" | false, "bad argument #4 to '?' (string too short)" | false, "bad argument #2 to '?' (string expected, got nil)" | false, "bad argument #2 to '?' (number expected, got table)" | false, "bad argument #1 to '?' (string expected, got no value)" | false, "bad argument #1 to '?' (string expected, got table)")want"},
    {"unpack_data_too_short", R"lua(
return try(struct.unpack, 'b', '') .. ' | ' .. try(struct.unpack, 'i', 'abc') .. ' | ' ..
       try(struct.unpack, 'c4', 'abc') .. ' | ' .. try(struct.unpack, 'bc0', '\5abc') .. ' | ' ..
       try(struct.unpack, 'b', 'abc', 4) .. ' | ' .. try(struct.unpack, '>', 'abc', 10) .. ' | ' ..
       try(struct.unpack, 'x', '') .. ' | ' .. try(struct.unpack, '!4bi', 'abcde') .. ' | ' ..
       try(struct.unpack, 'b', 'abc', -1)
)lua", R"want(false, "bad argument #2 to '?' (data string too short)" | false, "bad argument #2 to '?' (data string too short)" | false, "bad argument #2 to '?' (data string too short)" | false, "bad argument #2 to '?' (data string too short)" | false, "bad argument #2 to '?' (data string too short)" | false, "bad argument #2 to '?' (data string too short)" | false, "bad argument #2 to '?' (data string too short)" | false, "bad argument #2 to '?' (data string too short)" | false, "bad argument #2 to '?' (data string too short)")want"},
    {"unpack_other_errors", R"lua(
return try(struct.unpack, 's', 'abc') .. ' | ' .. try(struct.unpack, 'c0', 'a') .. ' | ' ..
       try(struct.unpack, 'c1c0', 'xa') .. ' | ' .. try(struct.unpack, 'b', 'a', 0) .. ' | ' ..
       try(struct.unpack, 'b') .. ' | ' .. try(struct.unpack, nil, 'a') .. ' | ' ..
       try(struct.unpack, 'b', 'a', 'x')
)lua", R"want(false, "unfinished string in data" | false, "format 'c0' needs a previous size" | false, "format 'c0' needs a previous size" | false, "bad argument #3 to '?' (offset must be 1 or greater)" | false, "bad argument #2 to '?' (string expected, got no value)" | false, "bad argument #1 to '?' (string expected, got nil)" | false, "bad argument #3 to '?' (number expected, got string)")want"},
    {"size_errors", R"lua(
return try(struct.size, 's') .. ' | ' .. try(struct.size, 'c0') .. ' | ' .. try(struct.size, 'bc0') ..
       ' | ' .. try(struct.size)
)lua", R"want(false, "bad argument #1 to '?' (option 's' has no fixed size)" | false, "bad argument #1 to '?' (option 'c0' has no fixed size)" | false, "bad argument #1 to '?' (option 'c0' has no fixed size)" | false, "bad argument #1 to '?' (string expected, got no value)")want"},
    {"too_many_results", R"lua(
return dumpall(select('#', struct.unpack(string.rep('b', 7997), string.rep('a', 7997)))) .. ' | ' ..
       try(struct.unpack, string.rep('b', 7998), string.rep('a', 7998)) .. ' | ' ..
       try(struct.unpack, string.rep('b', 7997), string.rep('a', 7997), 1) .. ' | ' ..
       dumpall(select('#', struct.unpack(string.rep('x', 9000), string.rep('a', 9000))))
)lua", R"want(7998 | false, "stack overflow (too many results)" | false, "stack overflow (too many results)" | 1)want"},
    {"random_formats_digest", R"lua(
local seed = 4242
local function rnd(n)
  seed = seed * 16807 % 2147483647  -- Park-Miller: exact in doubles
  return seed % n
end
local letters = {'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I', 'f', 'd', 'c', 's', 'x', '>', '<', '!', ' ',
                 'i3', 'I9', 'i16', 'c0', 'c2', '!2', '!4', 'z', 'i0', 'i5', 'I7', 'c5', '!1', '!16',
                 'i12', 'I33', '!3', '#'}
local values = {0, 1, -1, 255, -129, 65536, 2^31, -2^31, 2^53, 2^63, 2^64, -2^64, 0.1, 1e300, 0/0,
                math.huge, -0.5, '', 'q', 'qqqq', '12', 'abcdefgh'}
local outcomes, digest = {}, 0
local function record(text)
  for i = 1, #text do digest = (digest * 31 + string.byte(text, i)) % 4294967296 end
end
for _ = 1, 2000 do
  local f = {}
  for j = 1, 1 + rnd(8) do f[j] = letters[1 + rnd(#letters)] end
  local fmt = table.concat(f)
  local args = {}
  for j = 1, 6 do args[j] = values[1 + rnd(#values)] end
  local ok, p = pcall(struct.pack, fmt, unpack(args, 1, 6))
  local key = ok and 'ok' or p
  outcomes[key] = (outcomes[key] or 0) + 1
  record(fmt .. '=' .. (ok and hex(p) or p))
  record(try(struct.size, fmt))
  local data = ok and p or string.rep('\7', rnd(20))
  record(try(struct.unpack, fmt, data))
  record(try(struct.unpack, fmt, data .. '\0\1\2\3', rnd(30) - 10))
end
local keys = {}
for k, v in pairs(outcomes) do keys[#keys + 1] = dump(k) .. '=' .. v end
table.sort(keys)
return table.concat(keys, ' ') .. ' digest=' .. string.format('%.0f', digest)
)lua", R"want("alignment 3 is not a power of 2"=175 "bad argument #1 to '?' (invalid format option '#')"=142 "bad argument #1 to '?' (invalid format option 'z')"=143 "bad argument #2 to '?' (number expected, got string)"=223 "bad argument #3 to '?' (number expected, got string)"=111 "bad argument #3 to '?' (string too short)"=54 "bad argument #4 to '?' (number expected, got string)"=80 "bad argument #4 to '?' (string too short)"=36 "bad argument #5 to '?' (number expected, got string)"=42 "bad argument #5 to '?' (string too short)"=12 "bad argument #6 to '?' (number expected, got string)"=22 "bad argument #6 to '?' (string too short)"=12 "bad argument #7 to '?' (number expected, got string)"=5 "bad argument #7 to '?' (string too short)"=5 "bad argument #8 to '?' (number expected, got nil)"=7 "bad argument #8 to '?' (string expected, got nil)"=3 "bad argument #8 to '?' (string too short)"=4 "integral size 33 is larger than limit of 32"=150 "ok"=774 digest=4101829395)want"},
};

constexpr Case kStructLibrary[] = {
    {"fields", R"lua(
local keys = {}
for k, v in pairs(struct) do keys[#keys + 1] = k .. ':' .. type(v) end
table.sort(keys)
return table.concat(keys, ' ')
)lua", R"want(pack:function size:function unpack:function)want"},
};

// The fixture of lua_libs_test_util.h, under a suite name of this file's own
// (each module's suites are its own: add_unit_test, ../../CMakeLists.txt).
class LuaStructTest : public LuaLibsTest {};

TEST_F(LuaStructTest, StructPack) { RunCases(kStructPack); }
TEST_F(LuaStructTest, StructUnpack) { RunCases(kStructUnpack); }
TEST_F(LuaStructTest, StructSize) { RunCases(kStructSize); }
TEST_F(LuaStructTest, StructErrors) { RunCases(kStructErrors); }
TEST_F(LuaStructTest, StructLibrary) { RunCases(kStructLibrary); }

}  // namespace
}  // namespace lua_libs_test
}  // namespace ringkv::server::scripting

#include "core/listpack.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/exact_size_slabs.h"
#include "tests/core/hex.h"

namespace ringkv::core {
namespace {

std::vector<std::string> Elements(const Listpack& lp) {
  std::vector<std::string> out;
  for (size_t p = lp.First(); p != Listpack::kEnd; p = lp.Next(p)) out.push_back(lp.Get(p).ToString());
  return out;
}

// The listpack redis-server 7.0.15 writes for
//   HSET h a 1 neg -5000 big 123456789012 s <70 x> m -100000 w 40000 e ""
// (hash-max-listpack-value 1000, rdbcompression no; taken from its DUMP).
// Every encoding but the 13-bit int and the 32-bit string length appears.
const std::vector<std::string> kRedisFields = {"a", "1", "neg", "-5000", "big", "123456789012", "s",
                                               std::string(70, 'x'), "m", "-100000", "w", "40000", "e", ""};
std::string RedisHex() {
  std::string x70;
  for (int i = 0; i < 70; ++i) x70 += "78";  // 70 'x'
  return "850000000e008161020101836e656704f178ec038362696704f4141a99be1c00000009817302e046" + x70 +
         "48816d02f26079fe04817702f2409c00048165028001ff";
}
const std::string kRedisHex = RedisHex();

TEST(ListpackTest, BytesAreRedisBytes) {
  Listpack lp;
  for (const std::string& s : kRedisFields) lp.Append(s);
  EXPECT_EQ(lp.bytes(), Unhex(kRedisHex));
  ASSERT_TRUE(Listpack::Validate(lp.bytes()).ok());
  Listpack read = Listpack::FromBytes(Unhex(kRedisHex));
  EXPECT_EQ(read.size(), kRedisFields.size());
  EXPECT_EQ(Elements(read), kRedisFields);
}

TEST(ListpackTest, EveryIntegerWidthRoundTrips) {
  const std::vector<int64_t> values = {0,       127,      128,      -1,        4095,      -4096,     4096,
                                       -4097,   32767,    -32768,   32768,     8388607,   -8388608,  8388608,
                                       INT32_MAX, INT32_MIN, int64_t{INT32_MAX} + 1, INT64_MAX, INT64_MIN};
  Listpack lp;
  for (int64_t v : values) lp.AppendInt(v);
  ASSERT_TRUE(Listpack::Validate(lp.bytes()).ok());
  size_t i = 0;
  for (size_t p = lp.First(); p != Listpack::kEnd; p = lp.Next(p), ++i) {
    const ListpackValue v = lp.Get(p);
    ASSERT_TRUE(v.is_int);
    EXPECT_EQ(v.int_value, values[i]);
  }
  EXPECT_EQ(i, values.size());
  // Backwards as well (back-lengths).
  i = values.size();
  for (size_t p = lp.Last(); p != Listpack::kEnd; p = lp.Prev(p)) EXPECT_EQ(lp.Get(p).int_value, values[--i]);
  EXPECT_EQ(i, 0u);
}

TEST(ListpackTest, StringLengthsAcrossEncodingsAndBacklenSizes) {
  Listpack lp;
  std::vector<std::string> strings;
  for (size_t n : {0u, 1u, 63u, 64u, 125u, 126u, 127u, 4095u, 4096u, 16380u, 20000u}) strings.push_back(std::string(n, 'q'));
  strings.push_back("007");   // not the canonical text of an int: stays a string
  strings.push_back("-0");
  strings.push_back("12a");
  for (const std::string& s : strings) lp.Append(s);
  ASSERT_TRUE(Listpack::Validate(lp.bytes()).ok());
  EXPECT_EQ(Elements(lp), strings);
  std::vector<std::string> backwards;
  for (size_t p = lp.Last(); p != Listpack::kEnd; p = lp.Prev(p)) backwards.insert(backwards.begin(), lp.Get(p).ToString());
  EXPECT_EQ(backwards, strings);
}

TEST(ListpackTest, SeekFindInsertReplaceDelete) {
  Listpack lp;
  for (const char* s : {"f1", "v1", "f2", "2", "f3", "v3"}) lp.Append(s);
  EXPECT_EQ(lp.Get(lp.Seek(0)).ToString(), "f1");
  EXPECT_EQ(lp.Get(lp.Seek(-1)).ToString(), "v3");
  EXPECT_EQ(lp.Get(lp.Seek(3)).int_value, 2);
  EXPECT_EQ(lp.Seek(6), Listpack::kEnd);
  EXPECT_EQ(lp.Seek(-7), Listpack::kEnd);
  // Fields only (skip the values): "2" is a value, not a field.
  EXPECT_EQ(lp.Find(lp.First(), "2", 1), Listpack::kEnd);
  const size_t f2 = lp.Find(lp.First(), "f2", 1);
  ASSERT_NE(f2, Listpack::kEnd);
  EXPECT_TRUE(lp.Get(lp.Next(f2)).Equals("2"));
  lp.Replace(lp.Next(f2), std::string(300, 'z'));  // grows the entry and its back-length
  EXPECT_EQ(lp.Get(lp.Seek(3)).ToString(), std::string(300, 'z'));
  lp.InsertBefore(lp.Seek(0), "head");
  lp.Prepend("first");
  EXPECT_EQ(lp.size(), 8u);
  EXPECT_EQ(lp.Get(lp.Seek(0)).ToString(), "first");
  lp.Delete(lp.Seek(2), 2);  // f1 v1
  EXPECT_EQ(Elements(lp), (std::vector<std::string>{"first", "head", "f2", std::string(300, 'z'), "f3", "v3"}));
  lp.DeleteRange(-2, 10);
  EXPECT_EQ(lp.size(), 4u);
  ASSERT_TRUE(Listpack::Validate(lp.bytes()).ok());
  lp.DeleteRange(0, 4);
  EXPECT_TRUE(lp.empty());
  EXPECT_EQ(lp.First(), Listpack::kEnd);
  EXPECT_EQ(lp.bytes(), Unhex("070000000000ff"));
}

TEST(ListpackTest, ValidateRefusesEveryCorruption) {
  Listpack lp;
  for (const std::string& s : kRedisFields) lp.Append(s);
  const std::string good(lp.bytes());
  for (size_t cut = 0; cut < good.size(); ++cut) {
    EXPECT_FALSE(Listpack::Validate(good.substr(0, cut)).ok()) << "truncated at " << cut;
  }
  std::mt19937 rng(7);
  int refused = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ (1 + rng() % 255));
    // A flipped byte inside a string's data is still a valid listpack; any
    // other change must be refused, and none may crash or read out of bounds.
    if (!Listpack::Validate(bad).ok()) ++refused;
  }
  EXPECT_GT(refused, 20);
}

// Found by tests/core/rdb_fuzz_test.cc: a listpack from a DUMP payload may
// hold decimal text as a string entry ("12" with the 6-bit string encoding)
// where ringkv and Redis would store an integer; a lookup of "12" must still
// find it, as Redis's lpFind does (a hash field was otherwise unreachable).
TEST(ListpackTest, FindMatchesNumericTextStoredAsAString) {
  // total 13, count 2: "12" as a 6-bit string, then the integer 7.
  const std::string bytes = Unhex("0d0000000200" "823132" "03" "07" "01" "ff");
  ASSERT_TRUE(Listpack::Validate(bytes).ok());
  Listpack lp = Listpack::FromBytes(bytes);
  EXPECT_EQ(lp.Find(lp.First(), "12"), lp.First());
  EXPECT_EQ(lp.Find(lp.First(), "7"), lp.Next(lp.First()));
  EXPECT_EQ(lp.Find(lp.First(), "13"), Listpack::kEnd);
}

TEST(ListpackTest, LargeCountsUseTheUnknownMarker) {
  Listpack lp;
  for (int i = 0; i < 70000; ++i) lp.AppendInt(i);
  EXPECT_EQ(lp.size(), 70000u);
  EXPECT_EQ(static_cast<uint8_t>(lp.bytes()[4]), 0xFF);  // 65535: "count the entries"
  EXPECT_EQ(static_cast<uint8_t>(lp.bytes()[5]), 0xFF);
  ASSERT_TRUE(Listpack::Validate(lp.bytes()).ok());
  Listpack read = Listpack::FromBytes(std::string(lp.bytes()));
  EXPECT_EQ(read.size(), 70000u);
  EXPECT_EQ(read.Get(read.Seek(69999)).int_value, 69999);
}


// An exact listpack (a stream's sealed node) keeps its bytes at their size
// rounded to 8 through every change, copy and move, and its element count
// beside the storage bit.
TEST(ListpackTest, ExactStorageSurvivesChangesCopiesAndMoves) {
  Listpack lp;
  for (int i = 0; i < 40; ++i) lp.Append("value-" + std::to_string(i));
  const std::vector<std::string> before = Elements(lp);
  EXPECT_FALSE(lp.exact());
  lp.MakeExact();
  ASSERT_TRUE(lp.exact());
  EXPECT_EQ(Elements(lp), before);
  EXPECT_EQ(lp.size(), 40u);
  EXPECT_EQ(lp.capacity(), ExactSizeSlabs::RoundUp(lp.byte_size()));
  lp.ReplaceInt(lp.First(), 1000);  // grows the entry: the bytes move
  lp.Replace(lp.Seek(5), "x");
  lp.Delete(lp.Seek(10), 3);
  lp.Append("tail");
  EXPECT_TRUE(lp.exact());
  EXPECT_EQ(lp.size(), 38u);
  EXPECT_EQ(lp.capacity(), ExactSizeSlabs::RoundUp(lp.byte_size()));
  ASSERT_TRUE(Listpack::Validate(lp.bytes()).ok());
  const std::vector<std::string> after = Elements(lp);
  EXPECT_EQ(after.front(), "1000");
  EXPECT_EQ(after.back(), "tail");

  Listpack copy(lp);
  EXPECT_TRUE(copy.exact());
  EXPECT_EQ(Elements(copy), after);
  Listpack plain;
  plain.Append("a");
  copy = plain;  // takes plain's storage kind
  EXPECT_FALSE(copy.exact());
  EXPECT_EQ(Elements(copy), std::vector<std::string>{"a"});
  plain = lp;
  EXPECT_TRUE(plain.exact());
  EXPECT_EQ(Elements(plain), after);
  Listpack moved(std::move(lp));
  EXPECT_TRUE(moved.exact());
  EXPECT_EQ(Elements(moved), after);
  moved.Delete(moved.First(), moved.size());
  EXPECT_TRUE(moved.empty());
  EXPECT_TRUE(Listpack::Validate(moved.bytes()).ok());
}

}  // namespace
}  // namespace ringkv::core

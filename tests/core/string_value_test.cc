#include "core/string_value.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/string_ops.h"
#include "core/value.h"

namespace ringkv::core {
namespace {

TEST(StringValueTest, EncodingsFollowRedisRules) {
  EXPECT_EQ(StringValue("12345").encoding(), StringEncoding::kInt);
  EXPECT_EQ(StringValue("-9223372036854775808").encoding(), StringEncoding::kInt);
  EXPECT_EQ(StringValue("9223372036854775808").encoding(), StringEncoding::kEmbstr);  // overflows int64
  EXPECT_EQ(StringValue("012").encoding(), StringEncoding::kEmbstr);                  // not canonical
  EXPECT_EQ(StringValue(" 1").encoding(), StringEncoding::kEmbstr);
  EXPECT_EQ(StringValue(std::string(44, 'a')).encoding(), StringEncoding::kEmbstr);
  EXPECT_EQ(StringValue(std::string(45, 'a')).encoding(), StringEncoding::kRaw);
}

// COPY's clone keeps the encoding, as Redis's dupStringObject does: a text
// that reads as a number (INCRBYFLOAT's "3") is not int-encoded by the copy.
TEST(StringValueTest, CloneKeepsTheEncoding) {
  for (StringEncoding want : {StringEncoding::kInt, StringEncoding::kEmbstr, StringEncoding::kRaw}) {
    Value v(want == StringEncoding::kInt ? StringValue::FromInt(3)
            : want == StringEncoding::kEmbstr ? StringValue::Text("3")
                                              : StringValue::Raw("3"));
    ASSERT_EQ(v.str().encoding(), want);
    Value copy = v.Clone();
    EXPECT_EQ(copy.str().encoding(), want);
    EXPECT_EQ(copy.str().ToString(), "3");
  }
}

// OBJECT REFCOUNT: a small integer is Redis's shared object (INT_MAX), except
// COPY's copy, which Redis duplicates (refcount 1); a move keeps the mark, a
// new value of the key drops it.
TEST(StringValueTest, ACopiedSmallIntegerIsNotTheSharedOne) {
  Value v(StringValue::FromInt(10));
  EXPECT_EQ(v.redis_refcount(), 2147483647);
  EXPECT_EQ(v.Clone().redis_refcount(), 2147483647);  // DEBUG RELOAD's copies stay shared
  Value copy = v.CopyForCopyCommand();
  EXPECT_EQ(copy.redis_refcount(), 1);
  EXPECT_EQ(copy.str().encoding(), StringEncoding::kInt);
  EXPECT_EQ(copy.str().ToString(), "10");
  EXPECT_EQ(copy.str().size(), 2u);
  Value moved(std::move(copy));
  EXPECT_EQ(moved.redis_refcount(), 1);
  Value other(StringValue("11"));
  other = std::move(moved);
  EXPECT_EQ(other.redis_refcount(), 1);
  other.str().Assign("10");
  EXPECT_EQ(other.redis_refcount(), 2147483647);
  EXPECT_EQ(Value(StringValue::FromInt(12345)).CopyForCopyCommand().redis_refcount(), 1);
  EXPECT_EQ(Value(StringValue::Text("abc")).CopyForCopyCommand().str().encoding(), StringEncoding::kEmbstr);
}

// Redis's string2ll: canonical decimal integers in int64's range only.
TEST(StringValueTest, StringToInt64TakesCanonicalIntegersInRange) {
  int64_t v = 7;
  EXPECT_TRUE(StringToInt64("0", &v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(StringToInt64("10", &v));
  EXPECT_EQ(v, 10);
  EXPECT_TRUE(StringToInt64("-1", &v));
  EXPECT_EQ(v, -1);
  EXPECT_TRUE(StringToInt64("9223372036854775807", &v));
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_TRUE(StringToInt64("-9223372036854775808", &v));
  EXPECT_EQ(v, INT64_MIN);
  for (const char* bad : {"", "-", "-0", "01", "+1", " 1", "1 ", "1a", "a", "1.0", "9223372036854775808",
                          "-9223372036854775809", "18446744073709551615", "18446744073709551616",
                          "99999999999999999999", "-99999999999999999999", "123456789012345678901"}) {
    v = 7;
    EXPECT_FALSE(StringToInt64(bad, &v)) << bad;
    EXPECT_EQ(v, 7) << bad;
  }
}

TEST(StringValueTest, RoundTripsAllRepresentations) {
  for (std::string s : {std::string(""), std::string("x"), std::string(15, 'i'), std::string(16, 'h'),
                        std::string(100, 'r'), std::string("-17"), std::string("0")}) {
    StringValue v(s);
    EXPECT_EQ(v.ToString(), s);
    EXPECT_EQ(v.size(), s.size());
    StringValue moved(std::move(v));
    EXPECT_EQ(moved.ToString(), s);
  }
}

TEST(StringValueTest, AppendAndSetRangeMakeRaw) {
  StringValue v("10");
  v.Append("abc");
  EXPECT_EQ(v.encoding(), StringEncoding::kRaw);
  EXPECT_EQ(v.ToString(), "10abc");
  v.SetRange(7, "Z");
  EXPECT_EQ(v.ToString(), std::string("10abc\0\0Z", 8));
  for (int i = 0; i < 1000; ++i) v.Append("y");
  EXPECT_EQ(v.size(), 1008u);
}

// A string made at its size from "" (SETRANGE / SETBIT of a new key) holds
// exactly that, as Redis's sdsnewlen; growing again is geometric (APPEND).
TEST(StringValueTest, AStringMadeFromEmptyIsExactAndGrowsGeometrically) {
  StringValue v = StringValue::Raw("");
  v.SetRange(100000, "x");
  EXPECT_EQ(v.size(), 100001u);
  EXPECT_EQ(v.heap_bytes(), 100001u);  // was 200,002: twice the 50 x 100 KB of unit/maxmemory's set-up
  v.Append("y");
  EXPECT_GE(v.heap_bytes(), 2 * 100002u);  // amortized: the next APPENDs fit
  StringValue bits = StringValue::Raw("");
  bits.MutableBytes(5000);  // SETBIT 39999 of a new key
  EXPECT_EQ(bits.heap_bytes(), 5000u);
}

// Assign gives what a fresh StringValue(s) gives -- bytes, encoding,
// integer or not -- whatever the value held, and reuses the heap buffer
// only when s fits it closely.
TEST(StringValueTest, AssignIsAFreshValueReusingACloseBuffer) {
  const std::vector<std::string> values = {"", "x", "123", "-7", "0", "012", std::string(15, 'i'),
                                           std::string(16, 'h'), "1234567890123456", "12345678901234567890",
                                           std::string(40, 'e'), std::string(44, 'e'), std::string(45, 'r'),
                                           std::string(50, 'r'), std::string(64, 'v'), std::string(1000, 'b')};
  for (const std::string& before : values) {
    for (const std::string& after : values) {
      StringValue v(before);
      v.Assign(after);
      const StringValue fresh(after);
      EXPECT_EQ(v.ToString(), after) << before << " -> " << after;
      EXPECT_EQ(v.encoding(), fresh.encoding()) << before << " -> " << after;
      EXPECT_EQ(v.is_int(), fresh.is_int()) << before << " -> " << after;
      EXPECT_EQ(v.size(), after.size());
    }
  }
  char scratch[24];
  StringValue v(std::string(64, 'a'));
  const char* buffer = v.View(scratch).data();
  v.Assign(std::string(64, 'b'));  // the same size: in place
  EXPECT_EQ(v.View(scratch).data(), buffer);
  v.Assign(std::string(57, 'c'));  // 7 bytes of slack, under an eighth of 57: in place
  EXPECT_EQ(v.View(scratch).data(), buffer);
  EXPECT_EQ(v.heap_bytes(), 64u);
  v.Assign(std::string(56, 'd'));  // 8 bytes of slack, over an eighth of 56: a new buffer
  EXPECT_EQ(v.ToString(), std::string(56, 'd'));
  EXPECT_EQ(v.heap_bytes(), 56u);
  v.Assign(std::string(57, 'e'));  // larger than the buffer: a new one
  EXPECT_EQ(v.ToString(), std::string(57, 'e'));
  EXPECT_EQ(v.heap_bytes(), 57u);
  StringValue raw = StringValue::Raw(std::string(20, 'r'));  // raw, under 45 bytes
  raw.Assign(std::string(20, 's'));
  EXPECT_EQ(raw.encoding(), StringEncoding::kEmbstr);  // as SET makes it
}

// A value with slot room, as a keyspace node gives one: the room follows
// the value in memory.
struct RoomySlot {
  StringValue value;
  char room[8 * StringValue::kMaxSlotWords];
  explicit RoomySlot(size_t words) { value.set_slot_words(words); }
};

TEST(StringValueTest, SlotRoomKeepsLongerStringsInline) {
  RoomySlot slot(2);  // 16 + 16 bytes inline
  char scratch[24];
  EXPECT_EQ(slot.value.inline_capacity(), 32u);
  slot.value.Assign(std::string(32, 'x'));
  EXPECT_EQ(slot.value.View(scratch), std::string(32, 'x'));
  EXPECT_EQ(slot.value.View(scratch).data(), reinterpret_cast<const char*>(&slot.value) + 8);
  EXPECT_EQ(slot.value.heap_bytes(), 0u);
  EXPECT_EQ(slot.value.encoding(), StringEncoding::kEmbstr);
  slot.value.Assign(std::string(33, 'y'));  // past the room: the heap
  EXPECT_EQ(slot.value.ToString(), std::string(33, 'y'));
  EXPECT_EQ(slot.value.heap_bytes(), 33u);
  slot.value.Assign(std::string(20, 'z'));  // back into the room
  EXPECT_EQ(slot.value.ToString(), std::string(20, 'z'));
  EXPECT_EQ(slot.value.heap_bytes(), 0u);
  slot.value.Assign("12345678901234567");  // an integer: no bytes at all
  EXPECT_TRUE(slot.value.is_int());
  EXPECT_EQ(slot.value.slot_words(), 2u);  // the room stays the slot's
  StringValue plain(std::string(17, 'p'));  // no room: 17 bytes go to the heap
  EXPECT_EQ(plain.heap_bytes(), 17u);
  EXPECT_EQ(StringValue(std::string(16, 'q')).heap_bytes(), 0u);
}

TEST(StringValueTest, MovesKeepEachSidesRoomAndHostBytes) {
  RoomySlot slot(3);
  slot.value.host_bytes()[0] = 0xAB;
  slot.value.host_bytes()[4] = 0xCD;
  slot.value.Assign(std::string(40, 'a'));
  // Out of the slot: the bytes go to the heap of a value without room, and
  // the new value's host bytes are its own (zero).
  StringValue out = std::move(slot.value);
  EXPECT_EQ(out.ToString(), std::string(40, 'a'));
  EXPECT_EQ(out.heap_bytes(), 40u);
  EXPECT_EQ(out.slot_words(), 0u);
  EXPECT_EQ(out.host_bytes()[0], 0);
  EXPECT_EQ(slot.value.host_bytes()[0], 0xAB);  // left with the slot
  EXPECT_EQ(slot.value.host_bytes()[4], 0xCD);
  EXPECT_EQ(slot.value.slot_words(), 3u);
  // Back in: the slot takes the bytes out of the heap buffer.
  slot.value = std::move(out);
  EXPECT_EQ(slot.value.ToString(), std::string(40, 'a'));
  EXPECT_EQ(slot.value.heap_bytes(), 0u);
  EXPECT_EQ(slot.value.host_bytes()[0], 0xAB);
  EXPECT_EQ(slot.value.slot_words(), 3u);
  // A string the room cannot hold stays on the heap, its buffer moved.
  StringValue big(std::string(100, 'b'));
  char scratch[24];
  const char* buffer = big.View(scratch).data();
  slot.value = std::move(big);
  EXPECT_EQ(slot.value.View(scratch).data(), buffer);
  EXPECT_EQ(slot.value.host_bytes()[4], 0xCD);
  // An assignment of a view of the value's own bytes.
  slot.value.Assign(std::string(30, 'c'));
  const std::string_view own = slot.value.View(scratch);
  slot.value.Assign(own.substr(2, 25));
  EXPECT_EQ(slot.value.ToString(), std::string(25, 'c'));
}

// An integer stored over a long inline string, then moved out of its slot
// and into another: still that integer (a stale inline length once sent it
// down the long-string path, and RENAME returned a pointer as the number).
TEST(StringValueTest, AnIntegerOverARoomyStringMovesAsAnInteger) {
  RoomySlot slot(2);
  slot.value.Assign(std::string(30, 'x'));
  slot.value.Assign("7");
  ASSERT_TRUE(slot.value.is_int());
  StringValue out = std::move(slot.value);
  ASSERT_TRUE(out.is_int());
  EXPECT_EQ(out.int_value(), 7);
  EXPECT_EQ(out.heap_bytes(), 0u);
  RoomySlot other(2);
  other.value = std::move(out);
  ASSERT_TRUE(other.value.is_int());
  EXPECT_EQ(other.value.int_value(), 7);
  // The moved-from values are empty integers, and moving them again is too.
  StringValue again = std::move(slot.value);
  EXPECT_TRUE(again.is_int());
  EXPECT_EQ(again.int_value(), 0);
}

TEST(StringValueTest, SlotBytesForWhatSetStores) {
  EXPECT_EQ(StringValue::SlotBytesFor(std::string(16, 'a')), 0u);
  EXPECT_EQ(StringValue::SlotBytesFor(std::string(17, 'a')), 1u);
  EXPECT_EQ(StringValue::SlotBytesFor(std::string(72, 'a')), 56u);
  EXPECT_EQ(StringValue::SlotBytesFor(std::string(73, 'a')), 0u);  // the heap anyway
  EXPECT_EQ(StringValue::SlotBytesFor("12345678901234567890"), 4u);  // over INT64_MAX: a string
  EXPECT_EQ(StringValue::SlotBytesFor("-1234567890123456789"), 0u);    // an integer
  EXPECT_EQ(StringValue(std::string(30, 'a')).slot_bytes_wanted(), 14u);  // on the heap, wanting room
  EXPECT_EQ(StringValue::FromInt(5).slot_bytes_wanted(), 0u);
}

TEST(StringOpsTest, SliceRangeMatchesGetrange) {
  EXPECT_EQ(SliceRange("Hello World", 0, 4), "Hello");
  EXPECT_EQ(SliceRange("Hello World", -5, -1), "World");
  EXPECT_EQ(SliceRange("Hello World", -1, -5), "");
  EXPECT_EQ(SliceRange("Hello World", 5, 100), " World");
  EXPECT_EQ(SliceRange("Hello World", 20, 30), "");
  EXPECT_EQ(SliceRange("", 0, -1), "");
}

TEST(StringOpsTest, FormatLongDoubleLikeIncrbyfloat) {
  EXPECT_EQ(FormatLongDouble(10.5L), "10.5");
  EXPECT_EQ(FormatLongDouble(3.0L), "3");
  EXPECT_EQ(FormatLongDouble(-0.0L), "0");
  EXPECT_EQ(FormatLongDouble(5.0e3L), "5000");
}

// LCS as Redis 7.0 answers it: the documentation's example, matches from
// the end backwards, MINMATCHLEN filtering.
TEST(StringOpsTest, LcsFindsRedisExampleAndItsRanges) {
  LcsResult r = ComputeLcs("ohmytext", "mynewtext", /*want_ranges=*/true, 0);
  EXPECT_EQ(r.lcs, "mytext");
  EXPECT_EQ(r.length, 6u);
  ASSERT_EQ(r.matches.size(), 2u);
  EXPECT_EQ(std::vector<uint32_t>({r.matches[0].a_start, r.matches[0].a_end, r.matches[0].b_start,
                                   r.matches[0].b_end, r.matches[0].len}),
            std::vector<uint32_t>({4, 7, 5, 8, 4}));
  EXPECT_EQ(std::vector<uint32_t>({r.matches[1].a_start, r.matches[1].a_end, r.matches[1].b_start,
                                   r.matches[1].b_end, r.matches[1].len}),
            std::vector<uint32_t>({2, 3, 0, 1, 2}));
  EXPECT_EQ(ComputeLcs("ohmytext", "mynewtext", true, 4).matches.size(), 1u);
  EXPECT_EQ(ComputeLcs("", "abc", true, 0).lcs, "");
  EXPECT_EQ(ComputeLcs("abc", "", false, 0).length, 0u);
}

// Against an independent two-row count, on strings of a small alphabet
// (many ties): the same length, and a subsequence of both.
TEST(StringOpsTest, LcsLengthAndSubsequenceHoldOnRandomStrings) {
  uint32_t seed = 12345;
  auto next = [&] { return seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff; };
  auto is_subsequence = [](std::string_view sub, std::string_view s) {
    size_t k = 0;
    for (char c : s) k += k < sub.size() && sub[k] == c;
    return k == sub.size();
  };
  for (int round = 0; round < 200; ++round) {
    std::string a(next() % 60, 'a'), b(next() % 60, 'a');
    for (char& c : a) c = static_cast<char>('a' + next() % 3);
    for (char& c : b) c = static_cast<char>('a' + next() % 3);
    std::vector<uint32_t> prev(b.size() + 1, 0), cur(b.size() + 1, 0);
    for (char ca : a) {
      for (size_t j = 1; j <= b.size(); ++j) cur[j] = ca == b[j - 1] ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
      prev.swap(cur);
    }
    LcsResult r = ComputeLcs(a, b, true, 0);
    ASSERT_EQ(r.length, prev[b.size()]) << a << " " << b;
    ASSERT_EQ(r.lcs.size(), r.length);
    ASSERT_TRUE(is_subsequence(r.lcs, a) && is_subsequence(r.lcs, b)) << a << " " << b << " " << r.lcs;
  }
}

// Redis 7.0's LCS as it computes it (a table of every cell, the walk back
// reading it), the reference for the bit-parallel table: the same lcs, the
// same ranges in the same order, where ties make many paths possible.
LcsResult RedisTableLcs(std::string_view a, std::string_view b) {
  const size_t alen = a.size(), blen = b.size();
  std::vector<std::vector<uint32_t>> dp(alen + 1, std::vector<uint32_t>(blen + 1, 0));
  for (size_t i = 1; i <= alen; ++i) {
    for (size_t j = 1; j <= blen; ++j) {
      dp[i][j] = a[i - 1] == b[j - 1] ? dp[i - 1][j - 1] + 1 : std::max(dp[i - 1][j], dp[i][j - 1]);
    }
  }
  LcsResult r;
  r.length = dp[alen][blen];
  r.lcs.assign(r.length, '\0');
  size_t idx = r.length, i = alen, j = blen;
  uint32_t as = static_cast<uint32_t>(alen), ae = 0, bs = 0, be = 0;
  while (i > 0 && j > 0) {
    bool emit = false;
    if (a[i - 1] == b[j - 1]) {
      r.lcs[--idx] = a[i - 1];
      if (as == alen) {
        as = ae = static_cast<uint32_t>(i - 1);
        bs = be = static_cast<uint32_t>(j - 1);
      } else if (as == i && bs == j) {
        --as;
        --bs;
      } else {
        emit = true;
      }
      emit = emit || as == 0 || bs == 0;
      --i;
      --j;
    } else {
      if (dp[i - 1][j] > dp[i][j - 1]) {
        --i;
      } else {
        --j;
      }
      emit = as != alen;
    }
    if (emit) {
      r.matches.push_back({as, ae, bs, be, ae - as + 1});
      as = static_cast<uint32_t>(alen);
    }
  }
  return r;
}

// Lengths on both sides of 64-bit words (the rows' carries cross them) and
// alphabets of 2 to 256 characters, against the reference above.
TEST(StringOpsTest, LcsBitRowsGiveRedisTablesAnswer) {
  uint32_t seed = 777;
  auto next = [&] { return seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff; };
  const size_t lengths[] = {0, 1, 2, 63, 64, 65, 127, 128, 129, 200};
  for (int round = 0; round < 300; ++round) {
    const uint32_t alphabet = round % 3 == 0 ? 2 : round % 3 == 1 ? 4 : 256;
    std::string a(lengths[next() % 10], 'a'), b(lengths[next() % 10], 'a');
    for (char& c : a) c = static_cast<char>(next() % alphabet);
    for (char& c : b) c = static_cast<char>(next() % alphabet);
    const LcsResult want = RedisTableLcs(a, b);
    const LcsResult got = ComputeLcs(a, b, /*want_ranges=*/true, 0);
    ASSERT_EQ(got.length, want.length) << round;
    ASSERT_EQ(LcsLength(a, b), want.length) << round;
    ASSERT_EQ(got.lcs, want.lcs) << round;
    ASSERT_EQ(got.matches.size(), want.matches.size()) << round;
    for (size_t k = 0; k < want.matches.size(); ++k) {
      const LcsMatch &g = got.matches[k], &w = want.matches[k];
      ASSERT_EQ(std::vector<uint32_t>({g.a_start, g.a_end, g.b_start, g.b_end, g.len}),
                std::vector<uint32_t>({w.a_start, w.a_end, w.b_start, w.b_end, w.len}))
          << round << " match " << k;
    }
  }
}

}  // namespace
}  // namespace ringkv::core

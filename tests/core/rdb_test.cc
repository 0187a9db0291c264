// RDB writer and reader: round trips of every string encoding, expiry, idle
// and frequency metadata, several databases; corrupt and truncated input is
// refused with the offset; DUMP payloads match redis-server's bytes.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/crc64.h"
#include "core/legacy_encodings.h"
#include "core/list_value.h"
#include "core/listpack.h"
#include "core/dump_payload.h"
#include "core/rdb_format.h"
#include "core/rdb_reader.h"
#include "core/rdb_string.h"
#include "core/rdb_writer.h"

namespace ringkv::core {
namespace {

struct Loaded {
  std::string value;
  int64_t expire_ms;
  KeyMeta meta;
};

class Collector : public RdbVisitor {
 public:
  absl::Status OnAux(std::string_view key, std::string_view value) override {
    aux[std::string(key)] = std::string(value);
    return absl::OkStatus();
  }
  absl::Status OnEntry(int db, std::string key, Value value, int64_t expire_ms, KeyMeta meta) override {
    entries[{db, key}] = Loaded{value.is_string() ? value.str().ToString() : value.encoding_name(), expire_ms, meta};
    return absl::OkStatus();
  }
  std::map<std::string, std::string> aux;
  std::map<std::pair<int, std::string>, Loaded> entries;
};

std::string WriteSample(bool compress, bool checksum) {
  StringSink sink;
  RdbWriter w(&sink, compress, checksum);
  w.Header();
  w.Aux("redis-ver", "7.0.15");
  w.AuxInt("redis-bits", 64);
  w.SelectDb(0);
  w.ResizeDb(5, 1);
  w.Entry("int8", StringValue("-7"), -1);
  w.Entry("int32", StringValue("123456789"), -1);
  w.Entry("int64-as-text", StringValue("12345678901234"), -1);
  w.Entry("lzf", StringValue(std::string(200, 'a')), 1893456000000);
  w.Entry("raw", StringValue("hello world"), -1, KeyMeta{42, -1});
  w.SelectDb(3);
  w.ResizeDb(1, 0);
  w.Entry("other", StringValue("x"), -1, KeyMeta{-1, 17});
  EXPECT_TRUE(w.Finish().ok());
  return sink.data;
}

absl::Status Load(const std::string& data, Collector* c, int databases = 16) {
  MemorySource src(data);
  RdbLoadOptions o;
  o.databases = databases;
  return LoadRdb(&src, c, o);
}

TEST(Rdb, RoundTripsEveryStringEncoding) {
  for (bool compress : {true, false}) {
    Collector c;
    ASSERT_TRUE(Load(WriteSample(compress, true), &c).ok());
    EXPECT_EQ(c.aux["redis-ver"], "7.0.15");
    EXPECT_EQ(c.aux["redis-bits"], "64");
    ASSERT_EQ(c.entries.size(), 6u);
    EXPECT_EQ((c.entries[{0, "int8"}].value), "-7");
    EXPECT_EQ((c.entries[{0, "int32"}].value), "123456789");
    EXPECT_EQ((c.entries[{0, "int64-as-text"}].value), "12345678901234");
    EXPECT_EQ((c.entries[{0, "lzf"}].value), std::string(200, 'a'));
    EXPECT_EQ((c.entries[{0, "lzf"}].expire_ms), 1893456000000);
    EXPECT_EQ((c.entries[{0, "raw"}].expire_ms), -1);
    EXPECT_EQ((c.entries[{0, "raw"}].meta.idle_s), 42);
    EXPECT_EQ((c.entries[{3, "other"}].meta.freq), 17);
  }
}

TEST(Rdb, CompressionShrinksRepetitiveValues) {
  EXPECT_LT(WriteSample(true, true).size() + 150, WriteSample(false, true).size());
}

TEST(Rdb, ChecksumOffWritesZeroAndStillLoads) {
  std::string data = WriteSample(true, false);
  EXPECT_EQ(data.substr(data.size() - 8), std::string(8, '\0'));
  Collector c;
  EXPECT_TRUE(Load(data, &c).ok());
}

TEST(Rdb, EveryFlippedByteIsCaught) {
  const std::string good = WriteSample(true, true);
  // Flipping any byte of the body must fail: bad checksum or bad structure.
  for (size_t i = 9; i + 8 < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x5A;
    Collector c;
    EXPECT_FALSE(Load(bad, &c).ok()) << "byte " << i;
  }
}

TEST(Rdb, TruncationAnywhereIsRefusedWithTheOffset) {
  const std::string good = WriteSample(true, true);
  for (size_t n = 0; n < good.size(); ++n) {
    Collector c;
    absl::Status s = Load(good.substr(0, n), &c);
    ASSERT_FALSE(s.ok()) << "prefix of " << n << " bytes";
    if (n >= 9) {
      EXPECT_NE(std::string(s.message()).find("offset"), std::string::npos) << s.message();
    }
  }
}

TEST(Rdb, WrongChecksumMessage) {
  std::string data = WriteSample(true, true);
  data[data.size() - 1] ^= 1;
  Collector c;
  absl::Status s = Load(data, &c);
  EXPECT_NE(std::string(s.message()).find("Wrong RDB checksum"), std::string::npos) << s.message();
}

// A wrong checksum says so as Redis does ("RDB CRC error", the computed
// checksum expected, the file's got); DEBUG SET-SKIP-CHECKSUM-VALIDATION's
// switch lets the same file load.
TEST(Rdb, WrongChecksumIsACrcErrorUnlessSkipped) {
  std::string data = WriteSample(true, true);
  data.replace(data.size() - 8, 8, "foobar00");
  Collector c;
  absl::Status s = Load(data, &c);
  EXPECT_TRUE(absl::IsDataLoss(s));
  EXPECT_TRUE(std::string(s.message()).starts_with("RDB CRC error: Wrong RDB checksum expected: (")) << s.message();
  EXPECT_NE(std::string(s.message()).find(") but got (30307261626f6f66) at offset "), std::string::npos)
      << s.message();
  SetSkipChecksumValidation(true);
  Collector skipped;
  s = Load(data, &skipped);
  SetSkipChecksumValidation(false);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(skipped.entries.size(), 6u);
}

TEST(DumpPayload, SkippedChecksumStillValidatesTheContents) {
  std::string p = DumpPayload(StringValue("some value"), true);
  p.back() ^= 1;
  EXPECT_FALSE(ParseDumpPayload(p).ok());
  SetSkipChecksumValidation(true);
  absl::StatusOr<Value> v = ParseDumpPayload(p);
  std::string truncated = p;
  truncated.erase(2, 3);  // the string's length now runs past its bytes
  absl::StatusOr<Value> bad = ParseDumpPayload(truncated);
  SetSkipChecksumValidation(false);
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->str().ToString(), "some value");
  EXPECT_EQ(bad.status().message(), "Bad data format");
}

TEST(Rdb, RefusesNewerVersionsAndBadSignatures) {
  Collector c;
  EXPECT_EQ(Load("REDIS0011", &c).message(), "Can't handle RDB format version 11");
  EXPECT_EQ(Load("RUBIS0010", &c).message(), "Wrong signature trying to load DB from file");
  // Cut before the header's end: a short read, as Redis reports it.
  EXPECT_EQ(Load("REDIS", &c).message().rfind("Short read or unexpected end of file", 0), 0u) << Load("REDIS", &c).message();
  EXPECT_EQ(Load("", &c).message().rfind("Short read or unexpected end of file", 0), 0u);
}

TEST(Rdb, RefusesDatabasesOutOfRange) {
  Collector c;
  absl::Status s = Load(WriteSample(true, true), &c, /*databases=*/2);
  EXPECT_NE(std::string(s.message()).find("databases"), std::string::npos) << s.message();
}

TEST(Rdb, RefusesTypesRingkvDoesNotStoreByName) {
  // A module record: the loader names the type.
  std::string data("REDIS0010\xfe\x00\x07\x01k", 14);
  Collector c;
  absl::Status s = Load(data, &c);
  EXPECT_NE(std::string(s.message()).find("module"), std::string::npos) << s.message();
}

TEST(Rdb, LoadsOlderVersionsWithSecondExpiries) {
  // Version 3 had no checksum and 4-byte second expiries (0xFD).
  std::string data("REDIS0003\xfe\x00\xfd\x00\x00\x00\x70\x00\x01k\x01v\xff", 22);
  Collector c;
  ASSERT_TRUE(Load(data, &c).ok());
  EXPECT_EQ((c.entries[{0, "k"}].expire_ms), int64_t{0x70000000} * 1000);
  EXPECT_EQ((c.entries[{0, "k"}].value), "v");
}

TEST(DumpPayload, MatchesRedisBytes) {
  // redis-server 7.0.15: DUMP of "1" and of 100 x 'a'.
  EXPECT_EQ(DumpPayload(StringValue("1"), true), std::string("\x00\xc0\x01\x0a\x00\x26\x78\xe7\xb6\xd1\x01\x11\xfc", 13));
  EXPECT_EQ(DumpPayload(StringValue(std::string(100, 'a')), true),
            std::string("\x00\xc3\x09\x40\x64\x01\x61\x61\xe0\x57\x00\x01\x61\x61\x0a\x00"
                        "\xe8\xa3\xb5\x07\xb0\x6d\xf2\x71", 24));
}

TEST(DumpPayload, RoundTripsAndRejectsDamage) {
  std::string p = DumpPayload(StringValue("some value"), true);
  absl::StatusOr<Value> v = ParseDumpPayload(p);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->str().ToString(), "some value");
  std::string bad = p;
  bad[3] ^= 1;
  EXPECT_EQ(ParseDumpPayload(bad).status().message(), "DUMP payload version or checksum are wrong");
  std::string newer = p;
  newer[p.size() - 10] = 11;  // version 11
  EXPECT_EQ(ParseDumpPayload(newer).status().message(), "DUMP payload version or checksum are wrong");
  EXPECT_FALSE(ParseDumpPayload("x").ok());
}

// Every collection type in every encoding Redis 7.0 writes survives a
// write and a load byte for byte (the loader keeps the encoding when the
// limits allow it) and keeps its OBJECT ENCODING.
class ValueCollector : public RdbVisitor {
 public:
  absl::Status OnEntry(int, std::string key, Value value, int64_t, KeyMeta) override {
    values.emplace(std::move(key), std::move(value));
    return absl::OkStatus();
  }
  std::map<std::string, Value> values;
};

std::map<std::string, Value> SampleCollections() {
  std::map<std::string, Value> out;
  CollectionLimits limits;
  HashValue small_hash;
  small_hash.Set("f", "v", limits.hash);
  small_hash.Set("n", "12", limits.hash);
  out.emplace("hash-listpack", Value(std::move(small_hash)));
  HashValue big_hash;
  for (int i = 0; i < 600; ++i) big_hash.Set("f" + std::to_string(i), std::to_string(i), limits.hash);
  out.emplace("hash-table", Value(std::move(big_hash)));
  SetValue ints = SetValue::ForFirstMember("1");
  for (int i = 0; i < 10; ++i) ints.Add(std::to_string(i * 1000), limits.set);
  out.emplace("set-intset", Value(std::move(ints)));
  SetValue words = SetValue::ForFirstMember("a");
  for (int i = 0; i < 10; ++i) words.Add("w" + std::to_string(i), limits.set);
  out.emplace("set-table", Value(std::move(words)));
  double unused;
  ZSetValue small_z;
  small_z.Add("a", 1.5, ZAddFlags{}, limits.zset, &unused);
  small_z.Add("b", -3, ZAddFlags{}, limits.zset, &unused);
  out.emplace("zset-listpack", Value(std::move(small_z)));
  ZSetValue big_z;
  for (int i = 0; i < 300; ++i) big_z.Add("m" + std::to_string(i), i * 0.5, ZAddFlags{}, limits.zset, &unused);
  out.emplace("zset-skiplist", Value(std::move(big_z)));
  auto list = std::make_unique<ListValue>(ListLimits{4, 0});
  for (int i = 0; i < 11; ++i) list->PushBack(i % 2 ? std::to_string(i) : "e" + std::to_string(i));
  out.emplace("list", Value(std::move(list)));
  return out;
}

TEST(Rdb, RoundTripsEveryCollectionEncoding) {
  std::map<std::string, Value> sample = SampleCollections();
  for (bool compress : {false, true}) {
    StringSink sink;
    RdbWriter w(&sink, compress, true);
    w.Header();
    w.SelectDb(0);
    for (const auto& [key, value] : sample) w.Entry(key, value, -1);
    ASSERT_TRUE(w.Finish().ok());
    ValueCollector c;
    MemorySource src(sink.data);
    RdbLoadOptions o;
    o.limits.list = ListLimits{4, 0};
    ASSERT_TRUE(LoadRdb(&src, &c, o).ok());
    ASSERT_EQ(c.values.size(), sample.size());
    for (const auto& [key, value] : sample) {
      const Value& loaded = c.values.at(key);
      EXPECT_EQ(loaded.type(), value.type()) << key;
      EXPECT_STREQ(loaded.encoding_name(), value.encoding_name()) << key;
      std::string a, b;
      RdbAppendValue(value, compress, &a);
      RdbAppendValue(loaded, compress, &b);
      // Table encodings may iterate in another order after a reload; their
      // sizes must still agree, packed encodings must be identical.
      if (key.find("table") == std::string::npos) {
        EXPECT_EQ(a, b) << key;
      } else {
        EXPECT_EQ(a.size(), b.size()) << key;
      }
    }
  }
}

TEST(Rdb, LoadConvertsWhatTheLimitsNoLongerAllow) {
  std::map<std::string, Value> sample = SampleCollections();
  StringSink sink;
  RdbWriter w(&sink, false, true);
  w.Header();
  w.SelectDb(0);
  w.Entry("hash-listpack", sample.at("hash-listpack"), -1);
  w.Entry("set-intset", sample.at("set-intset"), -1);
  w.Entry("zset-listpack", sample.at("zset-listpack"), -1);
  ASSERT_TRUE(w.Finish().ok());
  ValueCollector c;
  MemorySource src(sink.data);
  RdbLoadOptions o;
  o.limits.hash.max_listpack_entries = 1;
  o.limits.set.max_intset_entries = 2;
  o.limits.zset.max_listpack_entries = 1;
  ASSERT_TRUE(LoadRdb(&src, &c, o).ok());
  EXPECT_STREQ(c.values.at("hash-listpack").encoding_name(), "hashtable");
  EXPECT_STREQ(c.values.at("set-intset").encoding_name(), "hashtable");
  EXPECT_STREQ(c.values.at("zset-listpack").encoding_name(), "skiplist");
}

TEST(Rdb, EmptyCollectionsAreSkippedAndDuplicatesRefused) {
  // A hash record with zero pairs is skipped (as Redis does); the key
  // after it still loads.
  std::string empty = std::string("REDIS0010\xfe\x00\x04\x01h\x00\x00\x01k\x01v\xff", 21) + std::string(8, '\0');
  ValueCollector c;
  MemorySource src(empty);
  ASSERT_TRUE(LoadRdb(&src, &c, RdbLoadOptions{}).ok());
  EXPECT_EQ(c.values.count("h"), 0u);
  EXPECT_EQ(c.values.count("k"), 1u);
  // A set record listing a member twice is refused.
  std::string dup = std::string("REDIS0010\xfe\x00\x02\x01s\x02\x01" "a\x01" "a\xff", 20) + std::string(8, '\0');
  ValueCollector d;
  MemorySource src2(dup);
  absl::Status s = LoadRdb(&src2, &d, RdbLoadOptions{});
  EXPECT_NE(std::string(s.message()).find("Duplicate"), std::string::npos) << s.message();
}

TEST(Rdb, LegacyZiplistHashLoadsAsAListpack) {
  // A Redis 6 hash ziplist: zlbytes 23, tail at 18, 4 entries "a" "1" "b" 300.
  std::string zl("\x17\x00\x00\x00\x12\x00\x00\x00\x04\x00"
                 "\x00\x01" "a\x03\xf2\x02\x01" "b\x03\xc0\x2c\x01\xff", 23);
  std::string data = std::string("REDIS0009\xfe\x00\x0d\x01h", 14) + static_cast<char>(zl.size()) + zl + "\xff" + std::string(8, '\0');
  ValueCollector c;
  MemorySource src(data);
  ASSERT_TRUE(LoadRdb(&src, &c, RdbLoadOptions{}).ok());
  const HashValue& h = c.values.at("h").hash();
  std::string v;
  ASSERT_TRUE(h.Get("a", &v));
  EXPECT_EQ(v, "1");
  ASSERT_TRUE(h.Get("b", &v));
  EXPECT_EQ(v, "300");
  EXPECT_STREQ(h.encoding_name(), "listpack");
}

// Legacy ziplists are checked as Redis's deep ziplistValidateIntegrity does:
// every prevlen, the tail offset and the entry count must agree with the
// entries, and nothing may follow an early terminator.
TEST(LegacyEncodings, ZiplistIsValidatedDeeply) {
  // zlbytes 17, tail 14, 2 entries: "ab" (prevlen 0) and the immediate 5 (prevlen 4).
  const std::string good("\x11\x00\x00\x00\x0e\x00\x00\x00\x02\x00"
                         "\x00\x02" "ab" "\x04\xf6" "\xff",
                         17);
  absl::StatusOr<std::vector<std::string>> items = DecodeZiplist(good);
  ASSERT_TRUE(items.ok()) << items.status().message();
  EXPECT_EQ(*items, (std::vector<std::string>{"ab", "5"}));
  auto with = [&good](size_t at, char byte) {
    std::string z = good;
    z[at] = byte;
    return z;
  };
  std::string uncounted = good;
  uncounted[8] = uncounted[9] = '\xff';
  EXPECT_TRUE(DecodeZiplist(uncounted).ok());  // count 0xFFFF: too many to count, not checked
  EXPECT_FALSE(DecodeZiplist(with(14, '\x03')).ok());  // prevlen says 3, the entry before is 4 bytes
  EXPECT_FALSE(DecodeZiplist(with(10, '\x01')).ok());  // the first entry has no entry before it
  EXPECT_FALSE(DecodeZiplist(with(8, '\x03')).ok());   // count 3 for 2 entries
  EXPECT_FALSE(DecodeZiplist(with(4, '\x0a')).ok());   // tail names the first entry, not the last
  EXPECT_FALSE(DecodeZiplist(with(4, '\x11')).ok());   // tail beyond the terminator
  EXPECT_FALSE(DecodeZiplist(with(14, '\xff')).ok());  // a terminator before the end
  const std::string empty("\x0b\x00\x00\x00\x0a\x00\x00\x00\x00\x00\xff", 11);
  EXPECT_TRUE(DecodeZiplist(empty).ok());  // an empty ziplist is well formed (an empty key)
}

TEST(LegacyEncodings, ZipmapMustHoldEntriesAndCountThem) {
  const std::string one("\x01\x01" "a" "\x01\x00" "b" "\xff", 7);
  absl::StatusOr<std::vector<std::string>> items = DecodeZipmap(one);
  ASSERT_TRUE(items.ok()) << items.status().message();
  EXPECT_EQ(*items, (std::vector<std::string>{"a", "b"}));
  std::string uncounted = one;
  uncounted[0] = '\xfe';
  EXPECT_TRUE(DecodeZipmap(uncounted).ok());
  std::string miscounted = one;
  miscounted[0] = '\x02';
  EXPECT_FALSE(DecodeZipmap(miscounted).ok());
  EXPECT_FALSE(DecodeZipmap(std::string("\x00\xff", 2)).ok());  // empty: malformed, as in Redis
}

// Malformed packed values are refused with Redis's words for them.
TEST(DumpPayload, CorruptPackedValuesNameTheIntegrityCheck) {
  // Redis's corrupt-dump test "quicklist small ziplist prev len" (a valid CRC).
  const std::string payload(
      "\x0E\x01\x13\x13\x00\x00\x00\x0E\x00\x00\x00\x02\x00\x00\x02\x61\x00\x02\x02\x62\x00\xFF\x09\x00\xC7\x71"
      "\x03\x97\x07\x75\xB0\x63",
      32);
  std::string reason;
  absl::StatusOr<Value> v = ParseDumpPayload(payload, {}, &reason);
  EXPECT_EQ(v.status().message(), "Bad data format");
  EXPECT_TRUE(reason.starts_with("Ziplist integrity check failed: bad ziplist prevlen")) << reason;
}

// Regressions found by tests/core/rdb_fuzz_test.cc.

std::string WithCrc(std::string body) {
  body.push_back(static_cast<char>(rdb::kVersion));
  body.push_back('\0');
  const uint64_t crc = Crc64(0, body);
  for (int i = 0; i < 8; ++i) body.push_back(static_cast<char>((crc >> (8 * i)) & 0xFF));
  return body;
}

// A hash listpack whose field "0" is the 6-bit string "0", not an integer:
// loaded, and the field is found (it was unreachable: HGET missed it).
TEST(DumpPayload, NumericTextInAListpackIsFound) {
  // total 13, count 2: "0" (string) -> "v".
  const std::string lp("\x0d\x00\x00\x00\x02\x00\x81\x30\x02\x81v\x02\xff", 13);
  std::string body(1, static_cast<char>(rdb::kTypeHashListpack));
  body.push_back(static_cast<char>(lp.size()));
  body += lp;
  absl::StatusOr<Value> v = ParseDumpPayload(WithCrc(body));
  ASSERT_TRUE(v.ok()) << v.status().message();
  std::string value;
  ASSERT_TRUE(v->hash().Get("0", &value));
  EXPECT_EQ(value, "v");
}

// An LZF string declaring 4 GB of output for 2 compressed bytes is refused
// before anything is allocated (LZF expands at most 88 times).
TEST(DumpPayload, LzfLengthBeyondWhatItsInputCanExpandToIsRefused) {
  std::string body(1, static_cast<char>(rdb::kTypeString));
  body += "\xc3\x02\x80\xff\xff\xff\xff";  // LZF, clen 2, len 2^32 - 1
  body += std::string("\x00" "a", 2);
  std::string reason;
  EXPECT_EQ(ParseDumpPayload(WithCrc(body), {}, &reason).status().message(), "Bad data format");
  EXPECT_TRUE(reason.starts_with("Invalid LZF length")) << reason;
  // The bound is no tighter than LZF itself: the most compressible input
  // still loads.
  const std::string ones(1 << 20, 'a');
  absl::StatusOr<Value> v = ParseDumpPayload(DumpPayload(StringValue(ones), true));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->str().ToString(), ones);
}

// A listpack zset score longer than ZSetValue reads (63 bytes) would be
// ordered by one value and read back as another: refused.
TEST(DumpPayload, OverlongListpackScoreIsRefused) {
  const std::string score = "1" + std::string(70, '0');  // 1e70 in 71 bytes
  Listpack lp;
  lp.Append("m");
  lp.Append(score);
  std::string body(1, static_cast<char>(rdb::kTypeZsetListpack));
  RdbAppendLength(lp.bytes().size(), &body);
  body += lp.bytes();
  std::string reason;
  EXPECT_EQ(ParseDumpPayload(WithCrc(body), {}, &reason).status().message(), "Bad data format");
  EXPECT_NE(reason.find("an invalid score"), std::string::npos) << reason;
}

// A listpack hash naming a field twice is refused in Redis's words (its
// log says "listpack with dup elements"; its test greps that).
TEST(DumpPayload, DuplicateListpackFieldsAreNamedAsRedisNamesThem) {
  // Redis's corrupt-dump test "hash listpack with duplicate records": a b a d.
  const std::string payload("\x10\x17\x17\x00\x00\x00\x04\x00\x82\x61\x00\x03\x82\x62\x00\x03\x82\x61\x00\x03"
                            "\x82\x64\x00\x03\xff\x0a\x00\xc0\xcf\xa6\x87\xe5\xa7\xc5\xbe",
                            35);
  std::string reason;
  SetSkipChecksumValidation(true);  // as the test does: its CRC is not the payload's
  EXPECT_EQ(ParseDumpPayload(payload, {}, &reason).status().message(), "Bad data format");
  SetSkipChecksumValidation(false);
  EXPECT_EQ(reason.rfind("Hash listpack integrity check failed: listpack with dup elements", 0), 0u) << reason;
}

// RESIZEDB is a hint: a corrupt one is passed on capped, not trusted.
TEST(Rdb, ResizeDbHintsAreCapped) {
  class Hints : public RdbVisitor {
   public:
    absl::Status OnEntry(int, std::string, Value, int64_t, KeyMeta) override { return absl::OkStatus(); }
    void OnResizeDb(int, uint64_t k, uint64_t e) override {
      keys = k;
      expires = e;
    }
    uint64_t keys = 0, expires = 0;
  } hints;
  std::string data("REDIS0010\xfe\x00\xfb\x81\xff\xff\xff\xff\xff\xff\xff\xff\x02\xff", 23);
  data += std::string(8, '\0');
  MemorySource src(data);
  ASSERT_TRUE(LoadRdb(&src, &hints, RdbLoadOptions{}).ok());
  EXPECT_EQ(hints.keys, rdb::kMaxSizeHint);
  EXPECT_EQ(hints.expires, 2u);
}

}  // namespace
}  // namespace ringkv::core

// RDB writer and reader: round trips of every string encoding, expiry, idle
// and frequency metadata, several databases; corrupt and truncated input is
// refused with the offset; DUMP payloads match redis-server's bytes.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/rdb_format.h"
#include "core/rdb_reader.h"
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

TEST(Rdb, RefusesNewerVersionsAndBadSignatures) {
  Collector c;
  EXPECT_EQ(Load("REDIS0011", &c).message(), "Can't handle RDB format version 11");
  EXPECT_EQ(Load("RUBIS0010", &c).message(), "Wrong signature trying to load DB from file");
}

TEST(Rdb, RefusesDatabasesOutOfRange) {
  Collector c;
  absl::Status s = Load(WriteSample(true, true), &c, /*databases=*/2);
  EXPECT_NE(std::string(s.message()).find("databases"), std::string::npos) << s.message();
}

TEST(Rdb, RefusesTypesRingkvDoesNotStoreByName) {
  // A list (quicklist 2) record: the loader names the type.
  std::string data("REDIS0010\xfe\x00\x12\x01k", 14);
  Collector c;
  absl::Status s = Load(data, &c);
  EXPECT_NE(std::string(s.message()).find("list"), std::string::npos) << s.message();
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

}  // namespace
}  // namespace ringkv::core

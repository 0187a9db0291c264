#include "server/persistence/aof_manifest.h"

#include <gtest/gtest.h>

namespace ringkv::server {
namespace {

TEST(AofManifest, ParsesRedisManifest) {
  // As redis-server 7.0.15 writes it after one rewrite.
  auto m = AofManifest::Parse(
      "file appendonly.aof.2.base.rdb seq 2 type b\n"
      "file appendonly.aof.1.incr.aof seq 1 type h\n"
      "file appendonly.aof.2.incr.aof seq 2 type i\n"
      "file appendonly.aof.3.incr.aof seq 3 type i\n");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->base().has_value());
  EXPECT_EQ(m->base()->name, "appendonly.aof.2.base.rdb");
  ASSERT_EQ(m->incrs().size(), 2u);
  EXPECT_EQ(m->incrs()[1].name, "appendonly.aof.3.incr.aof");
  EXPECT_EQ(m->history().size(), 1u);
}

TEST(AofManifest, SerializeRoundTrips) {
  const std::string text =
      "file appendonly.aof.1.base.rdb seq 1 type b\n"
      "file appendonly.aof.1.incr.aof seq 1 type i\n";
  auto m = AofManifest::Parse(text);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->Serialize(), text);
}

TEST(AofManifest, RewriteSequence) {
  AofManifest m = *AofManifest::Parse("file a.1.base.rdb seq 1 type b\nfile a.1.incr.aof seq 1 type i\n");
  m.NewIncr("a");  // opened at fork time
  m.NewBase("a", true);
  m.RetireIncrs(/*keep_last=*/true);
  // History most recent first, a rewrite's incremental files before its
  // old base (Redis's order).
  EXPECT_EQ(m.Serialize(),
            "file a.2.base.rdb seq 2 type b\n"
            "file a.1.incr.aof seq 1 type h\n"
            "file a.1.base.rdb seq 1 type h\n"
            "file a.2.incr.aof seq 2 type i\n");
  m.ClearHistory();
  EXPECT_EQ(m.Serialize(), "file a.2.base.rdb seq 2 type b\nfile a.2.incr.aof seq 2 type i\n");
}

TEST(AofManifest, IgnoresCommentsAndUnknownKeys) {
  auto m = AofManifest::Parse("# comment\nfile x seq 1 type b extra 5\n");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->base()->name, "x");
}

TEST(AofManifest, RefusesMalformedManifests) {
  EXPECT_FALSE(AofManifest::Parse("").ok());
  EXPECT_FALSE(AofManifest::Parse("file x seq 1\n").ok());                       // no type
  EXPECT_FALSE(AofManifest::Parse("file x seq one type b\n").ok());              // bad seq
  EXPECT_FALSE(AofManifest::Parse("file x seq 1 type z\n").ok());                // bad type
  EXPECT_FALSE(AofManifest::Parse("file x seq 1 type b\nfile y seq 2 type b\n").ok());  // two bases
  EXPECT_FALSE(AofManifest::Parse("file a seq 2 type i\nfile b seq 1 type i\n").ok());  // not monotonic
  EXPECT_FALSE(AofManifest::Parse("file ../x seq 1 type b\n").ok());             // a path
  EXPECT_FALSE(AofManifest::Parse("file x seq 1 type\n").ok());                  // odd fields
}

// As redis-server 7.0.15 keeps its history with aof-disable-auto-gc yes
// over two rewrites.
TEST(AofManifest, HistoryOrderOverRewrites) {
  AofManifest m = *AofManifest::Parse("file a.5.base.rdb seq 5 type b\nfile a.1.incr.aof seq 1 type i\n");
  for (int i = 0; i < 2; ++i) {
    m.NewIncr("a");
    m.NewBase("a", true);
    m.RetireIncrs(/*keep_last=*/true);
  }
  EXPECT_EQ(m.Serialize(),
            "file a.7.base.rdb seq 7 type b\n"
            "file a.2.incr.aof seq 2 type h\n"
            "file a.6.base.rdb seq 6 type h\n"
            "file a.1.incr.aof seq 1 type h\n"
            "file a.5.base.rdb seq 5 type h\n"
            "file a.3.incr.aof seq 3 type i\n");
  m.RetireIncrs(/*keep_last=*/false);  // a rewrite with the AOF off keeps no incremental file
  EXPECT_TRUE(m.incrs().empty());
}

// Redis's reading rules: blank lines, fewer than six words and lines past
// 1024 bytes are refused; names are quoted when they need it.
TEST(AofManifest, RedisLineRules) {
  AofManifest::ParseError where;
  auto blank = AofManifest::Parse("file a seq 1 type i\n\nfile b seq 3 type i\n", &where);
  EXPECT_EQ(blank.status().message(), "Invalid AOF manifest file format");
  EXPECT_EQ(where.line, 2);
  EXPECT_EQ(AofManifest::Parse("file a seq 1 type b\nfile b type i\n").status().message(),
            "Invalid AOF manifest file format");
  EXPECT_EQ(AofManifest::Parse("filx a seq 1 type b\n").status().message(), "Invalid AOF manifest file format");
  EXPECT_EQ(AofManifest::Parse("file a seq 1 type i newkey\n").status().message(),
            "Invalid AOF manifest file format");
  EXPECT_EQ(AofManifest::Parse("file a seq 1 type x\n").status().message(), "Unknown AOF file type");
  EXPECT_EQ(AofManifest::Parse("file a seq 1 type b" + std::string(1100, ' ') + "x\n").status().message(),
            "The AOF manifest file contains too long line");
  EXPECT_EQ(AofManifest::Parse("file a seq 1 type b").status().message(),  // no newline: a line cut short
            "The AOF manifest file contains too long line");
  EXPECT_EQ(AofManifest::Parse("").status().message(), "Found an empty AOF manifest");
  const std::string name = " file seq \n\n.aof .2.base.rdb";
  EXPECT_EQ(ManifestQuote(name), "\" file seq \\n\\n.aof .2.base.rdb\"");
  AofManifest m = *AofManifest::Parse("file " + ManifestQuote(name) + " seq 2 type b\n");
  EXPECT_EQ(m.base()->name, name);
  EXPECT_EQ(m.Serialize(), "file \" file seq \\n\\n.aof .2.base.rdb\" seq 2 type b\n");
  EXPECT_EQ(AofManifest::Parse("file 'it''s' seq 2 type b\n").status().message(), "Invalid AOF manifest file format");
}

}  // namespace
}  // namespace ringkv::server

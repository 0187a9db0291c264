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
  const std::string retire = m.incrs().back().name;
  m.NewIncr("a");  // opened at fork time
  m.NewBase("a", true);
  m.RetireIncrsThrough(retire);
  EXPECT_EQ(m.Serialize(),
            "file a.2.base.rdb seq 2 type b\n"
            "file a.1.base.rdb seq 1 type h\n"
            "file a.1.incr.aof seq 1 type h\n"
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

}  // namespace
}  // namespace ringkv::server

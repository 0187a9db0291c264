#include "server/commands/string_ops.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "core/zset_value.h"
#include "tests/server/ops_test_util.h"

namespace ringkv::server {
namespace {

using core::OpStatus;
using Args = std::vector<std::string_view>;

class StringOpsTest : public OpsTest {
 protected:
  std::string Get(std::string_view key) {
    core::Entry* e = db().FindNoTouch(key, kNow);
    if (e == nullptr) return "(nil)";
    char scratch[24];
    return std::string(e->value.str().View(scratch));
  }
  int64_t Deadline(std::string_view key) { return db().GetExpire(db().FindNoTouch(key, kNow)); }
};

TEST_F(StringOpsTest, SetConditionsAndKeepTtl) {
  SetOptions nx;
  nx.condition = SetOptions::Condition::kIfMissing;
  EXPECT_TRUE(OpSet(op(), "a", "1", nx)->written);
  EXPECT_FALSE(OpSet(op(), "a", "2", nx)->written);
  SetOptions ex;
  ex.expire_at_ms = kNow + 5000;
  OpSet(op(), "a", "3", ex);
  EXPECT_EQ(PropagatedAs(), (Strings{"SET", "a", "3", "PXAT", std::to_string(kNow + 5000)}));
  SetOptions keep;
  keep.keep_ttl = true;
  keep.get = true;
  EXPECT_EQ(*OpSet(op(), "a", "4", keep)->previous, "3");
  EXPECT_EQ(Deadline("a"), kNow + 5000);
  OpSet(op(), "a", "5", SetOptions{});
  EXPECT_EQ(Deadline("a"), -1);
  EXPECT_EQ(Events(), (Strings{"set a", "set a", "expire a", "set a", "set a"}));
  EXPECT_EQ(Dirty(), 4u);
  bool created;
  db().FindOrInsert("h", kNow, &created)->value = core::Value(core::ZSetValue());
  EXPECT_EQ(OpSet(op(), "h", "v", keep).status(), OpStatus::kWrongType);  // only GET checks the type
  EXPECT_TRUE(OpSet(op(), "h", "v", SetOptions{})->written);
}

TEST_F(StringOpsTest, GetsetAndMsetReportEachKey) {
  EXPECT_FALSE(OpGetset(op(), "k", "v")->previous.has_value());
  EXPECT_EQ(PropagatedAs(), (Strings{"SET", "k", "v"}));
  EXPECT_TRUE(OpMset(op(), Args{"a", "1", "b", "2"}, false));
  EXPECT_FALSE(OpMset(op(), Args{"c", "1", "a", "2"}, true));  // a exists: nothing written
  EXPECT_EQ(Get("c"), "(nil)");
  EXPECT_EQ(Events(), (Strings{"set k", "set a", "set b"}));
  EXPECT_EQ(Dirty(), 3u);
}

TEST_F(StringOpsTest, IncrOverflowAndType) {
  OpSet(op(), "n", "9223372036854775806", SetOptions{});
  EXPECT_EQ(OpIncrBy(op(), "n", 1).value(), INT64_MAX);
  EXPECT_EQ(OpIncrBy(op(), "n", 1).status(), OpStatus::kOverflow);
  OpSet(op(), "s", "abc", SetOptions{});
  EXPECT_EQ(OpIncrBy(op(), "s", 1).status(), OpStatus::kNotInteger);
  EXPECT_EQ(OpIncrByFloat(op(), "s", "1").status(), OpStatus::kNotFloat);
  EXPECT_EQ(OpIncrByFloat(op(), "n", "abc").status(), OpStatus::kNotFloat);
  OpSet(op(), "huge", "1e5000", SetOptions{});  // overflows a long double: string2ld refuses it
  EXPECT_EQ(OpIncrByFloat(op(), "huge", "1").status(), OpStatus::kNotFloat);
  EXPECT_EQ(OpAppend(op(), "s", "defg", 5).status(), OpStatus::kTooBig);
  EXPECT_EQ(OpIncrByFloat(op(), "f", "1.5").value(), "1.5");
  EXPECT_EQ(PropagatedAs(), (Strings{"SET", "f", "1.5", "KEEPTTL"}));
  EXPECT_EQ(Events(), (Strings{"set n", "incrby n", "set s", "set huge", "incrbyfloat f"}));
}

TEST_F(StringOpsTest, SetRangeRefusesOffsetsWhoseEndOverflows) {
  const int64_t max_len = 512 * 1024 * 1024;
  // offset + length would overflow int64 (undefined; it once wrapped past
  // the size check and the server died allocating).
  EXPECT_EQ(OpSetRange(op(), "missing", INT64_MAX, "ab", max_len).status(), OpStatus::kTooBig);
  OpSet(op(), "s", "abc", SetOptions{});
  EXPECT_EQ(OpSetRange(op(), "s", INT64_MAX - 1, "ab", max_len).status(), OpStatus::kTooBig);
  EXPECT_EQ(OpSetRange(op(), "s", max_len - 1, "ab", max_len).status(), OpStatus::kTooBig);
  EXPECT_EQ(OpSetRange(op(), "s", 1, "XY", max_len).value(), 3);
  EXPECT_EQ(OpSetRange(op(), "s", 1, "", max_len).value(), 3);  // nothing written: no event
  EXPECT_EQ(Events(), (Strings{"set s", "setrange s"}));
}

TEST_F(StringOpsTest, GetdelAndGetexChangeTheKeyAfterHandingTheValue) {
  OpSet(op(), "k", "v", SetOptions{});
  std::string seen;
  const auto see = [&](std::string_view v) { seen = v; };
  EXPECT_EQ(OpGetex(op(), "k", GetexChange{GetexChange::kExpire, kNow + 100}, see), OpStatus::kOk);
  EXPECT_EQ(seen, "v");
  EXPECT_EQ(Deadline("k"), kNow + 100);
  EXPECT_EQ(PropagatedAs(), (Strings{"PEXPIREAT", "k", std::to_string(kNow + 100)}));
  EXPECT_EQ(OpGetex(op(), "k", GetexChange{GetexChange::kPersist, -1}, see), OpStatus::kOk);
  EXPECT_EQ(Deadline("k"), -1);
  EXPECT_EQ(OpGetex(op(), "k", GetexChange{GetexChange::kExpire, kNow - 1}, see), OpStatus::kOk);  // past: deleted
  EXPECT_FALSE(Exists("k"));
  EXPECT_EQ(PropagatedAs(), (Strings{"DEL", "k"}));
  OpSet(op(), "k", "w", SetOptions{});
  EXPECT_EQ(OpGetdel(op(), "k", see), OpStatus::kOk);
  EXPECT_EQ(seen, "w");
  EXPECT_FALSE(Exists("k"));
  EXPECT_EQ(OpGetdel(op(), "k", see), OpStatus::kNotFound);
  EXPECT_EQ(Events(), (Strings{"set k", "expire k", "persist k", "del k", "set k", "del k"}));
}

}  // namespace
}  // namespace ringkv::server

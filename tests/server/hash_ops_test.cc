#include "server/commands/hash_ops.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "core/hash_value.h"
#include "tests/server/ops_test_util.h"

namespace ringkv::server {
namespace {

using core::OpStatus;
using Args = std::vector<std::string_view>;

class HashOpsTest : public OpsTest {
 protected:
  std::string Field(std::string_view key, std::string_view field) {
    std::string v;
    core::OpResult<core::HashValue*> h = core::FindTyped<core::HashValue>(db(), key, kNow);
    return h.ok() && h.value()->Get(field, &v) ? v : "(nil)";
  }
};

TEST_F(HashOpsTest, HsetCreatesTheHashAndCountsEveryPair) {
  const Args pairs = {"a", "1", "b", "2"};
  core::OpResult<int64_t> r = OpHset(op(), "h", pairs);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), 2);
  const Args again = {"a", "3", "c", "4"};
  EXPECT_EQ(OpHset(op(), "h", again).value(), 1);  // only c is new
  EXPECT_EQ(Field("h", "a"), "3");
  EXPECT_EQ(Events(), (Strings{"hset h", "hset h"}));
  EXPECT_EQ(Dirty(), 4u);  // a change per pair, new or not, as Redis counts
}

TEST_F(HashOpsTest, WrongTypeChangesNothing) {
  SetString("s", "v");
  const Args pairs = {"a", "1"};
  EXPECT_EQ(OpHset(op(), "s", pairs).status(), OpStatus::kWrongType);
  EXPECT_EQ(OpHsetnx(op(), "s", "a", "1").status(), OpStatus::kWrongType);
  EXPECT_EQ(OpHdel(op(), "s", pairs).status(), OpStatus::kWrongType);
  EXPECT_EQ(OpHincrby(op(), "s", "a", 1).status(), OpStatus::kWrongType);
  EXPECT_EQ(OpHincrbyfloat(op(), "s", "a", 1).status(), OpStatus::kWrongType);
  EXPECT_TRUE(Events().empty());
  EXPECT_EQ(Dirty(), 0u);
}

TEST_F(HashOpsTest, HsetnxWritesOnlyANewField) {
  EXPECT_TRUE(OpHsetnx(op(), "h", "f", "1").value());
  EXPECT_FALSE(OpHsetnx(op(), "h", "f", "2").value());
  EXPECT_EQ(Field("h", "f"), "1");
  EXPECT_EQ(Events(), (Strings{"hset h"}));
  EXPECT_EQ(Dirty(), 1u);
}

TEST_F(HashOpsTest, HdelDeletesTheEmptiedKeyAfterItsEvent) {
  const Args pairs = {"a", "1", "b", "2"};
  OpHset(op(), "h", pairs);
  const Args fields = {"a", "b", "nosuch"};
  EXPECT_EQ(OpHdel(op(), "h", fields).value(), 2);
  EXPECT_FALSE(Exists("h"));
  EXPECT_EQ(Events(), (Strings{"hset h", "hdel h", "del h"}));
  EXPECT_EQ(Dirty(), 4u);
  EXPECT_EQ(OpHdel(op(), "h", fields).value(), 0);  // a missing key: nothing, no event
  EXPECT_EQ(Events().size(), 3u);
}

TEST_F(HashOpsTest, HincrbyChecksTheStoredValueAndOverflow) {
  EXPECT_EQ(OpHincrby(op(), "h", "n", 5).value(), 5);
  EXPECT_EQ(OpHincrby(op(), "h", "n", -7).value(), -2);
  OpHsetnx(op(), "h", "text", "abc");
  EXPECT_EQ(OpHincrby(op(), "h", "text", 1).status(), OpStatus::kNotInteger);
  OpHsetnx(op(), "h", "big", "9223372036854775807");
  EXPECT_EQ(OpHincrby(op(), "h", "big", 1).status(), OpStatus::kOverflow);
  EXPECT_EQ(Field("h", "big"), "9223372036854775807");
  EXPECT_EQ(Events(), (Strings{"hincrby h", "hincrby h", "hset h", "hset h"}));
}

TEST_F(HashOpsTest, HincrbyfloatStoresAndPropagatesTheFormattedResult) {
  core::OpResult<std::string> r = OpHincrbyfloat(op(), "h", "f", 10.5L);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), "10.5");
  EXPECT_EQ(OpHincrbyfloat(op(), "h", "f", 0.1L).value(), "10.6");
  EXPECT_EQ(PropagatedAs(), (Strings{"HSET", "h", "f", "10.6"}));
  OpHsetnx(op(), "h", "text", "abc");
  EXPECT_EQ(OpHincrbyfloat(op(), "h", "text", 1).status(), OpStatus::kNotFloat);
  OpHsetnx(op(), "h", "huge", "1e4932");
  EXPECT_EQ(OpHincrbyfloat(op(), "h", "huge", 1e4932L).status(), OpStatus::kNanOrInf);
  EXPECT_EQ(Dirty(), 4u);
}

}  // namespace
}  // namespace ringkv::server

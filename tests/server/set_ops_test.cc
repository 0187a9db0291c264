#include "server/commands/set_ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "tests/server/ops_test_util.h"

namespace ringkv::server {
namespace {

using core::OpStatus;
using core::SetValue;
using Args = std::vector<std::string_view>;

class SetOpsTest : public OpsTest {
 protected:
  void Add(std::string_view key, const Args& members) { ASSERT_TRUE(OpSadd(op(), key, members).ok()); }
  Strings Members(std::string_view key) {
    Strings out;
    core::OpResult<SetValue*> s = core::FindTyped<SetValue>(db(), key, kNow);
    if (s.ok()) s.value()->ForEach([&](std::string_view m) { out.emplace_back(m); });
    std::sort(out.begin(), out.end());
    return out;
  }
};

TEST_F(SetOpsTest, SaddCountsOnlyNewMembersAndPicksTheFirstMembersEncoding) {
  EXPECT_EQ(OpSadd(op(), "ints", Args{"1", "2", "2"}).value(), 2);
  EXPECT_EQ(core::FindTyped<SetValue>(db(), "ints", kNow).value()->encoding(), SetValue::Encoding::kIntset);
  EXPECT_EQ(OpSadd(op(), "ints", Args{"1"}).value(), 0);  // nothing new: no event
  EXPECT_EQ(OpSadd(op(), "words", Args{"a"}).value(), 1);
  EXPECT_EQ(core::FindTyped<SetValue>(db(), "words", kNow).value()->encoding(), SetValue::Encoding::kHashtable);
  EXPECT_EQ(Events(), (Strings{"sadd ints", "sadd words"}));
  EXPECT_EQ(Dirty(), 3u);
}

TEST_F(SetOpsTest, WrongTypeIsReportedBeforeAnyChange) {
  SetString("s", "v");
  EXPECT_EQ(OpSadd(op(), "s", Args{"a"}).status(), OpStatus::kWrongType);
  EXPECT_EQ(OpSrem(op(), "s", Args{"a"}).status(), OpStatus::kWrongType);
  EXPECT_EQ(OpSpop(op(), "s", [](std::string_view) {}), OpStatus::kWrongType);
  Add("set", {"a"});
  EXPECT_EQ(OpSinter(op(), Args{"set", "s"}, core::Access::kRead).status(), OpStatus::kWrongType);
  EXPECT_EQ(OpSunionOrDiffStore(op(), "dst", Args{"set", "s"}, false).status(), OpStatus::kWrongType);
  EXPECT_FALSE(Exists("dst"));
  EXPECT_EQ(Events(), (Strings{"sadd set"}));
}

TEST_F(SetOpsTest, SremDeletesTheEmptiedSet) {
  Add("k", {"a", "b"});
  EXPECT_EQ(OpSrem(op(), "k", Args{"a", "b", "c"}).value(), 2);
  EXPECT_FALSE(Exists("k"));
  EXPECT_EQ(OpSrem(op(), "k", Args{"a"}).value(), 0);
  EXPECT_EQ(Events(), (Strings{"sadd k", "srem k", "del k"}));
  EXPECT_EQ(Dirty(), 4u);
}

TEST_F(SetOpsTest, SpopPropagatesWhatItRemoved) {
  Add("k", {"a", "b", "c"});
  std::string popped;
  EXPECT_EQ(OpSpop(op(), "k", [&](std::string_view m) { popped = m; }), OpStatus::kOk);
  EXPECT_EQ(PropagatedAs(), (Strings{"SREM", "k", popped}));
  Strings taken;
  size_t announced = 0;
  core::OpResult<size_t> r = OpSpopCount(
      op(), "k", 5, [&](size_t n) { announced = n; }, [&](std::string_view m) { taken.emplace_back(m); });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), 2u);  // the whole set: propagated as DEL
  EXPECT_EQ(announced, 2u);
  EXPECT_EQ(taken.size(), 2u);
  EXPECT_EQ(PropagatedAs(), (Strings{"DEL", "k"}));
  EXPECT_FALSE(Exists("k"));
  EXPECT_EQ(Events(), (Strings{"sadd k", "spop k", "spop k", "del k"}));
  EXPECT_EQ(OpSpop(op(), "k", [](std::string_view) {}), OpStatus::kNotFound);
}

TEST_F(SetOpsTest, SmoveReportsTheSourceBeforeTheDestination) {
  Add("src", {"m"});
  EXPECT_EQ(OpSmove(op(), "nosuch", "src", "m").status(), OpStatus::kNotFound);
  EXPECT_TRUE(OpSmove(op(), "src", "src", "m").value());  // same key: nothing moves
  EXPECT_FALSE(OpSmove(op(), "src", "dst", "other").value());
  EXPECT_TRUE(OpSmove(op(), "src", "dst", "m").value());
  EXPECT_FALSE(Exists("src"));
  EXPECT_EQ(Members("dst"), (Strings{"m"}));
  EXPECT_EQ(Events(), (Strings{"sadd src", "srem src", "del src", "sadd dst"}));
  SetString("str", "v");
  Add("src", {"x"});
  EXPECT_EQ(OpSmove(op(), "src", "str", "x").status(), OpStatus::kWrongType);
  EXPECT_EQ(Members("src"), (Strings{"x"}));
}

// Redis 7.0's order: SPOP reports its event before its reply (written by
// the callback) and signals last; SMOVE reports and signals the source
// before the destination; SINTERSTORE deletes an emptied destination before
// its reply, SUNIONSTORE after.
TEST_F(SetOpsTest, EventsSignalsAndTheReplyComeInRedisOrder) {
  Add("s", {"1"});
  NewSequence();
  // The callback writes the reply: marked here as a ReplyPoint to see where.
  ASSERT_EQ(OpSpop(op(), "s", [&](std::string_view) { effects_.ReplyPoint(); }), OpStatus::kOk);
  EXPECT_EQ(NewSequence(), (Strings{"spop s", "reply", "del s", "signal s"}));
  Add("a", {"1", "2"});
  NewSequence();
  EXPECT_TRUE(OpSmove(op(), "a", "b", "1").value());
  EXPECT_EQ(NewSequence(), (Strings{"srem a", "signal a", "signal b", "sadd b"}));
  EXPECT_EQ(OpSinterstore(op(), "a", Args{"none"}).value(), 0);
  EXPECT_EQ(NewSequence(), (Strings{"signal a", "del a"}));  // the reply follows
  EXPECT_EQ(OpSunionOrDiffStore(op(), "b", Args{"none"}, false).value(), 0);
  EXPECT_EQ(NewSequence(), (Strings{"reply", "signal b", "del b"}));
}

TEST_F(SetOpsTest, AlgebraTreatsMissingKeysAsEmptySets) {
  Add("a", {"1", "2", "3"});
  Add("b", {"2", "3", "4"});
  EXPECT_EQ(OpSinter(op(), Args{"a", "b"}, core::Access::kRead).value(), (Strings{"2", "3"}));
  EXPECT_TRUE(OpSinter(op(), Args{"a", "nosuch"}, core::Access::kRead).value().empty());
  EXPECT_EQ(OpSinter(op(), Args{"a", "b"}, core::Access::kRead, 1).value().size(), 1u);
  EXPECT_EQ(OpSunionOrDiff(op(), Args{"a", "b", "nosuch"}, false, core::Access::kRead).value().size(), 4u);
  EXPECT_EQ(OpSunionOrDiff(op(), Args{"a", "b"}, true, core::Access::kRead).value().size(), 1u);
}

TEST_F(SetOpsTest, StoreFormsReplaceOrDeleteTheDestination) {
  Add("a", {"1", "2"});
  Add("b", {"2", "3"});
  SetString("dst", "old");
  EXPECT_EQ(OpSinterstore(op(), "dst", Args{"a", "b"}).value(), 1);
  EXPECT_EQ(Members("dst"), (Strings{"2"}));
  EXPECT_EQ(OpSunionOrDiffStore(op(), "dst", Args{"a", "b"}, false).value(), 3);
  EXPECT_EQ(OpSunionOrDiffStore(op(), "dst", Args{"a", "a"}, true).value(), 0);  // empty: dst deleted
  EXPECT_FALSE(Exists("dst"));
  EXPECT_EQ(OpSinterstore(op(), "dst", Args{"a", "nosuch"}).value(), 0);  // nothing to delete: no event
  EXPECT_EQ(Events(), (Strings{"sadd a", "sadd b", "sinterstore dst", "sunionstore dst", "del dst"}));
}

}  // namespace
}  // namespace ringkv::server

#include "server/commands/list_ops.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "core/list_value.h"
#include "tests/server/ops_test_util.h"

namespace ringkv::server {
namespace {

using core::ListValue;
using core::OpStatus;
using Args = std::vector<std::string_view>;

class ListOpsTest : public OpsTest {
 protected:
  void Push(std::string_view key, const Args& values) { ASSERT_TRUE(OpPush(op(), key, false, values, false).ok()); }
  Strings Elements(std::string_view key) {
    Strings out;
    core::OpResult<ListValue*> l = core::FindTyped<ListValue>(db(), key, kNow);
    if (l.ok()) {
      l.value()->Walk(0, false, [&](std::string_view v) {
        out.emplace_back(v);
        return true;
      });
    }
    return out;
  }
};

TEST_F(ListOpsTest, PushCreatesUnlessOnlyExisting) {
  EXPECT_EQ(OpPush(op(), "l", true, Args{"a", "b"}, false).value(), 2);
  EXPECT_EQ(OpPush(op(), "l", false, Args{"c"}, true).value(), 3);
  EXPECT_EQ(OpPush(op(), "none", false, Args{"c"}, true).value(), 0);
  EXPECT_FALSE(Exists("none"));
  EXPECT_EQ(Elements("l"), (Strings{"b", "a", "c"}));
  EXPECT_EQ(Events(), (Strings{"lpush l", "rpush l"}));
  EXPECT_EQ(Dirty(), 3u);
  SetString("s", "v");
  EXPECT_EQ(OpPush(op(), "s", true, Args{"x"}, false).status(), OpStatus::kWrongType);
}

TEST_F(ListOpsTest, PopsDeleteTheEmptiedListAfterTheirEvent) {
  Push("l", {"a", "b", "c"});
  EXPECT_EQ(OpPop(op(), "l", true).value(), "a");
  Strings got;
  size_t announced = 99;
  EXPECT_EQ(OpPopCount(
                op(), "l", false, 10, [&](size_t n) { announced = n; },
                [&](std::string_view v) { got.emplace_back(v); })
                .value(),
            2u);
  EXPECT_EQ(announced, 2u);
  EXPECT_EQ(got, (Strings{"c", "b"}));
  EXPECT_FALSE(Exists("l"));
  EXPECT_EQ(Events(), (Strings{"rpush l", "lpop l", "rpop l", "del l"}));
  EXPECT_EQ(Dirty(), 6u);
  EXPECT_EQ(OpPop(op(), "l", true).status(), OpStatus::kNotFound);
}

// Redis 7.0's order of events, signals and the reply (a client's own
// pushes land around its reply so): a push replies first, a pop replies
// and then reports its events before the signal, LTRIM signals last and
// replies after, LMOVE reports the destination, replies, then the source.
TEST_F(ListOpsTest, EventsSignalsAndTheReplyComeInRedisOrder) {
  Push("l", {"a", "b"});
  EXPECT_EQ(NewSequence(), (Strings{"reply", "signal l", "rpush l"}));
  ASSERT_TRUE(OpPop(op(), "l", true).ok());
  EXPECT_EQ(NewSequence(), (Strings{"reply", "lpop l", "signal l"}));
  ASSERT_TRUE(OpLmove(op(), "l", "d", true, false, MoveForm::kLmove).ok());
  EXPECT_EQ(NewSequence(), (Strings{"signal d", "rpush d", "reply", "lpop l", "del l", "signal l"}));
  EXPECT_EQ(OpLtrim(op(), "d", 5, 6), OpStatus::kOk);
  EXPECT_EQ(NewSequence(), (Strings{"ltrim d", "del d", "signal d"}));
}

TEST_F(ListOpsTest, MpopAndBlockingPopServeTheFirstListAndPropagateThePop) {
  SetString("s", "v");
  Push("b", {"1", "2"});
  std::string served;
  EXPECT_EQ(OpMpop(
                op(), Args{"a", "b"}, true, 5, [&](std::string_view key, size_t) { served = key; },
                [](std::string_view) {})
                .value(),
            2u);
  EXPECT_EQ(served, "b");
  EXPECT_EQ(PropagatedAs(), (Strings{"LPOP", "b", "2"}));  // the count popped, as Redis
  EXPECT_EQ(OpMpop(op(), Args{"a", "b"}, true, 1, [](std::string_view, size_t) {}, [](std::string_view) {}).status(),
            OpStatus::kNotFound);
  EXPECT_EQ(OpMpop(op(), Args{"s", "b"}, true, 1, [](std::string_view, size_t) {}, [](std::string_view) {}).status(),
            OpStatus::kWrongType);
  Push("c", {"x"});
  EXPECT_EQ(OpBlockingPop(op(), Args{"a", "c"}, false, [&](std::string_view key) { served = key; }).value(), "x");
  EXPECT_EQ(served, "c");
  EXPECT_EQ(PropagatedAs(), (Strings{"RPOP", "c"}));
  EXPECT_EQ(OpBlockingPop(op(), Args{"a", "c"}, false, [](std::string_view) {}).status(), OpStatus::kNotFound);
}

TEST_F(ListOpsTest, LsetChecksTheKeyBeforeTheIndex) {
  EXPECT_EQ(OpLset(op(), "l", "nonsense", "v"), OpStatus::kNotFound);
  Push("l", {"a"});
  EXPECT_EQ(OpLset(op(), "l", "nonsense", "v"), OpStatus::kNotInteger);
  EXPECT_EQ(OpLset(op(), "l", "1", "v"), OpStatus::kOutOfRange);
  EXPECT_EQ(OpLset(op(), "l", "-1", "v"), OpStatus::kOk);
  EXPECT_EQ(Elements("l"), (Strings{"v"}));
  EXPECT_EQ(Events(), (Strings{"rpush l", "lset l"}));
}

TEST_F(ListOpsTest, LinsertLremAndLtrim) {
  Push("l", {"a", "b", "a", "c"});
  EXPECT_EQ(OpLinsert(op(), "l", true, "b", "x").value(), 5);
  EXPECT_EQ(OpLinsert(op(), "l", true, "nosuch", "x").value(), -1);
  EXPECT_EQ(OpLinsert(op(), "none", true, "b", "x").value(), 0);
  EXPECT_EQ(OpLrem(op(), "l", 0, "a").value(), 2);
  EXPECT_EQ(Elements("l"), (Strings{"b", "x", "c"}));
  EXPECT_EQ(OpLtrim(op(), "l", 1, -1), OpStatus::kOk);
  EXPECT_EQ(Elements("l"), (Strings{"x", "c"}));
  EXPECT_EQ(OpLtrim(op(), "l", 5, 10), OpStatus::kOk);  // nothing kept: the key goes
  EXPECT_FALSE(Exists("l"));
  EXPECT_EQ(Events(), (Strings{"rpush l", "linsert l", "lrem l", "ltrim l", "ltrim l", "del l"}));
  EXPECT_EQ(Dirty(), 4u + 1 + 2 + 1 + 2);
}

TEST_F(ListOpsTest, LmoveReportsThePushBeforeThePopAndTheSourcesDeletion) {
  Push("src", {"a"});
  EXPECT_EQ(OpLmove(op(), "src", "dst", false, true).value(), "a");
  EXPECT_FALSE(Exists("src"));
  EXPECT_EQ(Elements("dst"), (Strings{"a"}));
  EXPECT_EQ(Events(), (Strings{"rpush src", "lpush dst", "rpop src", "del src"}));
  EXPECT_TRUE(PropagatedAs().empty());  // LMOVE replays as itself
  EXPECT_EQ(OpLmove(op(), "dst", "dst", true, false, MoveForm::kRpoplpush).value(), "a");  // a rotation
  EXPECT_EQ(Elements("dst"), (Strings{"a"}));
  EXPECT_EQ(PropagatedAs(), (Strings{"RPOPLPUSH", "dst", "dst"}));
  EXPECT_EQ(OpLmove(op(), "none", "dst", true, true).status(), OpStatus::kNotFound);
  SetString("s", "v");
  EXPECT_EQ(OpLmove(op(), "dst", "s", true, true).status(), OpStatus::kWrongType);
  EXPECT_EQ(Elements("dst"), (Strings{"a"}));  // nothing moved
}

}  // namespace
}  // namespace ringkv::server

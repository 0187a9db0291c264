#include "server/commands/zset_ops.h"

#include <gtest/gtest.h>

#include <string_view>
#include <utility>
#include <vector>

#include "tests/server/ops_test_util.h"

namespace ringkv::server {
namespace {

using core::OpStatus;
using core::ZSetValue;
using Args = std::vector<std::string_view>;

class ZSetOpsTest : public OpsTest {
 protected:
  // ZADD key score member ... with the flags given.
  core::OpResult<ZAddResult> Zadd(std::string_view key, const Args& elements, core::ZAddFlags flags = {}) {
    std::vector<double> scores;
    for (size_t i = 0; i < elements.size(); i += 2) scores.push_back(std::stod(std::string(elements[i])));
    return OpZadd(op(), key, flags, scores, elements);
  }
  Strings Members(std::string_view key) {
    Strings out;
    core::OpResult<ZSetValue*> z = core::FindTyped<ZSetValue>(db(), key, kNow);
    if (z.ok()) {
      z.value()->Walk(0, false, [&](std::string_view m, double) {
        out.emplace_back(m);
        return true;
      });
    }
    return out;
  }
};

TEST_F(ZSetOpsTest, ZaddCountsAddedAndUpdatedMembers) {
  ZAddResult r = Zadd("z", {"1", "a", "2", "b"}).value();
  EXPECT_EQ(r.added, 2);
  r = Zadd("z", {"5", "a", "2", "b", "3", "c"}).value();
  EXPECT_EQ(r.added, 1);
  EXPECT_EQ(r.updated, 1);
  EXPECT_EQ(Members("z"), (Strings{"b", "c", "a"}));
  EXPECT_EQ(Zadd("z", {"2", "b"}).value().added, 0);  // unchanged: no event
  EXPECT_EQ(Events(), (Strings{"zadd z", "zadd z"}));
  EXPECT_EQ(Dirty(), 4u);
}

TEST_F(ZSetOpsTest, XxOnAMissingKeyCreatesNothingAndIncrReportsItsScore) {
  core::ZAddFlags xx;
  xx.xx = true;
  xx.incr = true;
  EXPECT_TRUE(Zadd("z", {"1", "a"}, xx).value().skipped);
  EXPECT_FALSE(Exists("z"));
  core::ZAddFlags incr;
  incr.incr = true;
  EXPECT_EQ(Zadd("z", {"1.5", "a"}, incr).value().score, 1.5);
  EXPECT_EQ(Zadd("z", {"1", "a"}, incr).value().score, 2.5);
  Zadd("z", {"inf", "a"}, incr);
  EXPECT_EQ(Zadd("z", {"-inf", "a"}, incr).status(), OpStatus::kNanOrInf);
  EXPECT_EQ(Events(), (Strings{"zincr z", "zincr z", "zincr z"}));
  SetString("s", "v");
  EXPECT_EQ(Zadd("s", {"1", "a"}).status(), OpStatus::kWrongType);
}

TEST_F(ZSetOpsTest, RemovalsDeleteTheEmptiedSetAfterTheirEvent) {
  Zadd("z", {"1", "a", "2", "b", "3", "c", "4", "d"});
  EXPECT_EQ(OpZrem(op(), "z", Args{"a", "nosuch"}).value(), 1);
  EXPECT_EQ(OpZremRangeByRank(op(), "z", 5, 10).value(), 0);  // out of range: nothing, no event
  EXPECT_EQ(OpZremRangeByRank(op(), "z", -1, -1).value(), 1);
  core::ScoreRange scores;
  scores.min = 2;
  scores.max = 2;
  EXPECT_EQ(OpZremRangeByScore(op(), "z", scores).value(), 1);
  core::LexRange all;
  all.min_unbounded = all.max_unbounded = true;
  EXPECT_EQ(OpZremRangeByLex(op(), "z", all).value(), 1);
  EXPECT_FALSE(Exists("z"));
  EXPECT_EQ(Events(), (Strings{"zadd z", "zrem z", "zremrangebyrank z", "zremrangebyscore z", "zremrangebylex z",
                               "del z"}));
  EXPECT_EQ(OpZrem(op(), "z", Args{"a"}).value(), 0);
}

TEST_F(ZSetOpsTest, PopsHandElementsOverInOrder) {
  Zadd("z", {"1", "a", "2", "b", "3", "c"});
  std::vector<std::pair<std::string, double>> got;
  size_t announced = 0;
  const auto take = [&](std::string_view m, double s) { got.emplace_back(m, s); };
  EXPECT_EQ(OpZpop(op(), "z", 2, true, [&](size_t n) { announced = n; }, take).value(), 2u);
  EXPECT_EQ(announced, 2u);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].first, "c");
  EXPECT_EQ(got[1].first, "b");
  std::string served;
  EXPECT_EQ(OpZmpop(op(), Args{"none", "z"}, 10, false, [&](std::string_view k, size_t) { served = k; }, take).value(),
            1u);
  EXPECT_EQ(served, "z");
  EXPECT_EQ(PropagatedAs(), (Strings{"ZPOPMIN", "z", "1"}));  // the count popped, as Redis
  EXPECT_FALSE(Exists("z"));
  EXPECT_EQ(Events(), (Strings{"zadd z", "zpopmax z", "zpopmin z", "del z"}));
  EXPECT_EQ(OpBlockingZpop(op(), Args{"z"}, false, [](std::string_view) {}, take), OpStatus::kNotFound);
  Zadd("y", {"7", "m"});
  EXPECT_EQ(OpBlockingZpop(op(), Args{"z", "y"}, true, [&](std::string_view k) { served = k; }, take), OpStatus::kOk);
  EXPECT_EQ(served, "y");
  EXPECT_EQ(PropagatedAs(), (Strings{"ZPOPMAX", "y"}));
}

// Redis 7.0's order: a pop's event and signal between the reply's header
// and its elements, the emptied key's "del" after them; ZREM signals after
// its events; ZADD replies first; a store signals, replies, then reports.
TEST_F(ZSetOpsTest, EventsSignalsAndTheReplyComeInRedisOrder) {
  Zadd("z", {"1", "a", "2", "b"});
  EXPECT_EQ(NewSequence(), (Strings{"reply", "signal z", "zadd z"}));
  std::vector<std::string> order;
  ASSERT_TRUE(OpZpop(
                  op(), "z", 1, false, [&](size_t) { order.push_back("header"); },
                  [&](std::string_view m, double) { order.push_back(std::string(m)); })
                  .ok());
  EXPECT_EQ(order, (Strings{"header", "a"}));
  EXPECT_EQ(NewSequence(), (Strings{"zpopmin z", "signal z"}));
  EXPECT_EQ(OpZrem(op(), "z", Args{"b"}).value(), 1);
  EXPECT_EQ(NewSequence(), (Strings{"zrem z", "del z", "signal z"}));
  const std::vector<std::pair<std::string, double>> elements = {{"a", 1}};
  OpZstore(op(), "dst", ZSetValue::FromSorted(elements, keyspace_.limits().zset), "zunionstore");
  EXPECT_EQ(NewSequence(), (Strings{"signal dst", "reply", "zunionstore dst"}));
  OpZstore(op(), "dst", ZSetValue(), "zinterstore");
  EXPECT_EQ(NewSequence(), (Strings{"reply", "signal dst", "del dst"}));
}

TEST_F(ZSetOpsTest, StoreReplacesOrDeletesTheDestination) {
  SetString("dst", "old");
  const std::vector<std::pair<std::string, double>> elements = {{"a", 1}, {"b", 2}};
  EXPECT_EQ(OpZstore(op(), "dst", ZSetValue::FromSorted(elements, keyspace_.limits().zset), "zunionstore"), 2);
  EXPECT_EQ(Members("dst"), (Strings{"a", "b"}));
  EXPECT_EQ(OpZstore(op(), "dst", ZSetValue(), "zinterstore"), 0);
  EXPECT_FALSE(Exists("dst"));
  EXPECT_EQ(Events(), (Strings{"zunionstore dst", "del dst"}));
  EXPECT_EQ(Dirty(), 2u);
}

}  // namespace
}  // namespace ringkv::server

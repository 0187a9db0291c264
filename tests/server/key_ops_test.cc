#include "server/commands/key_ops.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "tests/server/ops_test_util.h"

namespace ringkv::server {
namespace {

using core::OpStatus;
using Args = std::vector<std::string_view>;

class KeyOpsTest : public OpsTest {
 protected:
  int64_t Deadline(std::string_view key, int db_index = 0) {
    core::Database& d = keyspace_.db(db_index);
    return d.GetExpire(d.FindNoTouch(key, kNow));
  }
  void Expire(std::string_view key, int64_t when) {
    core::Entry* e = db().FindNoTouch(key, kNow);
    db().SetExpire(key, e, when);
  }
};

TEST_F(KeyOpsTest, DelCountsWhatExisted) {
  SetString("a", "1");
  SetString("b", "2");
  EXPECT_EQ(OpDel(op(), Args{"a", "nosuch", "b"}, false), 2);
  EXPECT_EQ(Events(), (Strings{"del a", "del b"}));
  EXPECT_EQ(Dirty(), 2u);
}

TEST_F(KeyOpsTest, ExpireConditionsAndPastDeadlines) {
  SetString("k", "v");
  EXPECT_FALSE(OpExpire(op(), "k", kNow + 10, ExpireFlags{.xx = true}));  // no deadline yet
  EXPECT_TRUE(OpExpire(op(), "k", kNow + 10, ExpireFlags{.nx = true}));
  EXPECT_FALSE(OpExpire(op(), "k", kNow + 5, ExpireFlags{.gt = true}));
  EXPECT_TRUE(OpExpire(op(), "k", kNow + 5, ExpireFlags{.lt = true}));
  EXPECT_EQ(Deadline("k"), kNow + 5);
  EXPECT_EQ(PropagatedAs(), (Strings{"PEXPIREAT", "k", std::to_string(kNow + 5)}));
  EXPECT_TRUE(OpPersist(op(), "k"));
  EXPECT_FALSE(OpPersist(op(), "k"));
  EXPECT_TRUE(OpExpire(op(), "k", kNow, ExpireFlags{}));  // already past: deleted
  EXPECT_FALSE(Exists("k"));
  EXPECT_EQ(PropagatedAs(), (Strings{"DEL", "k"}));
  EXPECT_FALSE(OpExpire(op(), "k", kNow + 5, ExpireFlags{}));
  EXPECT_EQ(Events(), (Strings{"expire k", "expire k", "persist k", "del k"}));
}

TEST_F(KeyOpsTest, RenameKeepsTheDeadlineAndReportsBothKeys) {
  SetString("a", "1");
  Expire("a", kNow + 100);
  SetString("b", "2");
  EXPECT_EQ(OpRename(op(), "nosuch", "b", false).status(), OpStatus::kNotFound);
  EXPECT_FALSE(OpRename(op(), "a", "b", /*nx=*/true).value());
  EXPECT_FALSE(OpRename(op(), "a", "a", false).value());
  EXPECT_TRUE(OpRename(op(), "a", "b", false).value());
  EXPECT_FALSE(Exists("a"));
  EXPECT_EQ(Deadline("b"), kNow + 100);
  EXPECT_EQ(Events(), (Strings{"rename_from a", "rename_to b"}));
  EXPECT_EQ(Dirty(), 1u);
}

// Redis 7.0 signals both keys before either event.
TEST_F(KeyOpsTest, RenameSignalsBothKeysBeforeItsEvents) {
  SetString("a", "1");
  EXPECT_TRUE(OpRename(op(), "a", "b", false).value());
  EXPECT_EQ(NewSequence(), (Strings{"signal a", "signal b", "rename_from a", "rename_to b"}));
}

TEST_F(KeyOpsTest, MoveAndCopyReportInTheTargetDatabase) {
  SetString("k", "v");
  EXPECT_TRUE(OpCopy(op(), "k", keyspace_.db(0), "k2", false));
  EXPECT_FALSE(OpCopy(op(), "k", keyspace_.db(0), "k2", false));
  EXPECT_TRUE(OpMove(op(), "k", keyspace_.db(3)));
  EXPECT_FALSE(Exists("k"));
  EXPECT_NE(keyspace_.db(3).FindNoTouch("k", kNow), nullptr);
  EXPECT_FALSE(OpMove(op(), "k", keyspace_.db(3)));  // gone here
  EXPECT_TRUE(OpCopy(op(), "k2", keyspace_.db(3), "k", /*replace=*/true));
  EXPECT_EQ(Events(), (Strings{"copy_to k2", "move_from k", "move_to k @3", "copy_to k @3"}));
}

TEST_F(KeyOpsTest, RestoreOfAPastDeadlineOnlyDeletesTheReplacedKey) {
  SetString("k", "old");
  const Args command = {"RESTORE", "k", "100", "payload"};
  OpRestore(op(), "k", core::Value(core::StringValue("new")), /*replace=*/true, 100, /*relative=*/false, -1, -1,
            command);  // absolute 100 ms: long past
  EXPECT_FALSE(Exists("k"));
  EXPECT_EQ(PropagatedAs(), (Strings{"DEL", "k"}));
  OpRestore(op(), "k", core::Value(core::StringValue("new")), false, 100, /*relative=*/true, -1, -1, command);
  EXPECT_EQ(Deadline("k"), kNow + 100);
  EXPECT_EQ(PropagatedAs(), (Strings{"RESTORE", "k", std::to_string(kNow + 100), "payload", "ABSTTL"}));
  EXPECT_EQ(Events(), (Strings{"del k", "restore k"}));
}

}  // namespace
}  // namespace ringkv::server

#include "server/command_table.h"

#include <gtest/gtest.h>

#include <set>

namespace ringkv::server {
namespace {

class CommandTableTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterAllCommands(table_); }
  CommandTable table_;
};

TEST_F(CommandTableTest, LookupIsCaseInsensitive) {
  ASSERT_NE(table_.Find("get"), nullptr);
  EXPECT_EQ(table_.Find("GeT"), table_.Find("get"));
  EXPECT_EQ(table_.Find("nosuchcommand"), nullptr);
  EXPECT_EQ(table_.Find(std::string(100, 'x')), nullptr);
}

TEST_F(CommandTableTest, EveryRowIsWellFormed) {
  std::set<std::string> names;
  for (const auto& c : table_.all()) {
    EXPECT_TRUE(names.insert(c->name).second) << "duplicate " << c->name;
    EXPECT_NE(c->arity, 0) << c->name;
    EXPECT_FALSE(c->group.empty()) << c->name;
    EXPECT_FALSE(c->since.empty()) << c->name;
    EXPECT_TRUE(c->handler != nullptr || !c->subcommands.empty()) << c->name;
    if (c->first_key > 0) {
      EXPECT_GE(c->step, 1) << c->name;
    }
    // A write command must never also claim to be read-only.
    EXPECT_FALSE((c->flags & cmd::kWrite) && (c->flags & cmd::kReadonly)) << c->name;
    for (const CommandSpec& s : c->subcommands) {
      EXPECT_EQ(s.name.rfind(c->name + "|", 0), 0u) << s.name;
      EXPECT_NE(s.handler, nullptr) << s.name;
      EXPECT_LE(s.arity < 0 ? -s.arity : s.arity, 10) << s.name;
      EXPECT_TRUE(s.arity >= 2 || s.arity <= -2) << s.name;
    }
  }
}

TEST_F(CommandTableTest, RedisArityAndKeyPositions) {
  struct Expect {
    const char* name;
    int arity, first, last, step;
  };
  // As redis-server 7.0's COMMAND INFO reports them.
  for (const Expect& e : {Expect{"get", 2, 1, 1, 1}, Expect{"set", -3, 1, 1, 1}, Expect{"mset", -3, 1, -1, 2},
                          Expect{"del", -2, 1, -1, 1}, Expect{"ping", -1, 0, 0, 0}, Expect{"rename", 3, 1, 2, 1},
                          Expect{"config", -2, 0, 0, 0}, Expect{"client", -2, 0, 0, 0}}) {
    const CommandSpec* c = table_.Find(e.name);
    ASSERT_NE(c, nullptr) << e.name;
    EXPECT_EQ(c->arity, e.arity) << e.name;
    EXPECT_EQ(c->first_key, e.first) << e.name;
    EXPECT_EQ(c->last_key, e.last) << e.name;
    EXPECT_EQ(c->step, e.step) << e.name;
  }
}

TEST_F(CommandTableTest, SubcommandsResolve) {
  const CommandSpec* config = table_.Find("CONFIG");
  ASSERT_NE(config, nullptr);
  const CommandSpec* get = CommandTable::FindSub(*config, "Get");
  ASSERT_NE(get, nullptr);
  EXPECT_EQ(get->name, "config|get");
  EXPECT_EQ(get->arity, -3);
  EXPECT_EQ(CommandTable::FindSub(*config, "nope"), nullptr);
}

TEST_F(CommandTableTest, FlagNames) {
  auto names = FlagNames(cmd::kWrite | cmd::kDenyOom | cmd::kFast);
  EXPECT_EQ(names, (std::vector<std::string_view>{"write", "denyoom", "fast"}));
}

}  // namespace
}  // namespace ringkv::server

#include "server/command_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

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

TEST_F(CommandTableTest, EveryNameFindsItsRowAndNearMissesFindNothing) {
  for (const auto& c : table_.all()) {
    std::string upper = c->name, mixed = c->name;
    for (size_t i = 0; i < upper.size(); ++i) {
      upper[i] = static_cast<char>(absl::ascii_toupper(static_cast<unsigned char>(upper[i])));
      if (i % 2 == 1) mixed[i] = upper[i];
    }
    EXPECT_EQ(table_.Find(c->name), c.get()) << c->name;
    EXPECT_EQ(table_.Find(upper), c.get()) << upper;
    EXPECT_EQ(table_.Find(mixed), c.get()) << mixed;
    // One byte more, one less, one changed (in each position), a NUL tail.
    if (const CommandSpec* longer = table_.Find(c->name + "X")) {
      EXPECT_EQ(longer->name, c->name + "x");  // LPUSH finds LPUSHX
    }
    EXPECT_EQ(table_.Find(std::string(c->name) + std::string(1, '\0')), nullptr) << c->name;
    const std::string_view shorter = std::string_view(c->name).substr(0, c->name.size() - 1);
    if (const CommandSpec* found = table_.Find(shorter)) {
      EXPECT_EQ(found->name, shorter);
    }
    for (size_t i = 0; i < c->name.size(); ++i) {
      std::string changed = c->name;
      changed[i] = static_cast<char>(changed[i] ^ 0x01);
      const CommandSpec* found = table_.Find(changed);
      if (found != nullptr) {
        EXPECT_TRUE(absl::EqualsIgnoreCase(found->name, changed)) << changed;
      }
      // Only letters fold: '[' and '{' (one past 'Z' and 'z') never match.
      changed[i] = c->name[i] == 'z' ? '{' : c->name[i];
      if (changed != c->name) {
        EXPECT_EQ(table_.Find(changed), nullptr) << changed;
      }
    }
  }
}

// Find remembers the last name it found, by its bytes: what follows a hit
// must still be looked up for itself, whatever byte of it differs.
TEST_F(CommandTableTest, ANameAfterTheOneFoundIsLookedUpForItself) {
  for (const auto& c : table_.all()) {
    if (c->name.size() > 8) continue;
    for (size_t i = 0; i < c->name.size(); ++i) {
      for (const char other : {'\0', 'x', '[', static_cast<char>(c->name[i] ^ 0x20)}) {
        std::string changed = c->name;
        changed[i] = other;
        ASSERT_EQ(table_.Find(c->name), c.get()) << c->name;
        ASSERT_EQ(table_.Find(c->name), c.get()) << c->name;  // the remembered one
        const CommandSpec* found = table_.Find(changed);
        if (absl::EqualsIgnoreCase(changed, c->name)) {
          EXPECT_EQ(found, c.get()) << changed;
        } else if (found != nullptr) {
          EXPECT_TRUE(absl::EqualsIgnoreCase(found->name, changed)) << changed;
        }
      }
    }
    ASSERT_EQ(table_.Find(c->name), c.get());
    const std::string shorter = c->name.substr(0, c->name.size() - 1);
    if (const CommandSpec* found = table_.Find(shorter)) {
      EXPECT_EQ(found->name, shorter);  // right after the name: a command of its own only (INCRBY, INCR)
    }
    ASSERT_EQ(table_.Find(c->name), c.get());
    const CommandSpec* longer = table_.Find(c->name + std::string(1, '\0'));
    EXPECT_EQ(longer, nullptr) << c->name;
  }
  // The empty name is unknown, before and after anything was found.
  CommandTable fresh;
  EXPECT_EQ(fresh.Find(""), nullptr);
  EXPECT_EQ(table_.Find(""), nullptr);
  // A command added later is found, and what was remembered is not stale.
  CommandTable table;
  CommandSpec a{};
  a.name = "aaa";
  table.Add(std::move(a));
  EXPECT_EQ(table.Find("aaa")->name, "aaa");
  CommandSpec b{};
  b.name = "bbb";
  table.Add(std::move(b));
  EXPECT_EQ(table.Find("bbb")->name, "bbb");
  EXPECT_EQ(table.Find("aaa")->name, "aaa");
}

TEST(CommandTableLoadTest, EveryByteOfAShortNameChangesItsWord) {
  const std::string name = "ABCDEFGH";
  for (size_t n = 0; n <= 8; ++n) {
    const uint64_t word = CommandTable::LoadUpTo8(name.data(), n);
    for (size_t i = 0; i < n; ++i) {
      std::string changed = name.substr(0, n);
      changed[i] = '\0';
      EXPECT_NE(CommandTable::LoadUpTo8(changed.data(), n), word) << n << " " << i;
      EXPECT_EQ(static_cast<char>((word >> (8 * i)) & 0xff), name[i]) << n << " " << i;
    }
    if (n < 8) {
      EXPECT_EQ(word >> (8 * n), 0u) << n;
    }
  }
}

TEST(CommandTableFoldTest, FoldsLettersOnlyAndPadsWithZeros) {
  EXPECT_EQ(CommandTable::Fold("GeoRadiusByMember_RO"), CommandTable::Fold("georadiusbymember_ro"));
  EXPECT_EQ(CommandTable::Fold("AZ@[`{"), CommandTable::Fold("az@[`{"));
  EXPECT_NE(CommandTable::Fold("@"), CommandTable::Fold("`"));  // 0x40 and 0x60 stay apart
  EXPECT_NE(CommandTable::Fold("["), CommandTable::Fold("{"));
  EXPECT_EQ(CommandTable::Fold(""), CommandTable::Fold(std::string_view("\0", 1)));
  for (size_t n = 0; n <= 16; ++n) {
    const std::string name = std::string("ABCDEFGHIJKLMNOP").substr(0, n);
    const CommandTable::Folded f = CommandTable::Fold(name);
    for (size_t i = 0; i < 16; ++i) {
      const uint64_t word = i < 8 ? f.w0 : f.w1;
      const auto byte = static_cast<char>((word >> (8 * (i % 8))) & 0xff);
      EXPECT_EQ(byte, i < n ? static_cast<char>('a' + i) : '\0') << n << " " << i;
    }
  }
  // Non-ASCII bytes are left alone.
  EXPECT_NE(CommandTable::Fold("\xc1"), CommandTable::Fold("\xe1"));
}

TEST_F(CommandTableTest, EveryRowIsWellFormed) {
  std::set<std::string> names;
  for (const auto& c : table_.all()) {
    EXPECT_TRUE(names.insert(c->name).second) << "duplicate " << c->name;
    EXPECT_NE(c->arity, 0) << c->name;
    EXPECT_FALSE(c->group.empty()) << c->name;
    EXPECT_FALSE(c->since.empty()) << c->name;
    EXPECT_TRUE(!c->container() || !c->subcommands.empty()) << c->name;
    if (c->first_key > 0) {
      EXPECT_GE(c->step, 1) << c->name;
    }
    // A write command must never also claim to be read-only.
    EXPECT_FALSE((c->flags & cmd::kWrite) && (c->flags & cmd::kReadonly)) << c->name;
    for (const CommandSpec& s : c->subcommands) {
      EXPECT_EQ(s.name.rfind(c->name + "|", 0), 0u) << s.name;
      EXPECT_FALSE(s.container()) << s.name;
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

// rename-command: the command is found by its new name only (any case,
// past 16 bytes too), or by none; its own name stays on the command.
TEST_F(CommandTableTest, RenameMovesTheLookupName) {
  const CommandSpec* flushdb = table_.Find("flushdb");
  ASSERT_NE(flushdb, nullptr);
  ASSERT_TRUE(table_.Rename("FLUSHDB", "badger").ok());
  EXPECT_EQ(table_.Find("flushdb"), nullptr);
  EXPECT_EQ(table_.Find("BADGER"), flushdb);
  EXPECT_EQ(flushdb->name, "flushdb");
  const std::string long_name = "a-rather-long-name-for-config";  // compared past the folded 16 bytes
  const CommandSpec* config = table_.Find("config");
  ASSERT_TRUE(table_.Rename("config", long_name).ok());
  EXPECT_EQ(table_.Find(long_name), config);
  EXPECT_EQ(table_.Find("a-rather-long-name-for-confiX"), nullptr);
  ASSERT_TRUE(table_.Rename("keys", "").ok());  // hidden
  EXPECT_EQ(table_.Find("keys"), nullptr);
  EXPECT_EQ(table_.Find(""), nullptr);
  EXPECT_EQ(table_.Rename("nosuchcommand", "x").message(), "No such command in rename-command");
  EXPECT_EQ(table_.Rename("get", "set").message(), "Target command name already exists");
  EXPECT_NE(table_.Find("get"), nullptr);  // a refused rename changes nothing
  EXPECT_EQ(table_.size(), table_.all().size());
  for (const auto& c : table_.all()) {  // every other command is still found by its name
    if (c.get() == flushdb || c.get() == config || c->name == "keys") continue;
    EXPECT_EQ(table_.Find(c->name), c.get()) << c->name;
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

// ACL users and rules (server/acl/users.h, acl.h): parsing, descriptions and
// the permission check, without I/O. Expected texts are redis-server
// 7.0.15's (ACL SETUSER errors, ACL LIST / GETUSER descriptions, DRYRUN).
#include "server/acl/acl.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "server/command_table.h"

namespace ringkv::server::acl {
namespace {

class AclUsersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterAllCommands(table_);
    acl_ = std::make_unique<Acl>(table_);
  }
  // ACL SETUSER: "" on success, else the error text.
  std::string Set(std::string_view name, std::vector<std::string_view> ops) {
    std::string err;
    return acl_->SetUser(name, ops, &err) ? "" : err;
  }
  // ACL DRYRUN: "OK" or Redis's refusal text.
  std::string DryRun(std::string_view name, std::vector<std::string_view> argv) {
    const CommandSpec* spec = table_.Find(argv[0]);
    if (spec != nullptr && !spec->subcommands.empty()) spec = CommandTable::FindSub(*spec, argv[1]);
    Verdict v = acl_->Check(*acl_->Find(name), *spec, argv);
    return v.ok() ? "OK" : Acl::DryRunError(v.denied, *spec, argv[v.pos]);
  }
  std::string List(std::string_view name) {
    return StrCatUser(name, DescribeUser(acl_->index(), *acl_->Find(name)));
  }
  static std::string StrCatUser(std::string_view name, const std::string& d) {
    return "user " + std::string(name) + " " + d;
  }
  CommandTable table_;
  std::unique_ptr<Acl> acl_;
};

TEST_F(AclUsersTest, DefaultUserAllowsEverything) {
  EXPECT_EQ(List("default"), "user default on nopass ~* &* +@all");
  EXPECT_TRUE(acl_->default_user().unrestricted);
  EXPECT_TRUE(acl_->DefaultAuthenticates());
  acl_->SetDefaultPassword("secret");
  EXPECT_FALSE(acl_->DefaultAuthenticates());
  EXPECT_TRUE(acl_->default_user().CheckPassword("secret"));
  EXPECT_FALSE(acl_->default_user().CheckPassword("other"));
  acl_->SetDefaultPassword("");
  EXPECT_TRUE(acl_->default_user().nopass);
}

TEST_F(AclUsersTest, NewUsersStartDisabledWithNothing) {
  EXPECT_EQ(Set("alice", {}), "");
  EXPECT_EQ(List("alice"), "user alice off resetchannels -@all");
  EXPECT_FALSE(acl_->Find("alice")->CheckPassword("x"));
  EXPECT_EQ(DryRun("alice", {"get", "k"}), "This user has no permissions to run the 'get' command");
}

TEST_F(AclUsersTest, PasswordsAreSha256AndRemovable) {
  EXPECT_EQ(HashPassword("p1"), "f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a");
  EXPECT_EQ(Set("u", {"on", ">p1", ">p2"}), "");
  const User& u = *acl_->Find("u");
  EXPECT_TRUE(u.CheckPassword("p1"));
  EXPECT_TRUE(u.CheckPassword("p2"));
  EXPECT_FALSE(u.CheckPassword("p3"));
  EXPECT_EQ(Set("u", {"<p1"}), "");
  EXPECT_FALSE(acl_->Find("u")->CheckPassword("p1"));
  EXPECT_EQ(Set("u", {"<nope"}),
            "Error in ACL SETUSER modifier '<nope': The password you are trying to remove from the user does not exist");
  EXPECT_EQ(Set("u", {"#abc"}),
            "Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 characters and contain only "
            "lowercase hexadecimal characters");
  EXPECT_EQ(Set("u", {"!" + HashPassword("p2")}), "");
  EXPECT_TRUE(acl_->Find("u")->passwords.empty());
  EXPECT_EQ(Set("u", {"nopass"}), "");
  EXPECT_TRUE(acl_->Find("u")->CheckPassword("anything"));
  EXPECT_EQ(Set("u", {"off"}), "");
  EXPECT_FALSE(acl_->Find("u")->CheckPassword("anything"));  // disabled users never log in
}

TEST_F(AclUsersTest, RulesAreAllOrNothing) {
  EXPECT_EQ(Set("u", {"on", "+get", "+nosuch"}),
            "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL");
  EXPECT_EQ(acl_->Find("u"), nullptr);  // not created
  EXPECT_EQ(Set("u", {"on", "~*", "~a"}),
            "Error in ACL SETUSER modifier '~a': Adding a pattern after the * pattern (or the 'allkeys' flag) is not "
            "valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns");
  EXPECT_EQ(Set("u", {"&*", "&a"}),
            "Error in ACL SETUSER modifier '&a': Adding a pattern after the * pattern (or the 'allchannels' flag) is "
            "not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels");
  EXPECT_EQ(Set("u", {"%~x"}), "Error in ACL SETUSER modifier '%~x': Syntax error");
  EXPECT_EQ(Set("u", {"%X~x"}), "Error in ACL SETUSER modifier '%X~x': Syntax error");
  EXPECT_EQ(Set("u", {"bogus"}), "Error in ACL SETUSER modifier 'bogus': Syntax error");
  EXPECT_EQ(Set("u", {"+config|get|x"}),
            "Error in ACL SETUSER modifier '+config|get|x': Allowing first-arg of a subcommand is not supported");
  EXPECT_EQ(Set("u", {"(+get"}), "Unmatched parenthesis in acl selector starting at '(+get'.");
  EXPECT_EQ(Set("u", {"(+get", "foo)"}), "Error in ACL SETUSER modifier '(+get foo)': Syntax error");
  EXPECT_EQ(acl_->Find("u"), nullptr);
}

TEST_F(AclUsersTest, DescriptionsMatchRedis) {
  EXPECT_EQ(Set("u1", {"on", ">p1", "~k*", "%R~r*", "&ch*", "+get", "+select|0", "(+set ~s*)"}), "");
  // Single commands come in command-table order (Redis: its dict's order,
  // here "+get +select|0").
  EXPECT_EQ(List("u1"),
            "user u1 on #f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a ~k* %R~r* resetchannels "
            "&ch* -@all +select|0 +get (~s* resetchannels -@all +set)");
  struct Case {
    std::vector<std::string_view> rules;
    const char* commands;
  };
  for (const Case& c : std::vector<Case>{
           {{"+@all", "+client|id"}, "+@all"},
           {{"-@all", "+client|id", "+client"}, "-@all +client"},
           {{"-@all", "+client", "-client|id"}, "-@all +client -client|id"},
           {{"+@all", "-client", "+client|id"}, "+@all -client +client|id"},
           {{"+set", "+@string", "-@string", "+get"}, "-@all +get"},
           {{"+get", "+@string", "-set"}, "-@all +@string -set"},
           {{"-@all", "+get", "-get"}, "-@all"},
           {{"+@all", "-@string"}, "+@all -@string"},
           {{"-@all", "+@hash"}, "-@all +@hash"},
       }) {
    std::vector<std::string_view> rules{"reset"};
    rules.insert(rules.end(), c.rules.begin(), c.rules.end());
    ASSERT_EQ(Set("t", rules), "");
    EXPECT_EQ(DescribeCommandRules(acl_->index(), acl_->Find("t")->selectors[0]), c.commands);
  }
}

TEST_F(AclUsersTest, CommandsSubcommandsAndFirstArgs) {
  ASSERT_EQ(Set("u", {"on", "nopass", "allkeys", "-@all", "+config", "-config|set", "+select|0"}), "");
  EXPECT_EQ(DryRun("u", {"config", "get", "x"}), "OK");
  EXPECT_EQ(DryRun("u", {"config", "set", "x", "y"}), "This user has no permissions to run the 'config|set' command");
  EXPECT_EQ(DryRun("u", {"select", "0"}), "OK");
  EXPECT_EQ(DryRun("u", {"select", "1"}), "This user has no permissions to run the 'select' command");
  EXPECT_EQ(DryRun("u", {"auth", "x"}), "OK");  // no-auth commands are always allowed
  ASSERT_EQ(Set("u", {"+@all", "-@dangerous"}), "");
  EXPECT_EQ(DryRun("u", {"flushall"}), "This user has no permissions to run the 'flushall' command");
  EXPECT_EQ(DryRun("u", {"get", "x"}), "OK");
}

TEST_F(AclUsersTest, KeysByAccessFlags) {
  ASSERT_EQ(Set("u", {"on", "+@all", "%R~read*", "%W~write*", "~both*"}), "");
  EXPECT_EQ(DryRun("u", {"get", "read1"}), "OK");
  EXPECT_EQ(DryRun("u", {"get", "write1"}), "This user has no permissions to access the 'write1' key");
  EXPECT_EQ(DryRun("u", {"set", "write1", "v"}), "OK");  // SET without GET only writes
  EXPECT_EQ(DryRun("u", {"set", "write1", "v", "get"}), "This user has no permissions to access the 'write1' key");
  EXPECT_EQ(DryRun("u", {"set", "read1", "v"}), "This user has no permissions to access the 'read1' key");
  EXPECT_EQ(DryRun("u", {"lmove", "both1", "write1", "left", "right"}), "OK");  // the destination is only written
  EXPECT_EQ(DryRun("u", {"copy", "read1", "write1"}), "OK");
  EXPECT_EQ(DryRun("u", {"exists", "write1"}), "OK");  // no access flag: any pattern that matches will do
  EXPECT_EQ(DryRun("u", {"exists", "other"}), "This user has no permissions to access the 'other' key");
  EXPECT_EQ(DryRun("u", {"mget", "read1", "both2", "nope"}), "This user has no permissions to access the 'nope' key");
  EXPECT_EQ(DryRun("u", {"eval", "return 1", "1", "nope"}), "This user has no permissions to access the 'nope' key");
}

TEST_F(AclUsersTest, ChannelsAndPatterns) {
  ASSERT_EQ(Set("u", {"on", "+@all", "allkeys", "resetchannels", "&news.*", "&lit"}), "");
  EXPECT_EQ(DryRun("u", {"publish", "news.a", "m"}), "OK");
  EXPECT_EQ(DryRun("u", {"publish", "sports", "m"}), "This user has no permissions to access the 'sports' channel");
  EXPECT_EQ(DryRun("u", {"subscribe", "lit", "news.b"}), "OK");
  EXPECT_EQ(DryRun("u", {"ssubscribe", "x"}), "This user has no permissions to access the 'x' channel");
  // A pattern subscription must match an allowed pattern literally.
  EXPECT_EQ(DryRun("u", {"psubscribe", "news.*"}), "OK");
  EXPECT_EQ(DryRun("u", {"psubscribe", "news.a*"}), "This user has no permissions to access the 'news.a*' channel");
  EXPECT_EQ(DryRun("u", {"unsubscribe", "x"}), "OK");
  User before = *acl_->Find("u");
  ASSERT_EQ(Set("u", {"&more"}), "");
  EXPECT_TRUE(Acl::KeepsChannelsOf(before, *acl_->Find("u")));
  ASSERT_EQ(Set("u", {"resetchannels", "&more"}), "");
  EXPECT_FALSE(Acl::KeepsChannelsOf(before, *acl_->Find("u")));
}

TEST_F(AclUsersTest, SelectorsAreAlternatives) {
  ASSERT_EQ(Set("u", {"on", "+get", "~a*", "(+set ~b*)"}), "");
  EXPECT_EQ(DryRun("u", {"get", "a1"}), "OK");
  EXPECT_EQ(DryRun("u", {"set", "b1", "v"}), "OK");
  // Neither selector: the highest reason is reported (here the key).
  EXPECT_EQ(DryRun("u", {"set", "a1", "v"}), "This user has no permissions to access the 'a1' key");
  EXPECT_EQ(DryRun("u", {"del", "a1"}), "This user has no permissions to run the 'del' command");
  ASSERT_EQ(Set("u", {"clearselectors"}), "");
  EXPECT_EQ(DryRun("u", {"set", "b1", "v"}), "This user has no permissions to run the 'set' command");
}

TEST_F(AclUsersTest, UnrestrictedIsTheFastPath) {
  ASSERT_EQ(Set("u", {"on", "+@all", "~*"}), "");
  EXPECT_FALSE(acl_->Find("u")->unrestricted);  // no channels (acl-pubsub-default resetchannels)
  ASSERT_EQ(Set("u", {"&*"}), "");
  EXPECT_TRUE(acl_->Find("u")->unrestricted);
  ASSERT_EQ(Set("u", {"-get"}), "");
  EXPECT_FALSE(acl_->Find("u")->unrestricted);
  acl_->set_pubsub_default_all(true);
  ASSERT_EQ(Set("v", {"reset"}), "");
  EXPECT_EQ(List("v"), "user v off sanitize-payload &* -@all");
}

TEST_F(AclUsersTest, FileRoundTripAndErrors) {
  ASSERT_EQ(Set("alice", {"on", ">a", "~k*", "(+get ~g*)"}), "");
  const std::string path = ::testing::TempDir() + "/acl_users_test.acl";
  std::string err;
  ASSERT_TRUE(acl_->SaveFile(path, &err)) << err;
  const std::vector<std::string> saved = acl_->UserLines();
  Acl other(table_);
  std::vector<std::shared_ptr<User>> dropped;
  ASSERT_TRUE(other.LoadFile(path, &err, &dropped)) << err;
  EXPECT_EQ(other.UserLines(), saved);
  EXPECT_TRUE(dropped.empty());
  {
    std::ofstream out(path, std::ios::app);
    out << "user alice on\nbogus line\n";
  }
  EXPECT_FALSE(other.LoadFile(path, &err));
  EXPECT_NE(err.find("WARNING: Duplicate user 'alice' found on line 3."), std::string::npos) << err;
  EXPECT_NE(err.find(":4 should start with user keyword followed by the username."), std::string::npos) << err;
  EXPECT_NE(err.find("WARNING: ACL errors detected, no change to the previously active ACL rules was performed"),
            std::string::npos);
  EXPECT_EQ(other.UserLines(), saved);  // unchanged
  std::remove(path.c_str());
}

TEST_F(AclUsersTest, LogGroupsSimilarEntries) {
  acl_->Log(Denied::kCommand, LogContext::kToplevel, "get", "u", "info1", 1000);
  acl_->Log(Denied::kCommand, LogContext::kToplevel, "get", "u", "info2", 2000);
  acl_->Log(Denied::kKey, LogContext::kMulti, "k", "u", "info3", 3000);
  ASSERT_EQ(acl_->log().size(), 2u);
  EXPECT_EQ(acl_->log()[0].object, "k");
  EXPECT_EQ(acl_->log()[1].count, 2u);
  EXPECT_EQ(acl_->log()[1].client_info, "info2");
  acl_->Log(Denied::kCommand, LogContext::kToplevel, "get", "u", "info4", 100000);  // more than a minute later
  EXPECT_EQ(acl_->log().size(), 3u);
  // A lower acllog-max-len trims when the next entry comes, as Redis: a
  // grouped entry moves to the front and trims nothing, a new one trims.
  acl_->set_log_max_len(1);
  EXPECT_EQ(acl_->log().size(), 3u);
  acl_->Log(Denied::kCommand, LogContext::kToplevel, "get", "u", "info5", 100001);
  ASSERT_EQ(acl_->log().size(), 3u);
  EXPECT_EQ(acl_->log()[0].count, 2u);
  acl_->Log(Denied::kKey, LogContext::kToplevel, "k2", "u", "info6", 100002);
  ASSERT_EQ(acl_->log().size(), 1u);
  EXPECT_EQ(acl_->log()[0].object, "k2");
}

}  // namespace
}  // namespace ringkv::server::acl

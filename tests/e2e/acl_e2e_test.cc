// ACL end to end: each check point of the gate (command, subcommand, keys,
// channels, MULTI, EXEC, scripts), AUTH / HELLO errors, ACL LOG, ACL LOAD /
// SAVE, users written by CONFIG REWRITE, and the clients of a deleted user
// or of revoked channels closed. Reply texts are redis-server 7.0.15's.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/e2e/persistence_test_util.h"

namespace ringkv::testing::acl_e2e_test {
namespace {

const std::string kNoPermCmd(const std::string& cmd) {
  return "-NOPERM this user has no permissions to run the '" + cmd + "' command\r\n";
}
const std::string kNoPermKey = "-NOPERM this user has no permissions to access one of the keys used as arguments\r\n";
const std::string kNoPermChannel =
    "-NOPERM this user has no permissions to access one of the channels used as arguments\r\n";
const std::string kWrongPass = "-WRONGPASS invalid username-password pair or user is disabled.\r\n";

std::string Bulk(const std::string& s) { return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n"; }

TEST(AclE2E, EveryCheckPointRefusesWithRedisTexts) {
  TestServer s({"--save", ""});
  ASSERT_TRUE(s.ready());
  RawConn admin(s.port()), c(s.port());
  ASSERT_EQ(Call(admin, {"ACL", "SETUSER", "u1", "on", ">p1", "~k*", "%R~r*", "&ch*", "+get", "+set", "+select|0",
                         "+multi", "+exec", "+eval", "+publish", "+subscribe", "+psubscribe", "+config|get",
                         "+acl|whoami", "+acl|dryrun"}),
            "+OK\r\n");
  EXPECT_EQ(Call(c, {"AUTH", "u1", "p1"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"ACL", "WHOAMI"}), Bulk("u1"));
  // Command and subcommand.
  EXPECT_EQ(Call(c, {"PING"}), kNoPermCmd("ping"));
  EXPECT_EQ(Call(c, {"CONFIG", "GET", "maxmemory"}), "*2\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n");
  EXPECT_EQ(Call(c, {"CONFIG", "SET", "maxmemory", "0"}), kNoPermCmd("config|set"));
  EXPECT_EQ(Call(c, {"SELECT", "0"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"SELECT", "1"}), kNoPermCmd("select"));
  // Keys by access: r* is read-only.
  EXPECT_EQ(Call(c, {"SET", "k1", "v"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"GET", "k1"}), Bulk("v"));
  EXPECT_EQ(Call(c, {"GET", "r1"}), "$-1\r\n");
  EXPECT_EQ(Call(c, {"SET", "r1", "v"}), kNoPermKey);
  EXPECT_EQ(Call(c, {"GET", "zz"}), kNoPermKey);
  // Channels.
  EXPECT_EQ(Call(c, {"PUBLISH", "chat", "m"}), ":0\r\n");
  EXPECT_EQ(Call(c, {"PUBLISH", "zz", "m"}), kNoPermChannel);
  EXPECT_EQ(Call(c, {"SUBSCRIBE", "zz"}), kNoPermChannel);
  EXPECT_EQ(Call(c, {"PSUBSCRIBE", "ch*x"}), kNoPermChannel);  // a pattern must be allowed literally
  // Inside MULTI: refused at queue time, and EXEC aborts.
  EXPECT_EQ(Call(c, {"MULTI"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"GET", "zz"}), kNoPermKey);
  EXPECT_EQ(Call(c, {"GET", "k1"}), "+QUEUED\r\n");
  EXPECT_EQ(Call(c, {"EXEC"}), "-EXECABORT Transaction discarded because of previous errors.\r\n");
  // Rules changed between MULTI and EXEC: checked again at EXEC.
  EXPECT_EQ(Call(c, {"MULTI"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"GET", "k1"}), "+QUEUED\r\n");
  ASSERT_EQ(Call(admin, {"ACL", "SETUSER", "u1", "-get"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"EXEC"}),
            "*1\r\n-NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. "
            "This command is no longer allowed for the following reason: no permission to execute the command or "
            "subcommand\r\n");
  ASSERT_EQ(Call(admin, {"ACL", "SETUSER", "u1", "+get"}), "+OK\r\n");
  // Scripts run as their caller.
  EXPECT_NE(Call(c, {"EVAL", "return redis.call('get','zz')", "0"})
                .find("-ERR The user executing the script can't access at least one of the keys mentioned in the "
                      "command arguments"),
            std::string::npos);
  EXPECT_NE(Call(c, {"EVAL", "return redis.call('ping')", "0"})
                .find("-ERR The user executing the script can't run this command or subcommand"),
            std::string::npos);
  EXPECT_EQ(Call(c, {"EVAL", "return redis.pcall('publish','zz','m')", "0"}),
            "-ERR The user executing the script can't publish to the channel mentioned in the command\r\n");
  EXPECT_EQ(Call(c, {"EVAL", "return redis.acl_check_cmd('ping')", "0"}), "$-1\r\n");  // false
  EXPECT_EQ(Call(c, {"EVAL", "return redis.acl_check_cmd('get','k1')", "0"}), ":1\r\n");
  EXPECT_EQ(Call(c, {"EVAL", "return redis.call('get','k1')", "0"}), Bulk("v"));
  // The default user's clients are untouched.
  EXPECT_EQ(Call(admin, {"GET", "zz"}), "$-1\r\n");
  // DRYRUN.
  EXPECT_EQ(Call(admin, {"ACL", "DRYRUN", "u1", "get", "zz"}),
            Bulk("This user has no permissions to access the 'zz' key"));
  EXPECT_EQ(Call(admin, {"ACL", "DRYRUN", "u1", "get", "k2"}), "+OK\r\n");
  EXPECT_EQ(Call(admin, {"ACL", "DRYRUN", "nouser", "get", "k2"}), "-ERR User 'nouser' not found\r\n");
  EXPECT_EQ(Call(admin, {"ACL", "DRYRUN", "u1", "nosuch"}), "-ERR Command 'nosuch' not found\r\n");
}

TEST(AclE2E, AuthHelloAndTheLog) {
  TestServer s({"--save", ""});
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  EXPECT_EQ(Call(c, {"AUTH", "x"}),
            "-ERR AUTH <password> called without any password configured for the default user. Are you sure your "
            "configuration is correct?\r\n");
  EXPECT_EQ(Call(c, {"AUTH", "nouser", "x"}), kWrongPass);
  ASSERT_EQ(Call(c, {"ACL", "SETUSER", "bob", ">pw", "+@all", "~*"}), "+OK\r\n");  // not "on": disabled
  EXPECT_EQ(Call(c, {"AUTH", "bob", "pw"}), kWrongPass);
  ASSERT_EQ(Call(c, {"ACL", "SETUSER", "bob", "on"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"HELLO", "3", "AUTH", "bob", "bad"}), kWrongPass);
  const std::string auth_log = Call(c, {"ACL", "LOG", "1"});
  EXPECT_EQ(auth_log.rfind("*1\r\n*14\r\n$5\r\ncount\r\n:1\r\n$6\r\nreason\r\n$4\r\nauth\r\n$7\r\ncontext\r\n$8\r\n"
                           "toplevel\r\n$6\r\nobject\r\n$5\r\nHELLO\r\n$8\r\nusername\r\n$3\r\nbob\r\n",
                           0),
            0u)
      << auth_log;
  std::string hello = Call(c, {"HELLO", "3", "AUTH", "bob", "pw"});
  EXPECT_EQ(hello.rfind("%7\r\n", 0), 0u) << hello;
  EXPECT_EQ(Call(c, {"ACL", "WHOAMI"}), Bulk("bob"));
  EXPECT_NE(Call(c, {"CLIENT", "INFO"}).find(" user=bob "), std::string::npos);
  EXPECT_EQ(Call(c, {"ACL", "SETUSER", "bob", "resetchannels", "&x"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"PUBLISH", "y", "m"}), kNoPermChannel);
  std::string log = Call(c, {"ACL", "LOG"});
  EXPECT_NE(log.find("$7\r\nchannel\r\n"), std::string::npos);
  EXPECT_NE(log.find("$6\r\nobject\r\n$1\r\ny\r\n$8\r\nusername\r\n$3\r\nbob\r\n"), std::string::npos);
  EXPECT_EQ(Call(c, {"ACL", "LOG", "RESET"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"ACL", "LOG"}), "*0\r\n");
  // RESET goes back to the default user.
  EXPECT_EQ(Call(c, {"RESET"}), "+RESET\r\n");
  EXPECT_EQ(Call(c, {"ACL", "WHOAMI"}), "$7\r\ndefault\r\n");
  // requirepass is the default user's password.
  EXPECT_EQ(Call(c, {"CONFIG", "SET", "requirepass", "sekret"}), "+OK\r\n");
  EXPECT_NE(Call(c, {"ACL", "GETUSER", "default"}).find(Bulk("passwords") + "*1\r\n"), std::string::npos);
  RawConn fresh(s.port());
  EXPECT_EQ(Call(fresh, {"GET", "x"}), "-NOAUTH Authentication required.\r\n");
  EXPECT_EQ(Call(fresh, {"AUTH", "default", "sekret"}), "+OK\r\n");
  EXPECT_EQ(Call(fresh, {"GET", "x"}), "$-1\r\n");
}

TEST(AclE2E, SlowlogRedactsUsersAndPasswords) {
  TestServer s({"--save", ""});
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "slowlog-log-slower-than", "0"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"SLOWLOG", "RESET"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"ACL", "SETUSER", "u", ">secret", "+get"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "masterauth", "hidden"}), "+OK\r\n");
  // masteruser is sensitive too; Redis 7.0 shows the TLS key passphrase.
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "masteruser", "whoami", "tls-client-key-file-pass", "shown"}), "+OK\r\n");
  const std::string log = Call(c, {"SLOWLOG", "GET", "3"});
  EXPECT_EQ(log.find("whoami"), std::string::npos) << log;
  EXPECT_NE(log.find("$10\r\nmasteruser\r\n$10\r\n(redacted)\r\n$24\r\ntls-client-key-file-pass\r\n$5\r\nshown\r\n"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("secret"), std::string::npos) << log;
  EXPECT_EQ(log.find("hidden"), std::string::npos) << log;
  EXPECT_NE(log.find("*5\r\n$3\r\nACL\r\n$7\r\nSETUSER\r\n$10\r\n(redacted)\r\n$10\r\n(redacted)\r\n$10\r\n(redacted)\r\n"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("$10\r\nmasterauth\r\n$10\r\n(redacted)\r\n"), std::string::npos) << log;
}

TEST(AclE2E, DeletedUsersClientsAreClosedAfterTheReply) {
  TestServer s({"--save", ""});
  ASSERT_TRUE(s.ready());
  RawConn admin(s.port()), victim(s.port()), self(s.port());
  ASSERT_EQ(Call(admin, {"ACL", "SETUSER", "gone", "on", "nopass", "+@all", "~*"}), "+OK\r\n");
  ASSERT_EQ(Call(victim, {"AUTH", "gone", "x"}), "+OK\r\n");
  ASSERT_EQ(Call(self, {"AUTH", "gone", "x"}), "+OK\r\n");
  EXPECT_EQ(Call(self, {"ACL", "DELUSER", "gone", "nosuch"}), ":1\r\n");  // the reply arrives first
  EXPECT_TRUE(self.ReadEof());
  EXPECT_TRUE(victim.ReadEof());
  EXPECT_EQ(Call(admin, {"ACL", "DELUSER", "default"}), "-ERR The 'default' user cannot be removed\r\n");
  EXPECT_EQ(Call(admin, {"PING"}), "+PONG\r\n");
  EXPECT_EQ(Call(admin, {"ACL", "USERS"}), "*1\r\n$7\r\ndefault\r\n");
}

TEST(AclE2E, SubscribersLosingTheirChannelsAreClosed) {
  TestServer s({"--save", ""});
  ASSERT_TRUE(s.ready());
  RawConn admin(s.port()), sub(s.port()), keeps(s.port());
  ASSERT_EQ(Call(admin, {"ACL", "SETUSER", "psub", "on", "nopass", "+@all", "~*", "resetchannels", "&foo", "&bar"}),
            "+OK\r\n");
  ASSERT_EQ(Call(sub, {"AUTH", "psub", "x"}), "+OK\r\n");
  ASSERT_EQ(Call(keeps, {"AUTH", "psub", "x"}), "+OK\r\n");
  EXPECT_EQ(Call(sub, {"SUBSCRIBE", "foo"}), "*3\r\n$9\r\nsubscribe\r\n$3\r\nfoo\r\n:1\r\n");
  EXPECT_EQ(Call(keeps, {"SUBSCRIBE", "bar"}), "*3\r\n$9\r\nsubscribe\r\n$3\r\nbar\r\n:1\r\n");
  // Gaining a channel closes nobody; losing foo closes foo's subscriber.
  ASSERT_EQ(Call(admin, {"ACL", "SETUSER", "psub", "&baz"}), "+OK\r\n");
  ASSERT_EQ(Call(admin, {"ACL", "SETUSER", "psub", "resetchannels", "&bar"}), "+OK\r\n");
  EXPECT_TRUE(sub.ReadEof());
  EXPECT_EQ(Call(keeps, {"PING"}), "*2\r\n$4\r\npong\r\n$0\r\n\r\n");
}

TEST(AclE2E, AclFileLoadAndSaveRoundTrip) {
  const ScopedTempDir scoped_dir;
  const std::string& dir = scoped_dir.path();
  {
    std::ofstream f(dir + "/users.acl");
    f << "user alice on allcommands allkeys &* >alice\nuser bob on -@all +@set +acl ~set* &* >bob\n";
  }
  TestServer s({"--save", "", "--dir", dir, "--aclfile", dir + "/users.acl"});
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  EXPECT_EQ(Call(c, {"ACL", "USERS"}), "*3\r\n$5\r\nalice\r\n$3\r\nbob\r\n$7\r\ndefault\r\n");
  EXPECT_EQ(Call(c, {"AUTH", "bob", "bob"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"SADD", "set1", "a"}), ":1\r\n");
  EXPECT_EQ(Call(c, {"SET", "set1", "v"}), kNoPermCmd("set"));
  ASSERT_EQ(Call(c, {"ACL", "SETUSER", "eve", "on", ">eve", "+get", "allkeys"}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"ACL", "SAVE"}), "+OK\r\n");
  std::ifstream saved(dir + "/users.acl");
  std::string text((std::istreambuf_iterator<char>(saved)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("user eve on #"), std::string::npos) << text;
  EXPECT_NE(text.find("user default on nopass ~* &* +@all\n"), std::string::npos) << text;
  // ACL LOAD replaces every user: clients of the old ones are closed after the reply.
  EXPECT_EQ(Call(c, {"ACL", "LOAD"}), "+OK\r\n");
  EXPECT_TRUE(c.ReadEof());
  RawConn d(s.port());
  EXPECT_EQ(Call(d, {"AUTH", "eve", "eve"}), "+OK\r\n");
  EXPECT_EQ(Call(d, {"GET", "k"}), "$-1\r\n");
  EXPECT_EQ(Call(d, {"SET", "k", "v"}), kNoPermCmd("set"));
  // A broken file changes nothing.
  {
    std::ofstream f(dir + "/users.acl", std::ios::app);
    f << "user eve on\n";
  }
  RawConn e(s.port());
  const std::string err = Call(e, {"ACL", "LOAD"});
  EXPECT_NE(err.find("WARNING: Duplicate user 'eve' found on line"), std::string::npos) << err;
  EXPECT_EQ(Call(e, {"ACL", "USERS"}), "*4\r\n$5\r\nalice\r\n$3\r\nbob\r\n$7\r\ndefault\r\n$3\r\neve\r\n");
  s.Stop();
}

TEST(AclE2E, ConfigRewriteWritesTheUsers) {
  const ScopedTempDir scoped_dir;
  const std::string& dir = scoped_dir.path();
  const std::string conf = dir + "/ringkv.conf";
  {
    std::ofstream f(conf);
    f << "save \"\"\nuser default on nopass ~* &* +@all -flushdb\n";
  }
  {
    TestServer s({"--dir", dir}, RINGKV_SERVER_PATH, conf);
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    EXPECT_EQ(Call(c, {"FLUSHDB"}), kNoPermCmd("flushdb"));
    ASSERT_EQ(Call(c, {"ACL", "SETUSER", "carol", "on", ">c", "+get", "~c*"}), "+OK\r\n");
    ASSERT_EQ(Call(c, {"CONFIG", "REWRITE"}), "+OK\r\n");
    EXPECT_EQ(Call(c, {"ACL", "LOAD"}).substr(0, 70),
              "-ERR This Redis instance is not configured to use an ACL file. You may");
  }
  std::ifstream in(conf);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("user carol on #"), std::string::npos) << text;
  // "user default" resets it first, sanitize-payload included (as Redis).
  EXPECT_NE(text.find("user default on nopass sanitize-payload ~* &* +@all -flushdb\n"), std::string::npos) << text;
  TestServer again({"--dir", dir}, RINGKV_SERVER_PATH, conf);
  ASSERT_TRUE(again.ready());
  RawConn c(again.port());
  EXPECT_EQ(Call(c, {"FLUSHDB"}), kNoPermCmd("flushdb"));
  EXPECT_EQ(Call(c, {"AUTH", "carol", "c"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"GET", "c1"}), "$-1\r\n");
  again.Stop();
}

TEST(AclE2E, StartUpRefusesDuplicateUsersAndUsersBesideAnAclFile) {
  TestServer dup({"--user", "foo", "--user", "foo"});
  EXPECT_FALSE(dup.ready());
  TestServer both({"--user", "foo", "--aclfile", "/nonexistent.acl"});
  EXPECT_FALSE(both.ready());
  TestServer bad_rule({"--user", "foo", "+nosuchcommand"});
  EXPECT_FALSE(bad_rule.ready());
}

TEST(AclE2E, DefaultUserOffMeansNoAuthForNewConnections) {
  TestServer s({"--save", ""});
  ASSERT_TRUE(s.ready());
  RawConn admin(s.port());
  ASSERT_EQ(Call(admin, {"ACL", "SETUSER", "admin", "on", ">a", "+@all", "~*", "&*"}), "+OK\r\n");
  ASSERT_EQ(Call(admin, {"AUTH", "admin", "a"}), "+OK\r\n");
  ASSERT_EQ(Call(admin, {"ACL", "SETUSER", "default", "off"}), "+OK\r\n");
  RawConn c(s.port());
  EXPECT_EQ(Call(c, {"PING"}), "-NOAUTH Authentication required.\r\n");
  EXPECT_EQ(Call(c, {"AUTH", "default", ""}), kWrongPass);
  EXPECT_EQ(Call(c, {"HELLO", "2", "AUTH", "admin", "a"}).substr(0, 4), "*14\r");
  EXPECT_EQ(Call(c, {"PING"}), "+PONG\r\n");
  EXPECT_EQ(Call(c, {"CLIENT", "KILL", "USER", "nosuch"}), "-ERR No such user 'nosuch'\r\n");
}

// masteruser / masterauth both ways with redis-server 7.0: the primary's
// replication user may run only what a replica sends.
bool ReplicatesAsUser(const std::string& primary_bin, const std::string& replica_bin) {
  // Each rule its own argument (one quoted argument would be a user name
  // with spaces, refused by both servers).
  const std::vector<std::string> user{"--user", "repl", "on", ">rpw", "+psync", "+replconf", "+ping"};
  std::vector<std::string> primary_args{"--save", "", "--repl-diskless-sync-delay", "0"};
  primary_args.insert(primary_args.end(), user.begin(), user.end());
  TestServer primary(primary_args, primary_bin);
  TestServer replica({"--save", "", "--masteruser", "repl", "--masterauth", "rpw"}, replica_bin);
  if (!primary.ready() || !replica.ready()) return false;
  RawConn p(primary.port()), r(replica.port());
  Call(p, {"SET", "k", "v"});
  Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())});
  if (!WaitInfo(r, "master_link_status", "up", 10000, "replication")) return false;
  Call(p, {"SET", "k2", "v2"});
  for (int i = 0; i < 200 && Call(r, {"GET", "k2"}) != Bulk("v2"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Call(r, {"GET", "k"}) == Bulk("v") && Call(r, {"GET", "k2"}) == Bulk("v2");
}

TEST(AclE2E, ReplicationAuthenticatesWithMasterUser) {
  EXPECT_TRUE(ReplicatesAsUser(RINGKV_SERVER_PATH, RINGKV_SERVER_PATH));
  if (!HaveTool("redis-server")) GTEST_SKIP() << "redis-server not installed";
  EXPECT_TRUE(ReplicatesAsUser(RINGKV_SERVER_PATH, "/usr/bin/redis-server"));
  EXPECT_TRUE(ReplicatesAsUser("/usr/bin/redis-server", RINGKV_SERVER_PATH));
}

}  // namespace
}  // namespace ringkv::testing::acl_e2e_test

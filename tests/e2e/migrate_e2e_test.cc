// MIGRATE between two servers, as Redis 7.0 answers it: keys moved with
// their TTL (or copied), the target's errors relayed, several keys with
// KEYS, AUTH, connections cached, passwords redacted from SLOWLOG, and the
// move propagated as DEL.
#include <gtest/gtest.h>

#include <string>

#include "tests/e2e/test_server.h"

namespace ringkv::testing::migrate_e2e_test {
namespace {

std::string Call(RawConn& c, const std::vector<std::string>& argv) {
  c.Send(Resp(argv));
  return c.ReadReply();
}

std::string InfoField(RawConn& c, const std::string& section, const std::string& field) {
  const std::string info = Call(c, {"INFO", section});
  size_t p = info.find("\r\n" + field + ":");
  if (p == std::string::npos) return "";
  p += field.size() + 3;
  return info.substr(p, info.find("\r\n", p) - p);
}

TEST(MigrateE2E, MovesCopiesAndReplacesKeysWithTheirTtl) {
  TestServer src;
  TestServer dst;
  ASSERT_TRUE(src.ready());
  ASSERT_TRUE(dst.ready());
  RawConn a(src.port()), b(dst.port());
  const std::string port = std::to_string(dst.port());
  ASSERT_EQ(Call(a, {"SET", "k", "v", "EX", "100"}), "+OK\r\n");
  ASSERT_EQ(Call(a, {"RPUSH", "l", "1", "2", "3"}), ":3\r\n");
  EXPECT_EQ(Call(a, {"MIGRATE", "127.0.0.1", port, "missing", "3", "5000"}), "+NOKEY\r\n");
  EXPECT_EQ(Call(a, {"MIGRATE", "127.0.0.1", port, "k", "3", "5000"}), "+OK\r\n");
  EXPECT_EQ(Call(a, {"EXISTS", "k"}), ":0\r\n");
  ASSERT_EQ(Call(b, {"SELECT", "3"}), "+OK\r\n");
  EXPECT_EQ(Call(b, {"GET", "k"}), "$1\r\nv\r\n");
  const std::string ttl = Call(b, {"TTL", "k"});
  EXPECT_TRUE(ttl == ":100\r\n" || ttl == ":99\r\n") << ttl;
  // COPY keeps the source; the target's BUSYKEY comes back unless REPLACE.
  EXPECT_EQ(Call(a, {"MIGRATE", "127.0.0.1", port, "l", "3", "5000", "COPY"}), "+OK\r\n");
  EXPECT_EQ(Call(a, {"LLEN", "l"}), ":3\r\n");
  EXPECT_EQ(Call(a, {"MIGRATE", "127.0.0.1", port, "l", "3", "5000", "COPY"}),
            "-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n");
  ASSERT_EQ(Call(a, {"RPUSH", "l", "4"}), ":4\r\n");
  EXPECT_EQ(Call(a, {"MIGRATE", "127.0.0.1", port, "l", "3", "5000", "REPLACE"}), "+OK\r\n");
  EXPECT_EQ(Call(b, {"LRANGE", "l", "0", "-1"}), "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n");
  // KEYS: the key argument must be empty; missing keys are skipped.
  EXPECT_EQ(Call(a, {"MIGRATE", "127.0.0.1", port, "x", "3", "5000", "KEYS", "a"}),
            "-ERR When using MIGRATE KEYS option, the key argument must be set to the empty string\r\n");
  ASSERT_EQ(Call(a, {"MSET", "a", "1", "b", "2"}), "+OK\r\n");
  EXPECT_EQ(Call(a, {"MIGRATE", "127.0.0.1", port, "", "3", "5000", "KEYS", "a", "nope", "b"}), "+OK\r\n");
  EXPECT_EQ(Call(a, {"DBSIZE"}), ":0\r\n");
  EXPECT_EQ(Call(b, {"MGET", "a", "b"}), "*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
  EXPECT_EQ(InfoField(a, "stats", "migrate_cached_sockets"), "1");
  // Movable keys, as Redis's migrateGetKeys finds them.
  EXPECT_EQ(Call(a, {"COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "9", "AUTH2", "u", "p", "KEYS", "x", "y"}),
            "*2\r\n$1\r\nx\r\n$1\r\ny\r\n");
  // Errors in Redis's order: options, then the integers.
  EXPECT_EQ(Call(a, {"MIGRATE", "127.0.0.1", port, "k", "x", "5000", "bogus"}), "-ERR syntax error\r\n");
  EXPECT_EQ(Call(a, {"MIGRATE", "127.0.0.1", port, "k", "x", "5000", "AUTH"}), "-ERR syntax error\r\n");
  EXPECT_EQ(Call(a, {"MIGRATE", "127.0.0.1", port, "k", "x", "5000"}),
            "-ERR value is not an integer or out of range\r\n");
}

TEST(MigrateE2E, RelaysAuthErrorsAndRedactsPasswords) {
  TestServer src;
  TestServer dst({"--requirepass", "secret"});
  ASSERT_TRUE(src.ready());
  ASSERT_TRUE(dst.ready());
  RawConn a(src.port());
  const std::string port = std::to_string(dst.port());
  ASSERT_EQ(Call(a, {"SET", "k", "v"}), "+OK\r\n");
  ASSERT_EQ(Call(a, {"CONFIG", "SET", "slowlog-log-slower-than", "0"}), "+OK\r\n");
  const std::string wrong = Call(a, {"MIGRATE", "127.0.0.1", port, "k", "0", "5000", "AUTH", "nope"});
  EXPECT_EQ(wrong.rfind("-ERR Target instance replied with error: WRONGPASS", 0), 0u) << wrong;
  EXPECT_EQ(Call(a, {"EXISTS", "k"}), ":1\r\n");  // not acknowledged: kept
  EXPECT_EQ(Call(a, {"MIGRATE", "127.0.0.1", port, "k", "0", "5000", "AUTH2", "default", "secret"}), "+OK\r\n");
  EXPECT_EQ(Call(a, {"EXISTS", "k"}), ":0\r\n");
  const std::string log = Call(a, {"SLOWLOG", "GET", "2"});
  EXPECT_NE(log.find("$5\r\nAUTH2\r\n$10\r\n(redacted)\r\n$10\r\n(redacted)\r\n"), std::string::npos) << log;
  EXPECT_EQ(log.find("secret"), std::string::npos);
  EXPECT_EQ(log.find("nope"), std::string::npos);
}

TEST(MigrateE2E, TimeoutsAndRefusedConnectionsAreIoErrors) {
  TestServer src;
  ASSERT_TRUE(src.ready());
  RawConn a(src.port());
  ASSERT_EQ(Call(a, {"SET", "k", "v"}), "+OK\r\n");
  // Nobody listens on port 1: refused at the first write, retried once.
  EXPECT_EQ(Call(a, {"MIGRATE", "127.0.0.1", "1", "k", "0", "500"}),
            "-IOERR error or timeout writing to target instance\r\n");
  // Itself as the target: it cannot answer while it waits (a timeout).
  EXPECT_EQ(Call(a, {"MIGRATE", "127.0.0.1", std::to_string(src.port()), "k", "0", "200"}),
            "-IOERR error or timeout reading to target instance\r\n");
  EXPECT_EQ(Call(a, {"GET", "k"}), "$1\r\nv\r\n");
  EXPECT_EQ(Call(a, {"PING"}), "+PONG\r\n");
}

}  // namespace
}  // namespace ringkv::testing::migrate_e2e_test

// End-to-end tests of the I/O layer's choices: the Unix domain socket
// (unixsocket / unixsocketperm, next to TCP on the same loop), the epoll
// backend (io-backend epoll), and the fall-back to it when io_uring_setup is
// refused by a seccomp filter (no_io_uring, as in a default Docker container).
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/e2e/hiredis_util.h"
#include "tests/e2e/test_server.h"

namespace ringkv::testing::io_backend_e2e_test {
namespace {

std::string Text(redisContext* c, const std::vector<std::string>& args) {
  redisReply* r = CommandArgv(c, args);
  if (r == nullptr) return "<io error>";
  std::string s;
  if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_ERROR) {
    s.assign(r->str, r->len);
  } else if (r->type == REDIS_REPLY_INTEGER) {
    s = std::to_string(r->integer);
  } else if (r->type == REDIS_REPLY_ARRAY) {
    for (size_t i = 0; i < r->elements; ++i) {
      if (i > 0) s += ' ';
      s.append(r->element[i]->str, r->element[i]->len);
    }
  }
  freeReplyObject(r);
  return s;
}

std::string InfoField(redisContext* c, const std::string& field) {
  std::istringstream in(Text(c, {"INFO", "server"}));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return line.substr(field.size() + 1, line.find('\r') - field.size() - 1);
  }
  return "";
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Pipelined writes and reads, and a reply far larger than a socket buffer
// (the epoll backend then waits for EPOLLOUT): every reply checked.
void ExerciseConnection(redisContext* c) {
  for (int i = 0; i < 2000; ++i) {
    redisAppendCommand(c, "SET k%d v%d", i, i);
    redisAppendCommand(c, "GET k%d", i);
  }
  for (int i = 0; i < 2000; ++i) {
    void* r = nullptr;
    ASSERT_EQ(redisGetReply(c, &r), REDIS_OK);
    EXPECT_STREQ(static_cast<redisReply*>(r)->str, "OK");
    freeReplyObject(r);
    ASSERT_EQ(redisGetReply(c, &r), REDIS_OK);
    EXPECT_EQ(std::string(static_cast<redisReply*>(r)->str), "v" + std::to_string(i));
    freeReplyObject(r);
  }
  const std::string big(8 << 20, 'x');
  EXPECT_EQ(Text(c, {"SET", "big", big}), "OK");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Text(c, {"GET", "big"}), big);
}

TEST(UnixSocketE2E, ServesClientsNextToTcp) {
  const ScopedTempDir scoped_dir;
  const std::string& dir = scoped_dir.path();
  const std::string sock = dir + "/ringkv.sock";
  {
    TestServer s({"--unixsocket", sock, "--unixsocketperm", "700"});
    ASSERT_TRUE(s.ready());
    struct stat st {};
    ASSERT_EQ(stat(sock.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0700u);

    Redis u(redisConnectUnix(sock.c_str()));
    ASSERT_TRUE(u && !u->err) << (u ? u->errstr : "");
    redisSetTimeout(u.get(), timeval{20, 0});
    EXPECT_EQ(Text(u.get(), {"PING"}), "PONG");
    ExerciseConnection(u.get());
    // As redis-server 7.0: the socket's path, port 0, for both ends.
    const std::string list = Text(u.get(), {"CLIENT", "LIST", "ID", Text(u.get(), {"CLIENT", "ID"})});
    EXPECT_NE(list.find("addr=" + sock + ":0 laddr=" + sock + ":0 "), std::string::npos) << list;
    EXPECT_EQ(Text(u.get(), {"CONFIG", "GET", "unixsocket"}), "unixsocket " + sock);
    EXPECT_EQ(Text(u.get(), {"CONFIG", "GET", "unixsocketperm"}), "unixsocketperm 700");
    EXPECT_EQ(Text(u.get(), {"CONFIG", "SET", "unixsocket", "/tmp/x"}).rfind("ERR", 0), 0u);

    // redis-cli -s, when Debian's redis-tools is installed.
    if (std::filesystem::exists("/usr/bin/redis-cli")) {
      std::string out;
      if (FILE* p = popen(("/usr/bin/redis-cli -s " + sock + " SET via-cli yes 2>&1").c_str(), "r")) {
        char buf[256];
        while (fgets(buf, sizeof(buf), p) != nullptr) out += buf;
        pclose(p);
      }
      EXPECT_EQ(out, "OK\n");
      EXPECT_EQ(Text(u.get(), {"GET", "via-cli"}), "yes");
    }
    // redis-py over the socket (Debian's python3-redis, scripts/deps.sh), run
    // by Debian's own interpreter: a python3 earlier on PATH may not see it.
    if (std::filesystem::exists("/usr/bin/python3") &&
        std::system("/usr/bin/python3 -c 'import redis' 2>/dev/null") == 0) {
      const std::string script =
          "import redis; r = redis.Redis(unix_socket_path='" + sock + "'); r.set('via-py', 'ok'); "
          "p = r.pipeline(); [p.incr('py-n') for _ in range(100)]; "
          "print(r.get('via-py').decode(), p.execute()[-1], r.get('k7').decode())";
      std::string out;
      if (FILE* p = popen(("/usr/bin/python3 -c \"" + script + "\" 2>&1").c_str(), "r")) {
        char buf[256];
        while (fgets(buf, sizeof(buf), p) != nullptr) out += buf;
        pclose(p);
      }
      EXPECT_EQ(out, "ok 100 v7\n");
      EXPECT_EQ(Text(u.get(), {"GET", "py-n"}), "100");
    }
    // A TCP client of the same server sees what the Unix one wrote.
    Redis t = Connect(s.port());
    EXPECT_EQ(Text(t.get(), {"GET", "k7"}), "v7");
    EXPECT_EQ(Text(t.get(), {"CLIENT", "KILL", "ADDR", sock + ":0"}), "1");  // the Unix client
    EXPECT_EQ(Text(t.get(), {"PING"}), "PONG");
    EXPECT_EQ(s.Stop(), 0);
  }
  // Removed at shutdown, as Redis does.
  EXPECT_FALSE(std::filesystem::exists(sock));
}

TEST(UnixSocketE2E, ProtectedModeTreatsUnixSocketAsLocal) {
  const ScopedTempDir scoped_dir;
  const std::string& dir = scoped_dir.path();
  const std::string sock = dir + "/ringkv.sock";
  TestServer s({"--unixsocket", sock, "--protected-mode", "yes", "--bind", "* -::*"});
  ASSERT_TRUE(s.ready());
  Redis u(redisConnectUnix(sock.c_str()));
  ASSERT_TRUE(u && !u->err);
  EXPECT_EQ(Text(u.get(), {"PING"}), "PONG");
  EXPECT_EQ(Text(u.get(), {"SET", "a", "1"}), "OK");
  s.Stop();
}

TEST(IoBackendE2E, EpollWhenConfigured) {
  const ScopedTempDir scoped_dir;
  const std::string& dir = scoped_dir.path();
  const std::string sock = dir + "/ringkv.sock";
  TestServer s({"--io-backend", "epoll", "--unixsocket", sock, "--appendonly", "yes", "--appendfsync", "always"});
  ASSERT_TRUE(s.ready());
  Redis c = Connect(s.port());
  EXPECT_EQ(InfoField(c.get(), "multiplexing_api"), "epoll");
  EXPECT_EQ(Text(c.get(), {"CONFIG", "GET", "io-backend"}), "io-backend epoll");
  ExerciseConnection(c.get());  // every write fsynced through the backend's worker
  Redis u(redisConnectUnix(sock.c_str()));
  ASSERT_TRUE(u && !u->err);
  EXPECT_EQ(Text(u.get(), {"GET", "k1999"}), "v1999");
  s.Stop();
}

TEST(IoBackendE2E, EpollWithIoThreads) {
  TestServer s({"--io-backend", "epoll", "--io-threads", "2"});
  ASSERT_TRUE(s.ready());
  std::vector<Redis> clients;
  for (int i = 0; i < 4; ++i) clients.push_back(Connect(s.port()));
  for (Redis& c : clients) ExerciseConnection(c.get());
  EXPECT_EQ(Text(clients[0].get(), {"DBSIZE"}), "2001");
}

TEST(IoBackendE2E, AutoFallsBackToEpollWhenSeccompRefusesIoUring) {
  for (const char* how : {"EPERM", "ENOSYS"}) {
    SCOPED_TRACE(how);
    const ScopedTempDir scoped_dir;
    const std::string& dir = scoped_dir.path();
    const std::string launcher = std::string(NO_IO_URING_PATH) + (std::string(how) == "ENOSYS" ? " --enosys" : "");
    setenv("RINGKV_TEST_LAUNCHER", launcher.c_str(), 1);
    TestServer s({"--dir", dir, "--logfile", dir + "/log", "--io-backend", "auto"});
    unsetenv("RINGKV_TEST_LAUNCHER");
    ASSERT_TRUE(s.ready());
    Redis c = Connect(s.port());
    EXPECT_EQ(InfoField(c.get(), "multiplexing_api"), "epoll");
    ExerciseConnection(c.get());
    s.Stop();
    const std::string log = ReadFile(dir + "/log");
    EXPECT_NE(log.find("io_uring cannot be used: io_uring_setup is "), std::string::npos) << log;
    EXPECT_NE(log.find(std::string("(") + how + ")"), std::string::npos) << log;
    EXPECT_NE(log.find("Using the epoll backend"), std::string::npos) << log;
    EXPECT_NE(log.find("Server initialized (io-threads 1, epoll)"), std::string::npos) << log;
  }
}

TEST(IoBackendE2E, ForcedIoUringFailsWhenRefused) {
  const ScopedTempDir scoped_dir;
  const std::string& dir = scoped_dir.path();
  setenv("RINGKV_TEST_LAUNCHER", NO_IO_URING_PATH, 1);
  TestServer s({"--dir", dir, "--logfile", dir + "/log", "--io-backend", "io_uring"});
  unsetenv("RINGKV_TEST_LAUNCHER");
  EXPECT_FALSE(s.ready());
  const std::string log = ReadFile(dir + "/log");
  EXPECT_NE(log.find("io-backend io_uring is configured"), std::string::npos) << log;
  // Refused before anything was loaded or bound.
  EXPECT_EQ(log.find("Server initialized"), std::string::npos) << log;
}

}  // namespace
}  // namespace ringkv::testing::io_backend_e2e_test

// Running under a service manager, and the command-line checks: sd_notify
// datagrams (supervised systemd) seen on a NOTIFY_SOCKET the test owns --
// READY=1 only once a slow load finished, STATUS= lines before it,
// STOPPING=1 at shutdown; shutdown-on-sigterm's options; oom-score-adj per
// role; --check-config and --version.
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/e2e/persistence_test_util.h"

namespace ringkv::testing::supervision_e2e_test {
namespace {

// A unix datagram socket bound at <dir>/notify.sock, exported as
// $NOTIFY_SOCKET while it lives (servers started meanwhile inherit it).
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& dir) : path_(dir + "/notify.sock") {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path_.c_str());
    ok_ = fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    setenv("NOTIFY_SOCKET", path_.c_str(), 1);
  }
  ~NotifySocket() {
    unsetenv("NOTIFY_SOCKET");
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return ok_; }
  // The next datagram within `timeout_ms`; "" when none came.
  std::string Next(int timeout_ms) {
    timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    std::array<char, 4096> buf;
    const ssize_t n = recv(fd_, buf.data(), buf.size(), 0);
    return n > 0 ? std::string(buf.data(), static_cast<size_t>(n)) : std::string();
  }
  // Datagrams until one equal to `want` (included) or the timeout.
  std::vector<std::string> Until(const std::string& want, int timeout_ms) {
    std::vector<std::string> got;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      std::string d = Next(100);
      if (d.empty()) continue;
      got.push_back(d);
      if (d == want) break;
    }
    return got;
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool ok_ = false;
};

// An RDB of `keys` keys in `dir`, written by a server started there.
void MakeDataset(const TempDir& dir, int keys) {
  TestServer s(InDir(dir));
  RawConn c(s.port());
  ASSERT_EQ(Call(c, {"DEBUG", "POPULATE", std::to_string(keys)}), "+OK\r\n");
  ASSERT_EQ(Call(c, {"SAVE"}), "+OK\r\n");
}

TEST(SupervisionTest, ReadyOnlyAfterTheLoadWithStatusLinesBefore) {
  TempDir dir;
  MakeDataset(dir, 1500);
  NotifySocket notify(dir.path());
  ASSERT_TRUE(notify.ok());
  // 1500 keys at 1 ms each: the load takes about 1.5 s.
  TestServer s(InDir(dir, {"--supervised", "systemd", "--key-load-delay", "1000",
                           "--loading-process-events-interval-bytes", "1024"}),
               RINGKV_SERVER_PATH, "", TestServer::WaitFor::kAnswer);
  RawConn c(s.port());
  const std::string first = Call(c, {"PING"});
  ASSERT_EQ(first.rfind("-LOADING", 0), 0u) << first;  // still loading ...
  std::vector<std::string> got = notify.Until("READY=1\n", 20000);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.front(), "STATUS=ringkv is loading...\n");
  ASSERT_EQ(got.back(), "READY=1\n");
  // ... and READY=1 came only once it was done: PONG and every key.
  EXPECT_EQ(Call(c, {"PING"}), "+PONG\r\n");
  EXPECT_EQ(Call(c, {"DBSIZE"}), ":1500\r\n");
  bool progress = false;
  for (const std::string& d : got) progress |= d.rfind("STATUS=Loading the dataset: ", 0) == 0;
  EXPECT_TRUE(progress) << "no loading progress line among " << got.size() << " datagrams";
  ASSERT_GE(got.size(), 2u);
  EXPECT_EQ(got[got.size() - 2], "STATUS=Ready to accept connections\n");
  // Shutdown: STOPPING=1, and nothing says READY again.
  c.Send(Resp({"SHUTDOWN", "NOSAVE"}));
  int status = 0;
  EXPECT_TRUE(s.WaitExit(&status));
  EXPECT_EQ(notify.Until("STOPPING=1\n", 5000).back(), "STOPPING=1\n");
}

TEST(SupervisionTest, AReplicaSaysItWaitsForItsSyncThenThatItSynced) {
  TestServer primary({"--repl-diskless-sync-delay", "0"});
  TempDir dir;
  NotifySocket notify(dir.path());
  TestServer replica(InDir(dir, {"--supervised", "auto", "--replicaof", "127.0.0.1", std::to_string(primary.port())}));
  std::vector<std::string> got =
      notify.Until("STATUS=MASTER <-> REPLICA sync: Finished with success. Ready to accept connections in read-write "
                   "mode.\n",
                   10000);
  ASSERT_GE(got.size(), 3u);
  EXPECT_EQ(got[1], "STATUS=Ready to accept connections in read-only mode. Waiting for MASTER <-> REPLICA sync\n");
  EXPECT_EQ(got[2], "READY=1\n");
}

TEST(SupervisionTest, SystemdWithoutNotifySocketRunsUnsupervised) {
  TempDir dir;
  TestServer s(InDir(dir, {"--supervised", "systemd", "--logfile", "server.log"}));
  RawConn c(s.port());
  EXPECT_EQ(Call(c, {"PING"}), "+PONG\r\n");
  std::ifstream log(dir.path() + "/server.log");
  std::stringstream text;
  text << log.rdbuf();
  EXPECT_NE(text.str().find("systemd supervision error: NOTIFY_SOCKET not found!"), std::string::npos);
  (void)Call(c, {"SHUTDOWN", "NOSAVE"});
}

// SIGTERM follows shutdown-on-sigterm: nosave leaves no RDB although save
// points exist; the default saves.
TEST(SupervisionTest, ShutdownOnSigtermChoosesWhetherToSave) {
  for (const char* option : {"nosave", "default"}) {
    TempDir dir;
    {
      TestServer s({"--dir", dir.path(), "--save", "3600 1", "--shutdown-on-sigterm", option});
      RawConn c(s.port());
      ASSERT_EQ(Call(c, {"SET", "k", "v"}), "+OK\r\n");
      EXPECT_EQ(Call(c, {"CONFIG", "GET", "shutdown-on-sigterm"}),
                std::string("*2\r\n$19\r\nshutdown-on-sigterm\r\n$") + std::to_string(std::strlen(option)) + "\r\n" +
                    option + "\r\n");
      EXPECT_EQ(s.Stop(), 0);
    }
    EXPECT_EQ(std::filesystem::exists(dir.path() + "/dump.rdb"), std::string(option) == "default") << option;
  }
}

int OomScore(RawConn& c) {
  const std::string pid = Info(c, "process_id", "server");
  return std::stoi(ReadFile("/proc/" + pid + "/oom_score_adj"));
}

// oom-score-adj relative: the score the process started with plus the
// primary's value; the replica's once it replicates (the cron follows the
// role); back to the start when turned off.
TEST(SupervisionTest, OomScoreFollowsTheRoleAndConfigSet) {
  std::ifstream self("/proc/self/oom_score_adj");
  int base = 0;
  self >> base;
  if (base + 20 > 1000) GTEST_SKIP() << "oom_score_adj already near the maximum";
  TestServer primary;
  TestServer s({"--oom-score-adj", "yes", "--oom-score-adj-values", "10 20 30"});
  RawConn c(s.port());
  EXPECT_EQ(OomScore(c), base + 10);
  ASSERT_EQ(Call(c, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  for (int i = 0; i < 100 && OomScore(c) != base + 20; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(OomScore(c), base + 20);
  EXPECT_EQ(Call(c, {"CONFIG", "SET", "oom-score-adj", "no"}), "+OK\r\n");
  EXPECT_EQ(OomScore(c), base);
}

// Runs the server binary with `args`; returns its exit status and output.
int RunBinary(const std::vector<std::string>& args, std::string* out) {
  std::string cmd = RINGKV_SERVER_PATH;
  for (const std::string& a : args) cmd += " '" + a + "'";
  cmd += " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out->append(buf, n);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(SupervisionTest, CheckConfigValidatesWithoutStarting) {
  TempDir dir;
  const std::string good = dir.path() + "/good.conf", bad = dir.path() + "/bad.conf";
  std::ofstream(good) << "port 7777\nsupervised systemd\noom-score-adj-values 0 200 800\n";
  std::ofstream(bad) << "port 7777\nshutdown-on-sigterm save nosave\n";
  std::string out;
  EXPECT_EQ(RunBinary({"--check-config", good}, &out), 0);
  EXPECT_EQ(out, "Configuration OK\n");
  out.clear();
  EXPECT_EQ(RunBinary({"--check-config", bad}, &out), 1);
  EXPECT_NE(out.find(">>> 'shutdown-on-sigterm save nosave'"), std::string::npos) << out;
  EXPECT_NE(out.find("shutdown options SAVE and NOSAVE can't be used simultaneously"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(RunBinary({"--check-config", good, "--port", "x"}, &out), 1) << out;
  out.clear();
  EXPECT_EQ(RunBinary({"--version"}, &out), 0);
  EXPECT_EQ(out.rfind("ringkv server v=", 0), 0u) << out;
}

}  // namespace
}  // namespace ringkv::testing::supervision_e2e_test

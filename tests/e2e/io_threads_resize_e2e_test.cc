// io-threads changed at runtime (issue 20, part 5): CONFIG SET io-threads N
// starts or retires I/O threads and hands their connections over between
// loop turns. Under a pipelined load on several connections every reply is
// checked, in order, while the count goes up and down; no connection is
// dropped. The same over the epoll backend, with a primary streaming to 3
// replicas (no resync caused by the change), and CONFIG GET / REWRITE /
// refused values as Redis words them.
//
// The servers run with RINGKV_IO_THREADS_UNCAPPED=1: the cap of io-threads
// at the CPUs of the affinity mask would otherwise keep a small machine at
// 2 threads.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/persistence_test_util.h"

namespace ringkv::testing::io_threads_resize_e2e_test {
namespace {

// Servers started while one lives run their io-threads uncapped.
class Uncapped {
 public:
  Uncapped() { setenv("RINGKV_IO_THREADS_UNCAPPED", "1", 1); }
  ~Uncapped() { unsetenv("RINGKV_IO_THREADS_UNCAPPED"); }
};

// The I/O threads other than the main one (named io_thd_N, as Redis's).
int IoThreadsRunning(int pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream comm(dir + "/" + e->d_name + "/comm");
    std::string name;
    if (std::getline(comm, name) && name.rfind("io_thd_", 0) == 0) ++n;
  }
  closedir(d);
  return n;
}

bool WaitIoThreads(int pid, int threads, int timeout_ms = 10000) {
  for (int i = 0; i < timeout_ms / 10; ++i) {
    if (IoThreadsRunning(pid) == threads - 1) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

std::string ConfigGetReply(const std::string& name, const std::string& value) {
  return "*2\r\n$" + std::to_string(name.size()) + "\r\n" + name + "\r\n$" + std::to_string(value.size()) + "\r\n" +
         value + "\r\n";
}

// One client's pipelined load: two batches of INCRs on its own key (and a
// GET of a 200 KB value, a reply of many chunks) in flight at a time, every
// reply read and checked in order.
class Loader {
 public:
  Loader(int port, int id) : key_("ctr:" + std::to_string(id)), big_key_("big:" + std::to_string(id)) {
    conn_ = std::make_unique<RawConn>(port);
    big_ = std::string(200 * 1024, static_cast<char>('a' + id % 26));
    ok_ = conn_->ok() && Call(*conn_, {"SET", big_key_, big_}) == "+OK\r\n";
    thread_ = std::thread([this] { Run(); });
  }
  ~Loader() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  bool ok() const { return ok_; }
  int errors() const { return errors_; }
  int64_t count() const { return count_; }
  int batches() const { return batches_; }
  const std::string& first_error() const { return first_error_; }
  const std::string& key() const { return key_; }

 private:
  static constexpr int kIncrs = 100;
  std::string Batch() {
    std::string b;
    for (int i = 0; i < kIncrs; ++i) b += Resp({"INCR", key_});
    b += Resp({"GET", big_key_});
    return b;
  }
  void Expect(const std::string& got, const std::string& want) {
    if (got == want) return;
    if (errors_++ == 0) first_error_ = "got " + got.substr(0, 80) + " want " + want.substr(0, 80);
  }
  static bool Eof(const std::string& r) { return r.size() >= 5 && r.compare(r.size() - 5, 5, "<eof>") == 0; }
  bool ReadBatch() {
    for (int i = 0; i < kIncrs; ++i) {
      const std::string r = conn_->ReadReply();
      Expect(r, ":" + std::to_string(++count_) + "\r\n");
      if (Eof(r)) return false;
    }
    const std::string r = conn_->ReadReply();
    Expect(r, "$" + std::to_string(big_.size()) + "\r\n" + big_ + "\r\n");
    ++batches_;
    return !Eof(r);
  }
  void Run() {
    if (!ok_) return;
    // Two batches in flight: one is always queued or being answered while
    // the connection moves.
    if (!conn_->Send(Batch())) return Expect("<send failed>", "sent");
    while (!stop_) {
      if (!conn_->Send(Batch())) return Expect("<send failed>", "sent");
      if (!ReadBatch()) return;
    }
    ReadBatch();
  }

  const std::string key_, big_key_;
  std::string big_;
  std::unique_ptr<RawConn> conn_;
  bool ok_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<int> errors_{0}, batches_{0};
  std::atomic<int64_t> count_{0};
  std::string first_error_;
  std::thread thread_;
};

const int kSteps[] = {4, 2, 1, 3, 1, 4, 3, 2, 1};

// 1 -> 4 -> 2 -> 1 -> 3 -> 1 -> 4 -> 3 -> 2 -> 1 under load.
void ResizeUnderLoad(const std::vector<std::string>& extra) {
  Uncapped uncapped;
  std::vector<std::string> args = {"--save", "", "--io-threads", "1"};
  args.insert(args.end(), extra.begin(), extra.end());
  TestServer s(args);
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  const int pid = std::stoi(Info(c, "process_id", "server"));
  ASSERT_TRUE(WaitIoThreads(pid, 1));
  std::vector<std::unique_ptr<Loader>> loaders;
  for (int i = 0; i < 8; ++i) {
    loaders.push_back(std::make_unique<Loader>(s.port(), i));
    ASSERT_TRUE(loaders.back()->ok());
  }
  const std::string clients = Info(c, "connected_clients", "clients");
  EXPECT_EQ(clients, "9");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  uint64_t threaded_reads = std::stoull(Info(c, "io_threaded_reads_processed", "stats"));
  EXPECT_EQ(threaded_reads, 0u);  // one thread: the main one reads everything
  for (int n : kSteps) {
    SCOPED_TRACE("io-threads " + std::to_string(n));
    ASSERT_EQ(Call(c, {"CONFIG", "SET", "io-threads", std::to_string(n)}), "+OK\r\n");
    ASSERT_TRUE(WaitIoThreads(pid, n)) << IoThreadsRunning(pid);
    EXPECT_EQ(Call(c, {"CONFIG", "GET", "io-threads"}), ConfigGetReply("io-threads", std::to_string(n)));
    EXPECT_TRUE(WaitInfo(c, "io_threads_active", n > 1 ? "1" : "0", 5000, "server"));
    // Every client goes on (within 10 s: an ASan build on a loaded machine
    // is slow, and a connection that stalled for good never would).
    std::vector<int> before;
    for (auto& l : loaders) before.push_back(l->batches());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    for (size_t i = 0; i < loaders.size(); ++i) {
      for (int w = 0; w < 1000 && loaders[i]->batches() <= before[i]; ++w) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      EXPECT_GT(loaders[i]->batches(), before[i]) << "client " << i << " stalled";
      EXPECT_EQ(loaders[i]->errors(), 0) << "client " << i << ": " << loaders[i]->first_error();
    }
    // Connections moved to the new threads read there; the counts never go
    // back when threads retire.
    const uint64_t now = std::stoull(Info(c, "io_threaded_reads_processed", "stats"));
    EXPECT_GE(now, threaded_reads);
    if (n > 1) {
      EXPECT_GT(now, threaded_reads);
    }
    threaded_reads = now;
    EXPECT_EQ(Info(c, "connected_clients", "clients"), clients);
  }
  for (auto& l : loaders) l->Stop();
  for (size_t i = 0; i < loaders.size(); ++i) {
    EXPECT_EQ(loaders[i]->errors(), 0) << "client " << i << ": " << loaders[i]->first_error();
    EXPECT_GE(loaders[i]->batches(), 10) << "client " << i;
    EXPECT_EQ(Call(c, {"GET", loaders[i]->key()}),
              "$" + std::to_string(std::to_string(loaders[i]->count()).size()) + "\r\n" +
                  std::to_string(loaders[i]->count()) + "\r\n");
  }
  EXPECT_EQ(Info(c, "connected_clients", "clients"), clients);
}

TEST(IoThreadsResizeE2E, PipelinedLoadKeepsEveryReply) { ResizeUnderLoad({}); }

TEST(IoThreadsResizeE2E, PipelinedLoadKeepsEveryReplyEpoll) { ResizeUnderLoad({"--io-backend", "epoll"}); }

// Blocked clients and a subscriber keep their state across moves: a BLPOP
// waiting through the changes is answered once a push comes, and messages
// published meanwhile all arrive, in order.
TEST(IoThreadsResizeE2E, BlockedClientAndSubscriberMove) {
  Uncapped uncapped;
  TestServer s({"--save", "", "--io-threads", "1"});
  ASSERT_TRUE(s.ready());
  RawConn c(s.port()), blocked(s.port()), sub(s.port());
  const int pid = std::stoi(Info(c, "process_id", "server"));
  ASSERT_TRUE(blocked.Send(Resp({"BLPOP", "list", "0"})));
  ASSERT_EQ(Call(sub, {"SUBSCRIBE", "ch"}), "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n");
  int published = 0;
  for (int n : kSteps) {
    ASSERT_EQ(Call(c, {"CONFIG", "SET", "io-threads", std::to_string(n)}), "+OK\r\n");
    for (int i = 0; i < 50; ++i) EXPECT_EQ(Call(c, {"PUBLISH", "ch", std::to_string(published++)}), ":1\r\n");
    ASSERT_TRUE(WaitIoThreads(pid, n));
  }
  EXPECT_EQ(Call(c, {"RPUSH", "list", "x"}), ":1\r\n");
  EXPECT_EQ(blocked.ReadReply(), "*2\r\n$4\r\nlist\r\n$1\r\nx\r\n");
  for (int i = 0; i < published; ++i) {
    const std::string m = std::to_string(i);
    ASSERT_EQ(sub.ReadReply(), "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$" + std::to_string(m.size()) + "\r\n" + m + "\r\n");
  }
  EXPECT_EQ(Info(c, "connected_clients", "clients"), "3");
}

// A client that stopped reading (its socket full, a send waiting for room)
// does not hold a retiring thread: the send is cancelled after a while and
// the connection moves with everything unsent, which it then reads whole.
TEST(IoThreadsResizeE2E, StalledReaderDoesNotHoldARetirement) {
  Uncapped uncapped;
  TestServer s({"--save", "", "--io-threads", "2"});
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  const int pid = std::stoi(Info(c, "process_id", "server"));
  ASSERT_TRUE(WaitIoThreads(pid, 2));
  const std::string big(256 * 1024, 'z');
  ASSERT_EQ(Call(c, {"SET", "big", big}), "+OK\r\n");
  // Two stalled readers, accepted one after the other: one on each thread.
  std::string batch;
  for (int i = 0; i < 100; ++i) batch += Resp({"GET", "big"});  // 25 MB of replies, not read yet
  batch += Resp({"PING"});
  RawConn stalled1(s.port());
  ASSERT_TRUE(stalled1.Send(batch));
  RawConn stalled2(s.port());
  ASSERT_TRUE(stalled2.Send(batch));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(Call(c, {"CONFIG", "SET", "io-threads", "1"}), "+OK\r\n");
  EXPECT_TRUE(WaitIoThreads(pid, 1, 5000)) << IoThreadsRunning(pid);
  std::cout << "retired in "
            << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count()
            << " ms\n";
  const std::string reply = "$" + std::to_string(big.size()) + "\r\n" + big + "\r\n";
  for (RawConn* r : {&stalled1, &stalled2}) {
    for (int i = 0; i < 100; ++i) ASSERT_EQ(r->ReadReply(), reply) << i;
    EXPECT_EQ(r->ReadReply(), "+PONG\r\n");
    EXPECT_EQ(Call(*r, {"PING"}), "+PONG\r\n");
  }
  EXPECT_EQ(Info(c, "connected_clients", "clients"), "3");
}

// CONFIG GET shows the value, CONFIG REWRITE keeps it, bad values are
// refused with Redis's CONFIG SET errors (and change nothing).
TEST(IoThreadsResizeE2E, ConfigGetRewriteAndRefusals) {
  Uncapped uncapped;
  const ScopedTempDir scoped_dir;
  const std::string& dir = scoped_dir.path();
  const std::string conf = dir + "/ringkv.conf";
  WriteFile(conf, "io-threads 2\nsave \"\"\n");
  {
    TestServer s({}, RINGKV_SERVER_PATH, conf);
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    const int pid = std::stoi(Info(c, "process_id", "server"));
    EXPECT_TRUE(WaitIoThreads(pid, 2));
    EXPECT_EQ(Call(c, {"CONFIG", "GET", "io-threads"}), ConfigGetReply("io-threads", "2"));
    const std::string prefix = "-ERR CONFIG SET failed (possibly related to argument 'io-threads') - ";
    EXPECT_EQ(Call(c, {"CONFIG", "SET", "io-threads", "0"}), prefix + "argument must be between 1 and 128 inclusive\r\n");
    EXPECT_EQ(Call(c, {"CONFIG", "SET", "io-threads", "129"}),
              prefix + "argument must be between 1 and 128 inclusive\r\n");
    EXPECT_EQ(Call(c, {"CONFIG", "SET", "io-threads", "abc"}),
              prefix + "argument couldn't be parsed into an integer\r\n");
    EXPECT_EQ(Call(c, {"CONFIG", "GET", "io-threads"}), ConfigGetReply("io-threads", "2"));
    EXPECT_TRUE(WaitIoThreads(pid, 2));
    EXPECT_EQ(Call(c, {"CONFIG", "SET", "io-threads", "3"}), "+OK\r\n");
    EXPECT_TRUE(WaitIoThreads(pid, 3));
    EXPECT_EQ(Call(c, {"CONFIG", "REWRITE"}), "+OK\r\n");
    const std::string text = "\n" + ReadFile(conf);  // (a line at the start is a line too)
    EXPECT_NE(text.find("\nio-threads 3\n"), std::string::npos) << text;
    EXPECT_EQ(text.find("io-threads 2"), std::string::npos) << text;
  }
  {
    // Started again from the rewritten file: 3 threads.
    TestServer s({}, RINGKV_SERVER_PATH, conf);
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    EXPECT_TRUE(WaitIoThreads(std::stoi(Info(c, "process_id", "server")), 3));
    EXPECT_EQ(Call(c, {"CONFIG", "GET", "io-threads"}), ConfigGetReply("io-threads", "3"));
  }
}

// Without RINGKV_IO_THREADS_UNCAPPED, CONFIG SET is capped at the CPUs of
// the affinity mask as the start-up value is (and logged the same way).
TEST(IoThreadsResizeE2E, CappedAtTheCpusOfTheAffinityMask) {
  cpu_set_t cpus;
  ASSERT_EQ(sched_getaffinity(0, sizeof(cpus), &cpus), 0);
  const int ncpu = CPU_COUNT(&cpus);
  if (ncpu >= 128) GTEST_SKIP() << "more CPUs than io-threads allows";
  const ScopedTempDir scoped_dir;
  const std::string& dir = scoped_dir.path();
  {
    TestServer s({"--save", "", "--io-threads", "1", "--logfile", dir + "/log"});
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    const int pid = std::stoi(Info(c, "process_id", "server"));
    const std::string want = std::to_string(ncpu + 1);
    EXPECT_EQ(Call(c, {"CONFIG", "SET", "io-threads", want}), "+OK\r\n");
    EXPECT_EQ(Call(c, {"CONFIG", "GET", "io-threads"}), ConfigGetReply("io-threads", want));
    EXPECT_TRUE(WaitIoThreads(pid, ncpu)) << IoThreadsRunning(pid);
    EXPECT_NE(ReadFile(dir + "/log").find("io-threads " + want + " reduced to " + std::to_string(ncpu)),
              std::string::npos);
  }
}

// A primary streaming to 3 replicas under a write load changes its
// io-threads: the replicas' links move between threads (those of the
// retiring threads to the others; some to the main thread, which then sends
// them by offset) without a resync, and all converge.
TEST(IoThreadsResizeE2E, ReplicasConvergeWithoutResync) {
  Uncapped uncapped;
  const std::vector<std::string> base = {"--save", "", "--enable-debug-command", "yes", "--repl-diskless-sync", "no"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  TestServer primary(with({"--io-threads", "4", "--repl-backlog-size", "64mb"}));
  ASSERT_TRUE(primary.ready());
  RawConn p(primary.port());
  const int pid = std::stoi(Info(p, "process_id", "server"));
  ASSERT_EQ(Call(p, {"DEBUG", "POPULATE", "5000"}), "+OK\r\n");
  std::unique_ptr<TestServer> replicas[3];
  for (auto& r : replicas) {
    r = std::make_unique<TestServer>(with({}));
    ASSERT_TRUE(r->ready());
    RawConn rc(r->port());
    ASSERT_EQ(Call(rc, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
    ASSERT_TRUE(WaitInfo(rc, "master_link_status", "up", 20000, "replication"));
  }
  std::vector<std::unique_ptr<Loader>> loaders;
  for (int i = 0; i < 4; ++i) loaders.push_back(std::make_unique<Loader>(primary.port(), i));
  for (int n : {2, 1, 3, 1, 4, 3, 2, 1, 4}) {
    SCOPED_TRACE("io-threads " + std::to_string(n));
    ASSERT_EQ(Call(p, {"CONFIG", "SET", "io-threads", std::to_string(n)}), "+OK\r\n");
    ASSERT_TRUE(WaitIoThreads(pid, n));
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  for (auto& l : loaders) l->Stop();
  for (size_t i = 0; i < loaders.size(); ++i) {
    EXPECT_EQ(loaders[i]->errors(), 0) << "client " << i << ": " << loaders[i]->first_error();
    EXPECT_GE(loaders[i]->batches(), 10);
  }
  const std::string offset = Info(p, "master_repl_offset", "replication");
  const std::string digest = Digest(p);
  ASSERT_EQ(digest.size(), 43u) << digest;
  for (int i = 0; i < 3; ++i) {
    RawConn r(replicas[i]->port());
    EXPECT_TRUE(WaitInfo(r, "master_repl_offset", offset, 30000, "replication")) << "replica " << i;
    EXPECT_EQ(Digest(r), digest) << "replica " << i;
  }
  EXPECT_EQ(Info(p, "connected_slaves", "replication"), "3");
  EXPECT_EQ(Info(p, "sync_full", "stats"), "3");
  EXPECT_EQ(Info(p, "sync_partial_ok", "stats"), "0");
}

}  // namespace
}  // namespace ringkv::testing::io_threads_resize_e2e_test

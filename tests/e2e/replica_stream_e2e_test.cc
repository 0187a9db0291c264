// The primary's replica send path (issue 20, part 1): replicas sent the
// stream by offset straight from the backlog blocks, at different lags, one
// killed mid-stream and started again, one re-attaching by partial resync,
// all converging on the primary's data (DEBUG DIGEST equal). Run with
// io-threads 1 (every replica on the main thread: sent by offset) and 2
// (some replicas on the other I/O thread: handed their range by reference).
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/persistence_test_util.h"

namespace ringkv::testing::replica_stream_e2e_test {
namespace {

std::vector<std::string> Args(const std::string& io_threads, std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"--save", "", "--enable-debug-command", "yes", "--repl-diskless-sync", "no",
                                "--io-threads", io_threads};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// Writes pipelined batches (SETs of 1 KB values over 5,000 keys, an INCR a
// batch) until stopped, ~2 ms apart; each batch's replies are read and checked.
class Writer {
 public:
  explicit Writer(int port) : thread_([this, port] { Run(port); }) {}
  ~Writer() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int errors() const { return errors_; }
  int batches() const { return batches_; }

 private:
  void Run(int port) {
    RawConn c(port);
    const std::string value(1000, 'v');
    for (int b = 0; !stop_; ++b) {
      std::string batch;
      for (int i = 0; i < 50; ++i) batch += Resp({"SET", "k" + std::to_string((b * 50 + i) % 5000), value});
      batch += Resp({"INCR", "counter"});
      if (!c.Send(batch)) {
        ++errors_;
        return;
      }
      for (int i = 0; i < 50; ++i) errors_ += c.ReadReply() != "+OK\r\n";
      errors_ += c.ReadReply() != ":" + std::to_string(b + 1) + "\r\n";
      ++batches_;
      // At most ~25 MB/s of stream: the partial resync below must find its
      // offset in the 64 MB backlog even on a loaded machine.
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  std::atomic<bool> stop_{false};
  std::atomic<int> errors_{0}, batches_{0};
  std::thread thread_;
};

bool WaitLinkUp(RawConn& replica) { return WaitInfo(replica, "master_link_status", "up", 20000, "replication"); }

void ReplicasAtDifferentLagsConverge(const std::string& io_threads) {
  TestServer primary(Args(io_threads, {"--repl-backlog-size", "64mb"}));
  ASSERT_TRUE(primary.ready());
  const std::string port = std::to_string(primary.port());
  std::unique_ptr<TestServer> replicas[3];
  for (auto& r : replicas) {
    r = std::make_unique<TestServer>(Args(io_threads));
    ASSERT_TRUE(r->ready());
    RawConn c(r->port());
    ASSERT_EQ(Call(c, {"REPLICAOF", "127.0.0.1", port}), "+OK\r\n");
    ASSERT_TRUE(WaitLinkUp(c));
  }
  RawConn p(primary.port());
  Writer writer(primary.port());
  auto for_ms = [](int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
  for_ms(500);
  // Replica 1 falls behind: stopped while the stream goes on.
  RawConn r1(replicas[1]->port());
  const int r1_pid = std::stoi(Info(r1, "process_id", "server"));
  kill(r1_pid, SIGSTOP);
  for_ms(1000);
  // Replica 2 is killed mid-stream.
  replicas[2]->Kill();
  for_ms(500);
  kill(r1_pid, SIGCONT);
  // Replica 0 re-attaches by partial resync: its link is cut on its side.
  const int partial_before = std::stoi(Info(p, "sync_partial_ok", "stats"));
  RawConn r0(replicas[0]->port());
  EXPECT_EQ(Call(r0, {"CLIENT", "KILL", "TYPE", "master"}), ":1\r\n");
  for_ms(500);
  // Replica 2 starts again (an empty dataset: a full resync).
  replicas[2] = std::make_unique<TestServer>(Args(io_threads));
  ASSERT_TRUE(replicas[2]->ready());
  RawConn r2(replicas[2]->port());
  ASSERT_EQ(Call(r2, {"REPLICAOF", "127.0.0.1", port}), "+OK\r\n");
  for_ms(1500);
  writer.Stop();
  EXPECT_EQ(writer.errors(), 0);
  EXPECT_GE(writer.batches(), 100);

  const std::string offset = Info(p, "master_repl_offset", "replication");
  const std::string digest = Digest(p);
  ASSERT_EQ(digest.size(), 43u) << digest;  // +, 40 hex digits, CRLF
  for (int i = 0; i < 3; ++i) {
    RawConn r(replicas[i]->port());
    ASSERT_TRUE(WaitLinkUp(r)) << "replica " << i;
    EXPECT_TRUE(WaitInfo(r, "master_repl_offset", offset, 30000, "replication")) << "replica " << i;
    EXPECT_EQ(Digest(r), digest) << "replica " << i;
  }
  EXPECT_EQ(Info(p, "connected_slaves", "replication"), "3");
  // Replica 0 came back by partial resync; replica 2 needed a full one.
  EXPECT_EQ(std::stoi(Info(p, "sync_partial_ok", "stats")), partial_before + 1);
}

TEST(ReplicaStreamE2E, ReplicasAtDifferentLagsConverge) { ReplicasAtDifferentLagsConverge("1"); }

TEST(ReplicaStreamE2E, ReplicasAtDifferentLagsConvergeWithIoThreads) { ReplicasAtDifferentLagsConverge("2"); }

}  // namespace
}  // namespace ringkv::testing::replica_stream_e2e_test

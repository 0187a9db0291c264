// Crash tests: writers hammer the server while it is killed with SIGKILL at
// random moments. With appendfsync always, every write that was acknowledged
// must be there after a restart; with everysec, the test reports how many
// acknowledged writes were lost (Redis's contract: about one second's worth).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/persistence_test_util.h"

namespace ringkv::testing::crash_e2e_test {
namespace {

struct WriterLog {
  int64_t acked_counter = 0;     // last INCR reply seen
  std::vector<int> acked_sets;   // SET w<id>:<n> acknowledged
};

// Writes until the connection dies: alternately INCR of its own counter and
// SET of a new key, recording only what the server acknowledged.
void Writer(int port, int id, WriterLog* log) {
  RawConn c(port);
  if (!c.ok()) return;
  for (int n = 0;; ++n) {
    if (n % 2 == 0) {
      if (!c.Send(Resp({"INCR", "counter:" + std::to_string(id)}))) return;
      std::string r = c.ReadReply();
      if (r.empty() || r[0] != ':') return;
      log->acked_counter = std::stoll(r.substr(1));
    } else {
      const std::string key = "w" + std::to_string(id) + ":" + std::to_string(n);
      if (!c.Send(Resp({"SET", key, std::string(64, 'v')}))) return;
      if (c.ReadReply() != "+OK\r\n") return;
      log->acked_sets.push_back(n);
    }
  }
}

// One round: start (loading what earlier rounds left), write from 4 clients,
// SIGKILL after `run_ms`, restart and count acknowledged writes that are gone.
int64_t CrashRound(const std::string& dir, const std::string& fsync, int run_ms, int64_t* acked_total,
                   const std::string& io_threads = "1") {
  const std::vector<std::string> args = {"--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", fsync,
                                         "--io-threads", io_threads};
  std::vector<WriterLog> logs(4);
  {
    TestServer s(args);
    EXPECT_TRUE(s.ready());
    if (!s.ready()) return -1;
    RawConn c(s.port());
    std::vector<int64_t> start(4);
    for (int i = 0; i < 4; ++i) {
      std::string r = Call(c, {"GET", "counter:" + std::to_string(i)});
      start[i] = r == "$-1\r\n" ? 0 : std::stoll(BulkPayload(r));
    }
    EXPECT_EQ(Call(c, {"FLUSHALL"}), "+OK\r\n");  // each round checks its own writes
    std::vector<std::thread> writers;
    for (int i = 0; i < 4; ++i) writers.emplace_back(Writer, s.port(), i, &logs[i]);
    std::this_thread::sleep_for(std::chrono::milliseconds(run_ms));
    s.Kill();
    for (auto& t : writers) t.join();
  }
  TestServer s(args);
  EXPECT_TRUE(s.ready());
  if (!s.ready()) return -1;
  RawConn c(s.port());
  int64_t lost = 0;
  for (int i = 0; i < 4; ++i) {
    const std::string r = Call(c, {"GET", "counter:" + std::to_string(i)});
    const int64_t have = r == "$-1\r\n" ? 0 : std::stoll(BulkPayload(r));
    if (have < logs[i].acked_counter) lost += logs[i].acked_counter - have;
    *acked_total += logs[i].acked_counter;
    std::string batch;
    for (int n : logs[i].acked_sets) batch += Resp({"EXISTS", "w" + std::to_string(i) + ":" + std::to_string(n)});
    c.Send(batch);
    for (size_t k = 0; k < logs[i].acked_sets.size(); ++k) lost += c.ReadReply() == ":1\r\n" ? 0 : 1;
    *acked_total += static_cast<int64_t>(logs[i].acked_sets.size());
  }
  return lost;
}

TEST(CrashE2E, AppendfsyncAlwaysLosesNoAcknowledgedWrite) {
  TempDir dir;
  std::mt19937 rng(std::random_device{}());
  int64_t acked = 0;
  for (int round = 0; round < 5; ++round) {
    const int run_ms = std::uniform_int_distribution<int>(150, 700)(rng);
    const int64_t lost = CrashRound(dir.path(), "always", run_ms, &acked);
    EXPECT_EQ(lost, 0) << "round " << round << " (killed after " << run_ms << " ms)";
  }
  EXPECT_GT(acked, 100);  // the writers really wrote
  std::printf("appendfsync always: %lld acknowledged writes over 5 kill -9 rounds, 0 lost\n",
              static_cast<long long>(acked));
}

TEST(CrashE2E, AppendfsyncAlwaysWithIoThreads) {
  // Replies of connections owned by another I/O thread take the cross-thread
  // path; they must be held for the fsync just the same.
  TempDir dir;
  std::mt19937 rng(std::random_device{}());
  int64_t acked = 0;
  for (int round = 0; round < 2; ++round) {
    const int run_ms = std::uniform_int_distribution<int>(150, 500)(rng);
    EXPECT_EQ(CrashRound(dir.path(), "always", run_ms, &acked, "2"), 0) << "round " << round;
  }
  EXPECT_GT(acked, 50);
}

TEST(CrashE2E, AppendfsyncEverysecReportsLoss) {
  TempDir dir;
  std::mt19937 rng(std::random_device{}());
  int64_t acked = 0, lost = 0;
  for (int round = 0; round < 3; ++round) {
    const int run_ms = std::uniform_int_distribution<int>(300, 1500)(rng);
    const int64_t l = CrashRound(dir.path(), "everysec", run_ms, &acked);
    ASSERT_GE(l, 0);
    lost += l;
  }
  // kill -9 of the server alone leaves the page cache intact, so written
  // bytes survive; what everysec risks is a machine crash, which this test
  // cannot cause. Reported, not asserted beyond "nothing written is lost".
  std::printf("appendfsync everysec: %lld acknowledged writes over 3 kill -9 rounds, %lld lost\n",
              static_cast<long long>(acked), static_cast<long long>(lost));
  RecordProperty("everysec_lost", std::to_string(lost));
  EXPECT_EQ(lost, 0);
}

}  // namespace
}  // namespace ringkv::testing::crash_e2e_test

// Client-state features end to end, with several hiredis clients and raw
// connections: blocking commands (wake-up order, timeouts, CLIENT UNBLOCK,
// commands pipelined behind a blocked one), MULTI/EXEC/WATCH (a WATCH race
// that must keep every increment, transactions reaching the AOF and
// replicas as one block), MONITOR, keyspace notifications of expiry, and
// that a client using none of these features has none of their components.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/hiredis_util.h"
#include "tests/e2e/persistence_test_util.h"

namespace ringkv::testing::client_state_e2e_test {
namespace {

// Runs one command; the reply as text ("OK", "(nil)", "(error) ...", "5",
// arrays as "[a,b]").
std::string ReplyText(const redisReply* r) {
  switch (r->type) {
    case REDIS_REPLY_STRING: case REDIS_REPLY_STATUS: return std::string(r->str, r->len);
    case REDIS_REPLY_ERROR: return "(error) " + std::string(r->str, r->len);
    case REDIS_REPLY_INTEGER: return std::to_string(r->integer);
    case REDIS_REPLY_NIL: return "(nil)";
    case REDIS_REPLY_ARRAY: {
      std::string out = "[";
      for (size_t i = 0; i < r->elements; ++i) out += (i ? "," : "") + ReplyText(r->element[i]);
      return out + "]";
    }
    default: return "?";
  }
}

std::string Cmd(redisContext* c, const std::vector<std::string>& argv) {
  redisReply* r = CommandArgv(c, argv);
  if (r == nullptr) return "<io error>";
  std::string out = ReplyText(r);
  freeReplyObject(r);
  return out;
}

// Sends a command without reading its reply (a blocking command).
void Append(redisContext* c, const std::vector<std::string>& argv) {
  WithArgv(argv, [c](int argc, const char** args, const size_t* lens) {
    return redisAppendCommandArgv(c, argc, args, lens);
  });
  int done = 0;
  redisBufferWrite(c, &done);
}

std::string NextReply(redisContext* c) {
  void* r = nullptr;
  if (redisGetReply(c, &r) != REDIS_OK || r == nullptr) return "<io error>";
  std::string out = ReplyText(static_cast<redisReply*>(r));
  freeReplyObject(r);
  return out;
}

// Waits until INFO's blocked_clients reads `n`.
bool WaitBlocked(redisContext* c, int n) {
  const std::string want = "blocked_clients:" + std::to_string(n) + "\r\n";
  for (int i = 0; i < 500; ++i) {
    if (Cmd(c, {"INFO", "clients"}).find(want) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

TEST(ClientStateE2E, BlockedClientsAreServedFirstBlockedFirst) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  Redis admin = Connect(s.port());
  std::vector<Redis> waiters;
  for (int i = 0; i < 5; ++i) {
    waiters.push_back(Connect(s.port()));
    Append(waiters.back().get(), {i % 2 ? "BRPOP" : "BLPOP", "q", "0"});
    ASSERT_TRUE(WaitBlocked(admin.get(), i + 1));  // fixes the blocking order
  }
  // One push of three elements serves the first three, in order; the others wait.
  EXPECT_EQ(Cmd(admin.get(), {"RPUSH", "q", "a", "b", "c"}), "3");
  EXPECT_EQ(NextReply(waiters[0].get()), "[q,a]");   // BLPOP: head
  EXPECT_EQ(NextReply(waiters[1].get()), "[q,c]");   // BRPOP: tail
  EXPECT_EQ(NextReply(waiters[2].get()), "[q,b]");
  EXPECT_EQ(Cmd(admin.get(), {"EXISTS", "q"}), "0");
  EXPECT_TRUE(WaitBlocked(admin.get(), 2));
  EXPECT_EQ(Cmd(admin.get(), {"LPUSH", "q", "d", "e"}), "2");
  EXPECT_EQ(NextReply(waiters[3].get()), "[q,d]");  // BRPOP takes the tail of [e,d]
  EXPECT_EQ(NextReply(waiters[4].get()), "[q,e]");
  EXPECT_TRUE(WaitBlocked(admin.get(), 0));
  // The served pops were propagated as pops: nothing is left behind.
  EXPECT_EQ(Cmd(admin.get(), {"LLEN", "q"}), "0");
}

TEST(ClientStateE2E, TimeoutsUnblockAndPipelinedCommandsWait) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  Redis admin = Connect(s.port());
  Redis c = Connect(s.port());
  // A timeout answers nil, not before its deadline (deadlines have
  // millisecond resolution, as Redis's).
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Cmd(c.get(), {"BLPOP", "none", "0.2"}), "(nil)");
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(199));
  EXPECT_EQ(Cmd(c.get(), {"BZPOPMIN", "none", "0.01"}), "(nil)");
  // Commands sent behind a blocked one run after it, in order.
  Append(c.get(), {"BLPOP", "later", "0"});
  Append(c.get(), {"SET", "after", "1"});
  Append(c.get(), {"GET", "after"});
  ASSERT_TRUE(WaitBlocked(admin.get(), 1));
  EXPECT_EQ(Cmd(admin.get(), {"GET", "after"}), "(nil)");
  EXPECT_EQ(Cmd(admin.get(), {"RPUSH", "later", "x"}), "1");
  EXPECT_EQ(NextReply(c.get()), "[later,x]");
  EXPECT_EQ(NextReply(c.get()), "OK");
  EXPECT_EQ(NextReply(c.get()), "1");
  // CLIENT UNBLOCK: as a timeout, or with an error; 0 for a client not blocked.
  const std::string id = Cmd(c.get(), {"CLIENT", "ID"});
  EXPECT_EQ(Cmd(admin.get(), {"CLIENT", "UNBLOCK", id}), "0");
  Append(c.get(), {"BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"});
  ASSERT_TRUE(WaitBlocked(admin.get(), 1));
  EXPECT_EQ(Cmd(admin.get(), {"CLIENT", "UNBLOCK", id, "TIMEOUT"}), "1");
  EXPECT_EQ(NextReply(c.get()), "(nil)");
  Append(c.get(), {"BZMPOP", "0", "1", "z", "MIN"});
  ASSERT_TRUE(WaitBlocked(admin.get(), 1));
  EXPECT_EQ(Cmd(admin.get(), {"CLIENT", "UNBLOCK", id, "ERROR"}), "1");
  EXPECT_EQ(NextReply(c.get()), "(error) UNBLOCKED client unblocked via CLIENT UNBLOCK");
  EXPECT_EQ(Cmd(admin.get(), {"CLIENT", "UNBLOCK", id, "ERROR"}), "0");
  // A blocked client that disconnects is forgotten: the push stays.
  {
    Redis gone = Connect(s.port());
    Append(gone.get(), {"BLPOP", "orphan", "0"});
    ASSERT_TRUE(WaitBlocked(admin.get(), 1));
  }
  ASSERT_TRUE(WaitBlocked(admin.get(), 0));
  EXPECT_EQ(Cmd(admin.get(), {"RPUSH", "orphan", "kept"}), "1");
  EXPECT_EQ(Cmd(admin.get(), {"LRANGE", "orphan", "0", "-1"}), "[kept]");
  // BLPOP is counted when it blocks, as Redis 7.0 does: the timed-out one,
  // the served one and the one whose client went away.
  EXPECT_NE(Cmd(admin.get(), {"INFO", "commandstats"}).find("cmdstat_blpop:calls=3,"), std::string::npos);
}

// The numbers of INFO commandstats, total_commands_processed and LATENCY
// HISTOGRAM for commands that block, as redis-server 7.0.15 keeps them: a
// call counts when it blocks (WAIT too); usec never includes the time spent
// waiting; the histogram takes a served, an errored and a CLIENT UNBLOCKed
// call, not one whose deadline passed, nor WAIT.
std::string StatLine(redisContext* c, const std::string& section, const std::string& prefix) {
  const std::string info = Cmd(c, {"INFO", section});
  const size_t at = info.find(prefix);
  return at == std::string::npos ? "" : info.substr(at, info.find('\r', at) - at);
}

int64_t StatField(const std::string& line, const std::string& field) {
  const size_t at = line.find(field + "=");
  return at == std::string::npos ? -1 : std::stoll(line.substr(at + field.size() + 1));
}

TEST(ClientStateE2E, BlockedCommandsAreCountedAsRedisCountsThem) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  Redis admin = Connect(s.port());
  Redis c = Connect(s.port());
  // total_commands_processed, less the INFO commands counted in it.
  const auto others = [&] {
    const std::string all = Cmd(admin.get(), {"INFO", "all"});
    const size_t t = all.find("total_commands_processed:");
    const size_t i = all.find("cmdstat_info:calls=");
    return std::stoll(all.substr(t + 25)) - std::stoll(all.substr(i + 19));
  };

  // Counted while still blocked.
  const int64_t before = others();
  Append(c.get(), {"BLPOP", "q", "5"});
  ASSERT_TRUE(WaitBlocked(admin.get(), 1));
  EXPECT_EQ(others(), before + 1);
  EXPECT_EQ(StatField(StatLine(admin.get(), "commandstats", "cmdstat_blpop:"), "calls"), 1);
  EXPECT_EQ(Cmd(admin.get(), {"RPUSH", "q", "x"}), "1");
  EXPECT_EQ(NextReply(c.get()), "[q,x]");
  EXPECT_EQ(StatField(StatLine(admin.get(), "commandstats", "cmdstat_blpop:"), "calls"), 1);  // served: no second call
  EXPECT_EQ(Cmd(admin.get(), {"LATENCY", "HISTOGRAM", "blpop"}).rfind("[blpop,[calls,1,", 0), 0u);

  // A deadline's timeout: 200 ms waited, none of it in usec; no histogram entry.
  EXPECT_EQ(Cmd(c.get(), {"BLPOP", "none", "0.2"}), "(nil)");
  std::string blpop = StatLine(admin.get(), "commandstats", "cmdstat_blpop:");
  EXPECT_EQ(StatField(blpop, "calls"), 2) << blpop;
  EXPECT_LT(StatField(blpop, "usec"), 100'000) << blpop;
  EXPECT_EQ(Cmd(admin.get(), {"LATENCY", "HISTOGRAM", "blpop"}).rfind("[blpop,[calls,1,", 0), 0u);

  // CLIENT UNBLOCK, as a timeout and as an error: failed calls, in the histogram.
  const std::string id = Cmd(c.get(), {"CLIENT", "ID"});
  for (const char* how : {"TIMEOUT", "ERROR"}) {
    Append(c.get(), {"BLPOP", "none", "5"});
    ASSERT_TRUE(WaitBlocked(admin.get(), 1));
    EXPECT_EQ(Cmd(admin.get(), {"CLIENT", "UNBLOCK", id, how}), "1");
    NextReply(c.get());
  }
  blpop = StatLine(admin.get(), "commandstats", "cmdstat_blpop:");
  EXPECT_EQ(StatField(blpop, "calls"), 4) << blpop;
  EXPECT_EQ(StatField(blpop, "failed_calls"), 2) << blpop;
  EXPECT_LT(StatField(blpop, "usec"), 100'000) << blpop;
  EXPECT_EQ(Cmd(admin.get(), {"LATENCY", "HISTOGRAM", "blpop"}).rfind("[blpop,[calls,3,", 0), 0u);

  // What CLIENT UNBLOCK charges is the command that blocked, not the one
  // pipelined behind it (which runs as the client resumes).
  Append(c.get(), {"BLPOP", "none", "5"});
  Append(c.get(), {"PING"});
  ASSERT_TRUE(WaitBlocked(admin.get(), 1));
  EXPECT_EQ(Cmd(admin.get(), {"CLIENT", "UNBLOCK", id, "TIMEOUT"}), "1");
  EXPECT_EQ(NextReply(c.get()), "(nil)");
  EXPECT_EQ(NextReply(c.get()), "PONG");
  blpop = StatLine(admin.get(), "commandstats", "cmdstat_blpop:");
  EXPECT_EQ(StatField(blpop, "calls"), 5) << blpop;
  EXPECT_EQ(StatField(blpop, "failed_calls"), 3) << blpop;
  const std::string ping = StatLine(admin.get(), "commandstats", "cmdstat_ping:");
  EXPECT_EQ(StatField(ping, "failed_calls"), 0) << ping;
  // Each PING recorded once in its histogram, no more.
  const std::string ping_histogram = Cmd(admin.get(), {"LATENCY", "HISTOGRAM", "ping"});
  EXPECT_EQ(ping_histogram.rfind("[ping,[calls," + std::to_string(StatField(ping, "calls")) + ",", 0), 0u)
      << ping_histogram << " " << ping;

  // WAIT: counted once when it blocks, nothing more when its deadline passes.
  EXPECT_EQ(Cmd(c.get(), {"WAIT", "1", "50"}), "0");
  const std::string wait = StatLine(admin.get(), "commandstats", "cmdstat_wait:");
  EXPECT_EQ(StatField(wait, "calls"), 1) << wait;
  EXPECT_LT(StatField(wait, "usec"), 40'000) << wait;
  EXPECT_EQ(Cmd(admin.get(), {"LATENCY", "HISTOGRAM", "wait"}), "[]");
}

TEST(ClientStateE2E, DeadlineLatenessCountsEveryTimeoutAndOnlyTimeouts) {
  TestServer s({"--enable-debug-command", "yes"});
  ASSERT_TRUE(s.ready());
  Redis admin = Connect(s.port());
  Redis c = Connect(s.port());
  // Nothing timed out yet: no calls, no histogram steps.
  EXPECT_EQ(Cmd(admin.get(), {"DEBUG", "DEADLINE-LATENESS"}),
            "[calls,0,p50_usec,0,p99_usec,0,p999_usec,0,max_usec,0,histogram_usec,[]]");
  EXPECT_EQ(Cmd(c.get(), {"BLPOP", "none", "0.01"}), "(nil)");
  EXPECT_EQ(Cmd(c.get(), {"BZPOPMIN", "none", "0.01"}), "(nil)");
  EXPECT_EQ(Cmd(c.get(), {"WAIT", "1", "10"}), "0");  // no replica: its deadline fires
  // Served, unblocked and immediately answered commands are not timeouts.
  EXPECT_EQ(Cmd(c.get(), {"WAIT", "0", "10"}), "0");
  Append(c.get(), {"BLPOP", "q", "5"});
  ASSERT_TRUE(WaitBlocked(admin.get(), 1));
  EXPECT_EQ(Cmd(admin.get(), {"RPUSH", "q", "x"}), "1");
  EXPECT_EQ(NextReply(c.get()), "[q,x]");
  const std::string id = Cmd(c.get(), {"CLIENT", "ID"});
  Append(c.get(), {"BLPOP", "q", "5"});
  ASSERT_TRUE(WaitBlocked(admin.get(), 1));
  EXPECT_EQ(Cmd(admin.get(), {"CLIENT", "UNBLOCK", id}), "1");
  EXPECT_EQ(NextReply(c.get()), "(nil)");

  const std::string report = Cmd(admin.get(), {"DEBUG", "DEADLINE-LATENESS"});
  EXPECT_EQ(report.rfind("[calls,3,p50_usec,", 0), 0u) << report;
  // The cumulative histogram ends at all three calls.
  EXPECT_EQ(report.substr(report.size() - 4), ",3]]") << report;
  EXPECT_EQ(Cmd(admin.get(), {"DEBUG", "DEADLINE-LATENESS", "RESET"}), "OK");
  EXPECT_EQ(Cmd(admin.get(), {"DEBUG", "DEADLINE-LATENESS"}).rfind("[calls,0,", 0), 0u);
  EXPECT_EQ(Cmd(admin.get(), {"DEBUG", "DEADLINE-LATENESS", "BOGUS"}), "(error) ERR syntax error");
}

// Deadlines are kept to the microsecond from the moment the command
// arrived: a 5 ms timeout on an idle server answers as a timeout and never
// before 5 ms have passed (measured from before the request was sent, so
// the client's interval contains the server's). No upper bound is asserted.
TEST(ClientStateE2E, FiveMillisecondTimeoutsNeverFireEarly) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  Redis c = Connect(s.port());
  using Clock = std::chrono::steady_clock;
  constexpr auto kTimeout = std::chrono::milliseconds(5);
  for (int i = 0; i < 20; ++i) {
    Clock::time_point start = Clock::now();
    EXPECT_EQ(Cmd(c.get(), {"BLPOP", "none", "0.005"}), "(nil)");
    EXPECT_GE(Clock::now() - start, kTimeout) << "BLPOP round " << i;
    start = Clock::now();
    EXPECT_EQ(Cmd(c.get(), {"WAIT", "1", "5"}), "0");  // no replica: the deadline fires
    EXPECT_GE(Clock::now() - start, kTimeout) << "WAIT round " << i;
  }
}

// Hundreds of clients whose pipelines block and time out every millisecond:
// a turn then has more connections to answer than one chunk of sends, with
// deadlines falling due meanwhile, so the loop sends in chunks and runs the
// timers between them (IoThread::FlushTurn). Every reply arrives, in order,
// and every increment is kept -- in the AOF too, with appendfsync always
// (its replies are held for the fsync), on both backends and with a second
// I/O thread.
void PipelinesTimingOutTogetherKeepOrder(const std::vector<std::string>& args) {
  const ScopedTempDir dir;
  std::vector<std::string> all = args;
  for (const char* a : {"--dir", dir.path().c_str(), "--enable-debug-command", "yes"}) all.emplace_back(a);
  TestServer s(all);
  ASSERT_TRUE(s.ready());
  constexpr int kClients = 300;
  constexpr int kRounds = 15;
  std::vector<Redis> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(Connect(s.port()));
    ASSERT_NE(clients.back(), nullptr);
  }
  for (int i = 0; i < kClients; ++i) {
    const std::string key = "n:" + std::to_string(i);
    for (int r = 0; r < kRounds; ++r) {
      redisAppendCommand(clients[i].get(), "INCR %s", key.c_str());
      redisAppendCommand(clients[i].get(), "WAIT 1 1");  // no replica: times out after 1 ms
      redisAppendCommand(clients[i].get(), "INCR %s", key.c_str());
      redisAppendCommand(clients[i].get(), "BLPOP none:%d 0.001", i);
    }
    int done = 0;
    while (!done) ASSERT_EQ(redisBufferWrite(clients[i].get(), &done), REDIS_OK);
  }
  for (int i = 0; i < kClients; ++i) {
    for (int r = 0; r < kRounds; ++r) {
      ASSERT_EQ(NextReply(clients[i].get()), std::to_string(2 * r + 1)) << "client " << i << " round " << r;
      ASSERT_EQ(NextReply(clients[i].get()), "0") << "client " << i << " round " << r;
      ASSERT_EQ(NextReply(clients[i].get()), std::to_string(2 * r + 2)) << "client " << i << " round " << r;
      ASSERT_EQ(NextReply(clients[i].get()), "(nil)") << "client " << i << " round " << r;
    }
  }
  Redis admin = Connect(s.port());
  const std::string lateness = Cmd(admin.get(), {"DEBUG", "DEADLINE-LATENESS"});
  EXPECT_EQ(lateness.rfind("[calls," + std::to_string(2 * kClients * kRounds) + ",", 0), 0u) << lateness;
  if (Cmd(admin.get(), {"CONFIG", "GET", "appendonly"}) == "[appendonly,yes]") {
    EXPECT_EQ(Cmd(admin.get(), {"DEBUG", "LOADAOF"}), "OK");
  }
  for (int i = 0; i < kClients; ++i) {
    ASSERT_EQ(Cmd(admin.get(), {"GET", "n:" + std::to_string(i)}), std::to_string(2 * kRounds)) << "client " << i;
  }
}

TEST(ClientStateE2E, PipelinesTimingOutTogetherKeepOrder) { PipelinesTimingOutTogetherKeepOrder({}); }

TEST(ClientStateE2E, PipelinesTimingOutTogetherKeepOrderOnEpoll) {
  PipelinesTimingOutTogetherKeepOrder({"--io-backend", "epoll"});
}

TEST(ClientStateE2E, PipelinesTimingOutTogetherKeepOrderWithTwoIoThreads) {
  PipelinesTimingOutTogetherKeepOrder({"--io-threads", "2"});
}

TEST(ClientStateE2E, PipelinesTimingOutTogetherKeepOrderWithAppendfsyncAlways) {
  PipelinesTimingOutTogetherKeepOrder({"--appendonly", "yes", "--appendfsync", "always"});
}

TEST(ClientStateE2E, WatchRaceKeepsEveryIncrement) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  constexpr int kClients = 4, kIncrements = 150;
  std::atomic<int> retries{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&] {
      Redis c = Connect(s.port());
      for (int i = 0; i < kIncrements; ++i) {
        while (true) {
          Cmd(c.get(), {"WATCH", "counter"});
          std::string v = Cmd(c.get(), {"GET", "counter"});
          const int n = v == "(nil)" ? 0 : std::stoi(v);
          Cmd(c.get(), {"MULTI"});
          Cmd(c.get(), {"SET", "counter", std::to_string(n + 1)});
          if (Cmd(c.get(), {"EXEC"}) == "[OK]") break;
          ++retries;  // another client's SET made our EXEC fail: try again
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  Redis c = Connect(s.port());
  // Read-modify-write without WATCH would lose updates under this race.
  EXPECT_EQ(Cmd(c.get(), {"GET", "counter"}), std::to_string(kClients * kIncrements));
  std::printf("WATCH race: %d aborted EXECs retried\n", retries.load());
}

// No other client's command runs between the commands of an EXEC: a reader
// never sees one key of a transaction updated and not the other.
TEST(ClientStateE2E, OthersNeverSeeHalfATransaction) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  std::atomic<bool> done{false};
  std::atomic<int> torn{0}, reads{0};
  std::thread reader([&] {
    Redis r = Connect(s.port());
    while (!done) {
      const std::string v = Cmd(r.get(), {"MGET", "a", "b"});
      const size_t comma = v.find(',');
      if (comma != std::string::npos && v.substr(1, comma - 1) != v.substr(comma + 1, v.size() - comma - 2)) ++torn;
      ++reads;
    }
  });
  Redis w = Connect(s.port());
  for (int i = 0; i < 2000; ++i) {
    // Pipelined, so that the reader's MGETs arrive while EXECs are queued.
    Append(w.get(), {"MULTI"});
    Append(w.get(), {"SET", "a", std::to_string(i)});
    Append(w.get(), {"INCR", "spacer"});
    Append(w.get(), {"SET", "b", std::to_string(i)});
    Append(w.get(), {"EXEC"});
    for (int k = 0; k < 5; ++k) NextReply(w.get());
  }
  done = true;
  reader.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(Cmd(w.get(), {"MGET", "a", "b", "spacer"}), "[1999,1999,2000]");
}

TEST(ClientStateE2E, TransactionIsOneBlockInAofAndOnReplicas) {
  TestServer primary({"--appendonly", "yes", "--appendfsync", "always", "--repl-diskless-sync-delay", "0",
                      "--enable-debug-command", "yes"});
  TestServer replica({"--save", ""});
  ASSERT_TRUE(primary.ready() && replica.ready());
  Redis p = Connect(primary.port());
  Redis r = Connect(replica.port());
  ASSERT_EQ(Cmd(r.get(), {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "OK");
  RawConn rr(replica.port());
  ASSERT_TRUE(WaitInfo(rr, "master_link_status", "up", 20000, "replication"));
  // With appendfsync always, a write that writes nothing answers at once
  // (it used to wait for somebody else's fsync).
  EXPECT_EQ(Cmd(p.get(), {"SET", "s", "x"}), "OK");
  EXPECT_EQ(Cmd(p.get(), {"LPUSH", "s", "y"}), "(error) WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(Cmd(p.get(), {"MULTI"}), "OK");
  EXPECT_EQ(Cmd(p.get(), {"SET", "a", "1"}), "QUEUED");
  EXPECT_EQ(Cmd(p.get(), {"SELECT", "1"}), "QUEUED");
  EXPECT_EQ(Cmd(p.get(), {"RPUSH", "l", "x", "y"}), "QUEUED");
  EXPECT_EQ(Cmd(p.get(), {"GET", "nothing"}), "QUEUED");
  EXPECT_EQ(Cmd(p.get(), {"EXEC"}), "[OK,OK,2,(nil)]");
  EXPECT_EQ(Cmd(p.get(), {"MULTI"}), "OK");
  EXPECT_EQ(Cmd(p.get(), {"INCR", "single"}), "QUEUED");
  EXPECT_EQ(Cmd(p.get(), {"EXEC"}), "[1]");
  EXPECT_EQ(Cmd(p.get(), {"SELECT", "0"}), "OK");
  EXPECT_EQ(Cmd(p.get(), {"MULTI"}), "OK");
  EXPECT_EQ(Cmd(p.get(), {"INCR", "x"}), "QUEUED");
  EXPECT_EQ(Cmd(p.get(), {"INCR", "y"}), "QUEUED");
  EXPECT_EQ(Cmd(p.get(), {"EXEC"}), "[1,1]");
  EXPECT_EQ(Cmd(p.get(), {"SELECT", "1"}), "OK");
  // The AOF holds the transactions as MULTI ... EXEC with a SELECT inside,
  // or before the MULTI when the first command needs it, and the single
  // write bare -- as Redis 7.0 writes them (propagatePendingCommands).
  std::string aof;
  RunShell("cat " + primary.dir() + "/appendonlydir/*.incr.aof", &aof);
  const std::string block = Resp({"MULTI"}) + Resp({"SET", "a", "1"}) + Resp({"SELECT", "1"}) +
                            Resp({"RPUSH", "l", "x", "y"}) + Resp({"EXEC"}) + Resp({"INCR", "single"}) +
                            Resp({"SELECT", "0"}) + Resp({"MULTI"}) + Resp({"INCR", "x"}) + Resp({"INCR", "y"}) +
                            Resp({"EXEC"});
  EXPECT_NE(aof.find(block), std::string::npos) << aof;
  std::string out;
  EXPECT_EQ(RunShell("redis-check-aof " + primary.dir() + "/appendonlydir/appendonly.aof.manifest", &out), 0) << out;
  // The replica applied both.
  EXPECT_EQ(Cmd(p.get(), {"WAIT", "1", "5000"}), "1");
  EXPECT_EQ(Cmd(r.get(), {"GET", "a"}), "1");
  EXPECT_EQ(Cmd(r.get(), {"SELECT", "1"}), "OK");
  EXPECT_EQ(Cmd(r.get(), {"LRANGE", "l", "0", "-1"}), "[x,y]");
  EXPECT_EQ(Cmd(r.get(), {"GET", "single"}), "1");
  // Replaying the AOF gives the same data.
  EXPECT_EQ(Cmd(p.get(), {"DEBUG", "LOADAOF"}), "OK");
  EXPECT_EQ(Cmd(p.get(), {"LRANGE", "l", "0", "-1"}), "[x,y]");
  EXPECT_EQ(Cmd(p.get(), {"SELECT", "0"}), "OK");
  EXPECT_EQ(Cmd(p.get(), {"GET", "a"}), "1");
}

TEST(ClientStateE2E, TransactionReachesARedisServerReplica) {
  if (!HaveTool("redis-server")) GTEST_SKIP() << "redis-server not installed";
  TestServer primary({"--save", "", "--repl-diskless-sync-delay", "0", "--enable-debug-command", "yes"});
  TestServer redis({"--enable-debug-command", "yes"}, "/usr/bin/redis-server");
  ASSERT_TRUE(primary.ready() && redis.ready());
  Redis p = Connect(primary.port());
  Redis r = Connect(redis.port());
  ASSERT_EQ(Cmd(r.get(), {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "OK");
  RawConn rr(redis.port());
  ASSERT_TRUE(WaitInfo(rr, "master_link_status", "up", 20000, "replication"));
  Cmd(p.get(), {"MULTI"});
  Cmd(p.get(), {"HSET", "h", "f", "v"});
  Cmd(p.get(), {"ZADD", "z", "1", "m"});
  Cmd(p.get(), {"RPUSH", "bl", "served"});
  EXPECT_EQ(Cmd(p.get(), {"EXEC"}), "[1,1,1]");
  EXPECT_EQ(Cmd(p.get(), {"BLPOP", "bl", "0"}), "[bl,served]");  // propagated as LPOP
  EXPECT_EQ(Cmd(p.get(), {"WAIT", "1", "5000"}), "1");
  EXPECT_EQ(Cmd(r.get(), {"HGET", "h", "f"}), "v");
  EXPECT_EQ(Cmd(r.get(), {"ZSCORE", "z", "m"}), "1");
  EXPECT_EQ(Cmd(r.get(), {"EXISTS", "bl"}), "0");
  EXPECT_EQ(Cmd(p.get(), {"DEBUG", "DIGEST"}), Cmd(r.get(), {"DEBUG", "DIGEST"}));
}

TEST(ClientStateE2E, MonitorSeesCommandsAsRedisFormatsThem) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  RawConn mon(s.port());
  EXPECT_EQ(Call(mon, {"MONITOR"}), "+OK\r\n");
  Redis c = Connect(s.port());
  Cmd(c.get(), {"SET", "k", "a \"quoted\"\n\x01"});
  Cmd(c.get(), {"AUTH", "secret"});
  Cmd(c.get(), {"CONFIG", "GET", "port"});  // admin: not shown
  Cmd(c.get(), {"SELECT", "3"});
  const std::regex set_line(R"re(\+\d+\.\d{6} \[0 127\.0\.0\.1:\d+\] "SET" "k" "a \\"quoted\\"\\n\\x01"\r\n)re");
  EXPECT_TRUE(std::regex_match(mon.ReadReply(), set_line));
  const std::regex auth_line(R"re(\+\d+\.\d{6} \[0 127\.0\.0\.1:\d+\] "AUTH" "\(redacted\)"\r\n)re");
  EXPECT_TRUE(std::regex_match(mon.ReadReply(), auth_line));
  const std::regex select_line(R"re(\+\d+\.\d{6} \[3 127\.0\.0\.1:\d+\] "SELECT" "3"\r\n)re");
  EXPECT_TRUE(std::regex_match(mon.ReadReply(), select_line));
  EXPECT_NE(Cmd(c.get(), {"CLIENT", "LIST"}).find("flags=O"), std::string::npos);
}

// EVAL and FCALL (flagged skip_monitor) are shown before the commands
// their script runs, as Redis feeds them first.
TEST(ClientStateE2E, MonitorShowsScriptsBeforeTheirCommands) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  RawConn mon(s.port());
  EXPECT_EQ(Call(mon, {"MONITOR"}), "+OK\r\n");
  Redis c = Connect(s.port());
  Cmd(c.get(), {"EVAL", "redis.call('set', KEYS[1], 'v')", "1", "k"});
  const std::regex eval_line(R"re(\+\d+\.\d{6} \[0 127\.0\.0\.1:\d+\] "EVAL" .*"k"\r\n)re");
  EXPECT_TRUE(std::regex_match(mon.ReadReply(), eval_line));
  const std::regex set_line(R"re(\+\d+\.\d{6} \[0 lua\] "set" "k" "v"\r\n)re");
  EXPECT_TRUE(std::regex_match(mon.ReadReply(), set_line));
}

// CLIENT INFO / LIST count the running command's bytes in qbuf and its
// arguments in argv-mem, as Redis (whose query buffer still holds them).
TEST(ClientStateE2E, ClientInfoCountsTheRunningCommand) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  Redis c = Connect(s.port());
  const std::string info = Cmd(c.get(), {"CLIENT", "INFO"});
  EXPECT_NE(info.find(" qbuf=26 "), std::string::npos) << info;
  EXPECT_NE(info.find(" argv-mem=10 "), std::string::npos) << info;
  const std::string list = Cmd(c.get(), {"CLIENT", "LIST"});
  EXPECT_NE(list.find(" qbuf=26 "), std::string::npos) << list;
}

// tracking-table-max-keys is also applied before each command (Redis's
// processCommand), so a lowered limit is felt even with the cron paused:
// the invalidation comes before the reply of the next command.
TEST(ClientStateE2E, TrackingTableLimitIsAppliedBeforeACommand) {
  TestServer s({"--enable-debug-command", "yes"});
  ASSERT_TRUE(s.ready());
  RawConn admin(s.port());
  EXPECT_EQ(Call(admin, {"CONFIG", "SET", "tracking-table-max-keys", "2"}), "+OK\r\n");
  EXPECT_EQ(Call(admin, {"DEBUG", "PAUSE-CRON", "1"}), "+OK\r\n");
  RawConn c(s.port());
  Call(c, {"HELLO", "3"});
  EXPECT_EQ(Call(c, {"CLIENT", "TRACKING", "on"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"MGET", "a", "b"}), "*2\r\n_\r\n_\r\n");
  EXPECT_EQ(Call(c, {"MULTI"}), "+OK\r\n");
  EXPECT_EQ(Call(admin, {"CONFIG", "SET", "tracking-table-max-keys", "1"}), "+OK\r\n");
  const std::regex invalidate(R"re(>2\r\n\$10\r\ninvalidate\r\n\*1\r\n\$1\r\n[ab]\r\n)re");
  EXPECT_TRUE(std::regex_match(Call(c, {"PING"}), invalidate));
  EXPECT_EQ(c.ReadReply(), "+QUEUED\r\n");
  EXPECT_EQ(Call(c, {"EXEC"}), "*1\r\n+PONG\r\n");
  EXPECT_EQ(Call(admin, {"DEBUG", "PAUSE-CRON", "0"}), "+OK\r\n");
}

TEST(ClientStateE2E, ExpiryAndEvictionNotify) {
  TestServer s({"--notify-keyspace-events", "Exe", "--hz", "100"});
  ASSERT_TRUE(s.ready());
  RawConn sub(s.port());
  Call(sub, {"SUBSCRIBE", "__keyevent@0__:expired", "__keyevent@0__:evicted"});
  sub.ReadReply();  // the second subscription's confirmation
  Redis c = Connect(s.port());
  EXPECT_EQ(Cmd(c.get(), {"SET", "short", "v", "PX", "20"}), "OK");
  // No client touches the key: the active expiry cycle deletes and reports it.
  EXPECT_EQ(sub.ReadReply(), "*3\r\n$7\r\nmessage\r\n$22\r\n__keyevent@0__:expired\r\n$5\r\nshort\r\n");
  EXPECT_EQ(Cmd(c.get(), {"CONFIG", "SET", "maxmemory-policy", "allkeys-random"}), "OK");
  EXPECT_EQ(Cmd(c.get(), {"SET", "victim", std::string(1000, 'x')}), "OK");
  EXPECT_EQ(Cmd(c.get(), {"CONFIG", "SET", "maxmemory", "1"}), "OK");  // evicts at once, as Redis
  EXPECT_EQ(sub.ReadReply(), "*3\r\n$7\r\nmessage\r\n$22\r\n__keyevent@0__:evicted\r\n$6\r\nvictim\r\n");
  EXPECT_EQ(Cmd(c.get(), {"CONFIG", "SET", "maxmemory", "0"}), "OK");
}

// A client that uses none of the client-state features has none of their
// components; each appears with its first use and goes with its last.
TEST(ClientStateE2E, ComponentsAreAllocatedOnlyWhileUsed) {
  TestServer s({"--enable-debug-command", "yes"});
  ASSERT_TRUE(s.ready());
  Redis c = Connect(s.port());
  Redis admin = Connect(s.port());
  const std::string id = Cmd(c.get(), {"CLIENT", "ID"});
  auto components = [&] { return Cmd(admin.get(), {"DEBUG", "CLIENT-COMPONENTS", id}); };
  for (int i = 0; i < 100; ++i) Cmd(c.get(), {"SET", "k" + std::to_string(i), "v"});
  Cmd(c.get(), {"GET", "k1"});
  Cmd(c.get(), {"LPUSH", "l", "a"});
  EXPECT_EQ(components(), "[]");
  Cmd(c.get(), {"MULTI"});
  EXPECT_EQ(components(), "[multi]");
  Cmd(c.get(), {"DISCARD"});
  EXPECT_EQ(components(), "[]");
  Cmd(c.get(), {"WATCH", "k1"});
  EXPECT_EQ(components(), "[watch]");
  Cmd(c.get(), {"MULTI"});
  EXPECT_EQ(components(), "[multi,watch]");
  Cmd(c.get(), {"EXEC"});
  EXPECT_EQ(components(), "[]");
  Append(c.get(), {"BLPOP", "empty", "0"});
  ASSERT_TRUE(WaitBlocked(admin.get(), 1));
  EXPECT_EQ(components(), "[blocking]");  // nothing waits behind it yet
  Append(c.get(), {"PING"});
  for (int i = 0; i < 500 && components() != "[deferred,blocking]"; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(components(), "[deferred,blocking]");
  Cmd(admin.get(), {"RPUSH", "empty", "x"});
  EXPECT_EQ(NextReply(c.get()), "[empty,x]");
  EXPECT_EQ(NextReply(c.get()), "PONG");
  EXPECT_EQ(components(), "[]");
  Cmd(c.get(), {"SUBSCRIBE", "ch"});
  EXPECT_EQ(components(), "[pubsub]");
  Cmd(c.get(), {"UNSUBSCRIBE"});
  EXPECT_EQ(components(), "[]");
  Cmd(c.get(), {"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p:"});
  EXPECT_EQ(components(), "[tracking]");
  Cmd(c.get(), {"CLIENT", "TRACKING", "off"});
  EXPECT_EQ(components(), "[]");
  Cmd(c.get(), {"CLIENT", "SETNAME", "named"});
  EXPECT_EQ(components(), "[meta]");
}

// tracking-table-max-keys: the cron forgets the excess keys and tells their
// readers, so the table stays bounded however much clients read.
TEST(ClientStateE2E, TrackingTableIsBoundedAndForgottenKeysAreInvalidated) {
  TestServer s({"--hz", "100"});
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  Call(c, {"HELLO", "3"});
  EXPECT_EQ(Call(c, {"CONFIG", "SET", "tracking-table-max-keys", "2"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"CLIENT", "TRACKING", "on"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"MGET", "a", "b", "c", "d"}), "*4\r\n_\r\n_\r\n_\r\n_\r\n");
  const std::regex invalidate(R"re(>2\r\n\$10\r\ninvalidate\r\n\*1\r\n\$1\r\n[abcd]\r\n)re");
  EXPECT_TRUE(std::regex_match(c.ReadReply(), invalidate));
  EXPECT_TRUE(std::regex_match(c.ReadReply(), invalidate));
  RawConn admin(s.port());
  EXPECT_EQ(Info(admin, "tracking_total_keys", "stats"), "2");
  EXPECT_EQ(Info(admin, "tracking_clients", "clients"), "1");
}

// maxmemory-clients: a client whose unread replies push the clients' memory
// over the limit is closed and counted; a NO-EVICT client is never chosen.
TEST(ClientStateE2E, MaxmemoryClientsEvictsTheBiggestClient) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  RawConn admin(s.port());
  EXPECT_EQ(Call(admin, {"CLIENT", "NO-EVICT", "on"}), "+OK\r\n");
  EXPECT_EQ(Call(admin, {"SET", "big", std::string(100000, 'x')}), "+OK\r\n");
  EXPECT_EQ(Call(admin, {"CONFIG", "SET", "maxmemory-clients", "1mb"}), "+OK\r\n");
  // Two clients ask for 30 MB of replies and read none of them.
  RawConn keeper(s.port()), hog(s.port());
  EXPECT_EQ(Call(keeper, {"CLIENT", "NO-EVICT", "on"}), "+OK\r\n");
  std::string flood;
  for (int i = 0; i < 300; ++i) flood += Resp({"GET", "big"});
  keeper.Send(flood);
  hog.Send(flood);
  ASSERT_TRUE(WaitInfo(admin, "evicted_clients", "1", 10000, "stats"));
  // The hog is gone; the NO-EVICT clients still work.
  std::string rest = hog.ReadN(100 * 1000 * 1000);
  EXPECT_LT(rest.size(), 300u * 100000u);  // closed before all its replies were sent
  EXPECT_EQ(Call(admin, {"PING"}), "+PONG\r\n");
  std::string keeper_got = keeper.ReadN(300 * (100000 + 11));
  EXPECT_EQ(keeper_got.size(), 300u * (100000 + 11));  // "$100000\r\n" + value + "\r\n", every one
  EXPECT_EQ(Info(admin, "evicted_clients", "stats"), "1");
  EXPECT_EQ(Call(admin, {"CONFIG", "SET", "maxmemory-clients", "0"}), "+OK\r\n");
}

}  // namespace
}  // namespace ringkv::testing::client_state_e2e_test

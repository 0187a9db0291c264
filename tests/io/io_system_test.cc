// IoSystem end to end on loopback, with a test sink: the main loop's duties
// as I/O thread 0 runs them through MainLoopHooks -- commands of thread 0's
// own connections and of another I/O thread's, replies both ways, the turn
// while a command runs long (ProcessEventsWhileBusy), and connections handed
// between threads (SetThreads, MoveToMainThread).
#include "io/io_system.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/free_port.h"

namespace ringkv::io {
namespace {

using std::chrono::steady_clock;

// PING -> +PONG; SLOW runs until RELEASE arrives (serving others meanwhile
// through ProcessEventsWhileBusy), then -> +DONE; STOP stops the loop; the
// others are commented where they are answered.
class TestSink : public CommandSink {
 public:
  IoSystem* io = nullptr;

  std::string OnAccept(const SocketAddress&) override { return {}; }
  void OnOpen(Connection* conn) override { open_.push_back(conn); }
  void OnCommand(Connection* conn, std::span<const std::string_view> argv) override {
    if (argv[0] == "PING") {
      io->PrepareWrite(conn).Append("+PONG\r\n");
    } else if (argv[0] == "SLOW") {
      const auto deadline = steady_clock::now() + std::chrono::seconds(10);
      while (!released_ && steady_clock::now() < deadline) {
        io->ProcessEventsWhileBusy(conn);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      released_ = false;
      io->PrepareWrite(conn).Append("+DONE\r\n");
    } else if (argv[0] == "RELEASE") {
      released_ = true;
      io->PrepareWrite(conn).Append("+OK\r\n");
    } else if (argv[0] == "NUM") {  // NUM n -> :n
      io->PrepareWrite(conn).Append(":" + std::string(argv[1]) + "\r\n");
    } else if (argv[0] == "THREADS") {  // THREADS n: io-threads n
      io->SetThreads(std::stoi(std::string(argv[1])));
      io->PrepareWrite(conn).Append("+OK\r\n");
    } else if (argv[0] == "ACTIVE") {  // :serving threads, or :9 while some retire
      io->PrepareWrite(conn).Append(":" + std::to_string(io->retiring_threads() > 0 ? 9 : io->threads()) + "\r\n");
    } else if (argv[0] == "WHERE") {  // :the connection's thread
      io->PrepareWrite(conn).Append(":" + std::to_string(conn->thread) + "\r\n");
    } else if (argv[0] == "TOMAIN") {
      io->MoveToMainThread(conn);
      io->PrepareWrite(conn).Append("+OK\r\n");
    } else if (argv[0] == "AFTER") {  // AFTER us: +TIMER from the timer, once `us` have passed
      const int64_t us = std::stoll(std::string(argv[1]));
      waiters_.push_back(Waiter{conn, steady_clock::now() + std::chrono::microseconds(us)});
      io->WakeTimerInUs(us);
    } else if (argv[0] == "ID") {  // :the connection's id
      io->PrepareWrite(conn).Append(":" + std::to_string(conn->id) + "\r\n");
    } else if (argv[0] == "BIG") {  // BIG n: n bytes of output
      io->PrepareWrite(conn).Append(std::string(std::stoul(std::string(argv[1])), 'x'));
    } else if (argv[0] == "KILL") {  // KILL id: CloseNow of that connection
      const uint64_t id = std::stoull(std::string(argv[1]));
      for (Connection* c : open_) {
        if (c->id == id) io->CloseNow(c);
      }
      io->PrepareWrite(conn).Append("+OK\r\n");
    } else if (argv[0] == "UNSENT") {  // UNSENT id: :that connection's unsent bytes, as its thread last said
      const uint64_t id = std::stoull(std::string(argv[1]));
      uint64_t unsent = 0;
      for (Connection* c : open_) {
        if (c->id == id) unsent = c->thread == 0 ? c->out.size() : c->stat_obuf();
      }
      io->PrepareWrite(conn).Append(":" + std::to_string(unsent) + "\r\n");
    } else if (argv[0] == "HELD") {  // :closing_output_bytes()
      io->PrepareWrite(conn).Append(":" + std::to_string(io->closing_output_bytes()) + "\r\n");
    } else if (argv[0] == "STOP") {
      io->RequestStop();
    } else {
      io->PrepareWrite(conn).Append("-ERR unknown\r\n");
    }
  }
  // A batch's prefetch leaves, for NUM n, a pointer to a copy of n;
  // OnPrefetchedCommand checks it came back with the same command.
  void PrefetchBatch(Connection*, std::span<const std::span<const std::string_view>> argvs,
                     std::span<PrefetchSlot> slots) override {
    ASSERT_EQ(argvs.size(), slots.size());
    for (size_t i = 0; i < argvs.size(); ++i) {
      EXPECT_EQ(slots[i].what, nullptr);  // zeroed by the loop
      if (argvs[i].size() == 2 && argvs[i][0] == "NUM") slots[i].what = &prefetched_args_.emplace_back(argvs[i][1]);
    }
  }
  void OnPrefetchedCommand(Connection* conn, std::span<const std::string_view> argv, const PrefetchSlot& slot) override {
    if (slot.what != nullptr) {
      ++prefetched_commands;
      if (argv.size() != 2 || *static_cast<const std::string*>(slot.what) != argv[1]) ++prefetch_mismatches;
    }
    OnCommand(conn, argv);
  }
  std::atomic<int> prefetched_commands{0};
  std::atomic<int> prefetch_mismatches{0};

  void OnProtocolError(Connection* conn, std::string_view) override {
    io->PrepareWrite(conn).Append("-ERR Protocol error\r\n");
    io->CloseAfterReply(conn);
  }
  void OnClose(Connection* conn) override {
    std::erase_if(waiters_, [conn](const Waiter& w) { return w.conn == conn; });
    std::erase(open_, conn);
  }
  // Answers the AFTERs that fell due; asks again for the nearest one left,
  // or after timer_every_us.
  int64_t OnTimer() override {
    const auto now = steady_clock::now();
    int64_t next_us = timer_every_us;
    std::erase_if(waiters_, [&](const Waiter& w) {
      if (w.due <= now) {
        io->PrepareWrite(w.conn).Append("+TIMER\r\n");
        return true;
      }
      next_us = std::min<int64_t>(next_us, std::chrono::duration_cast<std::chrono::microseconds>(w.due - now).count() + 1);
      return false;
    });
    return next_us;
  }
  int64_t timer_every_us = 100'000;  // set before the server starts
  void BeforeFlush() override {}

 private:
  bool released_ = false;
  std::deque<std::string> prefetched_args_;  // stable addresses
  struct Waiter {
    Connection* conn;
    steady_clock::time_point due;
  };
  std::vector<Waiter> waiters_;
  std::vector<Connection*> open_;
};

int FreePort() { return ringkv::testing::FreeLoopbackPort(); }

// A blocking client socket.
class Client {
 public:
  explicit Client(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    timeval tv{5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~Client() { close(fd_); }
  bool ok() const { return ok_; }
  void Send(std::string_view bytes) { ASSERT_EQ(write(fd_, bytes.data(), bytes.size()), ssize_t(bytes.size())); }
  // Reads until `n` bytes arrived (or the 5 s timeout).
  std::string Read(size_t n) {
    std::string out;
    char buf[256];
    while (out.size() < n) {
      ssize_t r = read(fd_, buf, std::min(sizeof(buf), n - out.size()));
      if (r <= 0) break;
      out.append(buf, static_cast<size_t>(r));
    }
    return out;
  }
  // Whether something arrived, without waiting.
  bool Ready() {
    char c;
    return recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
  }
  // Whether anything arrived within `ms`.
  bool Idle(int ms) {
    char c;
    timeval tv{0, ms * 1000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    const bool idle = recv(fd_, &c, 1, MSG_PEEK) < 0;
    tv = {5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return idle;
  }

 private:
  int fd_;
  bool ok_ = false;
};

std::string Cmd(std::string_view name) {
  return "*1\r\n$" + std::to_string(name.size()) + "\r\n" + std::string(name) + "\r\n";
}

std::string Cmd(std::string_view name, std::string_view arg) {
  return "*2\r\n$" + std::to_string(name.size()) + "\r\n" + std::string(name) + "\r\n$" +
         std::to_string(arg.size()) + "\r\n" + std::string(arg) + "\r\n";
}

// A server on its own thread: the IoSystem is made there, so that thread is
// its main thread.
class TestServer {
 public:
  explicit TestServer(int threads, BackendChoice backend = BackendChoice::kAuto, int64_t timer_every_us = 100'000)
      : port_(FreePort()) {
    sink_.timer_every_us = timer_every_us;
    std::promise<std::string> started;
    std::future<std::string> result = started.get_future();
    thread_ = std::thread([this, threads, backend, &started] {
      TestSink& sink = sink_;
      IoSystem io(&sink);
      sink.io = &io;
      IoOptions options;
      options.threads = threads;
      options.port = port_;
      options.bind = {"127.0.0.1"};
      options.backend = backend;
      absl::Status s = io.Start(options);
      started.set_value(s.ok() ? "" : std::string(s.message()));
      if (!s.ok()) return;
      io.Run();
      io.Shutdown();
    });
    error_ = result.get();
  }
  ~TestServer() {
    if (error_.empty()) Client(port_).Send(Cmd("STOP"));
    thread_.join();
  }
  const std::string& error() const { return error_; }
  int port() const { return port_; }
  const TestSink& sink() const { return sink_; }

 private:
  TestSink sink_;  // used by the server's thread; its counters are atomic
  int port_;
  std::string error_;
  std::thread thread_;
};

// Both backends: io_uring (auto; epoll where this host refuses io_uring) and
// epoll.
class IoSystemTest : public ::testing::TestWithParam<BackendChoice> {};

TEST_P(IoSystemTest, ServesOwnAndOtherThreadsConnections) {
  for (int threads : {1, 2}) {
    TestServer server(threads, GetParam());
    ASSERT_EQ(server.error(), "");
    Client a(server.port()), b(server.port());  // thread 0, then thread 1 (threads 2)
    ASSERT_TRUE(a.ok() && b.ok());
    a.Send(Cmd("PING") + Cmd("PING"));
    b.Send(Cmd("PING") + Cmd("NOPE") + Cmd("PING"));
    EXPECT_EQ(a.Read(14), "+PONG\r\n+PONG\r\n") << threads;
    EXPECT_EQ(b.Read(28), "+PONG\r\n-ERR unknown\r\n+PONG\r\n") << threads;
  }
}

// A pipelined batch gets prefetch rounds, and each command of it comes back
// through OnPrefetchedCommand with what PrefetchBatch left for that very command:
// on thread 0's own connection (parsed and run in the same loop) and on
// another thread's (posted to the main thread as a batch).
TEST_P(IoSystemTest, BatchDeliversEachCommandWithItsPrefetchedLookUp) {
  TestServer server(2, GetParam());
  ASSERT_EQ(server.error(), "");
  Client own(server.port());
  own.Send(Cmd("PING"));  // accepted (thread 0) before the next connects
  ASSERT_EQ(own.Read(7), "+PONG\r\n");
  Client other(server.port());  // thread 1
  own.Send(Cmd("WHERE"));
  other.Send(Cmd("WHERE"));
  ASSERT_EQ(own.Read(4), ":0\r\n");
  ASSERT_EQ(other.Read(4), ":1\r\n");
  for (Client* c : {&own, &other}) {
    const int before = server.sink().prefetched_commands;
    for (int round = 0; round < 20 && server.sink().prefetched_commands == before; ++round) {
      std::string batch, want;
      for (int j = 0; j < 12; ++j) {
        batch += Cmd("NUM", std::to_string(round * 100 + j));
        want += ":" + std::to_string(round * 100 + j) + "\r\n";
      }
      c->Send(batch);  // one write: read, as a rule, as one batch
      EXPECT_EQ(c->Read(want.size()), want);
    }
    EXPECT_GT(server.sink().prefetched_commands, before) << (c == &own ? "thread 0" : "thread 1");
  }
  EXPECT_EQ(server.sink().prefetch_mismatches, 0);
}

// While SLOW runs on one connection, others are served; the slow
// connection's later input waits until SLOW returns and then runs in order.
void CheckBusyTurn(int threads, bool slow_first, BackendChoice backend) {
  TestServer server(threads, backend);
  ASSERT_EQ(server.error(), "");
  // Connections are spread round-robin in accept order: a PING round trip
  // makes sure the first is accepted before the second connects.
  Client first(server.port());
  first.Send(Cmd("PING"));
  ASSERT_EQ(first.Read(7), "+PONG\r\n");
  Client second(server.port());
  Client& slow = slow_first ? first : second;
  Client& other = slow_first ? second : first;
  slow.Send(Cmd("SLOW") + Cmd("PING"));
  other.Send(Cmd("PING"));
  EXPECT_EQ(other.Read(7), "+PONG\r\n");
  slow.Send(Cmd("PING"));  // arrives during the busy turns: held
  other.Send(Cmd("PING"));
  EXPECT_EQ(other.Read(7), "+PONG\r\n");
  EXPECT_TRUE(slow.Idle(50));
  other.Send(Cmd("RELEASE"));
  EXPECT_EQ(other.Read(5), "+OK\r\n");
  EXPECT_EQ(slow.Read(21), "+DONE\r\n+PONG\r\n+PONG\r\n");
  // And the slow connection is served normally afterwards.
  slow.Send(Cmd("PING"));
  EXPECT_EQ(slow.Read(7), "+PONG\r\n");
}

TEST_P(IoSystemTest, TurnWhileBusyOneThread) { CheckBusyTurn(1, true, GetParam()); }
TEST_P(IoSystemTest, TurnWhileBusyOnMainThreadsConnection) { CheckBusyTurn(2, true, GetParam()); }
TEST_P(IoSystemTest, TurnWhileBusyOnAnotherThreadsConnection) { CheckBusyTurn(2, false, GetParam()); }

// Several clients pipeline NUM commands while the thread count goes up and
// down: every reply arrives, in order, on every connection.
TEST_P(IoSystemTest, SetThreadsKeepsEveryReplyInOrder) {
  TestServer server(1, GetParam());
  ASSERT_EQ(server.error(), "");
  Client control(server.port());
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0}, rounds{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 6; ++i) {
    clients.emplace_back([&] {
      Client c(server.port());
      for (int n = 0; !stop; n += 100) {
        std::string batch, want;
        for (int j = n; j < n + 100; ++j) {
          batch += Cmd("NUM", std::to_string(j));
          want += ":" + std::to_string(j) + "\r\n";
        }
        c.Send(batch);
        if (c.Read(want.size()) != want) {
          ++errors;
          return;
        }
        ++rounds;
      }
    });
  }
  for (int n : {4, 2, 1, 3, 1, 4, 3, 2, 1}) {
    control.Send(Cmd("THREADS", std::to_string(n)));
    EXPECT_EQ(control.Read(5), "+OK\r\n");
    const std::string want = ":" + std::to_string(n) + "\r\n";
    std::string got;
    for (int i = 0; i < 500 && got != want; ++i) {
      control.Send(Cmd("ACTIVE"));
      got = control.Read(want.size());
      if (got != want) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(got, want);
    const int before = rounds;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_GT(rounds, before) << n;
  }
  stop = true;
  for (auto& t : clients) t.join();
  EXPECT_EQ(errors, 0);
}

// A deadline nearer than the one the loop's timer waits for (an hour away
// here) is kept, never early: moved to while the timer is armed, due at
// once, and two at a time, the nearer answered first. (io_uring moves its
// standing timer; epoll passes the nearer timeout to its wait.)
TEST_P(IoSystemTest, TimerFiresForANearerDeadlineAndNeverEarly) {
  TestServer server(1, GetParam(), int64_t{3600} * 1'000'000);
  ASSERT_EQ(server.error(), "");
  Client a(server.port()), b(server.port());
  a.Send(Cmd("PING"));
  ASSERT_EQ(a.Read(7), "+PONG\r\n");  // the loop has slept once: its timer is armed

  auto start = steady_clock::now();
  a.Send(Cmd("AFTER", "20000"));
  EXPECT_EQ(a.Read(8), "+TIMER\r\n");  // or nothing after 5 s: the hour's timer held it
  EXPECT_GE(steady_clock::now() - start, std::chrono::milliseconds(20));

  a.Send(Cmd("AFTER", "0"));
  EXPECT_EQ(a.Read(8), "+TIMER\r\n");

  start = steady_clock::now();
  a.Send(Cmd("AFTER", "60000"));
  b.Send(Cmd("AFTER", "10000"));
  EXPECT_EQ(b.Read(8), "+TIMER\r\n");
  const bool a_answered = a.Ready();
  if (steady_clock::now() - start < std::chrono::milliseconds(60)) {
    EXPECT_FALSE(a_answered) << "the later deadline was answered early, with the nearer one";
  }
  EXPECT_EQ(a.Read(8), "+TIMER\r\n");
  EXPECT_GE(steady_clock::now() - start, std::chrono::milliseconds(60));

  // Still served meanwhile (AFTER does not block its connection), and still
  // keeping time, after those firings.
  a.Send(Cmd("AFTER", "5000") + Cmd("PING"));
  EXPECT_EQ(a.Read(15), "+PONG\r\n+TIMER\r\n");
}

// MoveToMainThread: a connection of another thread comes to thread 0; what
// it was sent before and after the move arrives in order.
TEST_P(IoSystemTest, MoveToMainThread) {
  TestServer server(3, GetParam());
  ASSERT_EQ(server.error(), "");
  std::vector<std::unique_ptr<Client>> c;
  for (int i = 0; i < 3; ++i) {  // accepted in order: threads 0, 1, 2
    c.push_back(std::make_unique<Client>(server.port()));
    c.back()->Send(Cmd("WHERE"));
    ASSERT_EQ(c.back()->Read(4), ":" + std::to_string(i) + "\r\n");
  }
  std::string batch = Cmd("NUM", "1") + Cmd("TOMAIN");
  for (int j = 2; j < 200; ++j) batch += Cmd("NUM", std::to_string(j));
  std::string want = ":1\r\n+OK\r\n";
  for (int j = 2; j < 200; ++j) want += ":" + std::to_string(j) + "\r\n";
  c[2]->Send(batch);
  EXPECT_EQ(c[2]->Read(want.size()), want);
  c[2]->Send(Cmd("WHERE"));
  EXPECT_EQ(c[2]->Read(4), ":0\r\n");
  c[0]->Send(Cmd("TOMAIN") + Cmd("WHERE"));  // already there
  EXPECT_EQ(c[0]->Read(9), "+OK\r\n:0\r\n");
}

// A connection closed by CloseNow with output it could not send (its peer
// reads nothing) counts in closing_output_bytes() until its close
// completes -- on its own thread, once the send in flight returned -- and
// not a moment longer: maxmemory's eviction leaves those bytes out.
TEST_P(IoSystemTest, UnsentOutputOfAClosedConnectionIsHeldUntilItsCloseCompletes) {
  auto read_line = [](Client& c) {
    std::string line = c.Read(1);
    while (!line.empty() && line.back() != '\n') {
      const std::string more = c.Read(1);
      if (more.empty()) break;
      line += more;
    }
    return line;
  };
  auto number = [](const std::string& line) { return line.size() > 3 ? std::stoll(line.substr(1)) : -1; };
  for (int threads : {1, 2}) {
    TestServer server(threads, GetParam());
    ASSERT_EQ(server.error(), "");
    Client control(server.port()), victim(server.port());  // thread 0; thread 1 with threads 2
    control.Send(Cmd("HELD"));
    ASSERT_EQ(read_line(control), ":0\r\n");
    victim.Send(Cmd("ID"));
    const std::string id = std::to_string(number(read_line(victim)));
    victim.Send(Cmd("BIG", "16000000"));  // more than the sockets take: the rest waits
    bool stuck = false;  // its command ran, and what the sockets could not take waits
    for (int i = 0; i < 500 && !stuck; ++i) {
      control.Send(Cmd("UNSENT", id));
      stuck = number(read_line(control)) > 1'000'000;
      if (!stuck) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_TRUE(stuck) << threads;
    control.Send(Cmd("KILL", id) + Cmd("HELD"));
    ASSERT_EQ(read_line(control), "+OK\r\n");
    EXPECT_GT(number(read_line(control)), 1'000'000) << threads;  // several MB unsent
    bool released = false;
    for (int i = 0; i < 500 && !released; ++i) {
      control.Send(Cmd("HELD"));
      released = number(read_line(control)) == 0;
      if (!released) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(released) << threads;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, IoSystemTest, ::testing::Values(BackendChoice::kAuto, BackendChoice::kEpoll),
                         [](const ::testing::TestParamInfo<BackendChoice>& info) {
                           return info.param == BackendChoice::kEpoll ? "epoll" : "auto";
                         });

}  // namespace
}  // namespace ringkv::io

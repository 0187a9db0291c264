// client_state_bench: the client-state workloads redis-benchmark cannot
// express.
//
//   client_state_bench -m multi -p PORT [-c CLIENTS] [-n TRANSACTIONS]
//     C connections each send MULTI, 10 SETs and EXEC as one write and wait
//     for the whole answer before the next; one epoll thread drives them.
//     Prints transactions per second and latency percentiles (ms).
//   client_state_bench -m pingpong -p PORT [-n ROUNDS]
//     Two connections bounce one element: B pushes to `ping` and blocks on
//     `pong`; A blocks on `ping` and pushes to `pong` when woken. Prints
//     round trips per second and round-trip percentiles (us): each round is
//     two blocking wake-ups.
//   client_state_bench -m timeout -p PORT [-n CALLS]
//     One connection runs BLPOP on a missing key with a 50 ms timeout, N
//     times. Prints how late each timeout answer came, as percentiles (ms)
//     of (elapsed - 50 ms).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "perf/bench_socket.h"

namespace {

using Clock = std::chrono::steady_clock;

std::string Resp(const std::vector<std::string>& argv) {
  std::string s = "*" + std::to_string(argv.size()) + "\r\n";
  for (const std::string& a : argv) s += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return s;
}

void WriteAll(int fd, const std::string& s) {
  if (write(fd, s.data(), s.size()) != static_cast<ssize_t>(s.size())) {
    std::perror("write");
    std::exit(1);
  }
}

// Reads until `lines` CRLF-terminated lines arrived (every reply here is made
// of short lines only); stops on an error reply.
void ReadLines(int fd, std::string* in, int lines) {
  char buf[4096];
  int seen = 0;
  size_t pos = 0;
  while (true) {
    size_t p;
    while ((p = in->find("\r\n", pos)) != std::string::npos) {
      if ((*in)[pos] == '-') {
        std::fprintf(stderr, "error reply: %s\n", in->substr(pos, p - pos).c_str());
        std::exit(1);
      }
      pos = p + 2;
      if (++seen == lines) {
        in->erase(0, pos);
        return;
      }
    }
    ssize_t r = read(fd, buf, sizeof(buf));
    if (r <= 0) {
      std::fprintf(stderr, "connection closed\n");
      std::exit(1);
    }
    in->append(buf, static_cast<size_t>(r));
  }
}

void Report(const char* what, std::vector<double>& lat, double secs, const char* unit, double scale) {
  std::sort(lat.begin(), lat.end());
  auto pct = [&](double p) { return lat[static_cast<size_t>(p * static_cast<double>(lat.size() - 1))] * scale; };
  std::printf("%s_per_sec=%.0f p50_%s=%.3f p99_%s=%.3f max_%s=%.3f\n", what, static_cast<double>(lat.size()) / secs,
              unit, pct(0.5), unit, pct(0.99), unit, lat.back() * scale);
}

int Multi(int port, int clients, long transactions) {
  struct Conn {
    int fd;
    std::string in;
    int lines = 0;
    Clock::time_point sent;
    uint64_t seq = 0;
  };
  // MULTI (+OK), 10 x +QUEUED, EXEC (*10 then 10 x +OK): 22 lines.
  constexpr int kLines = 22;
  int ep = epoll_create1(0);
  std::vector<Conn> conns(static_cast<size_t>(clients));
  for (int i = 0; i < clients; ++i) {
    conns[static_cast<size_t>(i)].fd = ConnectLoopback(port);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    epoll_ctl(ep, EPOLL_CTL_ADD, conns[static_cast<size_t>(i)].fd, &ev);
  }
  long started = 0;
  auto send = [&](int i) {
    Conn& c = conns[static_cast<size_t>(i)];
    std::string req = Resp({"MULTI"});
    for (int k = 0; k < 10; ++k) {
      req += Resp({"SET", "tx:" + std::to_string(i) + ":" + std::to_string((c.seq * 10 + k) % 1000), "value"});
    }
    req += Resp({"EXEC"});
    ++c.seq;
    c.lines = 0;
    c.sent = Clock::now();
    WriteAll(c.fd, req);
    ++started;
  };
  std::vector<double> lat;
  lat.reserve(static_cast<size_t>(transactions));
  const auto t0 = Clock::now();
  for (int i = 0; i < clients && started < transactions; ++i) send(i);
  std::vector<epoll_event> events(static_cast<size_t>(clients));
  char buf[65536];
  while (static_cast<long>(lat.size()) < transactions) {
    int n = epoll_wait(ep, events.data(), clients, 5000);
    if (n <= 0) {
      std::fprintf(stderr, "timeout waiting for replies\n");
      return 1;
    }
    for (int k = 0; k < n; ++k) {
      const int i = static_cast<int>(events[static_cast<size_t>(k)].data.u32);
      Conn& c = conns[static_cast<size_t>(i)];
      ssize_t r = read(c.fd, buf, sizeof(buf));
      if (r <= 0) {
        std::fprintf(stderr, "connection closed\n");
        return 1;
      }
      c.in.append(buf, static_cast<size_t>(r));
      size_t pos;
      while ((pos = c.in.find("\r\n")) != std::string::npos) {
        if (c.in[0] == '-') {
          std::fprintf(stderr, "error reply: %s\n", c.in.substr(0, pos).c_str());
          return 1;
        }
        c.in.erase(0, pos + 2);
        ++c.lines;
      }
      if (c.lines >= kLines) {
        lat.push_back(std::chrono::duration<double>(Clock::now() - c.sent).count());
        if (started < transactions) send(i);
      }
    }
  }
  Report("transactions", lat, std::chrono::duration<double>(Clock::now() - t0).count(), "ms", 1e3);
  return 0;
}

int PingPong(int port, long rounds) {
  const int a = ConnectLoopback(port), b = ConnectLoopback(port);
  std::string a_in, b_in;
  WriteAll(a, Resp({"DEL", "ping", "pong"}));
  ReadLines(a, &a_in, 1);
  std::thread responder([&] {
    const std::string pop = Resp({"BLPOP", "ping", "0"}), push = Resp({"LPUSH", "pong", "x"});
    for (long i = 0; i < rounds; ++i) {
      WriteAll(a, pop);
      ReadLines(a, &a_in, 5);  // *2 $4 ping $1 x
      WriteAll(a, push);
      ReadLines(a, &a_in, 1);
    }
  });
  const std::string push = Resp({"LPUSH", "ping", "x"}), pop = Resp({"BLPOP", "pong", "0"});
  std::vector<double> lat;
  lat.reserve(static_cast<size_t>(rounds));
  const auto t0 = Clock::now();
  for (long i = 0; i < rounds; ++i) {
    const auto s = Clock::now();
    WriteAll(b, push + pop);
    ReadLines(b, &b_in, 1 + 5);
    lat.push_back(std::chrono::duration<double>(Clock::now() - s).count());
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  responder.join();
  Report("rounds", lat, secs, "us", 1e6);
  return 0;
}

int Timeouts(int port, long calls) {
  const int fd = ConnectLoopback(port);
  std::string in;
  const std::string blpop = Resp({"BLPOP", "no-such-list", "0.05"});
  std::vector<double> late;
  late.reserve(static_cast<size_t>(calls));
  for (long i = 0; i < calls; ++i) {
    const auto s = Clock::now();
    WriteAll(fd, blpop);
    ReadLines(fd, &in, 1);  // *-1
    late.push_back(std::chrono::duration<double>(Clock::now() - s).count() - 0.050);
  }
  std::sort(late.begin(), late.end());
  auto pct = [&](double p) { return late[static_cast<size_t>(p * static_cast<double>(late.size() - 1))] * 1e3; };
  std::printf("timeouts=%zu late_min_ms=%.3f late_p50_ms=%.3f late_p99_ms=%.3f late_max_ms=%.3f\n", late.size(),
              late.front() * 1e3, pct(0.5), pct(0.99), late.back() * 1e3);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int port = 6379, clients = 50;
  long n = 100000;
  std::string mode = "multi";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "-p") port = std::atoi(argv[i + 1]);
    else if (a == "-c") clients = std::atoi(argv[i + 1]);
    else if (a == "-n") n = std::atol(argv[i + 1]);
    else if (a == "-m") mode = argv[i + 1];
  }
  if (mode == "multi") return Multi(port, clients, n);
  if (mode == "pingpong") return PingPong(port, n);
  if (mode == "timeout") return Timeouts(port, n);
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}

// set_wait_bench: the WAIT workload redis-benchmark cannot express. C
// connections each send "SET key value" and "WAIT numreplicas timeout"
// together and wait for both replies before the next pair; one epoll thread
// drives them all. Prints pairs per second and latency percentiles (ms) of
// the pair, and how many WAITs returned fewer replicas than asked.
//
//   set_wait_bench -p PORT [-c CLIENTS] [-n PAIRS] [-r REPLICAS] [-t TIMEOUT_MS]
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
#include <vector>

#include "perf/bench_socket.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Conn {
  int fd = -1;
  std::string in;
  int replies = 0;
  Clock::time_point sent;
  uint64_t seq = 0;
};

std::string Pair(int id, uint64_t seq, int replicas, int timeout_ms) {
  std::string key = "sw:" + std::to_string(id) + ":" + std::to_string(seq % 1000);
  std::string r = std::to_string(replicas), t = std::to_string(timeout_ms);
  return "*3\r\n$3\r\nSET\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n$5\r\nvalue\r\n" +
         "*3\r\n$4\r\nWAIT\r\n$" + std::to_string(r.size()) + "\r\n" + r + "\r\n$" + std::to_string(t.size()) +
         "\r\n" + t + "\r\n";
}

// Counts complete simple replies ("+OK\r\n", ":n\r\n") in c.in; records a
// WAIT answer below `want`.
void Consume(Conn& c, int want, uint64_t* short_waits) {
  size_t pos;
  while ((pos = c.in.find("\r\n")) != std::string::npos) {
    std::string line = c.in.substr(0, pos);
    c.in.erase(0, pos + 2);
    if (line[0] == ':' && std::atoi(line.c_str() + 1) < want) ++*short_waits;
    if (line[0] == '-') std::fprintf(stderr, "error reply: %s\n", line.c_str());
    ++c.replies;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int port = 6379, clients = 50, replicas = 1, timeout_ms = 0;
  long pairs = 100000;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "-p") port = std::atoi(argv[i + 1]);
    else if (a == "-c") clients = std::atoi(argv[i + 1]);
    else if (a == "-n") pairs = std::atol(argv[i + 1]);
    else if (a == "-r") replicas = std::atoi(argv[i + 1]);
    else if (a == "-t") timeout_ms = std::atoi(argv[i + 1]);
  }
  int ep = epoll_create1(0);
  std::vector<Conn> conns(static_cast<size_t>(clients));
  for (int i = 0; i < clients; ++i) {
    Conn& c = conns[static_cast<size_t>(i)];
    c.fd = ConnectLoopback(port);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
  }
  std::vector<double> lat;
  lat.reserve(static_cast<size_t>(pairs));
  uint64_t short_waits = 0;
  long started = 0;
  auto send_pair = [&](int i) {
    Conn& c = conns[static_cast<size_t>(i)];
    std::string req = Pair(i, c.seq++, replicas, timeout_ms);
    c.sent = Clock::now();
    c.replies = 0;
    if (write(c.fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) std::perror("write");
    ++started;
  };
  const auto t0 = Clock::now();
  for (int i = 0; i < clients && started < pairs; ++i) send_pair(i);
  std::vector<epoll_event> events(static_cast<size_t>(clients));
  char buf[65536];
  while (static_cast<long>(lat.size()) < pairs) {
    int n = epoll_wait(ep, events.data(), clients, 5000);
    if (n <= 0) {
      std::fprintf(stderr, "timeout waiting for replies\n");
      return 1;
    }
    for (int k = 0; k < n; ++k) {
      int i = static_cast<int>(events[static_cast<size_t>(k)].data.u32);
      Conn& c = conns[static_cast<size_t>(i)];
      ssize_t r = read(c.fd, buf, sizeof(buf));
      if (r <= 0) {
        std::fprintf(stderr, "connection closed\n");
        return 1;
      }
      c.in.append(buf, static_cast<size_t>(r));
      Consume(c, replicas, &short_waits);
      if (c.replies >= 2) {
        lat.push_back(std::chrono::duration<double, std::milli>(Clock::now() - c.sent).count());
        if (started < pairs) send_pair(i);
      }
    }
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  std::sort(lat.begin(), lat.end());
  auto pct = [&](double p) { return lat[static_cast<size_t>(p * static_cast<double>(lat.size() - 1))]; };
  std::printf("pairs_per_sec=%.0f p50_ms=%.3f p99_ms=%.3f max_ms=%.3f short_waits=%llu\n",
              static_cast<double>(lat.size()) / secs, pct(0.5), pct(0.99), lat.back(),
              static_cast<unsigned long long>(short_waits));
  return 0;
}

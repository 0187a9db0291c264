// lean_load: one fixed command, C connections each keeping P requests in
// flight, until N replies have come back; replies are counted with
// RespSkimmer instead of being built. On this 2-core machine redis-benchmark
// spends ~100 us of its core per 1,000-element reply, against either server,
// so it sets the rate of every large read; this tool spends a few, so the
// server under test does (see client_cpu_util in its output).
//
//   lean_load -p PORT [-c CONNS] [-n REQUESTS] [-P PIPELINE] [-r KEYSPACE] ARG...
//
// As in redis-benchmark, each "__rand_int__" in an argument becomes a
// 12-digit random number below KEYSPACE (-r), new for every request; with
// -d D (1..12) a D-digit number without leading zeros instead (-r ignored).
// Prints CSV like redis-benchmark --csv, with the requests/s second:
//   "test","rps","p50_ms","p99_ms","client_cpu_util","errors"
// and exits 1 (with the first error on stderr) if any reply was an error.
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "perf/bench_socket.h"
#include "perf/resp_skimmer.h"

namespace {

constexpr std::string_view kRandPlaceholder = "__rand_int__";  // 12 bytes, like its digits

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The command as RESP, with the offsets of the placeholders to rewrite.
class RequestTemplate {
 public:
  // digits == 0: each placeholder becomes a 12-digit zero-padded number
  // below `keyspace` (redis-benchmark's form); 1..12: a `digits`-digit
  // number without leading zeros (10^(digits-1) .. 10^digits - 1), for
  // arguments Redis parses strictly, such as SETBIT offsets.
  RequestTemplate(const std::vector<std::string>& args, uint64_t keyspace, int digits = 0)
      : keyspace_(keyspace), digits_(digits) {
    const size_t width = digits_ == 0 ? kRandPlaceholder.size() : static_cast<size_t>(digits_);
    resp_ = "*" + std::to_string(args.size()) + "\r\n";
    for (const std::string& arg : args) {
      std::string a;
      std::vector<size_t> at_in_a;
      for (size_t from = 0;;) {
        const size_t at = arg.find(kRandPlaceholder, from);
        a += arg.substr(from, at == std::string::npos ? std::string::npos : at - from);
        if (at == std::string::npos) break;
        at_in_a.push_back(a.size());
        a += std::string(width, '0');
        from = at + kRandPlaceholder.size();
      }
      resp_ += "$" + std::to_string(a.size()) + "\r\n";
      for (size_t at : at_in_a) rand_offsets_.push_back(resp_.size() + at);
      resp_ += a + "\r\n";
    }
  }

  // Appends `count` requests to `out`, each with fresh random numbers.
  void AppendTo(std::string& out, int count) {
    for (int i = 0; i < count; ++i) {
      const size_t base = out.size();
      out += resp_;
      for (size_t off : rand_offsets_) {
        char digits[24];
        if (digits_ == 0) {
          std::snprintf(digits, sizeof(digits), "%012llu",
                        static_cast<unsigned long long>(NextRandom() % keyspace_));
          std::memcpy(&out[base + off], digits, kRandPlaceholder.size());
        } else {
          uint64_t low = 1;
          for (int d = 1; d < digits_; ++d) low *= 10;
          std::snprintf(digits, sizeof(digits), "%llu",
                        static_cast<unsigned long long>(low + NextRandom() % (9 * low)));
          std::memcpy(&out[base + off], digits, static_cast<size_t>(digits_));
        }
      }
    }
  }

 private:
  uint64_t NextRandom() {  // xorshift64*: cheap and plenty for key choice
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545F4914F6CDD1DULL;
  }

  std::string resp_;
  std::vector<size_t> rand_offsets_;
  uint64_t keyspace_;
  int digits_;
  uint64_t state_ = 0x9E3779B97F4A7C15ULL;
};

struct Conn {
  int fd = -1;
  RespSkimmer skimmer;
  std::string carry;              // a header line cut short by the last read
  std::deque<int64_t> sent_ns;    // send times of the requests in flight
  uint64_t replies_seen = 0;
};

double CpuSeconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

[[noreturn]] void Usage() {
  std::fprintf(stderr,
               "usage: lean_load -p PORT [-c CONNS] [-n REQUESTS] [-P PIPELINE] "
               "[-r KEYSPACE] [-d DIGITS] ARG...\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  int port = 6379, conns = 50, pipeline = 1;
  int64_t requests = 100000;
  uint64_t keyspace = 100000;
  int digits = 0;
  int i = 1;
  for (; i < argc && argv[i][0] == '-' && i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const long long v = std::atoll(argv[i + 1]);
    if (v <= 0) Usage();
    if (flag == "-p") port = static_cast<int>(v);
    else if (flag == "-c") conns = static_cast<int>(v);
    else if (flag == "-n") requests = v;
    else if (flag == "-P") pipeline = static_cast<int>(v);
    else if (flag == "-r") keyspace = static_cast<uint64_t>(v);
    else if (flag == "-d" && v <= 12) digits = static_cast<int>(v);
    else Usage();
  }
  if (i >= argc) Usage();
  const std::vector<std::string> args(argv + i, argv + argc);
  RequestTemplate request(args, keyspace, digits);

  const int ep = ::epoll_create1(0);
  std::vector<Conn> all(static_cast<size_t>(conns));
  for (size_t c = 0; c < all.size(); ++c) {
    all[c].fd = ConnectLoopback(port);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = c;
    ::epoll_ctl(ep, EPOLL_CTL_ADD, all[c].fd, &ev);
  }

  std::vector<int64_t> latencies_ns;
  latencies_ns.reserve(static_cast<size_t>(requests));
  std::string out;
  int64_t sent = 0;
  // Sends up to `count` more requests on `c`, never past the total.
  auto send_more = [&](Conn& c, int64_t count, int64_t now) {
    count = std::min(count, requests - sent);
    if (count <= 0) return;
    out.clear();
    request.AppendTo(out, static_cast<int>(count));
    for (int64_t k = 0; k < count; ++k) c.sent_ns.push_back(now);
    sent += count;
    SendAll(c.fd, out);
  };

  const double cpu0 = CpuSeconds();
  const int64_t t0 = NowNs();
  for (Conn& c : all) send_more(c, pipeline, NowNs());

  std::vector<char> buf(256 * 1024);
  std::vector<epoll_event> events(256);
  uint64_t errors = 0;
  std::string first_error;
  int64_t done = 0;
  while (done < requests) {
    const int ready = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), 10000);
    if (ready <= 0) {
      std::fprintf(stderr, "lean_load: no reply for 10 s (%lld of %lld done)\n",
                   static_cast<long long>(done), static_cast<long long>(requests));
      return 1;
    }
    for (int e = 0; e < ready; ++e) {
      Conn& c = all[events[e].data.u64];
      std::memcpy(buf.data(), c.carry.data(), c.carry.size());
      const ssize_t n = ::recv(c.fd, buf.data() + c.carry.size(), buf.size() - c.carry.size(),
                               MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN)) {
        std::fprintf(stderr, "lean_load: the server closed a connection\n");
        return 1;
      }
      if (n < 0) continue;
      const size_t have = c.carry.size() + static_cast<size_t>(n);
      const size_t used = c.skimmer.Feed(buf.data(), have);
      c.carry.assign(buf.data() + used, have - used);
      if (c.carry.size() > buf.size() / 2) {
        std::fprintf(stderr, "lean_load: a reply line longer than %zu bytes\n", buf.size() / 2);
        return 1;
      }
      const uint64_t replies = c.skimmer.counts().replies - c.replies_seen;
      if (replies == 0) continue;
      c.replies_seen += replies;
      const int64_t now = NowNs();
      for (uint64_t r = 0; r < replies; ++r) {
        latencies_ns.push_back(now - c.sent_ns.front());
        c.sent_ns.pop_front();
      }
      done += static_cast<int64_t>(replies);
      send_more(c, static_cast<int64_t>(replies), now);
    }
  }
  const double wall = static_cast<double>(NowNs() - t0) / 1e9;
  const double cpu = CpuSeconds() - cpu0;
  for (const Conn& c : all) {
    errors += c.skimmer.counts().errors;
    if (first_error.empty()) first_error = c.skimmer.first_error();
    ::close(c.fd);
  }

  std::sort(latencies_ns.begin(), latencies_ns.end());
  auto pct_ms = [&](double p) {
    return static_cast<double>(latencies_ns[static_cast<size_t>(p * static_cast<double>(latencies_ns.size() - 1))]) / 1e6;
  };
  std::string test;
  for (const std::string& a : args) test += (test.empty() ? "" : " ") + a;
  std::printf("\"test\",\"rps\",\"p50_ms\",\"p99_ms\",\"client_cpu_util\",\"errors\"\n");
  std::printf("\"%s\",\"%.2f\",\"%.3f\",\"%.3f\",\"%.2f\",\"%llu\"\n", test.c_str(),
              static_cast<double>(requests) / wall, pct_ms(0.50), pct_ms(0.99), cpu / wall,
              static_cast<unsigned long long>(errors));
  if (errors > 0) {
    std::fprintf(stderr, "lean_load: %llu error replies, the first: %s\n",
                 static_cast<unsigned long long>(errors), first_error.c_str());
    return 1;
  }
  return 0;
}

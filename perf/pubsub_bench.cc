// pubsub_bench: PUBLISH fan-out. S subscriber connections SUBSCRIBE to one
// channel; P publisher connections each keep one PUBLISH in flight until N
// messages were published; one epoll thread drives them all, and the run
// ends when every subscriber has received every message. Prints messages
// published per second and deliveries (messages x subscribers) per second,
// and -- with BYTES >= 16 -- how long the first subscriber's messages took
// from the publisher's send to their arrival (each payload starts with the
// send time), as p50 / p99 / max microseconds.
//
//   pubsub_bench -p PORT [-s SUBSCRIBERS] [-c PUBLISHERS] [-n MESSAGES] [-d BYTES]
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

struct Conn {
  int fd;
  bool publisher;
  uint64_t received = 0;  // subscriber: bytes received; publisher: replies
};

}  // namespace

int main(int argc, char** argv) {
  int port = 6379, subscribers = 100, publishers = 10, size = 16;
  long messages = 100000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string f = argv[i];
    const long v = std::atol(argv[i + 1]);
    if (f == "-p") port = static_cast<int>(v);
    if (f == "-s") subscribers = static_cast<int>(v);
    if (f == "-c") publishers = static_cast<int>(v);
    if (f == "-n") messages = v;
    if (f == "-d") size = static_cast<int>(v);
  }
  const std::string payload(static_cast<size_t>(size), 'x');
  const std::string publish = "*3\r\n$7\r\nPUBLISH\r\n$4\r\nfeed\r\n$" + std::to_string(size) + "\r\n" + payload + "\r\n";
  // What one delivered message looks like on the wire (RESP2).
  const size_t message_bytes =
      std::string("*3\r\n$7\r\nmessage\r\n$4\r\nfeed\r\n$" + std::to_string(size) + "\r\n" + payload + "\r\n").size();
  const std::string confirm = "*3\r\n$9\r\nsubscribe\r\n$4\r\nfeed\r\n:1\r\n";
  // Latency probe: the payload's first 16 bytes carry the send time (ns,
  // steady clock, zero-padded decimal); subscriber 0 reads it back.
  constexpr size_t kStampBytes = 16;
  const bool stamped = static_cast<size_t>(size) >= kStampBytes;
  std::string publish_buf = publish;
  const size_t stamp_at = publish.size() - 2 - static_cast<size_t>(size);
  const size_t message_stamp_at = message_bytes - 2 - static_cast<size_t>(size);
  auto now_ns = [] {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
  };
  auto stamped_publish = [&]() -> const std::string& {
    if (stamped) {
      char digits[kStampBytes + 1];
      std::snprintf(digits, sizeof(digits), "%016llu",
                    static_cast<unsigned long long>(now_ns() % 10000000000000000ULL));
      publish_buf.replace(stamp_at, kStampBytes, digits, kStampBytes);
    }
    return publish_buf;
  };
  std::string probe;  // subscriber 0's bytes not yet parsed into whole messages
  size_t probe_pos = 0;
  std::vector<uint64_t> latencies_ns;
  latencies_ns.reserve(static_cast<size_t>(messages));

  int ep = ::epoll_create1(0);
  std::vector<Conn> conns;
  for (int i = 0; i < subscribers; ++i) {
    int fd = ConnectLoopback(port);
    SendAll(fd, "*2\r\n$9\r\nSUBSCRIBE\r\n$4\r\nfeed\r\n");
    std::string got;
    char buf[256];
    while (got.size() < confirm.size()) {
      ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) return 1;
      got.append(buf, static_cast<size_t>(n));
    }
    conns.push_back({fd, false});
  }
  for (int i = 0; i < publishers; ++i) conns.push_back({ConnectLoopback(port), true});
  for (size_t i = 0; i < conns.size(); ++i) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    ::epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev);
  }
  const auto start = std::chrono::steady_clock::now();
  long sent = 0;
  for (Conn& c : conns) {
    if (c.publisher && sent < messages) {
      SendAll(c.fd, stamped_publish());
      ++sent;
    }
  }
  const uint64_t want_bytes = static_cast<uint64_t>(messages) * message_bytes;
  int done_subscribers = 0;
  std::vector<epoll_event> events(256);
  std::vector<char> buf(1 << 16);
  while (done_subscribers < subscribers) {
    const int n = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), 5000);
    if (n == 0) {
      std::fprintf(stderr, "stalled: %d of %d subscribers complete\n", done_subscribers, subscribers);
      return 1;
    }
    for (int i = 0; i < n; ++i) {
      Conn& c = conns[events[i].data.u64];
      const ssize_t r = ::recv(c.fd, buf.data(), buf.size(), 0);
      if (r <= 0) return 1;
      if (c.publisher) {
        // ":<count>\r\n" per reply: count the line ends.
        for (ssize_t k = 0; k < r; ++k) {
          if (buf[static_cast<size_t>(k)] != '\n') continue;
          ++c.received;
          if (sent < messages) {
            SendAll(c.fd, stamped_publish());
            ++sent;
          }
        }
      } else {
        const bool was_done = c.received >= want_bytes;
        c.received += static_cast<uint64_t>(r);
        if (stamped && &c == &conns[0]) {
          const uint64_t arrived = now_ns() % 10000000000000000ULL;
          probe.append(buf.data(), static_cast<size_t>(r));
          for (; probe.size() - probe_pos >= message_bytes; probe_pos += message_bytes) {
            const uint64_t sent_ns = std::strtoull(probe.substr(probe_pos + message_stamp_at, kStampBytes).c_str(), nullptr, 10);
            latencies_ns.push_back(arrived - sent_ns);
          }
          probe.erase(0, probe_pos);
          probe_pos = 0;
        }
        if (!was_done && c.received >= want_bytes) ++done_subscribers;
      }
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("subscribers=%d publishers=%d messages=%ld bytes=%d msgs_per_sec=%.0f deliveries_per_sec=%.0f",
              subscribers, publishers, messages, size, messages / secs, messages * subscribers / secs);
  if (!latencies_ns.empty()) {
    std::sort(latencies_ns.begin(), latencies_ns.end());
    auto at = [&](double q) { return latencies_ns[static_cast<size_t>(q * static_cast<double>(latencies_ns.size() - 1))] / 1e3; };
    std::printf(" latency_us_p50=%.0f p99=%.0f max=%.0f", at(0.5), at(0.99), latencies_ns.back() / 1e3);
  }
  std::printf("\n");
  return 0;
}

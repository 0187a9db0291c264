// stream_consumer_load: the XREADGROUP + XACK consumer loop of a job queue.
// C connections (one thread each), each a consumer of one group: it sends P
// `XREADGROUP GROUP g c<i> COUNT 1 STREAMS s >` in one write, reads the P
// replies, then sends the P matching `XACK s g <id>` in one write and reads
// their replies; P = 1 is the plain loop, P = 16 pipelines both halves.
// Runs until N requests (reads and acks together, rounded up to a whole
// number of 2P turns) have been answered.
//
//   stream_consumer_load -p PORT [-c CONNS] [-n REQUESTS] [-P PIPELINE]
//                        [-k KEY] [-g GROUP]
//
// The stream must hold at least N/2 undelivered entries for the group (the
// tool stops with an error on an empty read or any error reply). Prints CSV
// like redis-benchmark --csv, requests/s second:
//   "test","rps"
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "perf/bench_socket.h"

namespace {

std::string Resp(const std::vector<std::string>& args) {
  std::string s = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) s += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return s;
}

// Reads whole RESP replies from a blocking socket.
class ReplyReader {
 public:
  explicit ReplyReader(int fd) : fd_(fd) {}

  // Reads one reply; appends its bulk strings, in order, to `bulks`.
  // Returns false on an error reply or a null (nothing to read).
  bool Read(std::vector<std::string>* bulks) {
    std::string line = Line();
    switch (line[0]) {
      case '-':
        std::fprintf(stderr, "error reply: %s\n", line.c_str());
        return false;
      case ':':
      case '+':
        return true;
      case '$': {
        long n = std::strtol(line.c_str() + 1, nullptr, 10);
        if (n < 0) return false;
        std::string b = Bytes(static_cast<size_t>(n) + 2);
        b.resize(static_cast<size_t>(n));
        bulks->push_back(std::move(b));
        return true;
      }
      case '*': {
        long n = std::strtol(line.c_str() + 1, nullptr, 10);
        if (n < 0) return false;
        bool ok = true;
        for (long i = 0; i < n; ++i) ok = Read(bulks) && ok;
        return ok;
      }
      default:
        std::fprintf(stderr, "unexpected reply: %s\n", line.c_str());
        std::exit(1);
    }
  }

 private:
  void Fill() {
    if (pos_ == buf_.size()) {
      buf_.clear();
      pos_ = 0;
    }
    char tmp[65536];
    ssize_t n = ::recv(fd_, tmp, sizeof(tmp), 0);
    if (n <= 0) {
      std::perror("recv");
      std::exit(1);
    }
    buf_.append(tmp, static_cast<size_t>(n));
  }
  std::string Line() {
    size_t eol;
    while ((eol = buf_.find("\r\n", pos_)) == std::string::npos) Fill();
    std::string l = buf_.substr(pos_, eol - pos_);
    pos_ = eol + 2;
    return l;
  }
  std::string Bytes(size_t n) {
    while (buf_.size() - pos_ < n) Fill();
    std::string b = buf_.substr(pos_, n);
    pos_ += n;
    return b;
  }

  int fd_;
  std::string buf_;
  size_t pos_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  int port = 6379, conns = 50, pipeline = 1;
  long requests = 100000;
  std::string key = "s", group = "g";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string o = argv[i];
    if (o == "-p") port = std::atoi(argv[i + 1]);
    else if (o == "-c") conns = std::atoi(argv[i + 1]);
    else if (o == "-n") requests = std::atol(argv[i + 1]);
    else if (o == "-P") pipeline = std::atoi(argv[i + 1]);
    else if (o == "-k") key = argv[i + 1];
    else if (o == "-g") group = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown option %s\n", o.c_str());
      return 2;
    }
  }
  if (conns < 1 || pipeline < 1 || requests < 2) return 2;
  std::atomic<long> budget{requests};  // requests left to hand out, 2 * pipeline per turn
  std::atomic<bool> failed{false};
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < conns; ++c) {
    threads.emplace_back([&, c] {
      int fd = ConnectLoopback(port);
      ReplyReader rd(fd);
      const std::string read_one = Resp({"XREADGROUP", "GROUP", group, "c" + std::to_string(c), "COUNT", "1",
                                         "STREAMS", key, ">"});
      std::string reads;
      for (int i = 0; i < pipeline; ++i) reads += read_one;
      while (!failed.load(std::memory_order_relaxed) &&
             budget.fetch_sub(2L * pipeline, std::memory_order_relaxed) > 0) {
        SendAll(fd, reads);
        std::string acks;
        for (int i = 0; i < pipeline; ++i) {
          std::vector<std::string> bulks;  // key, id, field, value, ...
          if (!rd.Read(&bulks) || bulks.size() < 2) {
            std::fprintf(stderr, "XREADGROUP returned nothing: is the stream long enough?\n");
            failed = true;
            return;
          }
          acks += Resp({"XACK", key, group, bulks[1]});
        }
        SendAll(fd, acks);
        for (int i = 0; i < pipeline; ++i) {
          std::vector<std::string> none;
          if (!rd.Read(&none)) {
            failed = true;
            return;
          }
        }
      }
      ::close(fd);
    });
  }
  for (auto& t : threads) t.join();
  if (failed) return 1;
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Every turn handed out completed: ceil(N / 2P) turns of 2P requests.
  const long turns = (requests + 2L * pipeline - 1) / (2L * pipeline);
  const long done = turns * 2L * pipeline;
  std::printf("\"test\",\"rps\"\n\"XREADGROUP+XACK\",\"%.2f\"\n", static_cast<double>(done) / s);
  return 0;
}

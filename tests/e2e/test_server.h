// TestServer: starts the real ringkv-server (or redis-server) on a free
// loopback port for one test, and stops it afterwards. Unless the arguments
// name a --dir, the server runs in a private temporary directory (removed
// afterwards), so no test sees another's dump.rdb or AOF. The server's
// standard output (its log, unless a --logfile is given) goes to a file of
// its own; when the test has failed by the time the server is stopped, the
// log's last lines are printed and the log and the directory are kept (their
// paths printed), so a failure seen once can be read afterwards.
// RINGKV_TEST_VERBOSE=1: the log goes to the terminal instead. RawConn: a
// plain TCP connection for byte-exact protocol checks.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/server_path.h"
#include "tests/free_port.h"

namespace ringkv::testing {

inline int FreePort() { return FreeLoopbackPort(); }

// What a server logs when it cannot bind a port it was given (ringkv and
// redis-server alike).
inline constexpr std::string_view kBindFailure = "Could not create server TCP listening socket";

class RawConn {
 public:
  explicit RawConn(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
      close(fd_);
      fd_ = -1;
    }
    // Long enough for DEBUG DIGEST of a large dataset in the ASan build on a
    // loaded 2-core machine (a 5 s limit left replies out of step there); a
    // reply that never comes fails the test either way.
    timeval tv{20, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~RawConn() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  // Ends both directions: blocked Send / ReadN calls in other threads return.
  void Shutdown() {
    if (fd_ >= 0) shutdown(fd_, SHUT_RDWR);
  }
  bool Send(const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = send(fd_, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }
  // Reads until `n` bytes arrived (or EOF / timeout).
  std::string ReadN(size_t n) {
    std::string out;
    char buf[65536];
    while (out.size() < n) {
      ssize_t r = recv(fd_, buf, std::min(sizeof(buf), n - out.size()), 0);
      if (r <= 0) break;
      out.append(buf, static_cast<size_t>(r));
    }
    return out;
  }
  // Reads what has arrived, up to `max` bytes, waiting only when nothing
  // has (empty at EOF / timeout). For a stream whose length is not known
  // beforehand: ReadN would wait out the timeout for its last bytes.
  std::string ReadSome(size_t max) {
    std::string out(max, '\0');
    ssize_t r = recv(fd_, out.data(), max, 0);
    out.resize(r > 0 ? static_cast<size_t>(r) : 0);
    return out;
  }
  // Reads one complete RESP reply (any RESP2/RESP3 type), raw bytes.
  std::string ReadReply() {
    std::string out;
    if (!ReadValue(&out)) out += "<eof>";
    return out;
  }
  // True when the server closed the connection (EOF within the timeout).
  bool ReadEof() {
    char c;
    return recv(fd_, &c, 1, 0) == 0;
  }

 private:
  bool ReadLine(std::string* out, std::string* line) {
    line->clear();
    while (true) {
      char c;
      if (!buffered_.empty()) {
        c = buffered_.front();
        buffered_.erase(0, 1);
      } else {
        char buf[4096];
        ssize_t r = recv(fd_, buf, sizeof(buf), 0);
        if (r <= 0) return false;
        buffered_.assign(buf, static_cast<size_t>(r));
        continue;
      }
      line->push_back(c);
      if (line->size() >= 2 && line->substr(line->size() - 2) == "\r\n") break;
    }
    out->append(*line);
    return true;
  }
  bool ReadBytes(std::string* out, size_t n) {
    while (buffered_.size() < n) {
      char buf[65536];
      ssize_t r = recv(fd_, buf, sizeof(buf), 0);
      if (r <= 0) return false;
      buffered_.append(buf, static_cast<size_t>(r));
    }
    out->append(buffered_, 0, n);
    buffered_.erase(0, n);
    return true;
  }
  bool ReadValue(std::string* out) {
    std::string line;
    if (!ReadLine(out, &line)) return false;
    char t = line[0];
    long long n = atoll(line.c_str() + 1);
    switch (t) {
      case '$': case '=': case '!':
        return n < 0 || ReadBytes(out, static_cast<size_t>(n) + 2);
      case '*': case '~': case '>':
        for (long long i = 0; i < n; ++i) if (!ReadValue(out)) return false;
        return true;
      case '%': case '|':
        for (long long i = 0; i < 2 * n; ++i) if (!ReadValue(out)) return false;
        return true;
      default:
        return true;
    }
  }
  int fd_ = -1;
  std::string buffered_;
};

// Encodes a command as a RESP multibulk request.
inline std::string Resp(const std::vector<std::string>& argv) {
  std::string s = "*" + std::to_string(argv.size()) + "\r\n";
  for (const std::string& a : argv) s += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return s;
}

class TestServer {
 public:
  // What the constructor waits for: PONG (the dataset loaded), or any
  // answer at all (-LOADING included: a test of the loading phase).
  enum class WaitFor { kReady, kAnswer };

  // `binary` defaults to the ringkv-server under test (server_path.h).
  explicit TestServer(std::vector<std::string> args = {}, std::string binary = RINGKV_SERVER_PATH,
                      std::string config_file = "", WaitFor wait_for = WaitFor::kReady)
      : port_(FreePort()) {
    // RINGKV_TEST_LAUNCHER: a program the server runs under (no_io_uring);
    // RINGKV_TEST_IO_BACKEND: the io-backend every ringkv server of the run
    // uses unless a test names one (scripts/test.sh sets epoll for the tests labelled backend).
    const bool redis = binary.find("redis-server") != std::string::npos;
    std::vector<std::string> argv;
    if (const char* launcher = getenv("RINGKV_TEST_LAUNCHER"); launcher != nullptr && !redis) {
      std::string word;  // words separated by spaces: a program and its options
      for (const char* p = launcher;; ++p) {
        if (*p == ' ' || *p == '\0') {
          if (!word.empty()) argv.push_back(word);
          word.clear();
          if (*p == '\0') break;
        } else {
          word.push_back(*p);
        }
      }
    }
    argv.push_back(binary);
    if (!config_file.empty()) argv.push_back(config_file);
    const size_t port_arg = argv.size() + 1;  // replaced if the port turns out taken
    argv.insert(argv.end(), {"--port", std::to_string(port_), "--bind", "127.0.0.1"});
    if (binary.find("redis-server") != std::string::npos) {
      argv.insert(argv.end(), {"--save", "", "--appendonly", "no"});
    }
    if (std::find(args.begin(), args.end(), "--dir") == args.end()) {
      own_dir_ = MakeTempDir();
      argv.insert(argv.end(), {"--dir", own_dir_});
    }
    const char* backend = getenv("RINGKV_TEST_IO_BACKEND");
    if (backend != nullptr && *backend && !redis && std::find(args.begin(), args.end(), "--io-backend") == args.end()) {
      argv.insert(argv.end(), {"--io-backend", backend});
    }
    argv.insert(argv.end(), args.begin(), args.end());
    if (getenv("RINGKV_TEST_VERBOSE") == nullptr) {
      const char* base = getenv("TMPDIR");
      std::string templ = std::string(base ? base : "/tmp") + "/ringkv-test-log-XXXXXX";
      if (const int fd = mkstemp(templ.data()); fd >= 0) {
        close(fd);
        log_path_ = templ;
      }
    }
    // FreePort() only saw the port free a moment ago: another process may
    // take it before the server binds it, and a PING would then reach that
    // process, or the server exit as it cannot bind. The server's INFO names
    // its process: if it is not ours, or the server exited and its port is
    // taken, the start is tried again on another port.
    for (int attempt = 0; attempt < 5; ++attempt) {
      if (attempt > 0) {
        port_ = FreePort();
        argv[port_arg] = std::to_string(port_);
      }
      if (Launch(argv, wait_for)) break;
    }
  }
  ~TestServer() {
    if (::testing::Test::HasFailure()) ShowChildStacks();
    Stop();
    if (::testing::Test::HasFailure()) {
      KeepForTheFailure();
      return;
    }
    std::error_code ec;
    if (!own_dir_.empty() && own_dir_ != "/tmp") std::filesystem::remove_all(own_dir_, ec);  // "/tmp": MakeTempDir failed
    if (!log_path_.empty()) std::filesystem::remove(log_path_, ec);
  }
  // A fresh directory under $TMPDIR (or /tmp) for a test's files.
  static std::string MakeTempDir() {
    const char* base = getenv("TMPDIR");
    std::string templ = std::string(base ? base : "/tmp") + "/ringkv-test-XXXXXX";
    char* made = mkdtemp(templ.data());
    return made ? std::string(made) : std::string("/tmp");
  }
  // Sends SIGKILL and reaps the process (crash tests).
  void Kill() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      int status;
      waitpid(pid_, &status, 0);
      pid_ = -1;
      exit_status_ = status;
    }
  }
  int port() const { return port_; }
  // The private directory the server runs in (empty when the test chose --dir).
  const std::string& dir() const { return own_dir_; }
  bool ready() const { return ready_; }
  // Whether the process ended (on its own, or killed by Kill or Stop).
  bool exited() const { return pid_ <= 0 && exit_status_ != -1; }
  // Sends SIGTERM and waits; returns the exit status (or the one seen at start).
  int Stop() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      for (int i = 0; i < 200; ++i) {
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;
          exit_status_ = status;
          return status;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
      }
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      pid_ = -1;
      exit_status_ = status;
    }
    return exit_status_;
  }
  // Waits for the process to exit by itself (SHUTDOWN); true if it did.
  bool WaitExit(int* status, int timeout_ms = 5000) {
    for (int i = 0; i < timeout_ms / 25 && pid_ > 0; ++i) {
      if (waitpid(pid_, status, WNOHANG) == pid_) {
        pid_ = -1;
        exit_status_ = *status;
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return pid_ <= 0;
  }

 private:
  // Starts the process and waits for it to answer. False when the answer
  // came from another process (the port was taken meanwhile): ours is
  // stopped. True otherwise, ready or not (ready()).
  bool Launch(std::vector<std::string> argv, WaitFor wait_for) {
    ready_ = false;
    exit_status_ = -1;
    pid_ = fork();
    started_pid_ = pid_;
    if (pid_ == 0) {
      std::vector<char*> cargv;
      for (auto& a : argv) cargv.push_back(a.data());
      cargv.push_back(nullptr);
      if (getenv("RINGKV_TEST_VERBOSE") == nullptr) {
        FILE* f = freopen(log_path_.empty() ? "/dev/null" : log_path_.c_str(), "a", stdout);
        (void)f;
      }
      execv(cargv[0], cargv.data());
      _exit(127);
    }
    // 5 s to answer PING; a server still loading its dataset (-LOADING)
    // gets up to 120 s more.
    const auto loading_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    for (int i = 0; i < 200; ++i) {
      RawConn c(port_);
      std::string pong;
      if (c.ok() && c.Send("PING\r\n") && ((pong = c.ReadReply()) == "+PONG\r\n" || pong.rfind("-NOAUTH", 0) == 0)) {
        if (pong[0] == '+' && !AnsweredByUs(c)) {
          Kill();
          return false;
        }
        ready_ = true;
        break;
      }
      if (pong.rfind("-LOADING", 0) == 0) {
        if (wait_for == WaitFor::kAnswer) {
          ready_ = true;
          break;
        }
        if (std::chrono::steady_clock::now() < loading_deadline) --i;
      }
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_status_ = status;
        pid_ = -1;
        // It could not bind its port, taken since FreePort() picked it:
        // another try, on another port. The port may be free again by now
        // (a client's ephemeral port, under ctest -j), so the server's
        // own word counts too. Any other failure to start stands.
        return !LoopbackPortInUse(port_, /*as_server=*/true) && !OutputMentions(kBindFailure);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return true;
  }
  // Whether the server answering on `c` is the process we started (INFO's
  // process_id; a server whose INFO says nothing of it is taken as ours).
  bool AnsweredByUs(RawConn& c) {
    if (!c.Send("*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n")) return true;
    const std::string info = c.ReadReply();
    const size_t at = info.find("\r\nprocess_id:");
    if (at == std::string::npos) return true;
    return std::atoll(info.c_str() + at + 13) == static_cast<long long>(pid_);
  }

  int port_;
  std::string own_dir_;
  pid_t started_pid_ = -1;  // the last launch's, kept after it exits (for the failure line)
  std::string log_path_;  // the server's standard output (empty: the terminal's, or none)

  // Whether the server's standard output so far has `text` in it.
  bool OutputMentions(std::string_view text) const {
    if (log_path_.empty()) return false;
    std::ifstream in(log_path_);
    for (std::string line; std::getline(in, line);) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }

  // The test failed while the server still runs: where each of its child
  // processes (BGSAVE, BGREWRITEAOF) is stuck goes to the test's output --
  // the kernel's wait channel and, with gdb installed, every thread's
  // backtrace -- before Stop() kills them. A rewrite child that never ended
  // failed an ASan run four times (docs/performance.md 42.3, 43, 49).
  void ShowChildStacks() const {
    if (pid_ <= 0) return;
    std::ifstream children("/proc/" + std::to_string(pid_) + "/task/" + std::to_string(pid_) + "/children");
    for (long child; children >> child;) {
      const std::string proc = "/proc/" + std::to_string(child);
      std::ifstream wchan(proc + "/wchan");
      std::string where;
      std::getline(wchan, where);
      std::cerr << "[ TestServer ] child " << child << " of the server is waiting in " << where << "\n";
      const std::string gdb = "timeout 30 gdb -p " + std::to_string(child) +
                              " -batch -ex 'thread apply all bt' 2>&1 | grep -E '^(Thread|#)' | head -80 >&2";
      if (std::system("command -v gdb >/dev/null 2>&1") == 0 && std::system(gdb.c_str()) != 0) {
        std::cerr << "[ TestServer ] gdb could not attach to " << child << "\n";
      }
    }
  }
  // The test failed: the log's last lines go to the test's output (CI keeps
  // only that), the files stay where they are.
  void KeepForTheFailure() const {
    std::cerr << "[ TestServer ] the test failed: server on port " << port_ << " (pid " << started_pid_
              << ", exit status " << exit_status_ << ")";
    if (!own_dir_.empty()) std::cerr << ", its directory kept: " << own_dir_;
    if (!log_path_.empty()) std::cerr << ", its log kept: " << log_path_;
    std::cerr << "\n";
    if (log_path_.empty()) return;
    std::ifstream in(log_path_);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
    constexpr size_t kTail = 40;
    const size_t from = lines.size() > kTail ? lines.size() - kTail : 0;
    std::cerr << "[ TestServer ] its log's last " << lines.size() - from << " of " << lines.size() << " lines:\n";
    for (size_t i = from; i < lines.size(); ++i) std::cerr << "  | " << lines[i] << "\n";
  }
  pid_t pid_ = -1;
  bool ready_ = false;
  int exit_status_ = -1;
};

// A directory of a test's own under $TMPDIR (TestServer::MakeTempDir),
// removed with everything in it when the object goes -- also when an
// ASSERT ends the test early. Kept, like a server's, when the test failed.
class ScopedTempDir {
 public:
  ScopedTempDir() : path_(TestServer::MakeTempDir()) {}
  ScopedTempDir(ScopedTempDir&& o) noexcept : path_(std::exchange(o.path_, std::string())) {}
  ScopedTempDir& operator=(ScopedTempDir&& o) noexcept {
    if (this != &o) {
      Remove();
      path_ = std::exchange(o.path_, std::string());
    }
    return *this;
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  ~ScopedTempDir() { Remove(); }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  void Remove() {
    if (path_.empty() || path_ == "/tmp") return;  // "/tmp": MakeTempDir could not make one
    if (::testing::Test::HasFailure()) {
      std::cerr << "[ ScopedTempDir ] the test failed: kept " << path_ << "\n";
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string path_;
};

}  // namespace ringkv::testing

#include "replication/sync_worker.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "replication/primary.h"

namespace ringkv::repl {
namespace {

// Blocking I/O on one socket with a receive timeout.
class Link {
 public:
  explicit Link(int fd) : fd_(fd) {}
  bool Send(const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::send(fd_, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }
  // One line without its CRLF; empty lines (the primary's keep-alive
  // newlines while it prepares the RDB) are skipped.
  bool ReadLine(std::string* line) {
    while (true) {
      line->clear();
      char c;
      while (true) {
        ssize_t n = ::recv(fd_, &c, 1, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        if (c == '\n') break;
        if (line->size() > 4096) return false;
        line->push_back(c);
      }
      if (!line->empty() && line->back() == '\r') line->pop_back();
      if (!line->empty()) return true;
    }
  }
  bool ReadExact(char* dst, size_t n) {
    while (n > 0) {
      ssize_t r = ::recv(fd_, dst, n, 0);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      dst += r;
      n -= static_cast<size_t>(r);
    }
    return true;
  }
  std::string Command(const std::vector<std::string_view>& argv) {
    std::string out;
    AppendCommand(argv, &out);
    return out;
  }

 private:
  int fd_;
};

int ConnectTo(const std::string& host, int port, int timeout_s, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string port_s = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), port_s.c_str(), &hints, &res); rc != 0) {
    *error = absl::StrCat("can't resolve ", host, ": ", gai_strerror(rc));
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = res; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    timeval tv{timeout_s, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      *error = absl::StrCat("connect: ", std::strerror(errno));
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(res);
  return fd;
}

}  // namespace

SyncWorker::~SyncWorker() { Cancel(); }

void SyncWorker::Start(const SyncRequest& request) {
  Cancel();
  finished_ = false;
  cancelled_ = false;
  result_.reset();
  thread_ = std::thread([this, request] {
    SyncResult r = Run(request);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (cancelled_ && r.fd >= 0) {
        ::close(r.fd);
        r.fd = -1;
      }
      result_ = std::move(r);
    }
    finished_ = true;
    if (!cancelled_ && done_) done_();
  });
}

std::optional<SyncResult> SyncWorker::Poll() {
  if (!finished_.load()) return std::nullopt;
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<SyncResult> r = std::move(result_);
  result_.reset();
  return r;
}

void SyncWorker::Cancel() {
  if (!thread_.joinable()) return;
  cancelled_ = true;
  if (int fd = fd_.load(); fd >= 0) ::shutdown(fd, SHUT_RDWR);  // unblocks its reads
  thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  if (result_ && result_->fd >= 0) ::close(result_->fd);
  result_.reset();
}

SyncResult SyncWorker::Run(const SyncRequest& req) {
  SyncResult r;
  auto fail = [&](std::string why) {
    r.kind = SyncResult::Kind::kFailed;
    r.error = std::move(why);
    if (r.fd >= 0) ::close(r.fd);
    r.fd = -1;
    fd_ = -1;
    return r;
  };
  r.fd = ConnectTo(req.host, req.port, req.timeout_s, &r.error);
  if (r.fd < 0) return fail(absl::StrCat("Error condition on socket for SYNC: ", r.error));
  fd_ = r.fd;
  Link link(r.fd);
  std::string line;
  // PING: any reply but a real error is fine (-NOAUTH means AUTH comes next).
  if (!link.Send(link.Command({"PING"})) || !link.ReadLine(&line)) return fail("Master did not reply to PING");
  if (line[0] == '-' && line.rfind("-NOAUTH", 0) != 0 && line.rfind("-NOPERM", 0) != 0 &&
      line.rfind("-ERR operation not permitted", 0) != 0) {
    return fail(absl::StrCat("Error reply to PING from master: '", line, "'"));
  }
  if (!req.masterauth.empty()) {
    std::vector<std::string_view> auth = {"AUTH"};
    if (!req.masteruser.empty()) auth.push_back(req.masteruser);
    auth.push_back(req.masterauth);
    if (!link.Send(link.Command(auth)) || !link.ReadLine(&line)) return fail("Master did not reply to AUTH");
    if (line[0] == '-') return fail(absl::StrCat("Unable to AUTH to MASTER: ", line));
  }
  const std::string port = std::to_string(req.listening_port);
  std::string handshake = link.Command({"REPLCONF", "listening-port", port});
  if (!req.announce_ip.empty()) handshake += link.Command({"REPLCONF", "ip-address", req.announce_ip});
  handshake += link.Command({"REPLCONF", "capa", "psync2"});
  if (!link.Send(handshake)) return fail("Error writing the handshake");
  for (int i = 0; i < (req.announce_ip.empty() ? 2 : 3); ++i) {
    if (!link.ReadLine(&line)) return fail("Master did not reply to REPLCONF");
    // Errors to REPLCONF are not fatal (old primaries), as in Redis.
  }
  const std::string offset = std::to_string(req.psync_offset);
  std::vector<std::string_view> psync = {"PSYNC", req.replid, offset};
  if (req.failover) psync.push_back("FAILOVER");
  if (!link.Send(link.Command(psync)) || !link.ReadLine(&line)) {
    return fail("Master did not reply to PSYNC");
  }
  timeval none{0, 0};  // the stream may be idle for long: no timeouts from here on
  if (line.rfind("+CONTINUE", 0) == 0) {
    r.kind = SyncResult::Kind::kContinue;
    r.replid = line.size() > 10 ? line.substr(10, 40) : req.replid;
    ::setsockopt(r.fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
    ::setsockopt(r.fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof(none));
    fd_ = -1;
    return r;
  }
  if (line.rfind("+FULLRESYNC ", 0) != 0) return fail(absl::StrCat("Unexpected reply to PSYNC from master: ", line));
  r.replid = line.substr(12, 40);
  if (!absl::SimpleAtoi(line.substr(53), &r.offset)) return fail("Bad +FULLRESYNC reply: " + line);
  // The payload: "$<len>\r\n" then exactly len bytes.
  if (!link.ReadLine(&line) || line[0] != '$') return fail("Bad protocol from MASTER, the first byte is not '$'");
  int64_t len;
  if (!absl::SimpleAtoi(line.substr(1), &len) || len < 0) return fail("Bad RDB length from master: " + line);
  int out = ::open(req.rdb_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return fail(absl::StrCat("Opening the temp file needed for MASTER <-> REPLICA synchronization: ",
                                        std::strerror(errno)));
  std::vector<char> buf(1 << 16);
  int64_t left = len;
  while (left > 0) {
    size_t chunk = static_cast<size_t>(std::min<int64_t>(left, static_cast<int64_t>(buf.size())));
    if (!link.ReadExact(buf.data(), chunk) || ::write(out, buf.data(), chunk) != static_cast<ssize_t>(chunk)) {
      ::close(out);
      return fail("I/O error trying to sync with MASTER: connection lost");
    }
    left -= static_cast<int64_t>(chunk);
  }
  ::fsync(out);
  ::close(out);
  ::setsockopt(r.fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
  ::setsockopt(r.fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof(none));
  r.kind = SyncResult::Kind::kFull;
  r.rdb_path = req.rdb_path;
  fd_ = -1;
  return r;
}

}  // namespace ringkv::repl

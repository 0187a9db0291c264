#include "replication/sync_worker.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "io/fork_gate.h"
#include "absl/strings/str_cat.h"
#include "core/resp_command.h"
#include "io/tls_session.h"

namespace ringkv::repl {
namespace {

// Blocking I/O on one socket with a receive timeout, in plain text or
// through a TLS session (memory BIOs: this class moves the ciphertext).
class Link {
 public:
  explicit Link(int fd, io::TlsSession* tls = nullptr) : fd_(fd), tls_(tls) {}
  bool Send(std::string_view s) {
    if (tls_ != nullptr) return tls_->Write(s) && SendWire();
    return SendRaw(s);
  }
  // Up to n bytes: > 0 read, 0 end of stream, < 0 an error (timed_out()
  // says whether repl-timeout passed without a byte).
  ssize_t RecvSome(char* dst, size_t n) {
    if (tls_ == nullptr) return RecvRaw(dst, n);
    while (true) {
      const long r = tls_->Read(dst, n);
      if (!SendWire()) return -1;
      if (r > 0) return r;
      if (r == io::TlsSession::kClosed) return 0;
      if (r == io::TlsSession::kFailed) return -1;
      char buf[16 * 1024];
      const ssize_t got = RecvRaw(buf, sizeof(buf));
      if (got <= 0) return got;
      tls_->Feed(std::string_view(buf, static_cast<size_t>(got)));
    }
  }
  // The client's TLS handshake; the error names the cause.
  bool TlsHandshake(std::string* error) {
    while (true) {
      const bool ok = tls_->Handshake();
      if (!SendWire() || !ok) {
        *error = tls_->failed() ? tls_->error() : std::string(std::strerror(errno));
        return false;
      }
      if (tls_->handshake_done()) return true;
      char buf[16 * 1024];
      const ssize_t got = RecvRaw(buf, sizeof(buf));
      if (got <= 0) {
        *error = timed_out_ ? "timeout" : got == 0 ? "connection closed" : std::strerror(errno);
        return false;
      }
      tls_->Feed(std::string_view(buf, static_cast<size_t>(got)));
    }
  }
  // One line without its CRLF; empty lines (the primary's keep-alive
  // newlines while it prepares the RDB) are skipped.
  bool ReadLine(std::string* line) {
    while (true) {
      line->clear();
      char c;
      while (true) {
        if (RecvSome(&c, 1) <= 0) return false;
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
      const ssize_t r = RecvSome(dst, n);
      if (r <= 0) return false;
      dst += r;
      n -= static_cast<size_t>(r);
    }
    return true;
  }
  // The last read failed because repl-timeout passed without a byte.
  bool timed_out() const { return timed_out_; }
  std::string Command(const std::vector<std::string_view>& argv) {
    std::string out;
    core::AppendRespCommand(argv, &out);
    return out;
  }

 private:
  bool SendRaw(std::string_view s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::send(fd_, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }
  ssize_t RecvRaw(char* dst, size_t n) {
    while (true) {
      const ssize_t r = ::recv(fd_, dst, n, 0);
      if (r < 0 && errno == EINTR) continue;
      timed_out_ = r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
      return r;
    }
  }
  // Puts the session's pending records on the socket.
  bool SendWire() {
    io::OutBuffer& wire = tls_->wire();
    while (!wire.empty()) {
      if (io::SendOutBuffer(fd_, wire) <= 0) return false;  // the socket's send timeout included
    }
    return true;
  }

  int fd_;
  io::TlsSession* tls_;
  bool timed_out_ = false;
};

// A payload read through a Link (a TLS link's plaintext), buffered, never
// more than `limit` bytes in all: what follows stays in the session.
class LinkSource final : public core::BufferedSource {
 public:
  LinkSource(Link* link, uint64_t limit) : BufferedSource(limit, 64 * 1024), link_(link) {}

 private:
  ssize_t Fetch(char* dst, size_t n) override { return link_->RecvSome(dst, n); }
  Link* link_;
};

// Binds fd to `source` (an address, any port) before it connects, as Redis's
// bind-source-addr: the first of its addresses of fd's family that binds.
bool BindSource(int fd, int family, const std::string& source, std::string* error) {
  addrinfo hints{};
  hints.ai_family = family;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(source.c_str(), nullptr, &hints, &res); rc != 0) {
    *error = absl::StrCat("can't resolve bind-source-addr ", source, ": ", gai_strerror(rc));
    return false;
  }
  bool bound = false;
  for (addrinfo* a = res; a != nullptr && !bound; a = a->ai_next) {
    bound = ::bind(fd, a->ai_addr, a->ai_addrlen) == 0;
  }
  if (!bound) *error = absl::StrCat("bind: ", std::strerror(errno));
  ::freeaddrinfo(res);
  return bound;
}

int ConnectTo(const std::string& host, int port, const std::string& source, int timeout_s, std::string* error) {
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
    if (!source.empty() && !BindSource(fd, a->ai_family, source, error)) {
      ::close(fd);
      fd = -1;
      continue;
    }
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      *error = absl::StrCat("connect: ", std::strerror(errno));
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(res);
  return fd;
}

constexpr size_t kEofMarkSize = 40;

int OpenPayloadFile(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

absl::Status PayloadFileError() {
  return absl::InternalError(absl::StrCat(
      "Opening the temp file needed for MASTER <-> REPLICA synchronization: ", std::strerror(errno)));
}

// "$<len>": exactly len bytes into the file.
absl::StatusOr<uint64_t> DownloadExact(Link& link, int64_t len, const std::string& path) {
  const int out = OpenPayloadFile(path);
  if (out < 0) return PayloadFileError();
  std::vector<char> buf(1 << 16);
  int64_t left = len;
  while (left > 0) {
    const size_t chunk = static_cast<size_t>(std::min<int64_t>(left, static_cast<int64_t>(buf.size())));
    if (!link.ReadExact(buf.data(), chunk) || ::write(out, buf.data(), chunk) != static_cast<ssize_t>(chunk)) {
      ::close(out);
      return absl::UnavailableError("I/O error trying to sync with MASTER: connection lost");
    }
    left -= static_cast<int64_t>(chunk);
  }
  ::fsync(out);
  ::close(out);
  return static_cast<uint64_t>(len);
}

// "$EOF:<mark>": everything up to the mark into the file (the mark is cut
// off). The primary sends nothing after the mark until we ACK, so reading in
// large pieces never takes stream bytes.
absl::StatusOr<uint64_t> DownloadToMark(Link& link, const std::string& mark, const std::string& path) {
  const int out = OpenPayloadFile(path);
  if (out < 0) return PayloadFileError();
  std::vector<char> buf(1 << 16);
  std::string last;  // the last kEofMarkSize bytes received
  uint64_t total = 0;
  while (true) {
    const ssize_t n = link.RecvSome(buf.data(), buf.size());
    if (n <= 0 || ::write(out, buf.data(), static_cast<size_t>(n)) != n) {
      ::close(out);
      return absl::UnavailableError("I/O error trying to sync with MASTER: connection lost");
    }
    total += static_cast<uint64_t>(n);
    last.append(buf.data(), static_cast<size_t>(n));
    if (last.size() > kEofMarkSize) last.erase(0, last.size() - kEofMarkSize);
    if (last == mark) break;
  }
  const uint64_t rdb_size = total - kEofMarkSize;
  const bool ok = ::ftruncate(out, static_cast<off_t>(rdb_size)) == 0 && ::fsync(out) == 0;
  ::close(out);
  if (!ok) return absl::InternalError(absl::StrCat("Writing the synchronization file: ", std::strerror(errno)));
  return rdb_size;
}

}  // namespace

SyncWorker::~SyncWorker() { Cancel(); }

void SyncWorker::Start(const SyncRequest& request) {
  Cancel();
  finished_ = false;
  cancelled_ = false;
  result_.reset();
  // Everything this thread allocates, the staging keyspace of a diskless
  // load included, is allocated under its gate (io/fork_gate.h); the
  // request is moved in there so that it is freed under it too.
  thread_ = io::ForkGate::StartHelperThread([this, request]() mutable {
    const SyncRequest req = std::move(request);
    SyncResult r = Run(req);
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
    r.tls.reset();
    fd_ = -1;
    return std::move(r);
  };
  phase_ = SyncPhase::kConnecting;
  r.fd = ConnectTo(req.host, req.port, req.bind_source_addr, req.timeout_s, &r.error);
  if (r.fd < 0) return fail(absl::StrCat("Error condition on socket for SYNC: ", r.error));
  fd_ = r.fd;
  phase_ = SyncPhase::kHandshake;
  if (req.tls_ctx != nullptr) {
    r.tls = io::TlsSession::Connect(req.tls_ctx);
    if (r.tls == nullptr) return fail("Error condition on socket for SYNC: can't create a TLS session");
  }
  Link link(r.fd, r.tls.get());
  if (r.tls != nullptr) {
    if (std::string error; !link.TlsHandshake(&error)) {
      return fail(absl::StrCat("Error condition on socket for SYNC: TLS handshake: ", error));
    }
  }
  // A primary silent for repl-timeout during the handshake (the words
  // operators and Redis's tests look for).
  auto handshake_failed = [&](std::string why) {
    return fail(link.timed_out() ? std::string("Timeout connecting to the MASTER...") : std::move(why));
  };
  std::string line;
  // PING: any reply but a real error is fine (-NOAUTH means AUTH comes next).
  if (!link.Send(link.Command({"PING"})) || !link.ReadLine(&line)) {
    return handshake_failed("Master did not reply to PING");
  }
  if (line[0] == '-' && line.rfind("-NOAUTH", 0) != 0 && line.rfind("-NOPERM", 0) != 0 &&
      line.rfind("-ERR operation not permitted", 0) != 0) {
    return fail(absl::StrCat("Error reply to PING from master: '", line, "'"));
  }
  if (!req.masterauth.empty()) {
    std::vector<std::string_view> auth = {"AUTH"};
    if (!req.masteruser.empty()) auth.push_back(req.masteruser);
    auth.push_back(req.masterauth);
    if (!link.Send(link.Command(auth)) || !link.ReadLine(&line)) {
      return handshake_failed("Master did not reply to AUTH");
    }
    if (line[0] == '-') return fail(absl::StrCat("Unable to AUTH to MASTER: ", line));
  }
  const std::string port = std::to_string(req.listening_port);
  std::string handshake = link.Command({"REPLCONF", "listening-port", port});
  if (!req.announce_ip.empty()) handshake += link.Command({"REPLCONF", "ip-address", req.announce_ip});
  handshake += link.Command({"REPLCONF", "capa", "eof", "capa", "psync2"});
  if (!link.Send(handshake)) return fail("Error writing the handshake");
  for (int i = 0; i < (req.announce_ip.empty() ? 2 : 3); ++i) {
    if (!link.ReadLine(&line)) return handshake_failed("Master did not reply to REPLCONF");
    // Errors to REPLCONF are not fatal (old primaries), as in Redis.
  }
  const std::string offset = std::to_string(req.psync_offset);
  std::vector<std::string_view> psync = {"PSYNC", req.replid, offset};
  if (req.failover) psync.push_back("FAILOVER");
  if (!link.Send(link.Command(psync)) || !link.ReadLine(&line)) {
    return handshake_failed("Master did not reply to PSYNC");
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
  if (line.rfind("+FULLRESYNC ", 0) != 0) {
    r.psync_refused = true;
    return fail(absl::StrCat("Unexpected reply to PSYNC from master: ", line));
  }
  r.replid = line.substr(12, 40);
  phase_ = SyncPhase::kTransfer;
  if (!absl::SimpleAtoi(line.substr(53), &r.offset)) return fail("Bad +FULLRESYNC reply: " + line);
  // The payload: "$<len>\r\n" and len bytes, or "$EOF:<mark>\r\n", the RDB
  // and the mark.
  if (!link.ReadLine(&line) || line[0] != '$') return fail("Bad protocol from MASTER, the first byte is not '$'");
  std::string mark;
  int64_t len = -1;
  if (line.rfind("$EOF:", 0) == 0) {
    if (line.size() != 5 + kEofMarkSize) return fail("Bad EOF mark from master: " + line);
    mark = line.substr(5);
    r.eof_payload = true;
  } else if (!absl::SimpleAtoi(line.substr(1), &len) || len < 0) {
    return fail("Bad RDB length from master: " + line);
  }
  if (req.load_payload) {
    // Never past a "$<len>" payload: the stream follows it at once.
    LinkSource src(&link, len < 0 ? UINT64_MAX : static_cast<uint64_t>(len));
    if (absl::Status s = req.load_payload(&src, r.replid); !s.ok()) {
      // Redis's words (rdbReportError for a diskless load): operators and
      // Redis's tests look for "Internal error in RDB" to tell a payload cut
      // short by the link from one that finished.
      return fail(absl::StrCat("Internal error in RDB reading the MASTER synchronization DB from socket: ", s.message(),
                               ". Failure loading rdb format from socket, assuming connection error, resuming "
                               "operation."));
    }
    if (!mark.empty()) {
      char tail[kEofMarkSize];
      if (!src.Read(tail, sizeof(tail)) || std::string_view(tail, sizeof(tail)) != mark || src.buffered() != 0) {
        return fail("Diskless load: the payload did not end with the EOF mark");
      }
    } else if (src.offset() != static_cast<uint64_t>(len)) {
      return fail("Diskless load: the RDB ended before the payload length");
    }
    r.payload_bytes = src.offset();
  } else {
    absl::StatusOr<uint64_t> got = mark.empty() ? DownloadExact(link, len, req.rdb_path)
                                                : DownloadToMark(link, mark, req.rdb_path);
    if (!got.ok()) return fail(std::string(got.status().message()));
    r.payload_bytes = *got;
    r.rdb_path = req.rdb_path;
  }
  ::setsockopt(r.fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
  ::setsockopt(r.fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof(none));
  r.kind = SyncResult::Kind::kFull;
  fd_ = -1;
  return r;
}

}  // namespace ringkv::repl

// BusNet: the cluster bus's sockets as framed links of an IoSystem, plain
// and over TLS (tls-cluster), on both backends. A BusNet linked to itself on
// loopback, or to a raw peer: links are announced once (after the TLS handshake),
// frames arrive whole and in order, a send made before the connect and
// handshake end waits in the send buffer and is delivered, a refused
// connect ends in kClosed, frames that arrive with the peer's close_notify
// are handed on before the link's end, and a TLS peer without a client
// certificate is refused.
#include "server/cluster/bus_net.h"

#include <arpa/inet.h>
#include <signal.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "core/cluster/bus_message.h"
#include "io/io_system.h"
#include "io/tls_context.h"
#include "tests/free_port.h"
#include "tests/tls/test_certs.h"

namespace ringkv::server {
namespace {

int FreePort() { return testing::FreeLoopbackPort(); }

// A frame the bus thread accepts: "RCmb", the length, then `fill` bytes.
std::string Frame(char fill, size_t len = cluster::kBusHeaderLen) {
  std::string f(len, fill);
  f.replace(0, 4, "RCmb");
  for (int i = 0; i < 4; ++i) f[4 + i] = static_cast<char>(len >> (24 - 8 * i));
  return f;
}

// A BusNet on an IoSystem of its own, run on a thread of its own (that
// thread is its main thread), and the events it posted, collected as its
// notify arrives. The test talks to the BusNet through Call, which runs on
// the loop's thread as BusNet requires.
class Endpoint {
 public:
  explicit Endpoint(io::BackendChoice backend = io::BackendChoice::kAuto) {
    std::promise<std::string> started;
    std::future<std::string> result = started.get_future();
    thread_ = std::thread([this, backend, &started] {
      LoopSink sink(*this);
      io::IoSystem io(&sink);
      auto net = std::make_unique<BusNet>(io, [&io] { io.Notify(); });
      io::IoOptions o;
      o.port = FreePort();  // a client listener: an IoSystem must listen somewhere
      o.bind = {"127.0.0.1"};
      o.backend = backend;
      absl::Status s = io.Start(o);
      io_ = &io;
      net_ = net.get();
      started.set_value(s.ok() ? "" : std::string(s.message()));
      if (!s.ok()) return;
      io.Run();
      net.reset();  // before the IoSystem goes, as the server's ClusterMode
      io.Shutdown();
    });
    error_ = result.get();
  }
  ~Endpoint() {
    if (error_.empty()) Call([this](BusNet&) { io_->RequestStop(); });
    thread_.join();
  }
  const std::string& error() const { return error_; }

  // Runs f(net) on the loop's thread and returns what it returned.
  template <typename F>
  auto Call(F f) -> decltype(f(std::declval<BusNet&>())) {
    using R = decltype(f(std::declval<BusNet&>()));
    std::packaged_task<R()> task([this, &f] { return f(*net_); });
    std::future<R> done = task.get_future();
    {
      std::lock_guard<std::mutex> lock(mu_);
      calls_.push_back([&task] { task(); });
    }
    io_->Notify();
    return done.get();
  }

  // Waits up to 10 s for an event of `kind` (of link `link` unless 0); the
  // events before it are kept.
  bool WaitFor(BusEvent::Kind kind, BusEvent* out, uint64_t link = 0) {
    std::unique_lock<std::mutex> lock(mu_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (true) {
      for (size_t i = 0; i < events_.size(); ++i) {
        if (events_[i].kind == kind && (link == 0 || events_[i].link == link)) {
          *out = std::move(events_[i]);
          events_.erase(events_.begin() + static_cast<std::ptrdiff_t>(i));
          return true;
        }
      }
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) return false;
    }
  }
  // The kinds of the events so far (of link `link` unless 0), in order.
  std::vector<BusEvent::Kind> Kinds(uint64_t link = 0) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<BusEvent::Kind> k;
    for (const BusEvent& e : events_) {
      if (link == 0 || e.link == link) k.push_back(e.kind);
    }
    return k;
  }

 private:
  // No clients come; OnNotify runs the calls and collects BusNet's events.
  class LoopSink : public io::CommandSink {
   public:
    explicit LoopSink(Endpoint& e) : e_(e) {}
    std::string OnAccept(const io::SocketAddress&) override { return "-ERR no clients here\r\n"; }
    void OnOpen(io::Connection*) override {}
    void OnCommand(io::Connection*, std::span<const std::string_view>) override {}
    void OnProtocolError(io::Connection*, std::string_view) override {}
    void OnClose(io::Connection*) override {}
    int64_t OnTimer() override { return 100'000; }
    void BeforeFlush() override {}
    void OnNotify() override { e_.OnLoopNotify(); }

   private:
    Endpoint& e_;
  };

  void OnLoopNotify() {
    std::vector<std::function<void()>> calls;
    {
      std::lock_guard<std::mutex> lock(mu_);
      calls.swap(calls_);
    }
    for (auto& c : calls) c();
    if (net_ == nullptr) return;
    std::vector<BusEvent> got;
    net_->Drain(&got);
    std::lock_guard<std::mutex> lock(mu_);
    for (BusEvent& e : got) events_.push_back(std::move(e));
    cv_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<BusEvent> events_;
  std::vector<std::function<void()>> calls_;
  io::IoSystem* io_ = nullptr;  // the loop thread's
  BusNet* net_ = nullptr;       // the loop thread's
  std::string error_;
  std::thread thread_;
};

io::TlsOptions Options() {
  const std::string& d = testing::TestCertDir();
  io::TlsOptions o;
  o.cert_file = d + "/redis.crt";
  o.key_file = d + "/redis.key";
  o.ca_cert_file = d + "/ca.crt";
  o.replication = true;
  return o;
}

// Plain and TLS links, on each backend: io_uring (auto; epoll where this
// host refuses io_uring) and epoll. One IoSystem per process at a time (its
// thread is the main thread: io/thread_check.h), so a BusNet links to
// itself: each link is seen from both ends, its outbound id and its inbound
// one.
class BusNetTest : public ::testing::TestWithParam<std::tuple<bool, io::BackendChoice>> {
 protected:
  void SetUp() override {
    ASSERT_FALSE(testing::TestCertDir().empty());
    ASSERT_TRUE(tls_.Configure(Options()).ok());
  }
  bool tls() const { return std::get<0>(GetParam()); }
  io::BackendChoice backend() const { return std::get<1>(GetParam()); }
  // Listening on port_ (over TLS for the TLS case).
  bool Start(Endpoint& a) {
    if (!a.error().empty()) return false;
    port_ = FreePort();
    return a.Call([&](BusNet& net) {
      if (tls()) net.SetTls(true, tls_.server_ctx(), tls_.client_ctx());
      return net.Start({"127.0.0.1"}, port_).ok();
    });
  }
  io::TlsContext tls_;
  int port_ = 0;
};

TEST_P(BusNetTest, LinksAreAnnouncedAndFramesArriveInOrder) {
  Endpoint a(backend());
  ASSERT_TRUE(Start(a));
  const std::string early = Frame('x') + Frame('y', 4000);
  // Sent at once: before the TCP connect (and TLS handshake) ends, so it
  // waits in the link's send buffer.
  const auto [out, waiting] = a.Call([&](BusNet& net) {
    const uint64_t id = net.Connect("127.0.0.1", port_);
    net.Send(id, early);
    return std::pair{id, net.SendBufferOf(id)};
  });
  EXPECT_EQ(out % 2, 0u);  // outbound ids are even
  EXPECT_EQ(waiting.used, early.size());
  EXPECT_GE(waiting.allocated, early.size());

  BusEvent e;
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kConnected, &e));
  EXPECT_EQ(e.link, out);
  EXPECT_EQ(e.aux, "127.0.0.1");
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kAccepted, &e));
  const uint64_t in = e.link;
  EXPECT_EQ(in % 2, 1u);  // inbound ids are odd
  EXPECT_EQ(e.data, "127.0.0.1");
  EXPECT_EQ(e.aux, "127.0.0.1");
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kFrame, &e));
  EXPECT_EQ(e.link, in);
  EXPECT_EQ(e.data, Frame('x'));
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kFrame, &e));
  EXPECT_EQ(e.data, Frame('y', 4000));
  // Delivered: nothing waits any more.
  EXPECT_EQ(a.Call([&](BusNet& net) { return net.SendBufferOf(out).used; }), 0u);
  // The other way, a large frame (many TLS records, many receives).
  a.Call([&](BusNet& net) { net.Send(in, Frame('z', 300000)); });
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kFrame, &e));
  EXPECT_EQ(e.link, out);
  EXPECT_EQ(e.data, Frame('z', 300000));
  // Closing one end ends the other's link; the closer hears nothing.
  a.Call([&](BusNet& net) { net.Close(out); });
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kClosed, &e));
  EXPECT_EQ(e.link, in);
  EXPECT_EQ(a.Call([&](BusNet& net) { return net.SendBufferOf(in).allocated; }), 0u);  // gone
  for (BusEvent::Kind k : a.Kinds()) EXPECT_NE(k, BusEvent::Kind::kAccepted) << "announced once";
  EXPECT_TRUE(a.Kinds(out).empty()) << "Close tells nothing";
}

TEST_P(BusNetTest, AGarbledFrameDropsTheLink) {
  Endpoint a(backend());
  ASSERT_TRUE(Start(a));
  const uint64_t out = a.Call([&](BusNet& net) {
    const uint64_t id = net.Connect("127.0.0.1", port_);
    net.Send(id, std::string(8, 'Q'));
    return id;
  });
  BusEvent e;
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kAccepted, &e));
  const uint64_t in = e.link;
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kClosed, &e, in));
  EXPECT_NE(e.data.find("bad message signature"), std::string::npos) << e.data;
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kClosed, &e, out));
}

TEST_P(BusNetTest, AConnectRefusedEndsInClosed) {
  Endpoint a(backend());
  ASSERT_TRUE(a.error().empty()) << a.error();
  const int nobody = FreePort();  // nothing listens there
  const uint64_t out = a.Call([&](BusNet& net) {
    if (tls()) net.SetTls(true, tls_.server_ctx(), tls_.client_ctx());
    return net.Connect("127.0.0.1", nobody);
  });
  BusEvent e;
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kClosed, &e));
  EXPECT_EQ(e.link, out);
  EXPECT_EQ(e.data, "Connection refused");
  for (BusEvent::Kind k : a.Kinds()) EXPECT_NE(k, BusEvent::Kind::kConnected);
}

INSTANTIATE_TEST_SUITE_P(
    PlainAndTls, BusNetTest,
    ::testing::Combine(::testing::Bool(), ::testing::Values(io::BackendChoice::kAuto, io::BackendChoice::kEpoll)),
    [](const ::testing::TestParamInfo<std::tuple<bool, io::BackendChoice>>& i) {
      return std::string(std::get<0>(i.param) ? "Tls" : "Plain") +
             (std::get<1>(i.param) == io::BackendChoice::kEpoll ? "Epoll" : "Auto");
    });

// A blocking OpenSSL client on loopback: the peer the bus thread must cope with.
class RawTlsPeer {
 public:
  RawTlsPeer(int port, bool with_certificate) {
    const std::string& d = testing::TestCertDir();
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_load_verify_locations(ctx_, (d + "/ca.crt").c_str(), nullptr);
    if (with_certificate) {
      SSL_CTX_use_certificate_chain_file(ctx_, (d + "/redis.crt").c_str());
      SSL_CTX_use_PrivateKey_file(ctx_, (d + "/redis.key").c_str(), SSL_FILETYPE_PEM);
    }
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    const sockaddr_in a = testing::LoopbackAddress(port);
    timeval tv{5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (connect(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) != 0) return;
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    ok_ = SSL_connect(ssl_) == 1;
  }
  ~RawTlsPeer() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    close(fd_);
    SSL_CTX_free(ctx_);
  }
  bool ok() const { return ok_; }
  SSL* ssl() { return ssl_; }
  // Encrypts `plain`, then the close_notify, and puts the records on the
  // socket in one send: the bus thread reads them in one piece.
  bool WriteAndCloseInOneSend(const std::string& plain) {
    BIO* mem = BIO_new(BIO_s_mem());
    SSL_set0_wbio(ssl_, mem);  // the socket BIO stays for reading
    if (SSL_write(ssl_, plain.data(), static_cast<int>(plain.size())) != static_cast<int>(plain.size())) return false;
    SSL_shutdown(ssl_);
    char* data = nullptr;
    const long n = BIO_get_mem_data(mem, &data);
    return n > 0 && send(fd_, data, static_cast<size_t>(n), 0) == n;
  }

 private:
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  bool ok_ = false;
};

TEST(BusNetTlsTest, FramesSentWithCloseNotifyAreHandedOnFirst) {
  ASSERT_FALSE(testing::TestCertDir().empty());
  io::TlsContext tls;
  ASSERT_TRUE(tls.Configure(Options()).ok());
  Endpoint a;
  const int port = FreePort();
  ASSERT_TRUE(a.Call([&](BusNet& net) {
    net.SetTls(true, tls.server_ctx(), tls.client_ctx());
    return net.Start({"127.0.0.1"}, port).ok();
  }));
  RawTlsPeer peer(port, /*with_certificate=*/true);
  ASSERT_TRUE(peer.ok());
  BusEvent e;
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kAccepted, &e));
  // Two frames and the close_notify in one send.
  ASSERT_TRUE(peer.WriteAndCloseInOneSend(Frame('p') + Frame('q')));
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kClosed, &e));
  const std::vector<BusEvent::Kind> before = a.Kinds();
  ASSERT_EQ(before.size(), 2u);  // the frames were posted before the end
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kFrame, &e));
  EXPECT_EQ(e.data, Frame('p'));
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kFrame, &e));
  EXPECT_EQ(e.data, Frame('q'));
}

TEST(BusNetTlsTest, APeerWithoutACertificateIsRefused) {
  ASSERT_FALSE(testing::TestCertDir().empty());
  io::TlsOptions o = Options();
  o.auth_clients = io::TlsOptions::AuthClients::kNo;  // the clients' setting: the bus asks anyway
  io::TlsContext tls;
  ASSERT_TRUE(tls.Configure(o).ok());
  Endpoint a;
  const int port = FreePort();
  ASSERT_TRUE(a.Call([&](BusNet& net) {
    net.SetTls(true, tls.server_ctx(), tls.client_ctx());
    return net.Start({"127.0.0.1"}, port).ok();
  }));
  RawTlsPeer peer(port, /*with_certificate=*/false);
  const std::string frame = Frame('n');
  SSL_write(peer.ssl(), frame.data(), static_cast<int>(frame.size()));
  BusEvent e;
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kAcceptFailed, &e));
  EXPECT_NE(e.data.find("certificate"), std::string::npos) << e.data;
  for (BusEvent::Kind k : a.Kinds()) {
    EXPECT_NE(k, BusEvent::Kind::kAccepted);
    EXPECT_NE(k, BusEvent::Kind::kFrame);
  }
}

TEST(BusNetTlsTest, TlsWithoutAContextRefusesRatherThanGoPlain) {
  Endpoint a;
  const int port = FreePort();
  ASSERT_TRUE(a.Call([&](BusNet& net) {
    net.SetTls(true, nullptr, nullptr);
    return net.Start({"127.0.0.1"}, port).ok();
  }));
  const uint64_t out = a.Call([&](BusNet& net) { return net.Connect("127.0.0.1", port); });
  BusEvent e;
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kClosed, &e));
  EXPECT_EQ(e.link, out);
  EXPECT_EQ(e.data, "TLS is not configured");
  // And the listening side refuses a link it cannot run over TLS (the
  // peer's hello may meet the closed socket: no SIGPIPE for the test).
  signal(SIGPIPE, SIG_IGN);
  RawTlsPeer peer(port, /*with_certificate=*/true);
  EXPECT_FALSE(peer.ok());
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kAcceptFailed, &e));
  EXPECT_EQ(e.data, "TLS is not configured");
}

}  // namespace
}  // namespace ringkv::server

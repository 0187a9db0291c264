// BusNet: the cluster bus's sockets on their own thread, plain and over TLS
// (tls-cluster). Two BusNets on loopback, or one and a raw peer: links are
// announced once (after the TLS handshake), frames arrive whole and in
// order, a send made before the handshake ends is delivered, frames that
// arrive with the peer's close_notify are handed on before the link's end,
// and a TLS peer without a client certificate is refused.
#include "server/cluster/bus_net.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/cluster/bus_message.h"
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

// A BusNet and the events it posted, collected as its notify arrives.
class Endpoint {
 public:
  Endpoint() : net_([this] { Notified(); }) {}
  BusNet& net() { return net_; }

  // Waits up to 10 s for an event of `kind`; the events before it are kept.
  bool WaitFor(BusEvent::Kind kind, BusEvent* out) {
    std::unique_lock<std::mutex> lock(mu_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (true) {
      for (size_t i = 0; i < events_.size(); ++i) {
        if (events_[i].kind == kind) {
          *out = std::move(events_[i]);
          events_.erase(events_.begin() + static_cast<std::ptrdiff_t>(i));
          return true;
        }
      }
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) return false;
    }
  }
  // The kinds of the events so far, in order (a copy).
  std::vector<BusEvent::Kind> Kinds() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<BusEvent::Kind> k;
    for (const BusEvent& e : events_) k.push_back(e.kind);
    return k;
  }

 private:
  void Notified() {
    std::vector<BusEvent> got;
    net_.Drain(&got);
    std::lock_guard<std::mutex> lock(mu_);
    for (BusEvent& e : got) events_.push_back(std::move(e));
    cv_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<BusEvent> events_;
  BusNet net_;  // last: its thread stops before the rest goes
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

class BusNetTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    ASSERT_FALSE(testing::TestCertDir().empty());
    ASSERT_TRUE(tls_.Configure(Options()).ok());
  }
  bool tls() const { return GetParam(); }
  // Both listening (over TLS for the TLS case); `a` on a_port_.
  bool StartBoth(Endpoint& a, Endpoint& b) {
    for (Endpoint* e : {&a, &b}) {
      if (tls()) e->net().SetTls(true, tls_.server_ctx(), tls_.client_ctx());
    }
    a_port_ = FreePort();
    return a.net().Start({"127.0.0.1"}, a_port_).ok() && b.net().Start({"127.0.0.1"}, FreePort()).ok();
  }
  io::TlsContext tls_;
  int a_port_ = 0;
};

TEST_P(BusNetTest, LinksAreAnnouncedAndFramesArriveInOrder) {
  Endpoint a, b;
  ASSERT_TRUE(StartBoth(a, b));
  auto meter = std::make_shared<BusSendMeter>();
  const uint64_t out = b.net().Connect("127.0.0.1", a_port_, meter);
  // Sent at once: before the TCP connect (and TLS handshake) ends.
  b.net().Send(out, Frame('x') + Frame('y', 4000));

  BusEvent e;
  ASSERT_TRUE(b.WaitFor(BusEvent::Kind::kConnected, &e));
  EXPECT_EQ(e.link, out);
  EXPECT_EQ(e.aux, "127.0.0.1");
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kAccepted, &e));
  const uint64_t in = e.link;
  EXPECT_EQ(in % 2, 1u);  // inbound ids are odd
  EXPECT_EQ(e.data, "127.0.0.1");
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kFrame, &e));
  EXPECT_EQ(e.data, Frame('x'));
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kFrame, &e));
  EXPECT_EQ(e.data, Frame('y', 4000));
  // The other way, a large frame (many TLS records).
  a.net().Send(in, Frame('z', 300000));
  ASSERT_TRUE(b.WaitFor(BusEvent::Kind::kFrame, &e));
  EXPECT_EQ(e.data, Frame('z', 300000));
  EXPECT_EQ(meter->written.load(), Frame('x').size() + 4000u);  // plaintext handed on, not TLS bytes
  // Closing one side ends the other's link.
  b.net().Close(out);
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kClosed, &e));
  EXPECT_EQ(e.link, in);
  for (BusEvent::Kind k : a.Kinds()) EXPECT_NE(k, BusEvent::Kind::kAccepted) << "announced once";
}

TEST_P(BusNetTest, AGarbledFrameDropsTheLink) {
  Endpoint a, b;
  ASSERT_TRUE(StartBoth(a, b));
  const uint64_t out = b.net().Connect("127.0.0.1", a_port_, std::make_shared<BusSendMeter>());
  b.net().Send(out, std::string(8, 'Q'));
  BusEvent e;
  ASSERT_TRUE(a.WaitFor(BusEvent::Kind::kClosed, &e));
  EXPECT_NE(e.data.find("bad message signature"), std::string::npos) << e.data;
  ASSERT_TRUE(b.WaitFor(BusEvent::Kind::kClosed, &e));
  EXPECT_EQ(e.link, out);
}

INSTANTIATE_TEST_SUITE_P(PlainAndTls, BusNetTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Tls" : "Plain"; });

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
  a.net().SetTls(true, tls.server_ctx(), tls.client_ctx());
  const int port = FreePort();
  ASSERT_TRUE(a.net().Start({"127.0.0.1"}, port).ok());
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
  a.net().SetTls(true, tls.server_ctx(), tls.client_ctx());
  const int port = FreePort();
  ASSERT_TRUE(a.net().Start({"127.0.0.1"}, port).ok());
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
  Endpoint a, b;
  a.net().SetTls(true, nullptr, nullptr);
  b.net().SetTls(true, nullptr, nullptr);
  const int port = FreePort();
  ASSERT_TRUE(a.net().Start({"127.0.0.1"}, port).ok());
  ASSERT_TRUE(b.net().Start({"127.0.0.1"}, FreePort()).ok());
  const uint64_t out = b.net().Connect("127.0.0.1", port, std::make_shared<BusSendMeter>());
  BusEvent e;
  ASSERT_TRUE(b.WaitFor(BusEvent::Kind::kClosed, &e));
  EXPECT_EQ(e.link, out);
  EXPECT_EQ(e.data, "TLS is not configured");
}

}  // namespace
}  // namespace ringkv::server

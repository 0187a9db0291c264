// TlsSession and TlsContext without sockets: two sessions talk through
// their memory BIOs (the ciphertext one writes is fed to the other), so the
// handshake, records, failures and rotation run in-process (and under ASan).
#include "io/tls_session.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "io/tls_context.h"
#include "tests/tls/test_certs.h"

namespace ringkv::io {
namespace {

const std::string& Certs() { return ringkv::testing::TestCertDir(); }

TlsOptions Options(const std::string& cert = "redis") {
  TlsOptions o;
  o.cert_file = Certs() + "/" + cert + ".crt";
  o.key_file = Certs() + "/" + cert + ".key";
  o.ca_cert_file = Certs() + "/ca.crt";
  return o;
}

// Moves every pending record from `from` to `to`; true when any moved.
bool Pump(TlsSession& from, TlsSession& to) {
  bool moved = false;
  while (!from.wire().empty()) {
    std::string_view f = from.wire().Front();
    to.Feed(f);
    from.wire().Consume(f.size());
    moved = true;
  }
  return moved;
}

// Runs both handshakes to their end; false when either failed.
bool Handshake(TlsSession& client, TlsSession& server) {
  for (int i = 0; i < 20; ++i) {
    if (!client.Handshake()) return false;
    Pump(client, server);
    if (!server.Handshake()) return false;
    Pump(server, client);
    if (client.handshake_done() && server.handshake_done()) return true;
  }
  return false;
}

std::string ReadAll(TlsSession& s) {
  std::string out;
  char buf[4096];
  long n;
  while ((n = s.Read(buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

class TlsSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(Certs().empty());
    ASSERT_TRUE(server_ctx_.Configure(Options()).ok());
    TlsOptions client = Options();
    client.cert_file = Certs() + "/client.crt";
    client.key_file = Certs() + "/client.key";
    ASSERT_TRUE(client_ctx_.Configure(client).ok());
  }
  TlsContext server_ctx_, client_ctx_;
};

TEST_F(TlsSessionTest, HandshakeThenRecordsBothWays) {
  TlsSessionPtr server = TlsSession::Accept(server_ctx_.server_ctx());
  TlsSessionPtr client = TlsSession::Connect(client_ctx_.client_ctx());
  ASSERT_TRUE(Handshake(*client, *server));
  EXPECT_STREQ(client->version(), "TLSv1.3");
  OutBuffer replies;
  replies.Append("+OK\r\n");
  replies.Append(std::string(40000, 'x'));  // several chunks, several records
  ASSERT_TRUE(server->Encrypt(replies));
  EXPECT_TRUE(replies.empty());
  Pump(*server, *client);
  EXPECT_EQ(ReadAll(*client), "+OK\r\n" + std::string(40000, 'x'));
  ASSERT_TRUE(client->Write("*1\r\n$4\r\nPING\r\n"));
  Pump(*client, *server);
  EXPECT_EQ(ReadAll(*server), "*1\r\n$4\r\nPING\r\n");
  EXPECT_FALSE(server->HasBufferedInput());
}

TEST_F(TlsSessionTest, BytesFedOneAtATime) {
  TlsSessionPtr server = TlsSession::Accept(server_ctx_.server_ctx());
  TlsSessionPtr client = TlsSession::Connect(client_ctx_.client_ctx());
  ASSERT_TRUE(Handshake(*client, *server));
  ASSERT_TRUE(client->Write("hello"));
  std::string got;
  char buf[16];
  while (!client->wire().empty()) {  // a stalled peer: a byte per receive
    std::string_view f = client->wire().Front();
    server->Feed(f.substr(0, 1));
    client->wire().Consume(1);
    long n = server->Read(buf, sizeof(buf));
    ASSERT_NE(n, TlsSession::kFailed);
    if (n > 0) got.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(got, "hello");
}

TEST_F(TlsSessionTest, PlainTextFailsTheHandshake) {
  TlsSessionPtr server = TlsSession::Accept(server_ctx_.server_ctx());
  server->Feed("PING\r\n");
  char buf[16];
  EXPECT_EQ(server->Read(buf, sizeof(buf)), TlsSession::kFailed);
  EXPECT_TRUE(server->failed());
  EXPECT_NE(server->error().find("SSL routines"), std::string::npos) << server->error();
}

TEST_F(TlsSessionTest, ClientWithoutCertificateIsRefused) {
  TlsSessionPtr server = TlsSession::Accept(server_ctx_.server_ctx());
  SslCtxPtr bare(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);  // presents no certificate
  TlsSessionPtr client = TlsSession::Connect(bare);
  EXPECT_FALSE(Handshake(*client, *server));
  EXPECT_NE(server->error().find("peer did not return a certificate"), std::string::npos) << server->error();
}

TEST(TlsContextTest, ErrorsAreRedisLines) {
  TlsContext ctx;
  TlsOptions o = Options();
  o.key_file = Certs() + "/other.key";
  absl::Status s = ctx.Configure(o);
  EXPECT_EQ(std::string(s.message()).rfind("Failed to load private key: " + o.key_file + ": error:", 0), 0u)
      << s.message();
  EXPECT_FALSE(ctx.configured());
  o = Options();
  o.ca_cert_file.clear();
  EXPECT_EQ(ctx.Configure(o).message(),
            "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or "
            "tls-auth-clients are enabled!");
  o.auth_clients = TlsOptions::AuthClients::kNo;
  EXPECT_TRUE(ctx.Configure(o).ok());
  o = Options();
  o.protocols = "TLSv1.2 SSLv3";
  EXPECT_EQ(ctx.Configure(o).message(),
            "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.");
  // A failed Configure keeps what was configured before.
  EXPECT_TRUE(ctx.configured());
  SSL_CTX* before = ctx.server_ctx().get();
  o = Options();
  o.cert_file = "/nonexistent";
  EXPECT_FALSE(ctx.Configure(o).ok());
  EXPECT_EQ(ctx.server_ctx().get(), before);
}

}  // namespace
}  // namespace ringkv::io

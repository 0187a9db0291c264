// TLS end to end: tls-port beside the plain port, client certificates
// (tls-auth-clients), handshake failures that close only their connection,
// a stalled handshake that holds nobody up, certificate rotation and bad
// certificates through CONFIG SET (error texts compared with redis-server
// 7.0), start-up refusal, sessions that keep working while io-threads
// changes, and replication over TLS between ringkv and redis-server in both
// roles. Runs on either io backend
// (RINGKV_TEST_IO_BACKEND=epoll).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/persistence_test_util.h"
#include "tests/e2e/tls_test_util.h"

namespace ringkv::testing::tls_e2e_test {
namespace {

const char* kRedis = "/usr/bin/redis-server";

std::vector<std::string> With(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class TlsE2E : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(CertDir().empty()) << "tests/tls/gen_test_certs.sh failed"; }
};

TEST_F(TlsE2E, SetGetOverTlsBesidePlainPort) {
  const int tls_port = FreePort();
  TestServer s(TlsArgs(tls_port));
  ASSERT_TRUE(s.ready());
  TlsConn t(tls_port);
  ASSERT_TRUE(t.handshake_ok());
  EXPECT_EQ(t.Command({"SET", "k", "over tls"}), "+OK\r\n");
  RawConn plain(s.port());
  EXPECT_EQ(Call(plain, {"GET", "k"}), "$8\r\nover tls\r\n");
  EXPECT_EQ(Call(plain, {"SET", "big", std::string(100000, 'x')}), "+OK\r\n");
  // A reply of several chunks, and a pipeline, through one session.
  EXPECT_EQ(t.Command({"STRLEN", "big"}), ":100000\r\n");
  EXPECT_EQ(t.Command({"GET", "big"}), "$100000\r\n" + std::string(100000, 'x') + "\r\n");
  ASSERT_TRUE(t.Send(Resp({"INCR", "n"}) + Resp({"INCR", "n"}) + Resp({"INCR", "n"})));
  for (int i = 1; i <= 3; ++i) EXPECT_EQ(t.ReadReply(), ":" + std::to_string(i) + "\r\n");
  // Input of several records at once: a command of seven (records hold at
  // most 16 KB) followed by one, and three records of a command each. The
  // server reads on while the session holds ciphertext it has not decrypted.
  ASSERT_TRUE(t.Send(Resp({"SET", "big2", std::string(100000, 'z')}) + Resp({"STRLEN", "big2"})));
  EXPECT_EQ(t.ReadReply(), "+OK\r\n");
  EXPECT_EQ(t.ReadReply(), ":100000\r\n");
  for (int i = 4; i <= 6; ++i) ASSERT_TRUE(t.Send(Resp({"INCR", "n"})));
  for (int i = 4; i <= 6; ++i) EXPECT_EQ(t.ReadReply(), ":" + std::to_string(i) + "\r\n");
  EXPECT_EQ(Call(plain, {"CONFIG", "GET", "tls-port"}),
            "*2\r\n$8\r\ntls-port\r\n$" + std::to_string(std::to_string(tls_port).size()) + "\r\n" +
                std::to_string(tls_port) + "\r\n");
  if (HaveTool("redis-cli")) {  // the real tool
    std::string out;
    RunShell("redis-cli --tls --cacert " + Cert("ca.crt") + " --cert " + Cert("client.crt") + " --key " +
                 Cert("client.key") + " -p " + std::to_string(tls_port) + " GET k",
             &out);
    EXPECT_EQ(out, "over tls\n");
  }
}

TEST_F(TlsE2E, ClientCertificatesFollowTlsAuthClients) {
  const int tls_port = FreePort();
  TestServer s(TlsArgs(tls_port));
  ASSERT_TRUE(s.ready());
  {  // yes (the default): no certificate, no service
    TlsConn anonymous(tls_port, {.cert = "", .key = ""});
    EXPECT_EQ(anonymous.Command({"PING"}), "<eof>");
  }
  {  // a certificate from a CA the server does not trust
    TlsConn stranger(tls_port, {.cert = "other.crt", .key = "other.key"});
    EXPECT_EQ(stranger.Command({"PING"}), "<eof>");
  }
  {  // a server certificate the client does not trust: the client gives up
    TlsConn distrustful(tls_port, {.ca = "otherca.crt"});
    EXPECT_FALSE(distrustful.handshake_ok());
  }
  TlsConn good(tls_port);
  EXPECT_EQ(good.Command({"PING"}), "+PONG\r\n");
  EXPECT_EQ(good.Command({"CONFIG", "SET", "tls-auth-clients", "optional"}), "+OK\r\n");
  TlsConn anonymous(tls_port, {.cert = "", .key = ""});
  EXPECT_EQ(anonymous.Command({"PING"}), "+PONG\r\n");
  TlsConn stranger(tls_port, {.cert = "other.crt", .key = "other.key"});  // optional still verifies
  EXPECT_EQ(stranger.Command({"PING"}), "<eof>");
  EXPECT_EQ(good.Command({"CONFIG", "SET", "tls-auth-clients", "no"}), "+OK\r\n");
  TlsConn anonymous2(tls_port, {.cert = "", .key = ""});
  EXPECT_EQ(anonymous2.Command({"PING"}), "+PONG\r\n");
  EXPECT_EQ(good.Command({"PING"}), "+PONG\r\n");  // untouched throughout
}

TEST_F(TlsE2E, WrongProtocolClosesOnlyThatConnection) {
  const int tls_port = FreePort();
  TestServer s(TlsArgs(tls_port));
  ASSERT_TRUE(s.ready());
  TlsConn good(tls_port);
  ASSERT_EQ(good.Command({"SET", "k", "1"}), "+OK\r\n");
  {  // plain text on the TLS port: at most an alert, then the end
    RawConn raw(tls_port);
    ASSERT_TRUE(raw.Send("PING\r\n"));
    EXPECT_LT(raw.ReadN(4096).size(), 64u);
    EXPECT_TRUE(raw.ReadEof());
  }
  {  // TLS on the plain port: the hello is no command (as in Redis, the
     // server waits for the end of an inline line, so the client gives up)
    TlsConn wrong(s.port(), {.timeout_s = 1});
    EXPECT_FALSE(wrong.handshake_ok());
  }
  EXPECT_EQ(good.Command({"INCR", "k"}), ":2\r\n");
  RawConn plain(s.port());
  EXPECT_EQ(Call(plain, {"GET", "k"}), "$1\r\n2\r\n");
}

TEST_F(TlsE2E, StalledHandshakeHoldsNobodyUp) {
  const int tls_port = FreePort();
  TestServer s(TlsArgs(tls_port));
  ASSERT_TRUE(s.ready());
  // The first bytes of a ClientHello record, then nothing.
  RawConn stalled(tls_port);
  ASSERT_TRUE(stalled.Send(std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11)));
  RawConn silent(tls_port);  // connects and sends nothing at all
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) {
    TlsConn t(tls_port);
    ASSERT_EQ(t.Command({"INCR", "n"}), ":" + std::to_string(i + 1) + "\r\n");
  }
  RawConn plain(s.port());
  EXPECT_EQ(Call(plain, {"GET", "n"}), "$1\r\n5\r\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // Both half-open connections are still there, waiting (the five
  // finished ones go as their closes are seen).
  std::string list;
  size_t count = 0;
  for (int i = 0; i < 100 && count != 2; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    list = Call(plain, {"CLIENT", "LIST"});
    count = 0;
    for (size_t p = 0; (p = list.find("laddr=127.0.0.1:" + std::to_string(tls_port), p)) != std::string::npos; ++p) {
      ++count;
    }
  }
  EXPECT_EQ(count, 2u) << list;
}

TEST_F(TlsE2E, CertificateRotationWithoutRestart) {
  const int tls_port = FreePort();
  TestServer s(TlsArgs(tls_port));
  ASSERT_TRUE(s.ready());
  TlsConn before(tls_port);
  ASSERT_EQ(before.PeerSerial(), 101);
  RawConn plain(s.port());
  EXPECT_EQ(Call(plain, {"CONFIG", "SET", "tls-cert-file", Cert("redis2.crt"), "tls-key-file", Cert("redis2.key")}),
            "+OK\r\n");
  TlsConn after(tls_port);
  EXPECT_EQ(after.PeerSerial(), 102);  // new connections: the new certificate
  EXPECT_EQ(after.Command({"SET", "k", "v"}), "+OK\r\n");
  EXPECT_EQ(before.Command({"GET", "k"}), "$1\r\nv\r\n");  // existing ones carry on
  // An encrypted key with its pass phrase.
  EXPECT_EQ(Call(plain, {"CONFIG", "SET", "tls-cert-file", Cert("redis.crt"), "tls-key-file", Cert("redis-pass.key"),
                         "tls-key-file-pass", "secret"}),
            "+OK\r\n");
  TlsConn third(tls_port);
  EXPECT_EQ(third.PeerSerial(), 101);
  EXPECT_EQ(Call(plain, {"CONFIG", "SET", "tls-dh-params-file", Cert("redis.dh"), "tls-protocols", "TLSv1.2"}),
            "+OK\r\n");
  TlsConn fourth(tls_port);
  EXPECT_EQ(fourth.Command({"PING"}), "+PONG\r\n");
}

// The same CONFIG SETs against ringkv and redis-server: the same replies,
// and the server keeps its previous certificate.
TEST_F(TlsE2E, BadCertificatesRefusedAsRedisRefusesThem) {
  const std::vector<std::vector<std::string>> sets = {
      {"CONFIG", "SET", "tls-cert-file", "/nonexistent.crt"},
      {"CONFIG", "SET", "tls-key-file", Cert("other.key")},  // does not match the certificate
      {"CONFIG", "SET", "tls-ca-cert-file", "/nonexistent.crt"},
      {"CONFIG", "SET", "tls-protocols", "TLSv9"},
      {"CONFIG", "SET", "tls-ciphers", "no-such-cipher"},
      {"CONFIG", "SET", "tls-auth-clients", "sometimes"},
      {"CONFIG", "SET", "tls-key-file", Cert("redis-pass.key"), "tls-key-file-pass", "wrong"},
  };
  std::vector<std::string> replies[2];
  for (int server = 0; server < 2; ++server) {
    if (server == 1 && !HaveTool("redis-server")) GTEST_SKIP() << "redis-server not installed";
    const int tls_port = FreePort();
    TestServer s(TlsArgs(tls_port), server == 0 ? RINGKV_SERVER_PATH : kRedis);
    ASSERT_TRUE(s.ready());
    RawConn plain(s.port());
    for (const auto& set : sets) replies[server].push_back(Call(plain, set));
    TlsConn t(tls_port);
    EXPECT_EQ(t.PeerSerial(), 101);
    EXPECT_EQ(t.Command({"PING"}), "+PONG\r\n");
  }
  for (size_t i = 0; i < sets.size(); ++i) EXPECT_EQ(replies[0][i], replies[1][i]) << sets[i][2];
  EXPECT_EQ(replies[0][0],
            "-ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to update TLS "
            "configuration. Check server logs.\r\n");
}

TEST_F(TlsE2E, BadKeyStopsStartUp) {
  const ScopedTempDir scoped_dir;
  const std::string& dir = scoped_dir.path();
  std::vector<std::string> args = TlsArgs(FreePort());
  args[5] = Cert("other.key");  // --tls-key-file: not the certificate's key
  TestServer s(With(args, {"--logfile", dir + "/log"}));
  EXPECT_FALSE(s.ready());
  const int status = s.Stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  const std::string log = ReadFile(dir + "/log");
  EXPECT_NE(log.find("Failed to load private key: " + Cert("other.key") + ": error:"), std::string::npos) << log;
  EXPECT_NE(log.find("Failed to configure TLS. Check logs for more info."), std::string::npos) << log;
}

// io-threads changed at runtime (issue 20, part 5): TLS connections move
// between I/O threads with their sessions (ciphertext not sent yet, input
// not parsed yet); every reply of their pipelined load checked, none dropped.
TEST_F(TlsE2E, SessionsKeepWorkingWhileIoThreadsChange) {
  setenv("RINGKV_IO_THREADS_UNCAPPED", "1", 1);  // 4 threads even on a 2-CPU machine
  const int tls_port = FreePort();
  TestServer s(With(TlsArgs(tls_port), {"--io-threads", "1", "--save", ""}));
  unsetenv("RINGKV_IO_THREADS_UNCAPPED");
  ASSERT_TRUE(s.ready());
  RawConn plain(s.port());
  const std::string big(100 * 1024, 'b');
  ASSERT_EQ(Call(plain, {"SET", "big", big}), "+OK\r\n");
  std::vector<std::unique_ptr<TlsConn>> conns;
  for (int i = 0; i < 4; ++i) {
    conns.push_back(std::make_unique<TlsConn>(tls_port));
    ASSERT_TRUE(conns.back()->handshake_ok());
  }
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0}, batches{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&, i] {
      TlsConn& t = *conns[i];
      const std::string key = "tls:" + std::to_string(i);
      int64_t n = 0;
      while (!stop) {
        std::string batch;
        for (int j = 0; j < 20; ++j) batch += Resp({"INCR", key});
        batch += Resp({"GET", "big"});
        if (!t.Send(batch)) {
          ++errors;
          return;
        }
        for (int j = 0; j < 20; ++j) {
          if (t.ReadReply() != ":" + std::to_string(++n) + "\r\n") {
            ++errors;
            return;
          }
        }
        if (t.ReadReply() != "$" + std::to_string(big.size()) + "\r\n" + big + "\r\n") {
          ++errors;
          return;
        }
        ++batches;
      }
    });
  }
  for (int n : {4, 2, 1, 3, 1, 4, 3, 2, 1}) {
    ASSERT_EQ(Call(plain, {"CONFIG", "SET", "io-threads", std::to_string(n)}), "+OK\r\n");
    const int before = batches;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    for (int w = 0; w < 1000 && batches <= before; ++w) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_GT(batches, before) << "io-threads " << n;
  }
  stop = true;
  for (auto& t : clients) t.join();
  EXPECT_EQ(errors, 0);
  EXPECT_EQ(Info(plain, "connected_clients", "clients"), "5");
  TlsConn after(tls_port);  // a new session on the final configuration
  EXPECT_EQ(after.Command({"PING"}), "+PONG\r\n");
}

// ---- replication over TLS ------------------------------------------------------

std::vector<std::string> ReplArgs(int tls_port) {
  return With(TlsArgs(tls_port), {"--tls-replication", "yes", "--save", "", "--enable-debug-command", "yes",
                                  "--repl-diskless-sync-delay", "0"});
}

// `replica` follows `primary_tls_port` over TLS; data written before and
// after the link came up arrives (DEBUG DIGEST equal).
void CheckReplication(RawConn& p, RawConn& r, int primary_tls_port) {
  ASSERT_EQ(Call(p, {"DEBUG", "POPULATE", "2000"}), "+OK\r\n");
  ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary_tls_port)}), "+OK\r\n");
  ASSERT_TRUE(WaitInfo(r, "master_link_status", "up", 15000, "replication")) << Call(r, {"INFO", "replication"});
  ASSERT_EQ(Call(p, {"SET", "after", std::string(50000, 'y')}), "+OK\r\n");
  ASSERT_EQ(Call(p, {"HSET", "h", "f", "v"}), ":1\r\n");
  bool same = false;
  for (int i = 0; i < 500 && !same; ++i) {
    same = Digest(p) == Digest(r);
    if (!same) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(same);
  EXPECT_EQ(Call(r, {"GET", "h"}).substr(0, 11), "-WRONGTYPE ");
}

TEST_F(TlsE2E, ReplicationRingkvToRingkv) {
  const int ptls = FreePort(), rtls = FreePort();
  TestServer primary(ReplArgs(ptls));
  TestServer replica(ReplArgs(rtls));
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn p(primary.port()), r(replica.port());
  CheckReplication(p, r, ptls);
  // The replica announced its TLS port.
  EXPECT_NE(Call(p, {"INFO", "replication"}).find("port=" + std::to_string(rtls)), std::string::npos);
}

// TLS replicas stay on their I/O threads (their stream is encrypted
// there): when io-threads changes under a write load, the links of retiring
// threads move mid-stream to the others, without a resync.
TEST_F(TlsE2E, ReplicationSurvivesIoThreadsChanges) {
  setenv("RINGKV_IO_THREADS_UNCAPPED", "1", 1);
  const int ptls = FreePort();
  TestServer primary(With(ReplArgs(ptls), {"--io-threads", "4", "--repl-diskless-sync", "no"}));
  unsetenv("RINGKV_IO_THREADS_UNCAPPED");
  ASSERT_TRUE(primary.ready());
  RawConn p(primary.port());
  ASSERT_EQ(Call(p, {"DEBUG", "POPULATE", "2000"}), "+OK\r\n");
  std::vector<std::unique_ptr<TestServer>> replicas;
  for (int i = 0; i < 3; ++i) {
    replicas.push_back(std::make_unique<TestServer>(ReplArgs(FreePort())));
    ASSERT_TRUE(replicas.back()->ready());
    RawConn r(replicas.back()->port());
    ASSERT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(ptls)}), "+OK\r\n");
    ASSERT_TRUE(WaitInfo(r, "master_link_status", "up", 15000, "replication"));
  }
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0};
  std::thread writer([&] {
    RawConn w(primary.port());
    for (int64_t n = 0; !stop;) {
      std::string batch;
      for (int j = 0; j < 50; ++j) batch += Resp({"INCR", "counter"});
      batch += Resp({"SET", "k" + std::to_string(n % 1000), std::string(2000, 'v')});
      if (!w.Send(batch)) {
        ++errors;
        return;
      }
      for (int j = 0; j < 50; ++j) errors += w.ReadReply() != ":" + std::to_string(++n) + "\r\n";
      errors += w.ReadReply() != "+OK\r\n";
    }
  });
  for (int n : {2, 1, 3, 1, 4, 2, 1}) {
    ASSERT_EQ(Call(p, {"CONFIG", "SET", "io-threads", std::to_string(n)}), "+OK\r\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  stop = true;
  writer.join();
  EXPECT_EQ(errors, 0);
  const std::string offset = Info(p, "master_repl_offset", "replication");
  const std::string digest = Digest(p);
  for (auto& replica : replicas) {
    RawConn r(replica->port());
    EXPECT_TRUE(WaitInfo(r, "master_repl_offset", offset, 30000, "replication"));
    EXPECT_EQ(Digest(r), digest);
  }
  EXPECT_EQ(Info(p, "sync_full", "stats"), "3");
  EXPECT_EQ(Info(p, "sync_partial_ok", "stats"), "0");
}

TEST_F(TlsE2E, ReplicationRedisPrimaryRingkvReplica) {
  if (!HaveTool("redis-server")) GTEST_SKIP() << "redis-server not installed";
  const int ptls = FreePort(), rtls = FreePort();
  TestServer primary(ReplArgs(ptls), kRedis);
  TestServer replica(ReplArgs(rtls));
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn p(primary.port()), r(replica.port());
  CheckReplication(p, r, ptls);
}

TEST_F(TlsE2E, ReplicationRingkvPrimaryRedisReplica) {
  if (!HaveTool("redis-server")) GTEST_SKIP() << "redis-server not installed";
  const int ptls = FreePort(), rtls = FreePort();
  TestServer primary(ReplArgs(ptls));
  TestServer replica(ReplArgs(rtls), kRedis);
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn p(primary.port()), r(replica.port());
  CheckReplication(p, r, ptls);
}

}  // namespace
}  // namespace ringkv::testing::tls_e2e_test

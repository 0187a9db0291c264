// What an idle client costs (docs/performance.md 19.1): the sizes of the two
// allocations every connection makes, the registry that lists it, and that
// what only some connections use -- ConnectionExtras -- reads as absent
// until it is allocated.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <memory>
#include <set>

#include "io/connection.h"
#include "server/client.h"
#include "server/client_registry.h"

namespace ringkv::server {
namespace {

// mimalloc size classes (8, 16, 32, 48, 64, 80, 96, 112, 128, 160, ...): a
// byte more than these and each allocation moves to the next class.
static_assert(sizeof(io::Connection) <= 96, "io::Connection is one 96-byte allocation per connection");
static_assert(sizeof(Client) <= 64, "server::Client is one 64-byte allocation per connection");

TEST(ClientMemoryTest, PlainConnectionHasNoExtras) {
  io::Connection conn;
  EXPECT_EQ(conn.extras(), nullptr);
  EXPECT_EQ(conn.tls(), nullptr);
  EXPECT_EQ(conn.replica(), nullptr);
  EXPECT_EQ(conn.main_out_size(), 0u);
  EXPECT_EQ(conn.main_out_allocated(), 0u);
  EXPECT_EQ(conn.stat_obuf(), 0u);
  EXPECT_EQ(io::QueryBufferSize(conn), 0u);
  EXPECT_EQ(io::QueryBufferCapacity(conn), 0u);
}

TEST(ClientMemoryTest, AccessorsReadTheExtras) {
  io::Connection conn;
  conn.thread = 1;  // another I/O thread's connection: staging buffer and figures
  io::ConnectionExtras& x = conn.mutable_extras();
  EXPECT_EQ(&x, &conn.mutable_extras());  // allocated once
  x.main_out.Append("+OK\r\n");
  x.stat_obuf.store(7, std::memory_order_relaxed);
  x.stat_qbuf.store(3, std::memory_order_relaxed);
  x.stat_qbuf_cap.store(16, std::memory_order_relaxed);
  EXPECT_EQ(conn.extras(), &x);
  EXPECT_EQ(conn.main_out_size(), 5u);
  EXPECT_GT(conn.main_out_allocated(), 0u);
  EXPECT_EQ(conn.stat_obuf(), 7u);
  EXPECT_EQ(io::QueryBufferSize(conn), 3u);
  EXPECT_EQ(io::QueryBufferCapacity(conn), 16u);
  EXPECT_EQ(conn.tls(), nullptr);
  EXPECT_EQ(conn.replica(), nullptr);
  x.replica = std::make_unique<io::ReplicaSend>(nullptr, 42);
  ASSERT_NE(conn.replica(), nullptr);
  EXPECT_EQ(conn.replica()->next, 42u);
}  // the extras are freed with the connection (ASan: no leak)

TEST(ClientMemoryTest, MainThreadConnectionReadsItsPendingInput) {
  io::Connection conn;  // thread 0: no figures published, `pending` read directly
  conn.pending = std::make_unique<io::PendingInput>();
  conn.pending->qbuf.reserve(100);
  conn.pending->qbuf.assign("*1\r\n$4\r\nPI");
  EXPECT_EQ(io::QueryBufferSize(conn), 10u);
  EXPECT_GE(io::QueryBufferCapacity(conn), 100u);
}

TEST(ClientMemoryTest, LocalAddressIsAskedOfTheSocket) {
  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(lfd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(listen(lfd, 1), 0);
  socklen_t len = sizeof(a);
  ASSERT_EQ(getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  int cfd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(cfd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  int sfd = accept(lfd, nullptr, nullptr);
  ASSERT_GE(sfd, 0);
  io::Connection conn;
  conn.fd = sfd;
  const std::string unix_path;
  EXPECT_EQ(io::LocalAddress(conn, &unix_path).ToString(), "127.0.0.1:" + std::to_string(ntohs(a.sin_port)));
  close(sfd);
  close(cfd);
  close(lfd);
  conn.fd = -1;
  EXPECT_EQ(io::LocalAddress(conn, &unix_path).family, 0);  // closed: unknown
}

TEST(ClientMemoryTest, RegistryFindsIteratesAndErasesById) {
  std::vector<std::unique_ptr<io::Connection>> conns;
  ClientRegistry registry;
  for (uint64_t id = 1; id <= 100; ++id) {
    conns.push_back(std::make_unique<io::Connection>());
    conns.back()->id = id * 7;
    auto c = std::make_unique<Client>();
    c->conn = conns.back().get();
    registry.Add(std::move(c));
  }
  EXPECT_EQ(registry.size(), 100u);
  ASSERT_NE(registry.Find(7 * 42), nullptr);
  EXPECT_EQ(registry.Find(7 * 42)->conn, conns[41].get());
  EXPECT_EQ(registry.Find(8), nullptr);
  std::set<uint64_t> seen;
  for (const auto& [id, c] : registry) {
    EXPECT_EQ(id, c->id());
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 100u);
  registry.Erase(7 * 42);
  registry.Erase(8);  // not listed: nothing
  EXPECT_EQ(registry.size(), 99u);
  EXPECT_EQ(registry.Find(7 * 42), nullptr);
  EXPECT_NE(registry.Find(7 * 43), nullptr);
}  // the registry deletes the clients it still lists before their connections go

}  // namespace
}  // namespace ringkv::server

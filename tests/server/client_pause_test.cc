#include "server/client_pause.h"

#include <gtest/gtest.h>

#include "server/monitors.h"

namespace ringkv::server::client_pause_test {
namespace {

struct TestClient {
  explicit TestClient(uint64_t id) {
    conn.id = id;
    client.conn = &conn;
  }
  io::Connection conn;
  Client client;
};

TEST(ClientPauseTest, WriteHoldsWritesAndAllHoldsEverything) {
  ClientPause p;
  EXPECT_FALSE(p.active());
  EXPECT_FALSE(p.Holds(cmd::kWrite));
  p.Pause(1000, /*all=*/false);
  EXPECT_TRUE(p.Holds(cmd::kWrite));
  EXPECT_TRUE(p.Holds(cmd::kMayReplicate));
  EXPECT_FALSE(p.Holds(cmd::kReadonly));
  EXPECT_FALSE(p.paused_all());
  // A later pause extends, never shortens; ALL wins over WRITE.
  p.Pause(500, /*all=*/true);
  EXPECT_EQ(p.until_ms(), 1000);
  EXPECT_TRUE(p.paused_all());
  EXPECT_TRUE(p.Holds(cmd::kReadonly));
  const ClientPause::Window saved = p.window();
  p.End();
  EXPECT_FALSE(p.active());
  p.Restore(saved);
  EXPECT_TRUE(p.paused_all());
}

TEST(ClientPauseTest, HeldClientsAreListedOnceInOrder) {
  ClientPause p;
  TestClient a(1), b(2);
  p.Hold(b.client);
  p.Hold(a.client);
  p.Hold(b.client);
  EXPECT_TRUE(a.client.paused_wait);
  EXPECT_EQ(p.TakeHeld(), (std::vector<uint64_t>{2, 1}));
  EXPECT_TRUE(p.held().empty());
}

TEST(MonitorsTest, AddRemoveAndTheLine) {
  Monitors m;
  TestClient a(7);
  m.Add(a.client);
  m.Add(a.client);
  EXPECT_EQ(m.ids(), (std::vector<uint64_t>{7}));
  m.Remove(a.client);
  EXPECT_TRUE(m.empty());
  EXPECT_FALSE(a.client.monitor);

  Client script;  // no connection: shown as "lua"
  const std::vector<std::string_view> argv{"set", "k\n", "v\x01"};
  EXPECT_EQ(Monitors::Line(script, argv, 1500000123), "+1500.000123 [0 lua] \"set\" \"k\\n\" \"v\\x01\"\r\n");
  const std::vector<std::string_view> auth{"AUTH", "user", "secret"};
  EXPECT_EQ(Monitors::Line(script, auth, 0), "+0.000000 [0 lua] \"AUTH\" \"(redacted)\" \"(redacted)\"\r\n");
}

}  // namespace
}  // namespace ringkv::server::client_pause_test

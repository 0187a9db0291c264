#include "server/shutdown.h"

#include <gtest/gtest.h>

#include <signal.h>

#include <string>
#include <vector>

#include "server/clock.h"
#include "server/config.h"
#include "server/signalled_shutdown.h"
#include "tests/server/fake_server_parts.h"

namespace ringkv::server::shutdown_test {
namespace {

// A fake server: replicas caught up or not, a persistence result, and a log
// of what the shutdown asked for.
class FakeHooks final : public Shutdown::Hooks {
 public:
  bool LoadingDataset() override { return loading; }
  bool ReplicasCaughtUp() override { return caught_up; }
  ClientPause::Window PauseWritesForShutdown() override {
    log.push_back("pause");
    return pause_before;
  }
  void RestorePause(const ClientPause::Window& before) override {
    log.push_back("restore " + std::to_string(before.until_ms));
  }
  void LogReplicasAtShutdown() override { log.push_back("log-replicas"); }
  absl::Status PrepareForShutdown(ShutdownSave save, bool force) override {
    log.push_back(std::string("prepare ") +
                  (save == ShutdownSave::kSave     ? "save"
                   : save == ShutdownSave::kNoSave ? "nosave"
                                                   : "default") +
                  (force ? " force" : ""));
    return prepare_ok ? absl::OkStatus() : absl::InternalError("disk full");
  }
  void FailShutdownWaiters() override { log.push_back("fail-waiters"); }
  void StopAccepting() override { log.push_back("stop-accepting"); }

  std::vector<std::string> TakeLog() { return std::exchange(log, {}); }

  bool loading = false;
  bool caught_up = true;
  bool prepare_ok = true;
  ClientPause::Window pause_before;
  std::vector<std::string> log;
};

using test_fakes::Set;

TEST(ShutdownTest, WithNoLaggingReplicaItSavesAsAskedAndStops) {
  FakeHooks hooks;
  Config config;
  Shutdown shutdown(hooks, config);
  EXPECT_EQ(shutdown.Initiate({.save = ShutdownSave::kNoSave}), Shutdown::Result::kDone);
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"log-replicas", "prepare nosave", "stop-accepting"}));
  EXPECT_TRUE(shutdown.requested());
  EXPECT_TRUE(shutdown.stopping());
  EXPECT_FALSE(shutdown.waiting());
  EXPECT_EQ(shutdown.in_ms(UnixMs()), -1);
}

TEST(ShutdownTest, LaggingReplicasAreWaitedForWithWritesPausedUntilTheyCatchUp) {
  FakeHooks hooks;
  Config config;
  Set(config, "shutdown-timeout", "10");
  Shutdown shutdown(hooks, config);
  hooks.caught_up = false;
  const int64_t before = UnixMs();
  EXPECT_EQ(shutdown.Initiate({.save = ShutdownSave::kSave}), Shutdown::Result::kWaiting);
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"pause"}));
  ASSERT_TRUE(shutdown.waiting());
  EXPECT_FALSE(shutdown.requested());
  const int64_t left = shutdown.in_ms(before);
  EXPECT_GE(left, 10000);
  EXPECT_LE(left, 10000 + (UnixMs() - before));
  // A second SHUTDOWN joins the first, whose options hold.
  EXPECT_EQ(shutdown.Initiate({.save = ShutdownSave::kNoSave}), Shutdown::Result::kWaiting);
  shutdown.Cron(before + 1000);  // still behind, still in time
  EXPECT_TRUE(hooks.TakeLog().empty());
  hooks.caught_up = true;
  shutdown.Cron(before + 2000);
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"log-replicas", "prepare save", "stop-accepting"}));
  EXPECT_TRUE(shutdown.requested());
}

TEST(ShutdownTest, TheTimeoutEndsTheWaitAndNowSkipsIt) {
  FakeHooks hooks;
  Config config;
  Set(config, "shutdown-timeout", "1");
  hooks.caught_up = false;
  {
    Shutdown shutdown(hooks, config);
    ASSERT_EQ(shutdown.Initiate({}), Shutdown::Result::kWaiting);
    shutdown.Cron(UnixMs() + 5000);  // past the deadline: lagging or not
    EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"pause", "log-replicas", "prepare default", "stop-accepting"}));
    EXPECT_TRUE(shutdown.requested());
  }
  {
    Shutdown shutdown(hooks, config);
    EXPECT_EQ(shutdown.Initiate({.now = true, .force = true}), Shutdown::Result::kDone);
    EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"log-replicas", "prepare default force", "stop-accepting"}));
  }
  {
    Set(config, "shutdown-timeout", "0");  // 0: never wait
    Shutdown shutdown(hooks, config);
    EXPECT_EQ(shutdown.Initiate({}), Shutdown::Result::kDone);
    EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"log-replicas", "prepare default", "stop-accepting"}));
  }
}

TEST(ShutdownTest, AFailedSaveCancelsAndTellsTheWaiters) {
  FakeHooks hooks;
  Config config;
  Set(config, "shutdown-timeout", "10");
  Shutdown shutdown(hooks, config);
  hooks.caught_up = false;
  hooks.prepare_ok = false;
  hooks.pause_before.until_ms = 1234;  // a CLIENT PAUSE from before
  ASSERT_EQ(shutdown.Initiate({}), Shutdown::Result::kWaiting);
  hooks.caught_up = true;
  shutdown.Cron(UnixMs());
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"pause", "log-replicas", "prepare default",
                                                        "fail-waiters", "restore 1234"}));
  EXPECT_FALSE(shutdown.requested());
  EXPECT_FALSE(shutdown.waiting());
  // Without a wait, a failure restores no pause.
  EXPECT_EQ(shutdown.Initiate({}), Shutdown::Result::kFailed);
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"log-replicas", "prepare default", "fail-waiters"}));
}

TEST(ShutdownTest, AbortCancelsAWaitOrAPendingSignalAndOtherwiseFails) {
  FakeHooks hooks;
  Config config;
  Set(config, "shutdown-timeout", "10");
  Shutdown shutdown(hooks, config);
  EXPECT_FALSE(shutdown.Abort());  // nothing in progress
  hooks.caught_up = false;
  ASSERT_EQ(shutdown.Initiate({}), Shutdown::Result::kWaiting);
  EXPECT_TRUE(shutdown.Abort());
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"pause", "fail-waiters", "restore 0"}));
  EXPECT_FALSE(shutdown.waiting());
  shutdown.Signal(SIGTERM);
  EXPECT_TRUE(shutdown.signal_pending());
  EXPECT_TRUE(shutdown.stopping());  // a start-up load would stop
  EXPECT_TRUE(shutdown.Abort());     // not acted on yet: forgotten
  EXPECT_FALSE(shutdown.signal_pending());
  EXPECT_TRUE(hooks.TakeLog().empty());
}

TEST(ShutdownTest, ASignalShutsDownWithTheConfiguredOptions) {
  FakeHooks hooks;
  Config config;
  Set(config, "shutdown-on-sigterm", "nosave now");
  Set(config, "shutdown-timeout", "10");
  Shutdown shutdown(hooks, config);
  hooks.caught_up = false;  // NOW: not waited for
  shutdown.Signal(SIGTERM);
  shutdown.HandleSignal();
  EXPECT_FALSE(shutdown.signal_pending());
  EXPECT_TRUE(SignalledShutdownUnderWay());  // a second SIGINT would exit at once
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"log-replicas", "prepare nosave", "stop-accepting"}));
  EXPECT_TRUE(shutdown.requested());
  SetSignalledShutdown(false);
}

TEST(ShutdownTest, ALoadingServerNeverSaves) {
  FakeHooks hooks;
  Config config;
  Shutdown shutdown(hooks, config);
  hooks.loading = true;
  EXPECT_EQ(shutdown.Initiate({.save = ShutdownSave::kSave}), Shutdown::Result::kDone);
  EXPECT_EQ(hooks.TakeLog(), (std::vector<std::string>{"log-replicas", "prepare nosave", "stop-accepting"}));
}

TEST(ShutdownTest, SignalFlagsParseTheConfiguredWords) {
  const ShutdownFlags d = SignalShutdownFlags("default");
  EXPECT_EQ(d.save, ShutdownSave::kDefault);
  EXPECT_FALSE(d.now);
  const ShutdownFlags f = SignalShutdownFlags("save now force");
  EXPECT_EQ(f.save, ShutdownSave::kSave);
  EXPECT_TRUE(f.now);
  EXPECT_TRUE(f.force);
}

}  // namespace
}  // namespace ringkv::server::shutdown_test

// ScriptingSide (server/scripting/scripting_side.h) driven through a fake
// server: nothing is made before a script command or a library to load,
// the FUNCTION libraries a snapshot carries and loads (each mode, all or
// nothing), redis.call and redis.acl_check_cmd reaching the server only
// through the hooks, and a script past busy-reply-threshold making the
// side busy and serving the other clients. No socket, no Server.
#include "server/scripting/scripting_side.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/clock.h"
#include "server/command_table.h"
#include "server/config.h"
#include "server/scripting/scripting.h"

namespace ringkv::server::scripting::scripting_side_test {
namespace {

std::string Library(std::string_view name, std::string_view function) {
  return "#!lua name=" + std::string(name) + "\nredis.register_function('" + std::string(function) +
         "', function() return 1 end)";
}

// A log of what scripting asked of the server.
class FakeServer final : public ScriptingSide::Hooks {
 public:
  void RunScriptCommand(Client& script_client, ScriptRun& run, const CommandSpec* command, ScriptingSide::Argv argv,
                        io::OutBuffer& out) override {
    log.push_back("call " + std::string(argv[0]) + (command != nullptr ? " (" + command->name + ")" : " (unknown)") +
                  (script_client.is_script ? " as script" : "") + " resp " + std::to_string(run.resp));
    out.Append("+OK\r\n");
  }
  void BeginScriptPropagation() override { log.push_back("begin"); }
  void EndScriptPropagation(bool discard) override { log.push_back(discard ? "end discard" : "end"); }
  bool ClusterEnabled() override { return false; }
  bool OomAtCommandStart() override { return false; }
  bool CallerMayRun(const CommandSpec& spec, ScriptingSide::Argv) override {
    log.push_back("acl " + spec.name);
    return caller_may_run;
  }
  void ServeWhileBusy() override { log.push_back("serve"); }

  std::vector<std::string> TakeLog() { return std::exchange(log, {}); }

  std::vector<std::string> log;
  bool caller_may_run = true;
};

class ScriptingSideTest : public ::testing::Test {
 protected:
  ScriptingSideTest() { RegisterAllCommands(commands_); }

  FakeServer server_;
  Config config_;
  Clock clock_;
  CommandTable commands_;
  ScriptingSide side_{server_, config_, clock_, commands_};
};

TEST_F(ScriptingSideTest, NothingIsMadeBeforeAScriptOrALibrary) {
  EXPECT_FALSE(side_);
  EXPECT_EQ(side_.get(), nullptr);
  EXPECT_FALSE(side_.busy());
  // A snapshot without libraries loaded into a server without any: nothing.
  EXPECT_TRUE(side_.FunctionLibraryCodes().empty());
  EXPECT_TRUE(side_.LoadFunctionLibraries({}).ok());
  EXPECT_TRUE(side_.LoadFunctionLibraries({}, ScriptingSide::FunctionLoadMode::kAddOnly).ok());
  EXPECT_FALSE(side_);
  Scripting& made = side_.Ensure();
  EXPECT_TRUE(side_);
  EXPECT_EQ(&side_.Ensure(), &made);
  EXPECT_EQ(side_.operator->(), &made);
  EXPECT_TRUE(server_.TakeLog().empty());
}

TEST_F(ScriptingSideTest, SnapshotLibrariesLoadAllOrNothing) {
  ASSERT_TRUE(side_.LoadFunctionLibraries({Library("a", "fa"), Library("b", "fb")}).ok());
  ASSERT_TRUE(side_);
  EXPECT_EQ(side_.FunctionLibraryCodes(), (std::vector<std::string>{Library("a", "fa"), Library("b", "fb")}));

  // A full load replaces every library.
  ASSERT_TRUE(side_.LoadFunctionLibraries({Library("c", "fc")}).ok());
  EXPECT_EQ(side_.FunctionLibraryCodes(), std::vector<std::string>{Library("c", "fc")});

  // NOFLUSH: a library of the same name is an error, and nothing changed.
  absl::Status clash =
      side_.LoadFunctionLibraries({Library("d", "fd"), Library("c", "fc2")}, ScriptingSide::FunctionLoadMode::kAddOnly);
  EXPECT_TRUE(absl::IsDataLoss(clash)) << clash;
  EXPECT_EQ(side_.FunctionLibraryCodes(), std::vector<std::string>{Library("c", "fc")});

  // MERGE: it replaces the one of the same name, keeps the others.
  const auto merge = ScriptingSide::FunctionLoadMode::kReplaceSame;
  ASSERT_TRUE(side_.LoadFunctionLibraries({Library("c", "fc2"), Library("d", "fd")}, merge).ok());
  EXPECT_EQ(side_.FunctionLibraryCodes(), (std::vector<std::string>{Library("c", "fc2"), Library("d", "fd")}));

  // A bad library fails a full load: the ones before it are kept.
  EXPECT_FALSE(side_.LoadFunctionLibraries({Library("e", "fe"), "#!lua name=f\nnot lua"}).ok());
  EXPECT_EQ(side_.FunctionLibraryCodes(), (std::vector<std::string>{Library("c", "fc2"), Library("d", "fd")}));

  // An empty full load (a snapshot without libraries) flushes them.
  ASSERT_TRUE(side_.LoadFunctionLibraries({}).ok());
  EXPECT_TRUE(side_.FunctionLibraryCodes().empty());
}

TEST_F(ScriptingSideTest, ScriptCommandsReachTheServerThroughTheHooks) {
  Scripting& s = side_.Ensure();
  ScriptRun run;
  run.resp = 3;
  std::string_view argv[] = {"set", "k", "v"};
  io::OutBuffer out;
  s.Call(run, s.FindCommand(argv[0]), argv, out);
  std::string_view unknown_call[] = {"nosuchcommand", "k"};
  s.Call(run, s.FindCommand(unknown_call[0]), unknown_call, out);
  EXPECT_EQ(server_.TakeLog(),
            (std::vector<std::string>{"call set (set) as script resp 3", "call nosuchcommand (unknown) as script resp 3"}));
  // Any case names the same command.
  ASSERT_NE(s.FindCommand("set"), nullptr);
  EXPECT_EQ(s.FindCommand("SeT"), s.FindCommand("set"));
  EXPECT_EQ(s.FindCommand("nosuchcommand"), nullptr);

  // redis.acl_check_cmd: the caller's ACL, for a command that exists.
  bool allowed = false;
  EXPECT_TRUE(s.AclCheckCmd(argv, &allowed));
  EXPECT_TRUE(allowed);
  server_.caller_may_run = false;
  EXPECT_TRUE(s.AclCheckCmd(argv, &allowed));
  EXPECT_FALSE(allowed);
  std::string_view unknown[] = {"nosuchcommand"};
  EXPECT_FALSE(s.AclCheckCmd(unknown, &allowed));
  EXPECT_EQ(server_.TakeLog(), (std::vector<std::string>{"acl set", "acl set"}));
}

TEST_F(ScriptingSideTest, AScriptPastTheBusyThresholdMakesTheSideBusy) {
  Scripting& s = side_.Ensure();
  ScriptRun run;
  run.name = "f";
  run.start_ticks = Clock::Ticks();
  // Under busy-reply-threshold: nothing happens.
  ASSERT_TRUE(config_.SetValue("busy-reply-threshold", {"100000"}).ok());
  EXPECT_FALSE(s.OnScriptHook(run));
  EXPECT_FALSE(side_.busy());
  EXPECT_TRUE(server_.TakeLog().empty());
  // Past it: busy, and the other clients are served at every hook.
  ASSERT_TRUE(config_.SetValue("busy-reply-threshold", {"0"}).ok());
  EXPECT_FALSE(s.OnScriptHook(run));
  EXPECT_TRUE(side_.busy());
  EXPECT_TRUE(run.timed_out);
  EXPECT_FALSE(s.OnScriptHook(run));
  EXPECT_EQ(server_.TakeLog(), (std::vector<std::string>{"serve", "serve"}));
  // A killed script stops at its next hook.
  run.killed = true;
  EXPECT_TRUE(s.OnScriptHook(run));
  // SCRIPT KILL with no script running (this one was never started by EVAL).
  EXPECT_EQ(s.Kill(false), "NOTBUSY No scripts in execution right now.");
}

TEST_F(ScriptingSideTest, DenyScriptsSwitch) {
  EXPECT_FALSE(side_.noscript_allowed());
  side_.set_noscript_allowed(true);
  EXPECT_TRUE(side_.noscript_allowed());
  EXPECT_FALSE(side_);
}

}  // namespace
}  // namespace ringkv::server::scripting::scripting_side_test

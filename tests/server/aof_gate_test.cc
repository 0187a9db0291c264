// The command gate run without a connection: a whole Server, in process, no
// socket, replays an AOF through DEBUG LOADAOF (Server::ExecuteFromAof on its
// fake client). The file's commands pass the gate's lookup and arity, with
// Redis's load errors, and are otherwise obeyed -- no OOM, NOREPLICAS or
// LOADING refusal -- and run as Redis's loader runs them: no commandstats,
// nothing dirty, no expiry while loading; MULTI blocks apply whole, and one
// cut off at the end of the file is dropped.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/config.h"
#include "server/server.h"
#include "tests/server/fake_server_parts.h"

namespace ringkv::server {
namespace {

using test_fakes::Resp;

class AofGateTest : public ::testing::Test {
 protected:
  // The AOF directory is relative to the working directory (appenddirname),
  // as the server's is to `dir`: each test works in a directory of its own.
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(dir_.Enter("ringkv-aof-gate-test-"));
    std::filesystem::create_directory("appendonlydir");
  }

  // The server, made after the settings the test wants (its constructor
  // binds them).
  Server& MakeServer(const std::vector<std::pair<std::string, std::string>>& settings = {}) {
    auto config = std::make_unique<Config>();
    for (const auto& [name, value] : settings) EXPECT_TRUE(config->SetValue(name, {value}).ok()) << name;
    server_ = std::make_unique<Server>(std::move(config));
    return *server_;
  }

  // A manifest naming one incremental file holding `body`.
  void WriteAof(const std::string& body) {
    std::ofstream("appendonlydir/appendonly.aof.manifest") << "file appendonly.aof.1.incr.aof seq 1 type i\n";
    std::ofstream("appendonlydir/appendonly.aof.1.incr.aof", std::ios::binary) << body;
  }

  std::string Get(int db, std::string_view key) {
    core::Entry* e = server_->keyspace().db(db).Peek(key);
    if (e == nullptr) return "(nil)";
    return e->value.str().ToString();
  }

  const CommandSpec& Spec(std::string_view name) { return *server_->commands().Find(name); }

  test_fakes::TempWorkingDir dir_;  // left after the server is gone
  std::unique_ptr<Server> server_;
};

TEST_F(AofGateTest, ReplaysThroughTheGateWithoutCountingOrDirtying) {
  Server& s = MakeServer();
  WriteAof(Resp({"SET", "a", "1"}) + Resp({"select", "1"}) + Resp({"SET", "b", "2"}) +
           Resp({"HSET", "h", "f", "v"}) + Resp({"XADD", "s", "1-1", "f", "v"}) +
           Resp({"XGROUP", "CREATE", "s", "g", "0"}));  // a container's subcommand
  ASSERT_TRUE(s.loading().DebugLoadAof().ok());
  EXPECT_EQ(Get(0, "a"), "1");
  EXPECT_EQ(Get(1, "b"), "2");  // SELECT moved the fake client
  EXPECT_NE(s.keyspace().db(1).Peek("h"), nullptr);
  // As Redis's loader (cmd->proc, not call()): no commandstats, no
  // command counted, nothing left to save or propagate.
  EXPECT_EQ(Spec("set").calls, 0u);
  EXPECT_EQ(Spec("hset").calls, 0u);
  EXPECT_NE(s.keyspace().db(1).Peek("s"), nullptr);
  EXPECT_EQ(s.stats().total_commands, 0u);
  EXPECT_EQ(s.stats().dirty, 0u);
}

TEST_F(AofGateTest, TheFileIsObeyed) {
  // A normal client would get OOM (maxmemory 1, noeviction) and NOREPLICAS
  // (no replica for min-replicas-to-write), and LOADING while DEBUG LOADAOF
  // loads: the file is applied all the same.
  Server& s = MakeServer({{"maxmemory", "1"}, {"maxmemory-policy", "noeviction"}, {"min-replicas-to-write", "1"}});
  WriteAof(Resp({"SET", "k", "v"}) + Resp({"RPUSH", "l", "x", "y"}));
  ASSERT_TRUE(s.loading().DebugLoadAof().ok());
  EXPECT_EQ(Get(0, "k"), "v");
  EXPECT_NE(s.keyspace().db(0).Peek("l"), nullptr);
  EXPECT_EQ(Spec("set").rejected_calls, 0u);
}

TEST_F(AofGateTest, NothingExpiresWhileLoading) {
  // The deadline passed long ago: the file's APPEND still finds the key, as
  // it did when the file was written.
  Server& s = MakeServer();
  WriteAof(Resp({"SET", "a", "1"}) + Resp({"PEXPIREAT", "a", "1"}) + Resp({"APPEND", "a", "2"}));
  ASSERT_TRUE(s.loading().DebugLoadAof().ok());
  EXPECT_EQ(Get(0, "a"), "12");
}

TEST_F(AofGateTest, ErrorsInRepliesDoNotStopTheLoad) {
  Server& s = MakeServer();
  WriteAof(Resp({"SET", "a", "1"}) + Resp({"LPUSH", "a", "x"}) + Resp({"SET", "b", "2"}));
  ASSERT_TRUE(s.loading().DebugLoadAof().ok());
  EXPECT_EQ(Get(0, "b"), "2");
  EXPECT_EQ(s.stats().total_error_replies, 1u);
  EXPECT_EQ(s.stats().unexpected_error_replies, 1u);
}

TEST_F(AofGateTest, MultiBlocksApplyWholeAndACutOffOneIsDropped) {
  Server& s = MakeServer({{"aof-load-truncated", "yes"}});
  const std::string done = Resp({"MULTI"}) + Resp({"SET", "t", "1"}) + Resp({"INCR", "t"}) + Resp({"EXEC"});
  WriteAof(done + Resp({"MULTI"}) + Resp({"SET", "u", "1"}));
  ASSERT_TRUE(s.loading().DebugLoadAof().ok());
  EXPECT_EQ(Get(0, "t"), "2");
  EXPECT_EQ(Get(0, "u"), "(nil)");
  EXPECT_EQ(std::filesystem::file_size("appendonlydir/appendonly.aof.1.incr.aof"), done.size());
  EXPECT_EQ(Spec("exec").calls, 0u);
}

// The gate's lookup refuses with Redis's load error, its arity check (ringkv's
// own: Redis's loader has none) with a load error too; DEBUG LOADAOF
// then keeps the data it had. Nothing is counted as rejected.
TEST_F(AofGateTest, LookUpAndArityRefuseWithLoadErrors) {
  Server& s = MakeServer();
  struct Case {
    std::vector<std::string> argv;
    std::string error;
  };
  const Case cases[] = {
      {{"NOSUCH", "x"}, "Unknown command 'NOSUCH'"},
      {{"CONFIG", "NOSUCH"}, "Unknown command 'CONFIG'"},  // unknown subcommand
      {{"CONFIG"}, "Unknown command 'CONFIG'"},            // a container alone
      {{"GET"}, "Wrong number of arguments for 'get'"},
      {{"CONFIG", "GET"}, "Wrong number of arguments for 'config|get'"},
  };
  for (const Case& c : cases) {
    WriteAof(Resp({"SET", "a", "1"}) + Resp(c.argv) + Resp({"SET", "b", "2"}));
    absl::Status st = s.loading().DebugLoadAof();
    EXPECT_TRUE(absl::IsDataLoss(st)) << st;
    EXPECT_EQ(st.message(), c.error + " reading the append only file appendonly.aof.1.incr.aof");
    EXPECT_EQ(Get(0, "a"), "(nil)");  // the data before the load
  }
  EXPECT_EQ(Spec("get").rejected_calls, 0u);
  EXPECT_EQ(Spec("config").rejected_calls, 0u);
  // Inside a MULTI block too.
  WriteAof(Resp({"MULTI"}) + Resp({"NOSUCH"}) + Resp({"EXEC"}));
  EXPECT_EQ(s.loading().DebugLoadAof().message(), "Unknown command 'NOSUCH' reading the append only file appendonly.aof.1.incr.aof");
}

// As Redis's loader: EXEC without MULTI runs as a command, whose error reply
// is counted (and logged) and the load goes on; a MULTI inside a block is
// queued and answers "nested" when the block runs, on a client still in
// MULTI; the block's other commands apply.
TEST_F(AofGateTest, ExecWithoutMultiAndNestedMultiAnswerErrorsAndTheLoadGoesOn) {
  Server& s = MakeServer();
  WriteAof(Resp({"EXEC"}) + Resp({"SET", "a", "1"}) + Resp({"MULTI"}) + Resp({"SET", "b", "1"}) + Resp({"MULTI"}) +
           Resp({"WATCH", "a"}) + Resp({"INCR", "b"}) + Resp({"EXEC"}) + Resp({"SET", "c", "1"}));
  ASSERT_TRUE(s.loading().DebugLoadAof().ok());
  EXPECT_EQ(Get(0, "a"), "1");
  EXPECT_EQ(Get(0, "b"), "2");
  EXPECT_EQ(Get(0, "c"), "1");
  // EXEC without MULTI, MULTI calls can not be nested, WATCH inside MULTI.
  EXPECT_EQ(s.stats().unexpected_error_replies, 3u);
  std::string errorstats;
  s.error_stats().AppendInfo(&errorstats);
  EXPECT_EQ(errorstats, "errorstat_ERR:count=3\r\n");
  EXPECT_TRUE(s.transactions().watched().empty());  // the refused WATCH watches nothing
}

// Each file is replayed as by a new client, in database 0, as Redis makes
// its fake client per file: a SELECT in one file does not carry into the
// next.
TEST_F(AofGateTest, EachFileStartsInDatabaseZero) {
  Server& s = MakeServer();
  std::ofstream("appendonlydir/appendonly.aof.manifest")
      << "file appendonly.aof.1.incr.aof seq 1 type i\nfile appendonly.aof.2.incr.aof seq 2 type i\n";
  std::ofstream("appendonlydir/appendonly.aof.1.incr.aof", std::ios::binary)
      << Resp({"SELECT", "3"}) + Resp({"SET", "a", "1"});
  std::ofstream("appendonlydir/appendonly.aof.2.incr.aof", std::ios::binary) << Resp({"SET", "b", "2"});
  ASSERT_TRUE(s.loading().DebugLoadAof().ok());
  EXPECT_EQ(Get(3, "a"), "1");
  EXPECT_EQ(Get(0, "b"), "2");
  EXPECT_EQ(Get(3, "b"), "(nil)");
}

}  // namespace
}  // namespace ringkv::server

// Scripting end to end: a script past busy-reply-threshold while other
// clients get -BUSY (SCRIPT KILL, FUNCTION KILL, UNKILLABLE, SHUTDOWN NOSAVE),
// script effects replicated as MULTI/EXEC to ringkv and redis-server
// replicas (same DEBUG DIGEST), redis.set_repl, and functions kept by RDB
// and AOF files, moved both ways between ringkv and redis-server.
#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/persistence_test_util.h"

namespace ringkv::testing::scripting_e2e_test {
namespace {

const char* kRedis = "/usr/bin/redis-server";


// Waits until PING from `c` answers with a reply starting with `prefix`.
bool WaitPing(RawConn& c, const std::string& prefix, int timeout_ms = 5000) {
  for (int i = 0; i < timeout_ms / 10; ++i) {
    if (Call(c, {"PING"}).rfind(prefix, 0) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

bool WaitLinkUp(RawConn& replica, int timeout_ms = 10000) {
  return WaitInfo(replica, "master_link_status", "up", timeout_ms, "replication");
}

// EVALSHA's sha is found once per call and remembered for the run: the
// memory must not outlive SCRIPT FLUSH or the cache growing (its entries move).
// Function names match in any case, as in Redis; a name longer than the
// lookup's stack buffer is found too.
TEST(ScriptingE2E, FcallFindsFunctionsInAnyCase) {
  TestServer server({"--save", ""});
  ASSERT_TRUE(server.ready());
  RawConn c(server.port());
  const std::string long_name(100, 'f');
  ASSERT_EQ(Call(c, {"FUNCTION", "LOAD",
                     "#!lua name=cases\nredis.register_function('Bump', function(keys, args) return 5 end)\n"
                     "redis.register_function('" + long_name + "', function(keys, args) return 6 end)"}),
            "$5\r\ncases\r\n");
  EXPECT_EQ(Call(c, {"FCALL", "bump", "0"}), ":5\r\n");
  EXPECT_EQ(Call(c, {"FCALL", "BUMP", "0"}), ":5\r\n");
  EXPECT_EQ(Call(c, {"FCALL_RO", "bUmP", "0"}), "-ERR Can not execute a script with write flag using *_ro command.\r\n");
  EXPECT_EQ(Call(c, {"FCALL", std::string(100, 'F'), "0"}), ":6\r\n");
  EXPECT_EQ(Call(c, {"FCALL", "bump2", "0"}), "-ERR Function not found\r\n");
}

// redis.call's status and error replies become tables made with room for
// their fields (no growth on the first key): they must hold exactly what
// Redis's hold, grow like any table when a script adds to them, and the
// calls must be counted in INFO commandstats as before.
TEST(ScriptingE2E, ReplyTablesHoldTheirFieldsAndCallsAreCounted) {
  TestServer server({"--save", ""});
  ASSERT_TRUE(server.ready());
  RawConn c(server.port());
  const std::string script =
      "local function n(t) local c = 0 for _ in pairs(t) do c = c + 1 end return c end\n"
      "local s = redis.call('SET', KEYS[1], 'v')\n"
      "local e = redis.pcall('INCR', KEYS[1])\n"
      "local r = redis.error_reply('boom')\n"
      "local sizes = {n(s), n(e), n(r)}\n"
      "s.extra = 1; s[1] = 2; e[1] = 3\n"
      "return {s['ok'], e['err'], tostring(e['ignore_error_stats_update']), r['err'],\n"
      "        sizes[1], sizes[2], sizes[3], n(s), n(e), s[1], e[1]}";
  EXPECT_EQ(Call(c, {"EVAL", script, "1", "k"}),
            "*11\r\n$2\r\nOK\r\n$43\r\nERR value is not an integer or out of range\r\n$4\r\ntrue\r\n"
            "$8\r\nERR boom\r\n:1\r\n:2\r\n:1\r\n:3\r\n:3\r\n:2\r\n:3\r\n");
  const std::string stats = Call(c, {"INFO", "commandstats"});
  EXPECT_NE(stats.find("cmdstat_set:calls=1,"), std::string::npos) << stats;
  EXPECT_NE(stats.find("cmdstat_incr:calls=1,"), std::string::npos) << stats;
  EXPECT_NE(stats.find("rejected_calls=0,failed_calls=1"), std::string::npos) << stats;
  EXPECT_NE(stats.find("cmdstat_eval:calls=1,"), std::string::npos) << stats;
}

// redis.call's command lookup: names in any case, an unknown name, a
// subcommand, and names built at run time whose strings are collected
// between calls (an address may come back holding another name: a cache by
// address, tried in docs/performance.md 22.2, must not be fooled) each find
// their command and are counted as it, as in Redis 7.0.
TEST(ScriptingE2E, RedisCallFindsTheNamedCommandWhereverItsNameLies) {
  TestServer server({"--save", ""});
  ASSERT_TRUE(server.ready());
  RawConn c(server.port());
  const std::string script =
      "redis.call('set', KEYS[1], '1')\n"
      "local a = redis.call('GET', KEYS[1])\n"
      "local b = redis.call('gEt', KEYS[1])\n"
      "local u = redis.pcall('nosuchcmd')\n"
      "local c = redis.call('incr', KEYS[1])\n"
      "local got\n"
      "for i = 1, 50 do\n"
      "  local get = string.char(103, 101, 116)\n"
      "  local del = string.char(100, 101, 108)\n"
      "  got = redis.call(get, KEYS[1])\n"
      "  get = nil\n"
      "  collectgarbage('collect')\n"
      "  redis.call(del, KEYS[2])\n"
      "  del = nil\n"
      "  collectgarbage('collect')\n"
      "end\n"
      "local enc = redis.call('OBJECT', 'ENCODING', KEYS[1])\n"
      "return {a, b, u['err'], c, got, redis.call('exists', KEYS[2]), enc}";
  EXPECT_EQ(Call(c, {"EVAL", script, "2", "k", "j"}),
            "*7\r\n$1\r\n1\r\n$1\r\n1\r\n$44\r\nERR Unknown Redis command called from script\r\n:2\r\n"
            "$1\r\n2\r\n:0\r\n$3\r\nint\r\n");
  const std::string stats = Call(c, {"INFO", "commandstats"});
  EXPECT_NE(stats.find("cmdstat_get:calls=52,"), std::string::npos) << stats;
  EXPECT_NE(stats.find("cmdstat_del:calls=50,"), std::string::npos) << stats;
  EXPECT_NE(stats.find("cmdstat_object|encoding:calls=1,"), std::string::npos) << stats;
  EXPECT_NE(stats.find("cmdstat_exists:calls=1,"), std::string::npos) << stats;
}

// redis.call keeps the command of each name by the address of the name's Lua
// string (LuaEngine::CommandNamed, 64 slots). Hundreds of distinct names
// (case variants) replace each other in the slots while the collector frees
// the names no slot holds; a call from a coroutine (another Lua stack) and a
// number as the name go the same way. Every call must reach the command its
// name spells.
TEST(ScriptingE2E, RedisCallNameCacheSurvivesSlotReuseCoroutinesAndNumbers) {
  TestServer server({"--save", ""});
  ASSERT_TRUE(server.ready());
  RawConn c(server.port());
  const std::string script =
      "local function variant(name, mask)\n"
      "  local out = {}\n"
      "  for i = 1, #name do\n"
      "    local ch = string.sub(name, i, i)\n"
      "    if math.floor(mask / 2 ^ (i - 1)) % 2 == 1 then ch = string.upper(ch) end\n"
      "    out[i] = ch\n"
      "  end\n"
      "  return table.concat(out)\n"
      "end\n"
      "local n = 0\n"
      "for mask = 0, 255 do\n"
      "  redis.call(variant('incr', mask % 16), KEYS[1])\n"
      "  n = n + 1\n"
      "  local e = redis.call(variant('exists', mask % 64), KEYS[1])\n"
      "  if e ~= 1 then return 'exists answered ' .. tostring(e) end\n"
      "  local t = redis.call(variant('type', mask % 16), KEYS[1])\n"
      "  if t['ok'] ~= 'string' then return 'type answered ' .. tostring(t['ok']) end\n"
      "  if mask % 7 == 0 then collectgarbage('collect') end\n"
      "end\n"
      "local co = coroutine.wrap(function() return redis.call(variant('incr', 5), KEYS[1]) end)\n"
      "local from_co = co()\n"
      "local num = redis.pcall(42)\n"
      "return {n, redis.call('get', KEYS[1]), from_co, num['err']}";
  EXPECT_EQ(Call(c, {"EVAL", script, "1", "counter"}),
            "*4\r\n:256\r\n$3\r\n257\r\n:257\r\n$44\r\nERR Unknown Redis command called from script\r\n");
  const std::string stats = Call(c, {"INFO", "commandstats"});
  EXPECT_NE(stats.find("cmdstat_incr:calls=257,"), std::string::npos) << stats;
  EXPECT_NE(stats.find("cmdstat_exists:calls=256,"), std::string::npos) << stats;
  EXPECT_NE(stats.find("cmdstat_type:calls=256,"), std::string::npos) << stats;
}

// FCALL remembers the function it found last: that must not outlive a
// library replaced, deleted, restored or flushed (the table's entries move
// or go), nor a load that grows the table.
TEST(ScriptingE2E, FcallFindsTheRightFunctionAcrossReplaceDeleteRestoreAndFlush) {
  TestServer server({"--save", ""});
  ASSERT_TRUE(server.ready());
  RawConn c(server.port());
  auto lib = [](const std::string& name, const std::string& fn, int value) {
    return "#!lua name=" + name + "\nredis.register_function('" + fn + "', function(keys, args) return " +
           std::to_string(value) + " end)";
  };
  ASSERT_EQ(Call(c, {"FUNCTION", "LOAD", lib("l1", "f1", 1)}), "$2\r\nl1\r\n");
  EXPECT_EQ(Call(c, {"FCALL", "f1", "0"}), ":1\r\n");
  ASSERT_EQ(Call(c, {"FUNCTION", "LOAD", "REPLACE", lib("l1", "f1", 2)}), "$2\r\nl1\r\n");
  EXPECT_EQ(Call(c, {"FCALL", "f1", "0"}), ":2\r\n");
  // Many more functions: the table grows (and moves its entries).
  for (int i = 0; i < 64; ++i) {
    const std::string n = std::to_string(i);
    ASSERT_EQ(Call(c, {"FUNCTION", "LOAD", lib("g" + n, "g" + n, i)}).rfind("$", 0), 0u);
  }
  EXPECT_EQ(Call(c, {"FCALL", "f1", "0"}), ":2\r\n");
  EXPECT_EQ(Call(c, {"FCALL", "g63", "0"}), ":63\r\n");
  const std::string dump = Call(c, {"FUNCTION", "DUMP"});
  ASSERT_EQ(Call(c, {"FUNCTION", "DELETE", "l1"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"FCALL", "f1", "0"}), "-ERR Function not found\r\n");
  ASSERT_EQ(Call(c, {"FUNCTION", "RESTORE", BulkPayload(dump), "FLUSH"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"FCALL", "f1", "0"}), ":2\r\n");
  ASSERT_EQ(Call(c, {"FUNCTION", "FLUSH"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"FCALL", "f1", "0"}), "-ERR Function not found\r\n");
  ASSERT_EQ(Call(c, {"FUNCTION", "LOAD", lib("l1", "f1", 3)}), "$2\r\nl1\r\n");
  EXPECT_EQ(Call(c, {"FCALL", "f1", "0"}), ":3\r\n");
}

TEST(ScriptingE2E, EvalshaFindsTheRightScriptAcrossLoadsAndFlush) {
  TestServer server({"--save", ""});
  ASSERT_TRUE(server.ready());
  RawConn c(server.port());
  const std::string sha_line = Call(c, {"SCRIPT", "LOAD", "return 'first'"});
  ASSERT_EQ(sha_line.size(), 1 + 40 + 2 + 4u) << sha_line;  // $40\r\n<sha>\r\n
  const std::string sha = sha_line.substr(5, 40);
  EXPECT_EQ(Call(c, {"EVALSHA", sha, "0"}), "$5\r\nfirst\r\n");
  for (int i = 0; i < 300; ++i) Call(c, {"SCRIPT", "LOAD", "return " + std::to_string(i)});
  EXPECT_EQ(Call(c, {"EVALSHA", sha, "0"}), "$5\r\nfirst\r\n");
  std::string upper = sha;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  EXPECT_EQ(Call(c, {"EVALSHA", upper, "0"}), "$5\r\nfirst\r\n");
  const std::string other = Call(c, {"SCRIPT", "LOAD", "return 'second'"}).substr(5, 40);
  EXPECT_EQ(Call(c, {"EVALSHA", other, "0"}), "$6\r\nsecond\r\n");
  EXPECT_EQ(Call(c, {"EVALSHA", sha, "0"}), "$5\r\nfirst\r\n");
  EXPECT_EQ(Call(c, {"SCRIPT", "FLUSH"}), "+OK\r\n");
  EXPECT_EQ(Call(c, {"EVALSHA", sha, "0"}), "-NOSCRIPT No matching script. Please use EVAL.\r\n");
  EXPECT_EQ(Call(c, {"EVALSHA", other, "0"}), "-NOSCRIPT No matching script. Please use EVAL.\r\n");
}

TEST(ScriptingE2E, BusyScriptAnswersBusyThenScriptKill) {
  TestServer server({"--save", "", "--busy-reply-threshold", "50"});
  ASSERT_TRUE(server.ready());
  RawConn runner(server.port()), other(server.port());
  // The script and a PING behind it in the same batch: the PING is answered
  // after the script's error, in order.
  ASSERT_TRUE(runner.Send(Resp({"EVAL", "local i = 0 while true do i = i + 1 end", "0"}) + Resp({"PING"})));
  ASSERT_TRUE(WaitPing(other, "-BUSY"));
  EXPECT_EQ(Call(other, {"PING"}),
            "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n");
  EXPECT_EQ(Call(other, {"FUNCTION", "KILL"}),
            "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n");
  EXPECT_EQ(Call(other, {"SCRIPT", "KILL"}), "+OK\r\n");
  const std::string killed = runner.ReadReply();
  EXPECT_EQ(killed.rfind("-ERR Script killed by user with SCRIPT KILL...", 0), 0u) << killed;
  EXPECT_EQ(runner.ReadReply(), "+PONG\r\n");
  EXPECT_EQ(Call(other, {"PING"}), "+PONG\r\n");
  EXPECT_EQ(Call(other, {"SCRIPT", "KILL"}), "-NOTBUSY No scripts in execution right now.\r\n");
}

// Two clients' long scripts run one after the other in one loop turn: both
// were pipelined behind a BLPOP whose deadline passed at the same time, so
// one timer resumes both. The first client sends more while its script runs;
// that input is held for it, and runs as its own (its connection, its
// database) when the second script's busy turns start -- so it is answered
// -BUSY, as redis-server 7.0.15 answers it (checked) -- and is never handed
// to the second client, as it was (IoThread::TurnWhileBusy).
TEST(ScriptingE2E, InputHeldDuringABusyScriptStaysItsClientsWhenAnotherFollows) {
  TestServer server({"--save", "", "--busy-reply-threshold", "10"});
  ASSERT_TRUE(server.ready());
  RawConn z(server.port()), w(server.port());
  EXPECT_EQ(Call(z, {"SELECT", "1"}), "+OK\r\n");
  EXPECT_EQ(Call(w, {"SELECT", "2"}), "+OK\r\n");
  const std::string spin =
      "local t = redis.call('time') local s = t[1] * 1000000 + t[2] "
      "repeat t = redis.call('time') until t[1] * 1000000 + t[2] - s > 80000 return 1";
  ASSERT_TRUE(z.Send(Resp({"BLPOP", "none:z", "0.05"}) + Resp({"EVAL", spin, "0"})));
  ASSERT_TRUE(w.Send(Resp({"BLPOP", "none:w", "0.05"}) + Resp({"EVAL", spin, "0"})));
  // The first script runs from about 50 ms to 130 ms.
  std::this_thread::sleep_for(std::chrono::milliseconds(90));
  ASSERT_TRUE(z.Send(Resp({"SET", "owner", "z"})));
  EXPECT_EQ(z.ReadReply(), "*-1\r\n");
  EXPECT_EQ(z.ReadReply(), ":1\r\n");
  // Nearly always both deadlines fire in one timer run and the SET meets
  // the second script: -BUSY. Where the machine is slow enough (ASan) that
  // they fire in two turns, the SET runs between the scripts: +OK, in z's
  // database. Either way it is z's, answered to z.
  const std::string set_reply = z.ReadReply();
  const bool met_second_script = set_reply.rfind("-BUSY Redis is busy running a script.", 0) == 0;
  EXPECT_TRUE(met_second_script || set_reply == "+OK\r\n") << set_reply;
  EXPECT_EQ(w.ReadReply(), "*-1\r\n");
  EXPECT_EQ(w.ReadReply(), ":1\r\n");
  EXPECT_EQ(Call(w, {"PING"}), "+PONG\r\n");  // nothing of z's arrived here
  EXPECT_EQ(Call(z, {"GET", "owner"}), met_second_script ? "$-1\r\n" : "$1\r\nz\r\n");
  EXPECT_EQ(Call(w, {"GET", "owner"}), "$-1\r\n");
}

TEST(ScriptingE2E, ScriptThatWroteIsUnkillableButShutdownNosaveStopsIt) {
  TestServer server({"--save", "", "--busy-reply-threshold", "50"});
  ASSERT_TRUE(server.ready());
  RawConn runner(server.port()), other(server.port());
  ASSERT_TRUE(runner.Send(Resp({"EVAL", "redis.call('set', KEYS[1], 'v') while true do end", "1", "k"})));
  ASSERT_TRUE(WaitPing(other, "-BUSY"));
  EXPECT_EQ(Call(other, {"SCRIPT", "KILL"}).rfind("-UNKILLABLE Sorry the script already executed write commands", 0),
            0u);
  ASSERT_TRUE(other.Send(Resp({"SHUTDOWN", "NOSAVE"})));
  int status = 0;
  EXPECT_TRUE(server.WaitExit(&status, 10000));
}

TEST(ScriptingE2E, ReadOnlyFunctionLoopIsKilledByFunctionKill) {
  TestServer server({"--save", "", "--busy-reply-threshold", "50"});
  ASSERT_TRUE(server.ready());
  RawConn runner(server.port()), other(server.port());
  EXPECT_EQ(Call(other, {"FUNCTION", "LOAD",
                         "#!lua name=spin\n"
                         "redis.register_function{function_name='spin', callback=function() "
                         "local f = function() while true do redis.call('ping') end end "
                         "while true do pcall(f) end end, flags={'no-writes'}}"}),
            "$4\r\nspin\r\n");
  ASSERT_TRUE(runner.Send(Resp({"FCALL_RO", "spin", "0"})));
  ASSERT_TRUE(WaitPing(other, "-BUSY"));
  EXPECT_EQ(Call(other, {"PING"}),
            "-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n");
  const std::string stats = Call(other, {"FUNCTION", "STATS"});
  EXPECT_NE(stats.find("$4\r\nspin\r\n"), std::string::npos) << stats;
  EXPECT_EQ(Call(other, {"SCRIPT", "KILL"}),
            "-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n");
  EXPECT_EQ(Call(other, {"FUNCTION", "KILL"}), "+OK\r\n");  // pcall in the script cannot keep it alive
  EXPECT_EQ(runner.ReadReply().rfind("-ERR Script killed by user", 0), 0u);
  EXPECT_TRUE(WaitPing(other, "+PONG"));
}

// A primary runs scripts of random writes (several types, databases,
// redis.set_repl); its replicas -- ringkv and redis-server -- end with the
// same dataset.
void RunScriptWorkload(RawConn& p) {
  const std::string mixed =
      "for i = 1, 20 do "
      "  redis.call('incr', KEYS[1]) "
      "  redis.call('rpush', KEYS[2], i) "
      "  redis.call('hset', KEYS[3], 'f' .. i, i * 2) "
      "  redis.call('zadd', KEYS[4], i, 'm' .. i) "
      "  redis.call('sadd', KEYS[5], i % 7) "
      "end "
      "redis.call('expire', KEYS[1], 1000) "
      "local n = redis.call('llen', KEYS[2]) "
      "redis.call('select', 5) redis.call('set', 'in5', ARGV[1]) "
      "return n";
  for (int round = 0; round < 10; ++round) {
    const std::string r = std::to_string(round);
    EXPECT_EQ(Call(p, {"EVAL", mixed, "5", "n" + r, "l" + r, "h" + r, "z" + r, "s" + r, "v" + r}), ":20\r\n");
  }
  // A script whose writes are partly kept from the replicas: the replicas
  // must still match each other and the part the primary replicated.
  EXPECT_EQ(Call(p, {"FUNCTION", "LOAD",
                     "#!lua name=lib\nredis.register_function('bump', function(keys, args) "
                     "return redis.call('incrby', keys[1], args[1]) end)"}),
            "$3\r\nlib\r\n");
  EXPECT_EQ(Call(p, {"FCALL", "bump", "1", "counter", "5"}), ":5\r\n");
  EXPECT_EQ(Call(p, {"EVAL", "redis.call('del', 'gone') return redis.call('set', 'kept', 'x')", "0"}), "+OK\r\n");
}

// A slow script replayed from the AOF (DEBUG LOADAOF) serves other clients
// from its hook, as a busy script does -- but they get -LOADING, as Redis
// answers while loading, and the script's writes are there after the load.
TEST(ScriptingE2E, SlowScriptReplayedFromTheAofAnswersLoading) {
  TempDir dir;
  // Slow by the clock, not by a count of steps: 1.5 s however loaded the
  // machine (or sanitized the build) is.
  const std::string slow =
      "redis.call('set', KEYS[1], 'y') local t = redis.call('time') local start = t[1] * 1000000 + t[2] "
      "repeat local n = redis.call('time') until n[1] * 1000000 + n[2] - start > 1500000 return 'ok'";
  WriteFile(dir.path() + "/appendonly.aof",  // Redis 6's single file: loaded as the base
            Resp({"SELECT", "9"}) + Resp({"EVAL", slow, "1", "x"}));
  TestServer server({"--dir", dir.path(), "--save", "", "--appendonly", "yes", "--aof-use-rdb-preamble", "no",
                     "--busy-reply-threshold", "1", "--enable-debug-command", "yes"});
  ASSERT_TRUE(server.ready());
  RawConn loader(server.port()), other(server.port());
  ASSERT_TRUE(loader.Send(Resp({"DEBUG", "LOADAOF"})));
  EXPECT_TRUE(WaitPing(other, "-LOADING", 20000));
  EXPECT_EQ(loader.ReadReply(), "+OK\r\n");
  EXPECT_EQ(Call(other, {"PING"}), "+PONG\r\n");
  EXPECT_EQ(Call(other, {"SELECT", "9"}), "+OK\r\n");
  EXPECT_EQ(Call(other, {"GET", "x"}), "$1\r\ny\r\n");
  // Refused, not failed: counted as such.
  EXPECT_NE(Call(other, {"INFO", "errorstats"}).find("errorstat_LOADING:count="), std::string::npos);
}

// A replica busy with a script of its own stops applying its primary's
// stream (no -BUSY for the primary: nothing is lost), and applies what
// arrived meanwhile, in order, once the script ends.
TEST(ScriptingE2E, PrimarysStreamWaitsForABusyScriptOfTheReplica) {
  TestServer primary({"--save", "", "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0"});
  TestServer replica({"--save", "", "--busy-reply-threshold", "50", "--enable-debug-command", "yes"});
  ASSERT_TRUE(primary.ready() && replica.ready());
  RawConn p(primary.port()), r(replica.port()), other(replica.port());
  EXPECT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(r));
  ASSERT_TRUE(r.Send(Resp({"EVAL", "local i = 0 while true do i = i + 1 end", "0"})));
  ASSERT_TRUE(WaitPing(other, "-BUSY"));
  for (int i = 0; i < 100; ++i) ASSERT_EQ(Call(p, {"INCR", "counter"}), ":" + std::to_string(i + 1) + "\r\n");
  ASSERT_EQ(Call(p, {"RPUSH", "list", "a", "b"}), ":2\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the stream reaches the replica meanwhile
  EXPECT_EQ(Call(other, {"SCRIPT", "KILL"}), "+OK\r\n");
  EXPECT_EQ(r.ReadReply().rfind("-ERR Script killed by user with SCRIPT KILL...", 0), 0u);
  EXPECT_EQ(Call(p, {"WAIT", "1", "5000"}), ":1\r\n");
  EXPECT_EQ(Digest(r), Digest(p));
  EXPECT_EQ(Call(r, {"GET", "counter"}), "$3\r\n100\r\n");
  EXPECT_EQ(Info(r, "unexpected_error_replies", "stats"), "0");
}

TEST(ScriptingE2E, ScriptEffectsReachRingkvAndRedisReplicasIdentically) {
  TestServer primary({"--save", "", "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0"});
  TestServer replica({"--save", "", "--enable-debug-command", "yes"});
  TestServer redis({"--enable-debug-command", "yes"}, kRedis);
  ASSERT_TRUE(primary.ready() && replica.ready() && redis.ready());
  RawConn p(primary.port()), r(replica.port()), rr(redis.port());
  EXPECT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  EXPECT_EQ(Call(rr, {"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(r) && WaitLinkUp(rr));
  RunScriptWorkload(p);
  Call(p, {"WAIT", "2", "5000"});
  const std::string digest = Digest(p);
  EXPECT_EQ(Digest(r), digest);
  EXPECT_EQ(Digest(rr), digest);
  // The library reached both replicas (FUNCTION LOAD propagates); a
  // function that may write is refused on a read-only replica.
  EXPECT_EQ(Call(r, {"FUNCTION", "LIST", "WITHCODE"}), Call(p, {"FUNCTION", "LIST", "WITHCODE"}));
  EXPECT_EQ(Call(rr, {"FUNCTION", "LIST", "WITHCODE"}), Call(p, {"FUNCTION", "LIST", "WITHCODE"}));
  EXPECT_EQ(Call(r, {"FCALL_RO", "bump", "1", "x", "1"}), "-READONLY You can't write against a read only replica.\r\n");
  EXPECT_EQ(Call(rr, {"FCALL_RO", "bump", "1", "x", "1"}), Call(r, {"FCALL_RO", "bump", "1", "x", "1"}));
  // redis.set_repl(REPL_NONE): the write stays on the primary.
  EXPECT_EQ(Call(p, {"EVAL", "redis.set_repl(redis.REPL_NONE) redis.call('set', 'local', '1') "
                             "redis.set_repl(redis.REPL_ALL) return redis.call('set', 'shared', '1')", "0"}),
            "+OK\r\n");
  Call(p, {"WAIT", "2", "5000"});
  EXPECT_EQ(Call(r, {"EXISTS", "local", "shared"}), ":1\r\n");
  EXPECT_EQ(Call(rr, {"EXISTS", "local", "shared"}), ":1\r\n");
  EXPECT_EQ(Call(p, {"EXISTS", "local", "shared"}), ":2\r\n");
}

TEST(ScriptingE2E, RedisPrimaryRunsScriptsForARingkvReplica) {
  TestServer redis({"--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0"}, kRedis);
  TestServer replica({"--save", "", "--enable-debug-command", "yes"});
  ASSERT_TRUE(redis.ready() && replica.ready());
  RawConn p(redis.port()), r(replica.port());
  EXPECT_EQ(Call(r, {"REPLICAOF", "127.0.0.1", std::to_string(redis.port())}), "+OK\r\n");
  ASSERT_TRUE(WaitLinkUp(r));
  RunScriptWorkload(p);
  Call(p, {"WAIT", "1", "5000"});
  EXPECT_EQ(Digest(r), Digest(p));
  EXPECT_EQ(Call(r, {"FUNCTION", "LIST"}), Call(p, {"FUNCTION", "LIST"}));
}

TEST(ScriptingE2E, FunctionsSurviveRdbAndAofAndMoveBetweenServers) {
  const std::string code = "#!lua name=keep\nredis.register_function('seven', function() return 7 end)";
  TempDir dir;
  {
    TestServer a({"--dir", dir.path(), "--save", "", "--appendonly", "yes"});
    ASSERT_TRUE(a.ready());
    RawConn c(a.port());
    EXPECT_EQ(Call(c, {"FUNCTION", "LOAD", code}), "$4\r\nkeep\r\n");
    EXPECT_EQ(Call(c, {"SET", "k", "v"}), "+OK\r\n");
    EXPECT_EQ(Call(c, {"SAVE"}), "+OK\r\n");
    ASSERT_EQ(a.Stop(), 0);
  }
  {  // From the AOF (its commands replay FUNCTION LOAD).
    TestServer a({"--dir", dir.path(), "--save", "", "--appendonly", "yes"});
    ASSERT_TRUE(a.ready());
    RawConn c(a.port());
    EXPECT_EQ(Call(c, {"FCALL", "seven", "0"}), ":7\r\n");
    // A rewrite's base (RDB preamble) carries the library too.
    EXPECT_EQ(Call(c, {"BGREWRITEAOF"}), "+Background append only file rewriting started\r\n");
    ASSERT_TRUE(WaitInfo(c, "aof_rewrite_in_progress", "0"));
    ASSERT_EQ(a.Stop(), 0);
  }
  {
    TestServer a({"--dir", dir.path(), "--save", "", "--appendonly", "yes"});
    ASSERT_TRUE(a.ready());
    RawConn c(a.port());
    EXPECT_EQ(Call(c, {"FCALL", "seven", "0"}), ":7\r\n");
    ASSERT_EQ(a.Stop(), 0);
  }
  {  // redis-server loads ringkv's RDB (FUNCTION2 opcode) ...
    TestServer redis({"--dir", dir.path(), "--dbfilename", "dump.rdb"}, kRedis);
    ASSERT_TRUE(redis.ready());
    RawConn c(redis.port());
    EXPECT_EQ(Call(c, {"FCALL", "seven", "0"}), ":7\r\n");
    EXPECT_EQ(Call(c, {"GET", "k"}), "$1\r\nv\r\n");
    EXPECT_EQ(Call(c, {"FUNCTION", "LOAD", "#!lua name=fromredis\nredis.register_function('eight', function() "
                                           "return 8 end)"}),
              "$9\r\nfromredis\r\n");
    const std::string dump = BulkPayload(Call(c, {"FUNCTION", "DUMP"}));
    EXPECT_EQ(Call(c, {"SAVE"}), "+OK\r\n");
    // ... and ringkv loads redis-server's, and its FUNCTION DUMP payload.
    TestServer b({"--dir", dir.path(), "--save", ""});
    ASSERT_TRUE(b.ready());
    RawConn d(b.port());
    EXPECT_EQ(Call(d, {"FCALL", "eight", "0"}), ":8\r\n");
    EXPECT_EQ(Call(d, {"FUNCTION", "RESTORE", dump, "FLUSH"}), "+OK\r\n");
    EXPECT_EQ(Call(d, {"FCALL", "seven", "0"}), ":7\r\n");
    for (const char* lib : {"keep", "fromredis"}) {
      EXPECT_EQ(Call(d, {"FUNCTION", "LIST", "LIBRARYNAME", lib, "WITHCODE"}),
                Call(c, {"FUNCTION", "LIST", "LIBRARYNAME", lib, "WITHCODE"}));
    }
  }
}

}  // namespace
}  // namespace ringkv::testing::scripting_e2e_test

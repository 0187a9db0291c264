// End-to-end tests: the real ringkv-server binary on a free loopback port,
// driven with hiredis and raw sockets.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "tests/e2e/hiredis_util.h"
#include "tests/e2e/persistence_test_util.h"
#include "tests/e2e/test_server.h"

namespace ringkv::testing::server_e2e_test {
namespace {

// Runs one command and returns the reply as text ("OK", "(nil)", "(error) ...", "5", ...).
std::string Cmd(redisContext* c, const std::vector<std::string>& argv) {
  redisReply* r = CommandArgv(c, argv);
  if (r == nullptr) return "<io error>";
  std::string out;
  switch (r->type) {
    case REDIS_REPLY_STRING: case REDIS_REPLY_STATUS: out.assign(r->str, r->len); break;
    case REDIS_REPLY_ERROR: out = "(error) " + std::string(r->str, r->len); break;
    case REDIS_REPLY_INTEGER: out = std::to_string(r->integer); break;
    case REDIS_REPLY_NIL: out = "(nil)"; break;
    case REDIS_REPLY_ARRAY: out = "(array " + std::to_string(r->elements) + ")"; break;
  }
  freeReplyObject(r);
  return out;
}

TEST(ServerE2E, PingSetGetAndPipelining) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  Redis c = Connect(s.port());
  EXPECT_EQ(Cmd(c.get(), {"PING"}), "PONG");
  EXPECT_EQ(Cmd(c.get(), {"SET", "k", "v"}), "OK");
  EXPECT_EQ(Cmd(c.get(), {"GET", "k"}), "v");
  const int n = 5000;
  for (int i = 0; i < n; ++i) redisAppendCommand(c.get(), "INCR counter");
  for (int i = 0; i < n; ++i) {
    void* r = nullptr;
    ASSERT_EQ(redisGetReply(c.get(), &r), REDIS_OK);
    EXPECT_EQ(static_cast<redisReply*>(r)->integer, i + 1);
    freeReplyObject(r);
  }
  EXPECT_EQ(Cmd(c.get(), {"GET", "counter"}), std::to_string(n));
}

// A pipelined batch is prefetched before its first command runs, and a GET
// takes the entry its prefetch found (core::KnownEntry) unless a node left
// the table since. Each GET here follows a command of its batch that
// replaced, removed, moved or hid the key its prefetch saw: each must see
// the change (and the ASan build, a freed node read). Each group is one
// write of at most 16 commands: one prefetched batch.
void PipelinedGetsSeeWhatTheCommandsBeforeThemDid(const std::vector<std::string>& args) {
  TestServer s(args);
  ASSERT_TRUE(s.ready());
  // Several connections: with I/O threads, some are served on the main
  // thread's loop and some through its inbox (two prefetching paths).
  for (int conn = 0; conn < 4; ++conn) {
    RawConn c(s.port());
    ASSERT_TRUE(c.Send(Resp({"SET", "a", "1"})));
    ASSERT_EQ(c.ReadReply(), "+OK\r\n");
    ASSERT_TRUE(c.Send(Resp({"SET", "other", "x"})));
    ASSERT_EQ(c.ReadReply(), "+OK\r\n");
    using Group = std::vector<std::pair<std::vector<std::string>, std::string>>;
    const std::vector<Group> groups = {
        {
            {{"GET", "a"}, "$1\r\n1\r\n"},
            {{"SET", "a", "22"}, "+OK\r\n"},   // the same node, a new value
            {{"GET", "a"}, "$2\r\n22\r\n"},
            {{"DEL", "a"}, ":1\r\n"},           // the node is freed
            {{"GET", "a"}, "$-1\r\n"},
            {{"SET", "a", "3"}, "+OK\r\n"},     // a new node, maybe at the freed one's address
            {{"GET", "a"}, "$1\r\n3\r\n"},
            {{"SWAPDB", "0", "1"}, "+OK\r\n"},  // db 0 is another database now
            {{"GET", "a"}, "$-1\r\n"},
            {{"SWAPDB", "0", "1"}, "+OK\r\n"},
            {{"SELECT", "1"}, "+OK\r\n"},       // the client's database is another one
            {{"GET", "a"}, "$-1\r\n"},
            {{"SELECT", "0"}, "+OK\r\n"},
            {{"DEL", "other"}, ":1\r\n"},       // another key's node is freed
            {{"GET", "a"}, "$1\r\n3\r\n"},
        },
        {
            {{"GET", "a"}, "$1\r\n3\r\n"},
            {{"FLUSHDB"}, "+OK\r\n"},           // every node is freed
            {{"GET", "a"}, "$-1\r\n"},
        },
    };
    for (const Group& group : groups) {
      ASSERT_LE(group.size(), 16u);
      std::string wire;
      for (const auto& [argv, reply] : group) wire += Resp(argv);
      ASSERT_TRUE(c.Send(wire));
      for (const auto& [argv, reply] : group) {
        EXPECT_EQ(c.ReadReply(), reply) << "connection " << conn << ": " << argv[0] << " "
                                        << (argv.size() > 1 ? argv[1] : "");
      }
    }
  }
}

TEST(ServerE2E, APipelinedGetSeesWhatTheCommandsBeforeItInTheBatchDid) {
  PipelinedGetsSeeWhatTheCommandsBeforeThemDid({});
}

TEST(ServerE2E, APipelinedGetSeesWhatTheCommandsBeforeItInTheBatchDidWithIoThreads) {
  PipelinedGetsSeeWhatTheCommandsBeforeThemDid({"--io-threads", "4"});
}

TEST(ServerE2E, LargeArgumentsAcrossManyReads) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  Redis c = Connect(s.port());
  std::string big(8 * 1024 * 1024 + 3, 'q');
  big[12345] = '\r';
  EXPECT_EQ(Cmd(c.get(), {"SET", "big", big}), "OK");
  EXPECT_EQ(Cmd(c.get(), {"STRLEN", "big"}), std::to_string(big.size()));
  EXPECT_EQ(Cmd(c.get(), {"GET", "big"}), big);
}

TEST(ServerE2E, Resp3Hello) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  ASSERT_TRUE(c.Send(Resp({"HELLO", "3", "SETNAME", "me"})));
  std::string hello = c.ReadReply();
  EXPECT_EQ(hello.substr(0, 4), "%7\r\n");
  EXPECT_NE(hello.find("$5\r\nproto\r\n:3\r\n"), std::string::npos);
  ASSERT_TRUE(c.Send(Resp({"GET", "missing"})));
  EXPECT_EQ(c.ReadReply(), "_\r\n");
  ASSERT_TRUE(c.Send(Resp({"CONFIG", "GET", "maxclients"})));
  EXPECT_EQ(c.ReadReply(), "%1\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n");
  ASSERT_TRUE(c.Send(Resp({"CLIENT", "GETNAME"})));
  EXPECT_EQ(c.ReadReply(), "$2\r\nme\r\n");
  ASSERT_TRUE(c.Send(Resp({"HELLO", "4"})));
  EXPECT_EQ(c.ReadReply(), "-NOPROTO unsupported protocol version\r\n");
  ASSERT_TRUE(c.Send(Resp({"HELLO", "2"})));
  EXPECT_EQ(c.ReadReply().substr(0, 5), "*14\r\n");
  ASSERT_TRUE(c.Send(Resp({"GET", "missing"})));
  EXPECT_EQ(c.ReadReply(), "$-1\r\n");
}

TEST(ServerE2E, ProtocolErrorClosesOnlyTheOffender) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  RawConn good(s.port());
  RawConn bad(s.port());
  ASSERT_TRUE(bad.Send("SET a b\r\n*1\r\n$x\r\nPING\r\n"));
  EXPECT_EQ(bad.ReadReply(), "+OK\r\n");
  EXPECT_EQ(bad.ReadReply(), "-ERR Protocol error: invalid bulk length\r\n");
  EXPECT_TRUE(bad.ReadEof());
  ASSERT_TRUE(good.Send(Resp({"GET", "a"})));
  EXPECT_EQ(good.ReadReply(), "$1\r\nb\r\n");
  RawConn quotes(s.port());
  ASSERT_TRUE(quotes.Send("SET \"a\r\n"));
  EXPECT_EQ(quotes.ReadReply(), "-ERR Protocol error: unbalanced quotes in request\r\n");
  EXPECT_TRUE(quotes.ReadEof());
}

TEST(ServerE2E, QueryBufferLimitClosesOnlyTheOffender) {
  TestServer s({"--client-query-buffer-limit", "1mb"});
  ASSERT_TRUE(s.ready());
  RawConn good(s.port());
  RawConn bad(s.port());
  ASSERT_TRUE(bad.Send("*2\r\n$4\r\nECHO\r\n$3000000\r\n"));
  bad.Send(std::string(2 * 1024 * 1024, 'x'));  // may fail once the server closes
  EXPECT_TRUE(bad.ReadEof());
  ASSERT_TRUE(good.Send(Resp({"PING"})));
  EXPECT_EQ(good.ReadReply(), "+PONG\r\n");
}

// client-output-buffer-limit normal: a client that pipelines big reads and
// never reads the replies is closed once its unsent output passes the hard
// limit; the others are served.
TEST(ServerE2E, OutputBufferLimitClosesOnlyTheOffender) {
  TestServer s({"--client-output-buffer-limit", "normal 2mb 0 0"});
  ASSERT_TRUE(s.ready());
  RawConn good(s.port()), bad(s.port());
  ASSERT_TRUE(good.Send(Resp({"SET", "big", std::string(512 * 1024, 'v')})));
  ASSERT_EQ(good.ReadReply(), "+OK\r\n");
  std::string gets;
  for (int i = 0; i < 200; ++i) gets += Resp({"GET", "big"});  // 100 MB of replies, never read
  bad.Send(gets);  // may fail once the server closes
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(good.Send(Resp({"CLIENT", "LIST"})));
    if (good.ReadReply().find("cmd=get") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(good.Send(Resp({"CLIENT", "LIST"})));
  const std::string list = good.ReadReply();
  EXPECT_EQ(list.find("cmd=get"), std::string::npos) << "the client over its output limit is still connected";
  ASSERT_TRUE(good.Send(Resp({"STRLEN", "big"})));
  EXPECT_EQ(good.ReadReply(), ":524288\r\n");
}

// Commands pipelined after QUIT are never run, even when the batch was
// parsed ahead of execution.
TEST(ServerE2E, QuitStopsThePipeline) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  {
    RawConn c(s.port());
    c.Send(Resp({"PING"}) + Resp({"QUIT"}) + Resp({"SET", "after-quit", "1"}));
    EXPECT_EQ(c.ReadReply(), "+PONG\r\n");
    EXPECT_EQ(c.ReadReply(), "+OK\r\n");
    EXPECT_TRUE(c.ReadEof());
  }
  RawConn check(s.port());
  check.Send(Resp({"EXISTS", "after-quit"}));
  EXPECT_EQ(check.ReadReply(), ":0\r\n");
}

TEST(ServerE2E, UnknownCommandAndArityErrors) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  c.Send(Resp({"FOO", "a", "b"}));
  EXPECT_EQ(c.ReadReply(), "-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n");
  c.Send(Resp({"GET"}));
  EXPECT_EQ(c.ReadReply(), "-ERR wrong number of arguments for 'get' command\r\n");
  c.Send(Resp({"CONFIG", "NOPE"}));
  EXPECT_EQ(c.ReadReply(), "-ERR unknown subcommand 'NOPE'. Try CONFIG HELP.\r\n");
}

TEST(ServerE2E, RequirepassAndAuth) {
  TestServer s({"--requirepass", "sekret"});
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  c.Send(Resp({"GET", "k"}));
  EXPECT_EQ(c.ReadReply(), "-NOAUTH Authentication required.\r\n");
  c.Send(Resp({"AUTH", "wrong"}));
  EXPECT_EQ(c.ReadReply(), "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  c.Send(Resp({"AUTH", "sekret"}));
  EXPECT_EQ(c.ReadReply(), "+OK\r\n");
  c.Send(Resp({"GET", "k"}));
  EXPECT_EQ(c.ReadReply(), "$-1\r\n");
  RawConn h(s.port());
  h.Send(Resp({"HELLO", "3", "AUTH", "default", "sekret"}));
  EXPECT_EQ(h.ReadReply().substr(0, 4), "%7\r\n");
  // Unauthenticated clients get Redis's tighter protocol limits.
  RawConn u(s.port());
  u.Send("*20\r\n");
  EXPECT_EQ(u.ReadReply(), "-ERR Protocol error: unauthenticated multibulk length\r\n");
}

TEST(ServerE2E, AuthWithoutPasswordConfigured) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  c.Send(Resp({"AUTH", "x"}));
  EXPECT_EQ(c.ReadReply(),
            "-ERR AUTH <password> called without any password configured for the default user. Are you sure your "
            "configuration is correct?\r\n");
}

TEST(ServerE2E, MaxClients) {
  TestServer s({"--maxclients", "3"});
  ASSERT_TRUE(s.ready());
  RawConn a(s.port()), b(s.port()), c(s.port());
  for (RawConn* x : {&a, &b, &c}) {
    x->Send("PING\r\n");
    EXPECT_EQ(x->ReadReply(), "+PONG\r\n");
  }
  RawConn d(s.port());
  EXPECT_EQ(d.ReadReply(), "-ERR max number of clients reached\r\n");
  EXPECT_TRUE(d.ReadEof());
}

TEST(ServerE2E, ConfigSetAndRewriteRoundTrip) {
  char path[] = "/tmp/ringkv_e2e_conf_XXXXXX";
  int fd = mkstemp(path);
  std::string text = "# test config\nmaxclients 500\n# keep me\ntimeout 0\n";
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  {
    TestServer s({}, RINGKV_SERVER_PATH, path);
    ASSERT_TRUE(s.ready());
    Redis c = Connect(s.port());
    EXPECT_EQ(Cmd(c.get(), {"CONFIG", "SET", "maxclients", "600", "timeout", "77"}), "OK");
    EXPECT_EQ(Cmd(c.get(), {"CONFIG", "SET", "maxclients", "abc"}),
              "(error) ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be "
              "parsed into an integer");
    EXPECT_EQ(Cmd(c.get(), {"CONFIG", "REWRITE"}), "OK");
  }
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("# test config\nmaxclients 600\n# keep me\ntimeout 77\n"), std::string::npos) << ss.str();
  {
    TestServer s({}, RINGKV_SERVER_PATH, path);
    ASSERT_TRUE(s.ready());
    RawConn c(s.port());
    c.Send(Resp({"CONFIG", "GET", "timeout"}));
    EXPECT_EQ(c.ReadReply(), "*2\r\n$7\r\ntimeout\r\n$2\r\n77\r\n");
  }
  unlink(path);
}

// The same script must produce the same bytes with one thread and with four.
std::string RunScript(int port) {
  std::string all;
  std::vector<std::unique_ptr<RawConn>> conns;
  for (int i = 0; i < 8; ++i) conns.push_back(std::make_unique<RawConn>(port));
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 8; ++i) {
      std::string key = "k" + std::to_string(i);
      std::string batch = Resp({"INCR", key}) + Resp({"APPEND", "s" + key, std::to_string(round)}) +
                          Resp({"GET", "s" + key}) + Resp({"EXISTS", key, "nokey"}) + Resp({"PING", "x"});
      conns[i]->Send(batch);
    }
    for (int i = 0; i < 8; ++i) {
      for (int r = 0; r < 5; ++r) all += conns[i]->ReadReply();
    }
  }
  return all;
}

TEST(ServerE2E, IoThreadsOneAndFourGiveIdenticalResults) {
  TestServer one({"--io-threads", "1"});
  TestServer four({"--io-threads", "4"});
  ASSERT_TRUE(one.ready());
  ASSERT_TRUE(four.ready());
  std::string a = RunScript(one.port());
  std::string b = RunScript(four.port());
  EXPECT_GT(a.size(), 1000u);
  EXPECT_EQ(a, b);
}

TEST(ServerE2E, ThousandConcurrentClients) {
  rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < 2300 && rl.rlim_max >= 2300) {
    rl.rlim_cur = 2300;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  for (const char* threads : {"1", "2"}) {
    TestServer s({"--io-threads", threads});
    ASSERT_TRUE(s.ready());
    std::vector<std::unique_ptr<RawConn>> conns;
    for (int i = 0; i < 1000; ++i) {
      conns.push_back(std::make_unique<RawConn>(s.port()));
      ASSERT_TRUE(conns.back()->ok()) << i;
    }
    for (int i = 0; i < 1000; ++i) conns[i]->Send(Resp({"SET", "key:" + std::to_string(i), std::to_string(i)}));
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(conns[i]->ReadReply(), "+OK\r\n");
    for (int i = 0; i < 1000; ++i) conns[i]->Send(Resp({"GET", "key:" + std::to_string(999 - i)}));
    for (int i = 0; i < 1000; ++i) {
      std::string v = std::to_string(999 - i);
      ASSERT_EQ(conns[i]->ReadReply(), "$" + std::to_string(v.size()) + "\r\n" + v + "\r\n");
    }
    conns[0]->Send(Resp({"INFO", "clients"}));
    EXPECT_NE(conns[0]->ReadReply().find("connected_clients:1000\r\n"), std::string::npos);
    conns[0]->Send(Resp({"DBSIZE"}));
    EXPECT_EQ(conns[0]->ReadReply(), ":1000\r\n");
  }
}

TEST(ServerE2E, IdleTimeoutClosesIdleClients) {
  TestServer s({"--timeout", "1"});
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  c.Send("PING\r\n");
  EXPECT_EQ(c.ReadReply(), "+PONG\r\n");
  EXPECT_TRUE(c.ReadEof());  // closed by the cron within ~1-2 s (recv timeout is 5 s)
}

TEST(ServerE2E, ClientPauseWriteHoldsWritesUntilUnpause) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  RawConn admin(s.port()), writer(s.port());
  admin.Send(Resp({"CLIENT", "PAUSE", "100000", "WRITE"}));
  EXPECT_EQ(admin.ReadReply(), "+OK\r\n");
  writer.Send(Resp({"SET", "p", "1"}) + Resp({"GET", "p"}));
  admin.Send(Resp({"GET", "p"}));  // reads still run
  EXPECT_EQ(admin.ReadReply(), "$-1\r\n");
  admin.Send(Resp({"CLIENT", "UNPAUSE"}));
  EXPECT_EQ(admin.ReadReply(), "+OK\r\n");
  EXPECT_EQ(writer.ReadReply(), "+OK\r\n");
  EXPECT_EQ(writer.ReadReply(), "$1\r\n1\r\n");
}

TEST(ServerE2E, ClientKillAndList) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  RawConn a(s.port()), b(s.port());
  a.Send(Resp({"CLIENT", "SETNAME", "victim"}) + Resp({"CLIENT", "ID"}));
  EXPECT_EQ(a.ReadReply(), "+OK\r\n");
  std::string id = a.ReadReply();
  id = id.substr(1, id.size() - 3);
  b.Send(Resp({"CLIENT", "LIST"}));
  std::string list = b.ReadReply();
  EXPECT_NE(list.find("id=" + id + " "), std::string::npos);
  EXPECT_NE(list.find("name=victim "), std::string::npos);
  EXPECT_NE(list.find(" qbuf="), std::string::npos);
  EXPECT_NE(list.find(" omem="), std::string::npos);
  EXPECT_NE(list.find(" tot-mem="), std::string::npos);
  b.Send(Resp({"CLIENT", "KILL", "ID", id}));
  EXPECT_EQ(b.ReadReply(), ":1\r\n");
  EXPECT_TRUE(a.ReadEof());
}

TEST(ServerE2E, ConfigSetPortAndBindRebindAtRuntime) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  const int old_port = s.port();
  const int new_port = FreePort();
  {
    RawConn c(old_port);
    c.Send(Resp({"SET", "k", "v"}) + Resp({"CONFIG", "SET", "port", std::to_string(new_port)}));
    EXPECT_EQ(c.ReadReply(), "+OK\r\n");
    EXPECT_EQ(c.ReadReply(), "+OK\r\n");
    c.Send(Resp({"GET", "k"}));  // existing connections stay
    EXPECT_EQ(c.ReadReply(), "$1\r\nv\r\n");
  }
  EXPECT_FALSE(RawConn(old_port).ok());
  RawConn c(new_port);
  ASSERT_TRUE(c.ok());
  // A port someone else holds: Redis's error, and the server keeps listening.
  int holder = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int taken = FreePort();
  a.sin_port = htons(static_cast<uint16_t>(taken));
  ASSERT_EQ(bind(holder, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(listen(holder, 1), 0);
  c.Send(Resp({"CONFIG", "SET", "port", std::to_string(taken)}));
  EXPECT_EQ(c.ReadReply(),
            "-ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check "
            "server logs.\r\n");
  close(holder);
  c.Send(Resp({"CONFIG", "GET", "port"}));
  EXPECT_EQ(c.ReadReply(), "*2\r\n$4\r\nport\r\n$" + std::to_string(std::to_string(new_port).size()) + "\r\n" +
                               std::to_string(new_port) + "\r\n");
  EXPECT_TRUE(RawConn(new_port).ok());
  c.Send(Resp({"CONFIG", "SET", "bind", "127.0.0.1"}));
  EXPECT_EQ(c.ReadReply(), "+OK\r\n");
  RawConn after(new_port);
  ASSERT_TRUE(after.ok());
  after.Send(Resp({"CONFIG", "GET", "bind"}));
  EXPECT_EQ(after.ReadReply(), "*2\r\n$4\r\nbind\r\n$9\r\n127.0.0.1\r\n");
}

TEST(ServerE2E, ShutdownExitsCleanly) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  c.Send(Resp({"SHUTDOWN", "NOSAVE"}));
  EXPECT_TRUE(c.ReadEof());
  int status = -1;
  ASSERT_TRUE(s.WaitExit(&status));
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(ServerE2E, SigtermExitsCleanly) {
  TestServer s;
  ASSERT_TRUE(s.ready());
  int status = s.Stop();
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(ServerE2E, BadConfigStopsStartup) {
  TestServer s({"--maxclients", "lots"});
  EXPECT_FALSE(s.ready());
  int status = s.Stop();
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

TEST(ServerE2E, DebianStockRedisConfStarts) {
  std::ifstream probe("/etc/redis/redis.conf");
  if (!probe) GTEST_SKIP() << "no /etc/redis/redis.conf";
  // The stock file daemonizes and logs to /var/log; override only those
  // (and its dir: TestServer gives every server a fresh one, so no
  // dump.rdb another process left in a shared folder is loaded).
  TestServer s({"--daemonize", "no", "--logfile", "", "--pidfile", ""}, RINGKV_SERVER_PATH,
               "/etc/redis/redis.conf");
  ASSERT_TRUE(s.ready());
  RawConn c(s.port());
  c.Send(Resp({"CONFIG", "GET", "databases"}));
  EXPECT_EQ(c.ReadReply(), "*2\r\n$9\r\ndatabases\r\n$2\r\n16\r\n");
}

}  // namespace
}  // namespace ringkv::testing::server_e2e_test

namespace ringkv::testing::server_e2e_test {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// With always-show-logo the banner carries " PID: <pid>" (what Redis's test
// suite and supervisors wait for); without it, Redis's "Running mode" line.
// A relative logfile lives in `dir`, as with Redis.
TEST(ServerE2E, StartupBannerAndRelativeLogfile) {
  for (const char* logo : {"yes", "no"}) {
    SCOPED_TRACE(std::string("always-show-logo ") + logo);
    const ScopedTempDir scoped_dir;
    const std::string& dir = scoped_dir.path();
    {
      TestServer s({"--dir", dir, "--logfile", "server.log", "--always-show-logo", logo});
      ASSERT_TRUE(s.ready());
    }
    const std::string log = Slurp(dir + "/server.log");
    if (std::string(logo) == "yes") {
      EXPECT_NE(log.find(" PID: "), std::string::npos) << log;
      EXPECT_EQ(log.find("has no effect"), std::string::npos) << log;
    } else {
      EXPECT_NE(log.find("Running mode=standalone, port="), std::string::npos) << log;
    }
  }
}

// CLIENT REPLY OFF silences every reply until CLIENT REPLY ON, which itself
// answers +OK (Redis's test suite waits for that OK); SKIP silences itself
// and the next command only.
TEST(ServerE2E, ClientReplyOffOnAndSkip) {
  TestServer server;
  ASSERT_TRUE(server.ready());
  RawConn c(server.port());
  ASSERT_TRUE(c.Send(Resp({"CLIENT", "REPLY", "OFF"}) + Resp({"SET", "a", "1"}) + Resp({"PING"}) +
                     Resp({"CLIENT", "REPLY", "ON"}) + Resp({"GET", "a"})));
  EXPECT_EQ(c.ReadReply(), "+OK\r\n");
  EXPECT_EQ(c.ReadReply(), "$1\r\n1\r\n");
  ASSERT_TRUE(c.Send(Resp({"CLIENT", "REPLY", "SKIP"}) + Resp({"PING"}) + Resp({"PING", "x"})));
  EXPECT_EQ(c.ReadReply(), "$1\r\nx\r\n");
}

// Whether a process started with `ulimit -n 256` (soft and hard) may raise
// it to `to`: root may (CAP_SYS_RESOURCE), others may not pass their hard
// limit. Asked of a child, which may change its own limits freely.
bool MayRaiseOpenFilesFrom256(rlim_t to) {
  const pid_t pid = fork();
  if (pid == 0) {
    rlimit low{256, 256};
    rlimit high{to, to};
    _exit(setrlimit(RLIMIT_NOFILE, &low) == 0 && setrlimit(RLIMIT_NOFILE, &high) == 0 ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The "Max open files" soft limit of a process, from /proc.
std::string MaxOpenFiles(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/limits");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Max open files", 0) == 0) {
      std::istringstream words(line.substr(14));
      std::string soft;
      words >> soft;
      return soft;
    }
  }
  return "";
}

// As Redis 7.0's adjustOpenFilesLimit: a server started under `ulimit -n 256`
// with maxclients 300 raises its limit to 332 (maxclients + 32) -- or, where
// the kernel will not let it (not root), lowers maxclients to 224 and says
// why -- and then serves that many clients; CONFIG SET maxclients raises the
// limit again, or is refused with the most the limit allows. (Before, the
// server kept the low limit and failed accept after accept, logging each.)
TEST(ServerE2E, OpenFilesLimitFollowsMaxclients) {
  const bool may_raise = MayRaiseOpenFilesFrom256(332);
  const ScopedTempDir scoped_dir;
  const std::string& dir = scoped_dir.path();
  const char* outer = getenv("RINGKV_TEST_LAUNCHER");
  const std::string saved = outer != nullptr ? outer : "";
  setenv("RINGKV_TEST_LAUNCHER", ("/usr/bin/prlimit --nofile=256:256 -- " + saved).c_str(), 1);
  TestServer s({"--maxclients", "300", "--dir", dir, "--logfile", "server.log"});
  if (saved.empty()) {
    unsetenv("RINGKV_TEST_LAUNCHER");
  } else {
    setenv("RINGKV_TEST_LAUNCHER", saved.c_str(), 1);
  }
  ASSERT_TRUE(s.ready());
  RawConn probe(s.port());
  const std::string pid = Info(probe, "process_id", "server");
  auto maxclients = [&] { return Call(probe, {"CONFIG", "GET", "maxclients"}); };
  const std::string log = Slurp(dir + "/server.log");
  const int served = may_raise ? 300 : 224;
  if (may_raise) {
    EXPECT_NE(log.find("Increased maximum number of open files to 332 (it was originally set to 256)."),
              std::string::npos) << log;
    EXPECT_EQ(MaxOpenFiles(pid), "332");
    EXPECT_EQ(maxclients(), "*2\r\n$10\r\nmaxclients\r\n$3\r\n300\r\n");
  } else {
    EXPECT_NE(log.find("You requested maxclients of 300 requiring at least 332 max file descriptors."),
              std::string::npos) << log;
    EXPECT_NE(log.find("Server can't set maximum open files to 332 because of OS error: Operation not permitted."),
              std::string::npos) << log;
    EXPECT_NE(log.find("Current maximum open files is 256. maxclients has been reduced to 224 to compensate for "
                       "low ulimit. If you need higher maxclients increase 'ulimit -n'."),
              std::string::npos) << log;
    EXPECT_EQ(maxclients(), "*2\r\n$10\r\nmaxclients\r\n$3\r\n224\r\n");
  }
  // Every client up to maxclients is served (the probe is one),
  // the next is told so.
  std::vector<std::unique_ptr<RawConn>> conns;
  for (int i = 1; i < served; ++i) {
    conns.push_back(std::make_unique<RawConn>(s.port()));
    ASSERT_TRUE(conns.back()->Send("PING\r\n"));
  }
  for (auto& c : conns) ASSERT_EQ(c->ReadReply(), "+PONG\r\n");
  RawConn over(s.port());
  EXPECT_EQ(over.ReadReply(), "-ERR max number of clients reached\r\n");
  conns.clear();
  if (may_raise) {
    EXPECT_EQ(Call(probe, {"CONFIG", "SET", "maxclients", "400"}), "+OK\r\n");
    EXPECT_EQ(MaxOpenFiles(pid), "432");
  } else {
    EXPECT_EQ(Call(probe, {"CONFIG", "SET", "maxclients", "400"}),
              "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - The operating system is "
              "not able to handle the specified number of clients, try with 224\r\n");
    EXPECT_EQ(maxclients(), "*2\r\n$10\r\nmaxclients\r\n$3\r\n224\r\n");
    const std::string after = Slurp(dir + "/server.log");
    EXPECT_NE(after.find("You requested maxclients of 400 requiring at least 432 max file descriptors."),
              std::string::npos) << after;
    EXPECT_NE(after.find("Failed applying new configuration. Possibly related to new maxclients setting. Restoring "
                         "previous settings."),
              std::string::npos) << after;
  }
}

}  // namespace
}  // namespace ringkv::testing::server_e2e_test

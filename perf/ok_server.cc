// ok-server: answers every command with +OK using only the io library.
//
// The I/O ceiling of ringkv: the same rings, threads, parser and write path as
// ringkv-server, with no command table, no keyspace and no config. The gap
// between this and ringkv-server is command work; the gap between this and
// ../shared/bench/floor is the cost of ringkv's I/O layer itself. Its
// existence also proves io/ links without server/ or core/.
//
//   build/perf/ok-server --port 7000 [--io-threads N] [--bind ADDR]
// Other --name value options (as the bench scripts pass) are ignored.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "io/io_system.h"

namespace {

class OkSink : public ringkv::io::CommandSink {
 public:
  ringkv::io::IoSystem* io = nullptr;
  std::string OnAccept(const ringkv::io::SocketAddress&) override { return {}; }
  void OnOpen(ringkv::io::Connection*) override {}
  void OnCommand(ringkv::io::Connection* conn, std::span<const std::string_view>) override {
    io->PrepareWrite(conn).Append("+OK\r\n");
  }
  void OnProtocolError(ringkv::io::Connection* conn, std::string_view) override {
    io->PrepareWrite(conn).Append("-ERR Protocol error\r\n");
    io->CloseAfterReply(conn);
  }
  void OnClose(ringkv::io::Connection*) override {}
  int64_t OnTimer() override { return 100'000; }
  void BeforeFlush() override {}
};

ringkv::io::IoSystem* g_io = nullptr;
void OnSignal(int) {
  if (g_io) g_io->RequestStop();
}

}  // namespace

int main(int argc, char** argv) {
  ringkv::io::IoOptions opts;
  opts.bind = {"127.0.0.1"};
  for (int i = 1; i + 1 < argc; ++i) {
    std::string a = argv[i];
    if (a == "--port") opts.port = std::atoi(argv[++i]);
    else if (a == "--io-threads") opts.threads = std::atoi(argv[++i]);
    else if (a == "--bind") opts.bind = {argv[++i]};
    else if (a == "--io-backend") ringkv::io::ParseBackendChoice(argv[++i], &opts.backend);
  }
  OkSink sink;
  ringkv::io::IoSystem io(&sink);
  sink.io = &io;
  absl::Status s = io.Start(opts);
  if (!s.ok()) {
    std::fprintf(stderr, "ok-server: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  g_io = &io;
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  std::signal(SIGPIPE, SIG_IGN);
  io.Run();
  return 0;
}

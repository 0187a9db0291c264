// ringkv-server: ringkv-server [/path/to/ringkv.conf] [--name value ...]
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <clocale>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "core/strings.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "io/io_log.h"
#include "io/tls_context.h"
#include "server/config.h"
#include "server/kernel_checks.h"
#include "server/log_syslog.h"
#include "server/logging.h"
#include "server/oom_score.h"
#include "server/open_files_limit.h"
#include "server/proc_title.h"
#include "server/server.h"
#include "server/tls_config.h"
#include "server/supervision.h"
#include "server/version.h"

namespace {

using ringkv::StrCat;

ringkv::server::Server* g_server = nullptr;

void OnSignal(int sig) {
  if (g_server != nullptr) g_server->RequestShutdown(sig);
}

void Usage() {
  std::fprintf(stderr,
               "Usage: ./ringkv-server [/path/to/ringkv.conf] [options] [-]\n"
               "       ./ringkv-server - (read config from stdin)\n"
               "       ./ringkv-server -v or --version\n"
               "       ./ringkv-server -h or --help\n"
               "       ./ringkv-server --check-config /path/to/ringkv.conf [options] (validate, do not start)\n\n"
               "Examples:\n"
               "       ./ringkv-server (run the server with default conf)\n"
               "       ./ringkv-server /etc/redis/6379.conf\n"
               "       ./ringkv-server --port 7777\n"
               "       ./ringkv-server --port 7777 --replicaof 127.0.0.1 8888\n"
               "       ./ringkv-server /etc/myredis.conf --loglevel verbose -\n"
               "       ./ringkv-server /etc/myredis.conf --loglevel verbose\n");
}

// Turns "--port 7777 --save '' --bind a b" into config lines, as Redis 7.0
// does: each --name starts a line and the words after it are its (quoted)
// arguments. A name given alone takes the next word as its value even when
// that word starts with "--" (`--port --bla` sets port to "--bla"), except
// `--save` followed by another option or last, which means `save ""`. A
// name and value in one word ("--port 6380") is a whole line.
std::string ArgsToConfig(int argc, char** argv, int first) {
  std::string text;
  bool value_given = true;  // the line so far has its value (Redis's handled_last_config_arg)
  for (int i = first; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (value_given && a.starts_with("--")) {
      if (!text.empty()) text += "\n";
      text += a.substr(2);
      text += ' ';
      const std::string_view name = a.substr(2);
      // "--port 6380" in one word (two words once split) carries its value.
      std::string_view trimmed = name;
      while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back()))) trimmed.remove_suffix(1);
      value_given = trimmed.find_first_of(" \t") != std::string_view::npos;
      if (!value_given && ringkv::EqualsIgnoreCase(trimmed, "save")) {
        const bool option_next = i + 1 < argc && std::string_view(argv[i + 1]).starts_with("--");
        if (option_next || i + 1 == argc) {
          text += "\"\"";
          value_given = true;
        }
      }
      continue;
    }
    // A value, quoted as Redis's sdscatrepr quotes it.
    ringkv::AppendRepr(&text, a);
    text += ' ';
    value_given = true;
  }
  return text + "\n";
}

void Daemonize() {
  if (fork() != 0) _exit(0);
  setsid();
  int fd = open("/dev/null", O_RDWR);
  if (fd >= 0) {
    dup2(fd, STDIN_FILENO);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    if (fd > STDERR_FILENO) close(fd);
  }
}

void IoLog(int level, std::string_view message) { ringkv::server::Log(level, message); }

// The start-up banner: with always-show-logo (or a terminal) a block naming
// the version, mode, port and " PID: <pid>" -- the words Redis's logo carries
// and that tools and Redis's test suite wait for -- else Redis's one line.
void LogStartupBanner(const ringkv::server::Config& config) {
  using namespace ringkv::server;  // NOLINT: Log, kNotice, the version strings
  const int64_t port = config.Int("port");
  const char* mode = config.Bool("cluster-enabled") ? "cluster" : "standalone";
  if (!config.Bool("always-show-logo") && !LogIsTerminal()) {
    Log(kNotice, absl::StrCat("Running mode=", mode, ", port=", port, "."));
    return;
  }
  LogRaw(kNotice, absl::StrCat("\n",                                                                   //
                               "    .--------------.    ringkv ", kRingkvVersion,                        //
                               " (Redis ", kRedisVersion, " compatible) 64 bit\n",                      //
                               "    |  r i n g k v |\n",                                                //
                               "    |   ( o---o )  |    Running in ", mode, " mode\n",                     //
                               "    |  io_uring    |    Port: ", port, "\n",                            //
                               "    '--------------'    PID: ", getpid(), "\n\n"));
}

// Reads the configuration: the file named first (unless it is an option),
// then the command-line options. Returns the process exit code when the
// process is to stop here (a version or help request, a bad configuration,
// --check-config FILE: 0 and "Configuration OK" when FILE and the options
// after it load and validate, else 1 and the error on stderr; nothing is
// bound, loaded or written either way).
std::optional<int> LoadConfig(int argc, char** argv, ringkv::server::Config* config) {
  using namespace ringkv::server;
  int first_option = 1;
  bool check_only = false;
  if (argc >= 2 && std::string_view(argv[1]) == "--check-config") {
    if (argc < 3) {
      std::fprintf(stderr, "--check-config needs the path of a configuration file\n");
      return 2;
    }
    check_only = true;
    ++argv;
    --argc;
  }
  if (argc >= 2) {
    std::string a1 = argv[1];
    if (a1 == "-v" || a1 == "--version") {
      std::printf("ringkv server v=%s (Redis %s compatible) io=io_uring malloc=mimalloc bits=64\n", kRingkvVersion,
                  kRedisVersion);
      return 0;
    }
    if (a1 == "-h" || a1 == "--help") {
      Usage();
      return 0;
    }
    if (!a1.starts_with("--")) {
      first_option = 2;
      if (absl::Status s = config->LoadFile(a1); !s.ok()) {
        std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
        return 1;
      }
    }
  }
  if (first_option < argc) {
    if (absl::Status s = config->LoadString(ArgsToConfig(argc, argv, first_option)); !s.ok()) {
      std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
      return 1;
    }
  }
  if (check_only) {
    for (const std::string& w : config->warnings()) std::fprintf(stderr, "%s\n", w.c_str());
    std::printf("Configuration OK\n");
    return 0;
  }
  return std::nullopt;
}

// Moves into `dir`, opens the log (and syslog), resolves `supervised`, then
// daemonizes when asked and not supervised (as Redis: a supervisor tracks
// the process it started). Returns the pidfile to write ("" for none).
// False after reporting on stderr.
bool SetUpProcess(ringkv::server::Config* config, std::string* pidfile) {
  using namespace ringkv::server;
  const std::string logfile = config->Str("logfile");
  // Into `dir` first: a relative logfile lives there, as with Redis (which
  // changes directory while it reads the configuration).
  if (chdir(config->Str("dir").c_str()) != 0) {
    std::fprintf(stderr, "Can't chdir to '%s': %s\n", config->Str("dir").c_str(), std::strerror(errno));
    return false;
  }
  if (!logfile.empty() && !OpenLog(logfile)) {
    std::fprintf(stderr, "Can't open the log file: %s\n", std::strerror(errno));
    return false;
  }
  SetLogLevel(LogLevelFromName(config->Str("loglevel")));
  if (config->Bool("syslog-enabled")) OpenSyslog(config->Str("syslog-ident"), config->Str("syslog-facility"));
  ringkv::io::SetLogFunction(IoLog);
  SetUpSupervision(config->Str("supervised"));
  const bool daemonize = config->Bool("daemonize") && !Supervised();
  if (daemonize) Daemonize();
  *pidfile = config->Str("pidfile");
  if (pidfile->empty() && daemonize) {
    *pidfile = "/var/run/redis.pid";
    (void)config->SetValue("pidfile", {*pidfile});
  }
  return true;
}

void LogStarting(const ringkv::server::Config& config) {
  using namespace ringkv::server;
  Log(kNotice, "oO0OoO0OoO0Oo ringkv is starting oO0OoO0OoO0Oo");
  Log(kNotice, StrCat("ringkv version=", kRingkvVersion, ", Redis ", kRedisVersion,
                      " compatible, bits=64, pid=", getpid(), ", just started"));
  if (config.file().empty()) {
    Log(kWarning, "Warning: no config file specified, using the default config. In order to specify a config file "
                  "use ringkv-server /path/to/ringkv.conf");
  } else {
    Log(kNotice, "Configuration loaded");
  }
  for (const std::string& w : config.warnings()) Log(kWarning, w);
}

void WritePidFile(const std::string& pidfile) {
  using namespace ringkv::server;
  if (pidfile.empty()) return;
  if (FILE* f = std::fopen(pidfile.c_str(), "w")) {
    std::fprintf(f, "%d\n", static_cast<int>(getpid()));
    std::fclose(f);
  } else {
    Log(kWarning, StrCat("Failed to write PID file: ", std::strerror(errno)));
  }
}

void InstallSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

// As Redis: {title} is the name the server was started as (argv[0]), and
// {listen-addr} the first bind address with the TCP port (the TLS port when
// only that is open, the Unix socket when neither is).
ringkv::server::ProcTitleVars ProcTitleVarsOf(const ringkv::server::Config& config, std::string_view argv0) {
  using ringkv::StrCat;
  ringkv::server::ProcTitleVars v;
  v.title = std::string(argv0);
  const std::string& bind = config.Str("bind");
  const std::string first = bind.substr(0, bind.find(' '));
  const int64_t port = config.Int("port");
  const int64_t tls_port = config.Int("tls-port");
  v.port = StrCat(port);
  v.tls_port = StrCat(tls_port);
  if (config.Bool("cluster-enabled")) v.server_mode = "[cluster]";
  if (port != 0 || tls_port != 0) {
    v.listen_addr = StrCat(first.empty() ? "*" : first, ":", port != 0 ? port : tls_port);
  } else {
    v.listen_addr = StrCat("unixsocket:", config.Str("unixsocket"));
  }
  v.unixsocket = config.Str("unixsocket");
  v.config_file = config.file();
  return v;
}

std::string ExecutablePath(const char* argv0) {
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  return n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string(argv0);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ringkv::server;
  InitProcTitle(argc, argv);  // first: it moves argv's strings and the environment
  // As Redis: the environment's collation, which SORT ... ALPHA (strcoll)
  // and Lua's string comparisons follow.
  std::setlocale(LC_COLLATE, "");
  // Before OpenSSL allocates: TLS on the I/O threads, out of a fork's way.
  const bool openssl_gated = ringkv::io::RouteOpenSslAllocations();
#ifdef NDEBUG
  // Debian's Abseil is built with its deadlock detector on: every
  // Mutex::Lock updates a graph of lock orders (a few hundred instructions
  // a lock, docs/performance.md 39.2). A debugging aid: debug and sanitizer
  // builds keep it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
  auto config = std::make_unique<Config>();
  if (std::optional<int> code = LoadConfig(argc, argv, config.get())) return *code;
  std::string pidfile;
  if (!SetUpProcess(config.get(), &pidfile)) return 1;
  LogStarting(*config);
  if (!openssl_gated) Log(kWarning, "OpenSSL allocated before start-up could route its allocations through the fork gate");
  // As Redis's initServer: the descriptors maxclients needs, before anything
  // is opened (the I/O threads' fixed-file tables are sized from the limit).
  const int64_t maxclients = config->Int("maxclients");
  const OpenFilesLimit files = AdjustOpenFilesLimit(maxclients);
  if (files.cannot_start) return 1;
  if (files.maxclients != maxclients) (void)config->SetValue("maxclients", {std::to_string(files.maxclients)});

  Server server(std::move(config));
  server.set_executable(ExecutablePath(argv[0]));
  // proc-title-template, now and after each CONFIG SET of it.
  server.config().Bind({"proc-title-template", "port", "tls-port", "bind", "unixsocket"},
                       [&cfg = server.config(), title = std::string(argv[0])] {
                         if (!cfg.Bool("set-proc-title")) return;
                         SetProcTitle(cfg.Str("proc-title-template"), ProcTitleVarsOf(cfg, title));
                       });
  // As Redis: bind, then the banner, then load. A port that cannot be bound
  // never shows a PID, and Redis's words for it make tools and its test
  // suite retry on another port; a dataset that fails to load is logged
  // after the banner.
  // The I/O backend is chosen before anything is bound or loaded: io_uring
  // refused (a container's seccomp profile) or lacking a feature falls back
  // to epoll here, with the reason logged once, not after a long load.
  ringkv::io::BackendChoice backend = ringkv::io::BackendChoice::kAuto;
  ringkv::io::ParseBackendChoice(server.config().Str("io-backend"), &backend);
  if (absl::Status s = server.io().ChooseBackend(backend); !s.ok()) {
    Log(kWarning, std::string(s.message()));
    return 1;
  }
  // TLS before the listeners, as Redis: a bad certificate or key stops
  // start-up with its reason (logged by ConfigureTls) and Redis's line.
  if (ringkv::server::TlsEnabled(server.config()) &&
      !ringkv::server::ConfigureTls(server.config(), server.io()).ok()) {
    Log(kWarning, "Failed to configure TLS. Check logs for more info.");
    return 1;
  }
  if (absl::Status s = server.Listen(); !s.ok()) {
    Log(kWarning, std::string(s.message()));
    Log(kWarning, StrCat("Failed listening on port ", server.config().Int("port"), " (TCP), aborting."));
    return 1;
  }
  // As Redis's initServer: the cluster's nodes.conf lock before
  // the pidfile, which a node refused the lock must leave to its owner.
  if (absl::Status s = server.Init(); !s.ok()) {
    Log(kWarning, std::string(s.message()));
    return 1;
  }
  // As Redis: the pidfile once the port is ours, before the (maybe long)
  // load, so that an init script sees the process at once.
  WritePidFile(pidfile);
  LogStartupBanner(server.config());
  LogTcpBacklogWarning(server.config().Int("tcp-backlog"));
  // Before the load, as Redis: SIGTERM while loading stops the load and
  // exits without saving half a dataset.
  g_server = &server;
  InstallSignalHandlers();
  if (absl::Status s = server.Start(); !s.ok()) {
    g_server = nullptr;
    Log(kWarning, std::string(s.message()));
    if (!pidfile.empty()) unlink(pidfile.c_str());
    return 1;
  }
  const bool replica = !server.config().Str("replicaof").empty();
  (void)ApplyOomScore(server.config(), replica ? OomClass::kReplica : OomClass::kPrimary);
  Log(kNotice, StrCat("Server initialized (io-threads ", server.io().threads(), ", ", server.io().backend_name(), ")"));
  LogKernelMemoryWarnings(std::string_view(server.io().backend_name()) == "io_uring");
  for (const std::string& addr : server.io().listening_addresses()) {
    Log(kNotice, StrCat("Listening on ", addr));
  }
  if (!server.io().listening_addresses().empty()) Log(kNotice, "Ready to accept connections tcp");
  if (!server.io().unix_socket().empty()) {
    Log(kNotice, StrCat("The server is now ready to accept connections at ", server.io().unix_socket()));
    Log(kNotice, "Ready to accept connections unix");
  }
  NotifyReady(replica);
  int code = server.Run();
  g_server = nullptr;
  return code;
}

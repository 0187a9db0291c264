#include "server/logging.h"

#include "server/log_syslog.h"

#include <fcntl.h>
#include <sys/time.h>
#include <syslog.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace ringkv::server {
namespace {
std::atomic<int> g_level{kNotice};
int g_fd = STDOUT_FILENO;
bool g_syslog = false;
std::string g_syslog_ident;  // openlog keeps the pointer: it must outlive the process's logging

void ToSyslog(int level, std::string_view message) {
  if (!g_syslog) return;
  static const int kPriorities[] = {LOG_DEBUG, LOG_INFO, LOG_NOTICE, LOG_WARNING};
  syslog(kPriorities[level < 0 ? 0 : (level > 3 ? 3 : level)], "%.*s", static_cast<int>(message.size()),
         message.data());
}
}  // namespace

void OpenSyslog(const std::string& ident, std::string_view facility) {
  int f = LOG_USER;
  static const int kLocal[] = {LOG_LOCAL0, LOG_LOCAL1, LOG_LOCAL2, LOG_LOCAL3,
                               LOG_LOCAL4, LOG_LOCAL5, LOG_LOCAL6, LOG_LOCAL7};
  if (facility.size() == 6 && facility.starts_with("local") && facility[5] >= '0' && facility[5] <= '7') {
    f = kLocal[facility[5] - '0'];
  }
  g_syslog_ident = ident;
  openlog(g_syslog_ident.c_str(), LOG_PID | LOG_NDELAY | LOG_NOWAIT, f);
  g_syslog = true;
}

bool OpenLog(const std::string& path) {
  if (path.empty()) {
    g_fd = STDOUT_FILENO;
    return true;
  }
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  g_fd = fd;
  return true;
}

void SetLogLevel(int level) { g_level.store(level, std::memory_order_relaxed); }

int LogLevelFromName(std::string_view name) {
  if (name == "debug") return kDebug;
  if (name == "verbose") return kVerbose;
  if (name == "warning") return kWarning;
  return kNotice;
}

namespace {
// As Redis marks its log lines: 'M' a primary, 'S' a replica, 'C' a forked
// child. Set by the main thread, read by any thread that logs.
std::atomic<char> g_role{'M'};
}  // namespace

void SetLogRoleChild() { g_role.store('C', std::memory_order_relaxed); }
void SetLogRoleReplica(bool replica) { g_role.store(replica ? 'S' : 'M', std::memory_order_relaxed); }

void Log(int level, std::string_view message) {
  if (level < g_level.load(std::memory_order_relaxed)) return;
  static const char kMarks[] = ".-*#";
  timeval tv;
  gettimeofday(&tv, nullptr);
  tm t;
  localtime_r(&tv.tv_sec, &t);
  char stamp[64];
  size_t n = strftime(stamp, sizeof(stamp), "%d %b %Y %H:%M:%S.", &t);
  snprintf(stamp + n, sizeof(stamp) - n, "%03d", static_cast<int>(tv.tv_usec / 1000));
  std::string line;
  line.reserve(message.size() + 64);
  line += std::to_string(getpid());
  line += ':';
  line += g_role.load(std::memory_order_relaxed);
  line += ' ';
  line += stamp;
  line += ' ';
  line += kMarks[level < 0 ? 0 : (level > 3 ? 3 : level)];
  line += ' ';
  line += message;
  line += '\n';
  ssize_t w = write(g_fd, line.data(), line.size());
  (void)w;
  ToSyslog(level, message);
}

void LogRaw(int level, std::string_view text) {
  if (level < g_level.load(std::memory_order_relaxed)) return;
  ssize_t w = write(g_fd, text.data(), text.size());
  (void)w;
  ToSyslog(level, text);
}

void LogRawFromHandler(const char* text, size_t len) {
  ssize_t w = write(g_fd, text, len);
  (void)w;
}

int LogFileDescriptor() { return g_fd; }

bool LogIsTerminal() { return isatty(g_fd) == 1; }

void Panic(std::string_view why) {
  // Redis's serverPanic report, in the lines operators and tests grep for.
  Log(kWarning, "\n\n=== REDIS BUG REPORT START: Cut & paste starting from here ===");
  Log(kWarning, "------------------------------------------------");
  Log(kWarning, "!!! Software Failure. Press left mouse button to continue");
  Log(kWarning, std::string("Guru Meditation: ").append(why));
  Log(kWarning, "\n=== REDIS BUG REPORT END. Make sure to include from START to END. ===\n\n");
  std::abort();
}

}  // namespace ringkv::server

#include "server/kernel_checks.h"

#include <sys/prctl.h>
#include <sys/resource.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "core/strings.h"
#include "server/logging.h"

namespace ringkv::server {
namespace {

// The first line of a /proc or /sys file; empty when it cannot be read.
std::string ReadFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Below this, io_uring_setup or the registration of a buffer ring may fail
// with ENOMEM on kernels that charge ring memory to RLIMIT_MEMLOCK.
constexpr rlim_t kMinMemlockForUring = 64 * 1024;

}  // namespace

void LogTcpBacklogWarning(int64_t tcp_backlog) {
  const std::string line = ReadFirstLine("/proc/sys/net/core/somaxconn");
  if (line.empty()) return;
  const int64_t somaxconn = std::atoll(line.c_str());
  if (somaxconn < tcp_backlog) {
    Log(kWarning, StrCat("WARNING: The TCP backlog setting of ", tcp_backlog,
                         " cannot be enforced because /proc/sys/net/core/somaxconn is set to the lower value of ",
                         somaxconn, "."));
  }
}

void LogKernelMemoryWarnings(bool uses_io_uring) {
  const std::string overcommit = ReadFirstLine("/proc/sys/vm/overcommit_memory");
  if (!overcommit.empty() && overcommit != "1") {
    Log(kWarning,
        "WARNING Memory overcommit must be enabled! Without it, a background save or replication may fail under "
        "low memory condition. Being disabled, it can can also cause failures without low memory condition, see "
        "https://github.com/jemalloc/jemalloc/issues/1328. To fix this issue add 'vm.overcommit_memory = 1' to "
        "/etc/sysctl.conf and then reboot or run the command 'sysctl vm.overcommit_memory=1' for this to take "
        "effect.");
  }
  const std::string thp = ReadFirstLine("/sys/kernel/mm/transparent_hugepage/enabled");
  if (thp.find("[always]") != std::string::npos && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0) {
    Log(kWarning,
        "WARNING you have Transparent Huge Pages (THP) support enabled in your kernel. This will create latency "
        "and memory usage issues with Redis. To fix this issue run the command 'echo madvise > "
        "/sys/kernel/mm/transparent_hugepage/enabled' as root, and add it to your /etc/rc.local in order to retain "
        "the setting after a reboot. Redis must be restarted after THP is disabled (set to 'madvise' or 'never').");
  }
  rlimit memlock{};
  if (uses_io_uring && getrlimit(RLIMIT_MEMLOCK, &memlock) == 0 && memlock.rlim_cur != RLIM_INFINITY &&
      memlock.rlim_cur < kMinMemlockForUring) {
    Log(kWarning, StrCat("WARNING: RLIMIT_MEMLOCK is ", memlock.rlim_cur,
                         " bytes: io_uring may refuse new rings or buffer rings (ENOMEM). Raise it with "
                         "`ulimit -l unlimited` or LimitMEMLOCK=infinity in the service unit."));
  }
}

}  // namespace ringkv::server

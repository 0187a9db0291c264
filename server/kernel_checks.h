// Start-up warnings about kernel settings, as Redis 7.0 logs them, plus the
// one io_uring adds. Each check reads /proc or /sys and logs one "WARNING"
// line when the setting will hurt; none changes the system (except THP: like
// Redis, the process opts itself out with PR_SET_THP_DISABLE and warns only
// when it cannot).
//
//   LogTcpBacklogWarning(511);          // before the listeners' start-up lines
//   LogKernelMemoryWarnings(uses_io_uring);  // after "Server initialized"
//
// Thread-safety: main thread, at start-up.
#pragma once

#include <cstdint>

namespace ringkv::server {

// somaxconn lower than tcp-backlog: listen(2) silently truncates the backlog.
void LogTcpBacklogWarning(int64_t tcp_backlog);
// vm.overcommit_memory != 1 (a fork for BGSAVE or a full sync may fail);
// transparent huge pages set to "always" and not disabled for this process;
// with io_uring, an RLIMIT_MEMLOCK so low that rings or buffer rings may be
// refused.
void LogKernelMemoryWarnings(bool uses_io_uring);

}  // namespace ringkv::server

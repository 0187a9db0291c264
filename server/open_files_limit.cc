#include "server/open_files_limit.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/logging.h"

namespace ringkv::server {

OpenFilesLimit AdjustOpenFilesLimit(int64_t maxclients) {
  using absl::StrCat;
  const auto needed = static_cast<rlim_t>(maxclients + kReservedFds);
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == -1) {
    Log(kWarning, StrCat("Unable to obtain the current NOFILE limit (", std::strerror(errno),
                         "), assuming 1024 and setting the max clients configuration accordingly."));
    return {1024 - kReservedFds, false};
  }
  const rlim_t old_limit = limit.rlim_cur;
  if (old_limit >= needed) return {maxclients, false};
  // The highest limit the kernel grants up to the need, 16 fewer at a try
  // (an unprivileged process cannot pass its hard limit; no one passes
  // fs.nr_open).
  rlim_t best = needed;
  int error = 0;
  while (best > old_limit) {
    constexpr rlim_t kStep = 16;
    limit.rlim_cur = best;
    limit.rlim_max = best;
    if (setrlimit(RLIMIT_NOFILE, &limit) != -1) break;
    error = errno;
    if (best < kStep) {
      best = old_limit;
      break;
    }
    best -= kStep;
  }
  if (best < old_limit) best = old_limit;  // the limit it started with still holds
  if (best >= needed) {
    Log(kNotice, StrCat("Increased maximum number of open files to ", needed, " (it was originally set to ",
                        old_limit, ")."));
    return {maxclients, false};
  }
  if (best <= static_cast<rlim_t>(kReservedFds)) {
    Log(kWarning, StrCat("Your current 'ulimit -n' of ", old_limit,
                         " is not enough for the server to start. Please increase your open file limit to at least ",
                         needed, ". Exiting."));
    return {0, true};
  }
  const int64_t reduced = static_cast<int64_t>(best) - kReservedFds;
  Log(kWarning, StrCat("You requested maxclients of ", maxclients, " requiring at least ", needed,
                       " max file descriptors."));
  Log(kWarning, StrCat("Server can't set maximum open files to ", needed, " because of OS error: ",
                       std::strerror(error), "."));
  Log(kWarning, StrCat("Current maximum open files is ", best, ". maxclients has been reduced to ", reduced,
                       " to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'."));
  return {reduced, false};
}

}  // namespace ringkv::server

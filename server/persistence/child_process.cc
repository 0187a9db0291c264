#include "server/persistence/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "core/strings.h"
#include "server/logging.h"

namespace ringkv::server {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

uint64_t ChildDirtyBytes() {
  int fd = ::open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[4096];
  ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char* p = std::strstr(buf, "Private_Dirty:");
  if (p == nullptr) return 0;
  unsigned long long kb = 0;
  if (std::sscanf(p, "Private_Dirty: %llu kB", &kb) != 1) return 0;
  return kb * 1024;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    ChildResult ignored;
    Kill(&ignored);
  }
}

absl::Status ChildProcess::Start(ChildType type, const std::function<int()>& work) {
  if (pid_ > 0) return absl::FailedPreconditionError("a child process is already running");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return absl::InternalError(StrCat("pipe: ", std::strerror(errno)));
  auto start = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return absl::InternalError(StrCat("fork: ", std::strerror(err)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    // The parent's handlers would touch the parent's event loop state.
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGUSR1, SIG_DFL);
    SetLogRoleChild();
    int code = work();
    uint64_t cow = ChildDirtyBytes();
    ssize_t w = ::write(fds[1], &cow, sizeof(cow));
    (void)w;
    ::_exit(code);
  }
  last_fork_us_ =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
  ++total_forks_;
  ::close(fds[1]);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  pid_ = pid;
  type_ = type;
  info_fd_ = fds[0];
  start_ms_ = NowMs();
  killing_ = false;
  if (on_running_changed_) on_running_changed_(true);
  return absl::OkStatus();
}

void ChildProcess::Finish(int status, ChildResult* result) {
  result->type = type_;
  result->pid = pid_;
  result->ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  result->killed_by_us = killing_ || (WIFSIGNALED(status) && WTERMSIG(status) == SIGUSR1);
  result->duration_ms = NowMs() - start_ms_;
  result->cow_bytes = 0;
  uint64_t cow;
  if (::read(info_fd_, &cow, sizeof(cow)) == static_cast<ssize_t>(sizeof(cow))) result->cow_bytes = cow;
  ::close(info_fd_);
  info_fd_ = -1;
  pid_ = -1;
  type_ = ChildType::kNone;
  if (on_running_changed_) on_running_changed_(false);
}

bool ChildProcess::Poll(ChildResult* result) {
  if (pid_ <= 0) return false;
  int status;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == 0) return false;
  if (r < 0) status = 0xFF00;  // lost the child: report a failure
  Finish(status, result);
  return true;
}

void ChildProcess::Kill(ChildResult* result) {
  if (pid_ <= 0) return;
  killing_ = true;
  ::kill(pid_, SIGUSR1);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  Finish(status, result);
}

}  // namespace ringkv::server

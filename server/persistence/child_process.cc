#include "server/persistence/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "absl/strings/str_format.h"
#include "core/cluster/nodes_conf_lock.h"
#include "core/strings.h"
#include "io/fork_gate.h"
#include "server/logging.h"
#include "server/oom_score.h"

namespace ringkv::server {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// One message on the child's report pipe; smaller than PIPE_BUF, so each
// write is atomic.
struct ChildReport {
  uint64_t keys_processed;
  uint64_t cow_bytes;
  uint64_t is_final;  // 1: the last report, sent just before exiting
};

// In the child only: the write end of its report pipe (-1 in the parent),
// and when (CLOCK_MONOTONIC ms) it last reported.
int g_child_report_fd = -1;
int64_t g_child_reported_ms = -1;
uint64_t g_child_keys_processed = 0;

int64_t MonotonicMs() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void SendChildReport(bool is_final) {
  ChildReport r{g_child_keys_processed, ChildDirtyBytes(), is_final ? 1u : 0u};
  ssize_t w = ::write(g_child_report_fd, &r, sizeof(r));  // a full pipe drops a progress report
  (void)w;
}

}  // namespace

void ChildReportProgress(uint64_t keys_processed) {
  if (g_child_report_fd < 0) return;
  g_child_keys_processed = keys_processed;
  constexpr int64_t kReportIntervalMs = 1000;  // reading smaps costs: as Redis, about once a second
  const int64_t now = MonotonicMs();
  if (g_child_reported_ms >= 0 && now - g_child_reported_ms < kReportIntervalMs) return;
  g_child_reported_ms = now;
  SendChildReport(/*is_final=*/false);
}

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
  if (running()) {
    ChildResult ignored;
    Kill(&ignored);
  }
}

pid_t ChildProcess::pid() const { return work_ != nullptr ? 0 : pid_; }

absl::Status ChildProcess::StartInProcess(ChildType type, std::unique_ptr<InProcessWork> work, uint64_t keys_total) {
  if (running()) return absl::FailedPreconditionError("a child process is already running");
  work_ = std::move(work);
  work_finished_ = false;
  type_ = type;
  start_ms_ = NowMs();
  killing_ = false;
  ResetProgress();
  keys_total_ = keys_total;
  return absl::OkStatus();
}

int64_t ChildProcess::StepInProcess() {
  if (work_ == nullptr || work_finished_) return -1;
  const int64_t next = work_->Step();
  keys_processed_ = work_->keys_processed();
  cow_bytes_ = work_->copied_bytes();
  cow_peak_ = cow_bytes_;  // it only grows
  cow_updated_ms_ = NowMs();
  if (next == InProcessWork::kFinished) work_finished_ = true;
  return work_finished_ ? -1 : next;
}

void ChildProcess::FinishInProcess(bool killed, ChildResult* result) {
  result->type = type_;
  result->pid = 0;
  result->in_process = true;
  result->ok = !killed && work_->ok();
  result->killed_by_us = killed;
  result->duration_ms = NowMs() - start_ms_;
  result->cow_bytes = work_->copied_bytes();
  work_.reset();  // an unfinished one removes what it wrote
  type_ = ChildType::kNone;
  ResetProgress();
}

absl::Status ChildProcess::Start(ChildType type, const std::function<int()>& work, uint64_t keys_total) {
  if (running()) return absl::FailedPreconditionError("a child process is already running");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return absl::InternalError(StrCat("pipe: ", std::strerror(errno)));
  auto start = std::chrono::steady_clock::now();
  const pid_t parent = ::getpid();
  // With every helper thread out of the allocator (io/fork_gate.h).
  pid_t pid = io::ForkGate::Fork();
  if (pid < 0) {
    int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return absl::InternalError(StrCat("fork: ", std::strerror(err)));
  }
  if (pid == 0) {
    // A child outliving a crashed server would hold its listening sockets
    // (through the inherited descriptors and io_uring instances), and the
    // restarted server could not bind its port: it dies with the server.
    // Its work is the server's (a half-written temp file is what any crash
    // leaves).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::close(fds[0]);
    // The child must not keep the nodes.conf lock alive after the server
    // exits (see nodes_conf_lock.h).
    cluster::NodesConfLock::CloseAllInForkChild();
    // The parent's handlers would touch the parent's event loop state.
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGUSR1, SIG_DFL);
    SetLogRoleChild();
    ApplyOomScoreInChild();
    ::fcntl(fds[1], F_SETFL, O_NONBLOCK);  // progress never blocks the work
    g_child_report_fd = fds[1];
    int code = work();
    SendChildReport(/*is_final=*/true);
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
  ResetProgress();
  keys_total_ = keys_total;
  if (on_running_changed_) on_running_changed_(true);
  return absl::OkStatus();
}

void ChildProcess::Finish(int status, ChildResult* result) {
  result->type = type_;
  result->pid = pid_;
  result->ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  result->killed_by_us = killing_ || (WIFSIGNALED(status) && WTERMSIG(status) == SIGUSR1);
  result->duration_ms = NowMs() - start_ms_;
  DrainReports();
  result->cow_bytes = final_cow_;
  ::close(info_fd_);
  info_fd_ = -1;
  pid_ = -1;
  type_ = ChildType::kNone;
  ResetProgress();
  if (on_running_changed_) on_running_changed_(false);
}

void ChildProcess::DrainReports() {
  ChildReport r;
  while (::read(info_fd_, &r, sizeof(r)) == static_cast<ssize_t>(sizeof(r))) {
    if (r.is_final != 0) {
      final_cow_ = r.cow_bytes;
      continue;
    }
    keys_processed_ = r.keys_processed;
    cow_bytes_ = r.cow_bytes;
    cow_peak_ = std::max(cow_peak_, r.cow_bytes);
    cow_updated_ms_ = NowMs();
  }
}

void ChildProcess::ResetProgress() {
  keys_total_ = keys_processed_ = cow_bytes_ = cow_peak_ = final_cow_ = 0;
  cow_updated_ms_ = 0;
}

void ChildProcess::AppendCurrentInfo(std::string* out, int64_t now_ms) const {
  const double perc = keys_total_ ? 100.0 * static_cast<double>(keys_processed_) / static_cast<double>(keys_total_) : 0;
  StrAppend(out, "current_cow_peak:", cow_peak_, "\r\n");
  StrAppend(out, "current_cow_size:", cow_bytes_, "\r\n");
  StrAppend(out, "current_cow_size_age:", cow_updated_ms_ ? (now_ms - cow_updated_ms_) / 1000 : 0, "\r\n");
  StrAppend(out, "current_fork_perc:", absl::StrFormat("%.2f", perc), "\r\n");
  StrAppend(out, "current_save_keys_processed:", keys_processed_, "\r\n");
  StrAppend(out, "current_save_keys_total:", keys_total_, "\r\n");
}

bool ChildProcess::Poll(ChildResult* result) {
  if (work_ != nullptr) {
    if (!work_finished_) return false;
    FinishInProcess(/*killed=*/false, result);
    return true;
  }
  if (pid_ <= 0) return false;
  DrainReports();
  int status;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == 0) return false;
  if (r < 0) status = 0xFF00;  // lost the child: report a failure
  Finish(status, result);
  return true;
}

void ChildProcess::Kill(ChildResult* result) {
  if (work_ != nullptr) {
    FinishInProcess(/*killed=*/!work_finished_, result);
    return;
  }
  if (pid_ <= 0) return;
  killing_ = true;
  ::kill(pid_, SIGUSR1);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  Finish(status, result);
}

}  // namespace ringkv::server

#include "io/fork_gate.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "gtest/gtest.h"

namespace ringkv::io {
namespace {

// Waits for child `pid`: its exit code, or -1 if it did not exit normally.
int ExitCodeOf(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(ForkGateTest, HelperThreadsRegisterForTheirLifetime) {
  const size_t before = ForkGate::HelperThreads();
  std::atomic<bool> registered{false}, release{false};
  std::thread helper([&] {
    ForkGate::HelperThread gate;
    registered = true;
    while (!release) std::this_thread::yield();
  });
  while (!registered) std::this_thread::yield();
  EXPECT_EQ(ForkGate::HelperThreads(), before + 1);
  release = true;
  helper.join();
  EXPECT_EQ(ForkGate::HelperThreads(), before);
}

// StartHelperThread returns only once the new thread is registered: a
// thread's start allocates outside any gate, so its creator (the thread
// that forks) must not fork before. The count is read as soon as it
// returns: without the wait it finds the new thread not yet registered.
TEST(ForkGateTest, StartHelperThreadReturnsOnceTheThreadIsRegistered) {
  const size_t before = ForkGate::HelperThreads();
  std::atomic<bool> release{false};
  std::thread helper = ForkGate::StartHelperThread([&] {
    while (!release) std::this_thread::yield();
  });
  EXPECT_EQ(ForkGate::HelperThreads(), before + 1);
  release = true;
  helper.join();
  EXPECT_EQ(ForkGate::HelperThreads(), before);
}

// The helper is inside an allocation when the fork is asked for: the fork
// waits for it to end, so the child sees it ended and the parent's helper
// goes on afterwards. Without the gate the child would be forked at once,
// with `finished` false.
TEST(ForkGateTest, ForkWaitsForAHelperInsideAnAllocation) {
  std::atomic<bool> inside{false}, finished{false}, allocated_after{false};
  std::thread helper([&] {
    ForkGate::HelperThread gate;
    {
      ForkGate::AllocationScope allocation;
      inside = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      finished = true;
    }
    ForkGate::AllocationScope next;  // the gate opens again in the parent
    allocated_after = true;
  });
  while (!inside) std::this_thread::yield();
  const pid_t pid = ForkGate::Fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(finished ? 0 : 1);
  EXPECT_TRUE(finished);
  EXPECT_EQ(ExitCodeOf(pid), 0) << "the child was forked while the helper was inside its allocation";
  helper.join();
  EXPECT_TRUE(allocated_after);
}

// A helper that is ending frees memory outside its gate (its std::thread
// state, thread_local objects, the sanitizer's caches): the fork waits for
// the thread to be gone. Here its "exit work" is a sleep after its
// HelperThread ended; without the wait the child would see it unfinished.
TEST(ForkGateTest, ForkWaitsForAnEndingHelperToBeGone) {
  const size_t before = ForkGate::HelperThreads();
  std::atomic<bool> ended{false}, exit_work_done{false};
  std::thread helper([&] {
    { ForkGate::HelperThread gate; }
    ended = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    exit_work_done = true;
  });
  while (!ended) std::this_thread::yield();
  EXPECT_EQ(ForkGate::HelperThreads(), before);  // ending: no longer counted
  const pid_t pid = ForkGate::Fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(exit_work_done ? 0 : 1);
  EXPECT_TRUE(exit_work_done);
  EXPECT_EQ(ExitCodeOf(pid), 0) << "the child was forked while an ending helper was still running";
  helper.join();
}

// A thread that is not a helper (the main thread) passes through
// AllocationScope without a lock, also while nested; and it can fork with
// no helper registered.
TEST(ForkGateTest, OtherThreadsPassFreely) {
  {
    ForkGate::AllocationScope outer;
    ForkGate::AllocationScope inner;  // would deadlock if it locked
  }
  const pid_t pid = ForkGate::Fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(7);
  EXPECT_EQ(ExitCodeOf(pid), 7);
}

// The child has no helper thread, and none is registered there (glibc
// reuses the helpers' stacks, where their gates were): a thread started
// there registers and allocates, and the child can fork again.
TEST(ForkGateTest, TheChildStartsWithNoHelperRegistered) {
  std::atomic<bool> release{false}, registered{false};
  std::thread helper([&] {
    ForkGate::HelperThread gate;
    registered = true;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (!registered) std::this_thread::yield();
  const pid_t pid = ForkGate::Fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (ForkGate::HelperThreads() != 0) _exit(2);
    std::thread child_helper([] {
      ForkGate::HelperThread gate;
      ForkGate::AllocationScope allocation;
    });
    child_helper.join();
    const pid_t grandchild = ForkGate::Fork();  // finds no stale gate to lock
    if (grandchild == 0) _exit(0);
    _exit(grandchild > 0 && ExitCodeOf(grandchild) == 0 ? 5 : 1);
  }
  EXPECT_EQ(ExitCodeOf(pid), 5);
  release = true;
  helper.join();
}

}  // namespace
}  // namespace ringkv::io

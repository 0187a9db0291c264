#include "io/fork_gate.h"

#include <unistd.h>

#include <algorithm>
#include <vector>

namespace ringkv::io {
namespace {

// The registered gates. The registry's lock orders registration against
// Fork(): a thread registering while a fork runs waits for it to end.
struct Registry {
  std::mutex mu;
  std::vector<std::mutex*> gates;
};

Registry& TheRegistry() {
  static Registry* registry = new Registry;  // never destroyed: threads may outlive static destruction
  return *registry;
}

}  // namespace

constinit thread_local std::mutex* ForkGate::current_ = nullptr;

ForkGate::HelperThread::HelperThread() {
  Registry& r = TheRegistry();
  {
    // The push may allocate: this thread's gate is not in force yet.
    std::lock_guard<std::mutex> lock(r.mu);
    r.gates.push_back(&gate_);
  }
  current_ = &gate_;
}

ForkGate::HelperThread::~HelperThread() {
  current_ = nullptr;
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.gates.erase(std::find(r.gates.begin(), r.gates.end(), &gate_));  // frees nothing
}

pid_t ForkGate::Fork() {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (std::mutex* gate : r.gates) gate->lock();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // The helper threads do not exist in the child, and glibc reuses their
    // stacks, where their gates live, for the child's own new threads.
    r.gates.clear();
    return pid;
  }
  for (std::mutex* gate : r.gates) gate->unlock();
  return pid;
}

size_t ForkGate::HelperThreads() {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.gates.size();
}

}  // namespace ringkv::io

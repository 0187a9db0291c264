#include "core/cluster/nodes_conf_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "core/strings.h"

namespace ringkv::cluster {
namespace {

// Every live lock, for CloseAllInForkChild (main thread only, see the header).
std::vector<NodesConfLock*>& Live() {
  static std::vector<NodesConfLock*> live;
  return live;
}

bool SameFile(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

absl::Status ImpossibleToLock(const std::string& path, int err) {
  return absl::Status(absl::ErrnoToStatusCode(err), StrCat("Impossible to lock ", path, ": ", std::strerror(err)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<NodesConfLock>> NodesConfLock::Acquire(const std::string& path) {
  // Each retry means the owner renamed a new file in between, rare next to
  // these few system calls; the bound only keeps a pathological case finite.
  constexpr int kMaxRounds = 100;
  for (int round = 0; round < kMaxRounds; ++round) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      const int err = errno;
      return absl::Status(absl::ErrnoToStatusCode(err),
                          StrCat("Can't open ", path, " in order to acquire a lock: ", std::strerror(err)));
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      close(fd);
      if (err == EWOULDBLOCK) {
        return absl::UnavailableError(StrCat("Sorry, the cluster configuration file ", path,
                                             " is already used by a different Redis Cluster node. Please make sure "
                                             "that different nodes use different cluster configuration files."));
      }
      return ImpossibleToLock(path, err);
    }
    struct stat locked, named;
    if (fstat(fd, &locked) != 0) {
      const int err = errno;
      close(fd);
      return ImpossibleToLock(path, err);
    }
    if (stat(path.c_str(), &named) == 0 && SameFile(locked, named)) {
      std::unique_ptr<NodesConfLock> lock(new NodesConfLock(fd));
      Live().push_back(lock.get());
      return lock;
    }
    close(fd);  // replaced (or removed) between the open and the flock
  }
  return absl::AbortedError(StrCat("Impossible to lock ", path, ": it kept being replaced"));
}

NodesConfLock::NodesConfLock(int fd) : fd_(fd) {}

NodesConfLock::~NodesConfLock() {
  std::vector<NodesConfLock*>& live = Live();
  live.erase(std::remove(live.begin(), live.end(), this), live.end());
  if (fd_ >= 0) close(fd_);
}

void NodesConfLock::Adopt(int fd) {
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
}

void NodesConfLock::CloseAllInForkChild() {
  for (NodesConfLock* lock : Live()) {
    close(lock->fd_);
    lock->fd_ = -1;
  }
}

}  // namespace ringkv::cluster

// The cluster config file's lock (Redis's clusterLockConfig): an exclusive
// flock(2) that a node takes on nodes.conf at start-up and holds for its
// life, so that a second node started on the same file refuses to start.
//
//   absl::StatusOr<std::unique_ptr<NodesConfLock>> lock = NodesConfLock::Acquire(path);
//   if (absl::IsUnavailable(lock.status())) ...  // another node holds it
//   WriteFileDurably(path, text, lock->get());    // the lock follows the file
//
// Redis rewrites nodes.conf in place, so the descriptor it locked stays on
// the file the name points at. ringkv replaces the file by rename
// (WriteFileDurably), which would leave the lock on the old inode and the
// name on an unlocked new one. So a save locks the new file before renaming
// it (no other process can have it open yet) and then closes the old
// descriptor (Adopt): the inode the name points at is locked at every
// moment. A starter that opened the old inode just before a rename could
// lock it just after; Acquire checks that the inode it locked is still the
// one the name points at, and opens the file again if not.
//
// Fork children (BGSAVE, AOF rewrite) close their copies first thing
// (CloseAllInForkChild), as Redis's closeChildUnusedResourceAfterFork does:
// flock belongs to the open file, so a child still alive after the server
// was killed would otherwise hold the lock and keep the restarted server
// from starting. The child's close does not release the parent's lock. The
// descriptor is O_CLOEXEC, for any exec.
//
// Thread-safety: main thread only (start-up, saves, fork);
// CloseAllInForkChild runs in a fork child, where only that thread exists.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace ringkv::cluster {

class NodesConfLock {
 public:
  // Opens `path`, creating it empty if missing (as Redis: the lock must be
  // on the file that later opens find; an empty file is a new node's), and
  // locks it without waiting. Unavailable when another process holds the
  // lock. An error's message is the line Redis logs before it exits(1).
  static absl::StatusOr<std::unique_ptr<NodesConfLock>> Acquire(const std::string& path);
  // Closes the descriptor: the lock is released.
  ~NodesConfLock();
  NodesConfLock(const NodesConfLock&) = delete;
  NodesConfLock& operator=(const NodesConfLock&) = delete;

  // REQUIRES: `fd` is open on the file that has just replaced this lock's
  // file by rename, and this process holds an exclusive flock on it. Takes
  // `fd` and closes the old descriptor.
  void Adopt(int fd);

  // In a fork child: closes the child's copy of every lock's descriptor.
  static void CloseAllInForkChild();

 private:
  explicit NodesConfLock(int fd);

  int fd_;
};

}  // namespace ringkv::cluster

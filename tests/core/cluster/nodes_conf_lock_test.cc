#include "core/cluster/nodes_conf_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "absl/status/status.h"
#include "core/cluster/nodes_conf.h"

namespace ringkv::cluster {
namespace {

// A temporary folder holding nodes.conf, removed at the end.
class NodesConfLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(mkdtemp(dir_), nullptr);
    path_ = std::string(dir_) + "/nodes.conf";
  }
  void TearDown() override {
    unlink(path_.c_str());
    rmdir(dir_);
  }
  ino_t Inode() const {
    struct stat st;
    return stat(path_.c_str(), &st) == 0 ? st.st_ino : 0;
  }

  char dir_[40] = "/tmp/ringkv-nodes-conf-lock-XXXXXX";
  std::string path_;
};

// flock conflicts between two opens even in one process, so a second
// Acquire here stands for a second server.
TEST_F(NodesConfLockTest, CreatesTheFileAndRefusesASecondHolder) {
  auto first = NodesConfLock::Acquire(path_);
  ASSERT_TRUE(first.ok()) << first.status();
  auto read = ReadWholeFile(path_);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, "");  // an empty file: a new node's
  auto second = NodesConfLock::Acquire(path_);
  ASSERT_TRUE(absl::IsUnavailable(second.status())) << second.status();
  EXPECT_EQ(second.status().message(),
            "Sorry, the cluster configuration file " + path_ +
                " is already used by a different Redis Cluster node. Please make sure that different nodes use "
                "different cluster configuration files.");
  first->reset();
  EXPECT_TRUE(NodesConfLock::Acquire(path_).ok());
}

// The save replaces the file by rename; the lock moves to the new file.
TEST_F(NodesConfLockTest, FollowsTheFileAcrossSaves) {
  auto lock = NodesConfLock::Acquire(path_);
  ASSERT_TRUE(lock.ok()) << lock.status();
  const ino_t before = Inode();
  ASSERT_TRUE(WriteFileDurably(path_, "first\n", lock->get()).ok());
  // A new file (the old one was still open while it was made; a later save
  // may reuse the freed inode number).
  EXPECT_NE(Inode(), before);
  EXPECT_TRUE(absl::IsUnavailable(NodesConfLock::Acquire(path_).status()));
  ASSERT_TRUE(WriteFileDurably(path_, "second\n", lock->get()).ok());
  EXPECT_EQ(*ReadWholeFile(path_), "second\n");
  EXPECT_TRUE(absl::IsUnavailable(NodesConfLock::Acquire(path_).status()));
  lock->reset();
  EXPECT_TRUE(NodesConfLock::Acquire(path_).ok());
}

TEST_F(NodesConfLockTest, CannotOpenNamesTheFile) {
  const std::string missing = std::string(dir_) + "/no/such/nodes.conf";
  auto lock = NodesConfLock::Acquire(missing);
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().message(),
            "Can't open " + missing + " in order to acquire a lock: No such file or directory");
}

// A fork child that outlives the lock's owner does not hold the lock.
TEST_F(NodesConfLockTest, ForkChildrenDoNotKeepTheLock) {
  auto lock = NodesConfLock::Acquire(path_);
  ASSERT_TRUE(lock.ok()) << lock.status();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    NodesConfLock::CloseAllInForkChild();
    (void)!write(ready[1], "x", 1);
    pause();  // until killed
    _exit(0);
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  EXPECT_TRUE(absl::IsUnavailable(NodesConfLock::Acquire(path_).status()));  // the parent still holds it
  lock->reset();
  EXPECT_TRUE(NodesConfLock::Acquire(path_).ok());  // while the child still runs
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(ready[0]);
  close(ready[1]);
}

}  // namespace
}  // namespace ringkv::cluster

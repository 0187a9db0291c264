#include "server/lazy_free.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "io/fork_gate.h"

namespace ringkv::server {
namespace {

// Records on which thread it was destroyed.
struct Probe {
  explicit Probe(std::atomic<std::thread::id>* where) : where(where) {}
  ~Probe() { where->store(std::this_thread::get_id()); }
  std::atomic<std::thread::id>* where;
};

bool WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 500; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

TEST(LazyFreerTest, FreesOnItsOwnThreadAndCounts) {
  LazyFreer freer;
  std::atomic<std::thread::id> where{};
  freer.Free(std::make_unique<Probe>(&where), 3);
  ASSERT_TRUE(WaitFor([&] { return freer.freed_objects() == 3; }));
  EXPECT_NE(where.load(), std::thread::id());
  EXPECT_NE(where.load(), std::this_thread::get_id());
  EXPECT_EQ(freer.pending_objects(), 0u);
  freer.ResetFreedObjects();
  EXPECT_EQ(freer.freed_objects(), 0u);
}

TEST(LazyFreerTest, UnlinksFilesOnItsThreadCountingNoObject) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("lazy-free-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> paths;
  for (int i = 0; i < 3; ++i) {
    paths.push_back((dir / ("f" + std::to_string(i))).string());
    std::ofstream(paths.back()) << "x";
  }
  paths.push_back((dir / "missing").string());  // already gone: not an error
  {
    LazyFreer freer;
    freer.Unlink(paths);
    ASSERT_TRUE(WaitFor([&] { return !std::filesystem::exists(paths[2]); }));
    EXPECT_EQ(freer.freed_objects(), 0u);
  }
  for (const std::string& p : paths) EXPECT_FALSE(std::filesystem::exists(p)) << p;
  std::filesystem::remove_all(dir);
}

// Its thread is a fork-gate helper (io/fork_gate.h) for as long as it lives.
TEST(LazyFreerTest, ItsThreadIsAForkGateHelper) {
  const size_t before = io::ForkGate::HelperThreads();
  {
    LazyFreer freer;
    ASSERT_TRUE(WaitFor([&] { return io::ForkGate::HelperThreads() == before + 1; }));
  }
  EXPECT_EQ(io::ForkGate::HelperThreads(), before);
}

// The destructor frees everything still queued before it returns.
TEST(LazyFreerTest, DestructorDrainsTheQueue) {
  std::vector<std::atomic<std::thread::id>> where(50);
  {
    LazyFreer freer;
    for (auto& w : where) freer.Free(std::make_unique<Probe>(&w), 1);
  }
  for (auto& w : where) EXPECT_NE(w.load(), std::thread::id());
}

}  // namespace
}  // namespace ringkv::server

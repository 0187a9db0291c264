#include "io/thread_check.h"

#include <gtest/gtest.h>

#include <thread>

namespace ringkv::io {
namespace {

bool OnMainThreadFromAnotherThread() {
  bool result = true;
  std::thread([&] { result = OnMainThread(); }).join();
  return result;
}

TEST(ThreadCheckTest, TheBoundThreadIsMainAndNoOtherIs) {
  BindMainThread();
  EXPECT_TRUE(OnMainThread());
  EXPECT_FALSE(OnMainThreadFromAnotherThread());
}

TEST(ThreadCheckTest, BindingMovesTheMainThread) {
  std::thread([] { BindMainThread(); }).join();
  EXPECT_FALSE(OnMainThread());
  BindMainThread();
  EXPECT_TRUE(OnMainThread());
}

void CheckedFunction() { RINGKV_DCHECK_MAIN_THREAD(); }

TEST(ThreadCheckDeathTest, AnotherThreadAbortsWhereChecksAreOn) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  BindMainThread();
  CheckedFunction();  // the main thread passes
  if (RINGKV_THREAD_CHECKS_ENABLED) {
    EXPECT_DEATH(std::thread(CheckedFunction).join(),
                 "CheckedFunction: main-thread-only function called from another thread");
  } else {
    std::thread(CheckedFunction).join();  // compiled out: nothing happens
  }
}

}  // namespace
}  // namespace ringkv::io

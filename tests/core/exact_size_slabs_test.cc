// ExactSizeSlabs: blocks at their size rounded to 8, laid back to back in a
// slab; freed blocks reused first; an emptied slab unmapped (but one spare);
// the counter following the live blocks; sizes outside the range on the
// heap; Allocate and Free from several threads at once. Each test has its
// own instance and counter (the process-wide one is the server's).
#include "core/exact_size_slabs.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace ringkv::core {
namespace {

using Slabs = ExactSizeSlabs;

uintptr_t SlabOf(void* p) { return reinterpret_cast<uintptr_t>(p) & ~(Slabs::kSlabBytes - 1); }

// Resident pages of the slab holding p (mincore), or -1 when it is not mapped.
int ResidentPages(uintptr_t slab) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> vec(Slabs::kSlabBytes / page);
  if (mincore(reinterpret_cast<void*>(slab), Slabs::kSlabBytes, vec.data()) != 0) return errno == ENOMEM ? -1 : -2;
  int n = 0;
  for (unsigned char v : vec) n += v & 1;
  return n;
}

TEST(ExactSizeSlabsTest, BlocksAreTheSizeRoundedToEightBackToBack) {
  std::atomic<int64_t> counted{0};
  Slabs slabs(&counted);
  void* a = slabs.Allocate(1537);
  void* b = slabs.Allocate(1540);  // the same step: 1,544 bytes
  void* c = slabs.Allocate(1544);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 8, 0u);
  EXPECT_EQ(SlabOf(a) + Slabs::kHeaderBytes, reinterpret_cast<uintptr_t>(a));
  EXPECT_EQ(static_cast<char*>(b) - static_cast<char*>(a), 1544);
  EXPECT_EQ(static_cast<char*>(c) - static_cast<char*>(b), 1544);
  EXPECT_EQ(counted.load(), 3 * 1544);
  EXPECT_EQ(slabs.stats().live_blocks, 3u);
  EXPECT_EQ(slabs.stats().live_bytes, 3u * 1544);
  // Another step has a slab of its own.
  void* d = slabs.Allocate(1545);
  EXPECT_NE(SlabOf(d), SlabOf(a));
  EXPECT_EQ(slabs.stats().slabs, 2u);
  EXPECT_EQ(counted.load(), 3 * 1544 + 1552);
  // Writing every byte of each block leaves the others intact.
  std::memset(a, 'a', 1537);
  std::memset(b, 'b', 1544);
  std::memset(c, 'c', 1544);
  std::memset(d, 'd', 1545);
  EXPECT_EQ(static_cast<char*>(a)[1536], 'a');
  EXPECT_EQ(static_cast<char*>(b)[0], 'b');
  EXPECT_EQ(static_cast<char*>(c)[1543], 'c');
  for (void* p : {a, b, c}) slabs.Free(p, 1544);
  slabs.Free(d, 1545);
  EXPECT_EQ(counted.load(), 0);
  EXPECT_EQ(slabs.stats().live_blocks, 0u);
}

TEST(ExactSizeSlabsTest, FreedBlocksAreReusedBeforeCarving) {
  std::atomic<int64_t> counted{0};
  Slabs slabs(&counted);
  std::vector<void*> blocks;
  for (int i = 0; i < 10; ++i) blocks.push_back(slabs.Allocate(800));
  slabs.Free(blocks[3], 800);
  slabs.Free(blocks[7], 800);
  // Last freed, first reused.
  EXPECT_EQ(slabs.Allocate(800), blocks[7]);
  EXPECT_EQ(slabs.Allocate(800), blocks[3]);
  void* next = slabs.Allocate(800);
  EXPECT_EQ(static_cast<char*>(next) - static_cast<char*>(blocks[9]), 800);
  blocks.push_back(next);
  for (void* p : blocks) slabs.Free(p, 800);
  EXPECT_EQ(counted.load(), 0);
}

TEST(ExactSizeSlabsTest, PagesAreTouchedOnlyAsBlocksAreCarved) {
  std::atomic<int64_t> counted{0};
  Slabs slabs(&counted);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* a = slabs.Allocate(1600);
  std::memset(a, 1, 1600);  // its owner writes it: header and block are in page 0
  EXPECT_EQ(ResidentPages(SlabOf(a)), 1);
  std::vector<void*> more;
  for (int i = 0; i < 10; ++i) more.push_back(slabs.Allocate(1600));
  for (void* p : more) std::memset(p, 1, 1600);
  // 64 + 11 * 1600 bytes carved: 17,664 bytes, five pages.
  EXPECT_EQ(ResidentPages(SlabOf(a)), static_cast<int>((Slabs::kHeaderBytes + 11 * 1600 + page - 1) / page));
  slabs.Free(a, 1600);
  for (void* p : more) slabs.Free(p, 1600);
}

TEST(ExactSizeSlabsTest, EmptiedSlabsGoBackToTheKernelButOneSpare) {
  std::atomic<int64_t> counted{0};
  Slabs slabs(&counted);
  // About 2.5 slabs of each of four steps.
  std::vector<std::pair<void*, size_t>> blocks;
  for (size_t size : {1448, 1600, 1744, 4000}) {
    const size_t per_slab = (Slabs::kSlabBytes - Slabs::kHeaderBytes) / size;
    for (size_t i = 0; i < per_slab * 5 / 2; ++i) {
      void* p = slabs.Allocate(size);
      std::memset(p, 7, size);
      blocks.emplace_back(p, size);
    }
  }
  EXPECT_EQ(slabs.stats().slabs, 12u);
  std::vector<uintptr_t> mapped;
  for (auto [p, size] : blocks) {
    if (mapped.empty() || mapped.back() != SlabOf(p)) mapped.push_back(SlabOf(p));
  }
  ASSERT_EQ(mapped.size(), 12u);
  // A slab with one live block stays.
  std::shuffle(blocks.begin(), blocks.end(), std::mt19937(7));
  const auto keep = blocks.back();
  blocks.pop_back();
  for (auto [p, size] : blocks) slabs.Free(p, size);
  EXPECT_EQ(slabs.stats().slabs, 2u);  // keep's slab and the spare
  EXPECT_EQ(counted.load(), static_cast<int64_t>(Slabs::RoundUp(keep.second)));
  int unmapped = 0;
  for (uintptr_t s : mapped) unmapped += ResidentPages(s) == -1;
  EXPECT_EQ(unmapped, 10);
  EXPECT_EQ(static_cast<char*>(keep.first)[keep.second - 1], 7);
  slabs.Free(keep.first, keep.second);
  EXPECT_EQ(slabs.stats().slabs, 1u);  // the spare
  EXPECT_EQ(counted.load(), 0);
  // The spare serves the next new slab, of any step.
  void* p = slabs.Allocate(200);
  EXPECT_EQ(slabs.stats().slabs, 1u);
  slabs.Free(p, 200);
}

TEST(ExactSizeSlabsTest, SizesOutsideTheRangeGoToTheHeap) {
  std::atomic<int64_t> counted{0};
  Slabs slabs(&counted);
  void* small = slabs.Allocate(Slabs::kMinSlabbed - 8);
  void* large = slabs.Allocate(Slabs::kMaxSlabbed + 1);
  std::memset(small, 1, Slabs::kMinSlabbed - 8);
  std::memset(large, 1, Slabs::kMaxSlabbed + 8);
  EXPECT_EQ(slabs.stats().slabs, 0u);
  EXPECT_EQ(counted.load(), 0);
  void* edge = slabs.Allocate(Slabs::kMaxSlabbed);
  EXPECT_EQ(slabs.stats().slabs, 1u);
  slabs.Free(small, Slabs::kMinSlabbed - 8);
  slabs.Free(large, Slabs::kMaxSlabbed + 1);
  slabs.Free(edge, Slabs::kMaxSlabbed);
  EXPECT_EQ(counted.load(), 0);
}

// One thread allocates while another frees what it is handed (the main
// thread and the lazy-free thread); the counts end at zero and no block is
// handed out twice (each carries its owner's tag until freed).
TEST(ExactSizeSlabsTest, AllocateAndFreeFromTwoThreads) {
  std::atomic<int64_t> counted{0};
  Slabs slabs(&counted);
  constexpr int kBlocks = 4000;
  std::vector<std::atomic<void*>> handoff(kBlocks);
  std::atomic<bool> corrupt{false};
  auto size_of = [](int i) { return static_cast<size_t>(128 + (i * 37) % 3000); };
  std::thread freer([&] {
    for (int i = 0; i < kBlocks; ++i) {
      void* p;
      while ((p = handoff[i].load(std::memory_order_acquire)) == nullptr) std::this_thread::yield();
      int tag;
      std::memcpy(&tag, static_cast<char*>(p) + 8, sizeof(tag));
      if (tag != i) corrupt = true;
      slabs.Free(p, size_of(i));
    }
  });
  std::vector<std::pair<void*, size_t>> own;  // this thread's own blocks, freed in turn
  for (int i = 0; i < kBlocks; ++i) {
    void* p = slabs.Allocate(size_of(i));
    std::memcpy(static_cast<char*>(p) + 8, &i, sizeof(i));
    handoff[i].store(p, std::memory_order_release);
    own.emplace_back(slabs.Allocate(size_of(i + 1)), size_of(i + 1));
    if (own.size() > 64) {
      slabs.Free(own.front().first, own.front().second);
      own.erase(own.begin());
    }
  }
  for (auto [q, size] : own) slabs.Free(q, size);
  freer.join();
  EXPECT_FALSE(corrupt);
  EXPECT_EQ(counted.load(), 0);
  EXPECT_EQ(slabs.stats().live_blocks, 0u);
  EXPECT_LE(slabs.stats().slabs, 1u);
}

}  // namespace
}  // namespace ringkv::core

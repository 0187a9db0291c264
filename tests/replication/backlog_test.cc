#include "replication/backlog.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace ringkv::repl {
namespace {

std::string Pattern(size_t n, uint64_t first_offset) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (first_offset + i) % 26);
  return s;
}

TEST(BacklogTest, OffsetsFollowRedis) {
  Backlog b(1024, 100);
  EXPECT_EQ(b.end_offset(), 100u);
  EXPECT_EQ(b.first_offset(), 101u);
  EXPECT_TRUE(b.Has(101));  // "everything from the next byte": nothing missing
  EXPECT_FALSE(b.Has(100));
  b.Append("hello");
  EXPECT_EQ(b.end_offset(), 105u);
  EXPECT_EQ(b.histlen(), 5u);
}

TEST(BacklogTest, RefToHandsOutRangesAcrossBlocks) {
  Backlog b(1 << 20, 0);
  const std::string data = Pattern(200 * 1024, 1);
  b.Append(data);
  io::OutBuffer out;
  uint64_t next = b.RefTo(1, 100 * 1024, &out);
  EXPECT_EQ(next, 1u + 100 * 1024);
  next = b.RefTo(next, 1 << 20, &out);  // clipped at the end
  EXPECT_EQ(next, b.end_offset() + 1);
  EXPECT_EQ(out.ToString(), data);
}

TEST(BacklogTest, TrimKeepsCapacityAndWhatReplicasNeed) {
  Backlog b(64 * 1024, 0);
  b.Append(Pattern(300 * 1024, 1));
  b.Trim(1);  // a replica still needs everything
  EXPECT_EQ(b.first_offset(), 1u);
  b.Trim(b.end_offset() + 1);
  EXPECT_GE(b.histlen(), 64u * 1024);
  EXPECT_LE(b.histlen(), 2u * 64 * 1024);
  EXPECT_FALSE(b.Has(1));
}

TEST(BacklogTest, TrimmedBlocksStayValidWhileReferenced) {
  Backlog b(1, 0);
  const std::string data = Pattern(130 * 1024, 1);
  b.Append(data);
  io::OutBuffer out;
  b.RefTo(1, data.size(), &out);
  b.Trim(b.end_offset() + 1);  // frees the backlog's references to early blocks
  EXPECT_FALSE(b.Has(1));
  EXPECT_EQ(out.ToString(), data);  // still readable through the buffer's references
}

// A trimmed block still referenced by a connection is never reused for new
// stream bytes (that would overwrite what is being sent).
TEST(BacklogTest, ReferencedBlocksAreNotRecycled) {
  Backlog b(1, 0);
  const std::string first = Pattern(64 * 1024, 1);
  b.Append(first);
  io::OutBuffer out;
  b.RefTo(1, first.size(), &out);  // holds the first block
  b.Append("x");                    // a second block starts
  b.Trim(b.end_offset() + 1);       // the first block leaves the backlog
  b.Append(Pattern(128 * 1024, b.end_offset() + 1));  // needs new blocks
  EXPECT_EQ(out.ToString(), first);
}

// The range held moves in Redis's 16 KiB steps: a PSYNC finds what Redis
// would hold (capacity plus less than a step), not a whole 64 KiB block more.
TEST(BacklogTest, TrimMovesInRedisSteps) {
  Backlog b(16 * 1024, 0);
  b.Append(Pattern(80 * 1024, 1));
  b.Trim(b.end_offset() + 1);
  EXPECT_GE(b.histlen(), 16u * 1024);
  EXPECT_LT(b.histlen(), 32u * 1024);
  EXPECT_EQ((b.first_offset() - 1) % (16 * 1024), 0u);
  EXPECT_FALSE(b.Has(1));
  io::OutBuffer out;
  b.RefTo(b.first_offset(), b.histlen(), &out);  // what is held is still whole
  EXPECT_EQ(out.ToString(), Pattern(b.histlen(), b.first_offset()));
  b.Trim(40 * 1024);  // a replica needing an older offset holds nothing back now
  EXPECT_GE(b.histlen(), 16u * 1024);
}

// memory() is Redis 7.0's mem_total_replication_buffers: a trimmed block
// still being sent from counts until its last send completes.
TEST(BacklogTest, MemoryCountsTrimmedBlocksStillBeingSent) {
  Backlog b(1 << 20, 0);
  const size_t block = b.block_size(), block_memory = b.block_memory();
  EXPECT_EQ(b.memory(), 0u);
  b.Append(Pattern(3 * block, 1));
  EXPECT_EQ(b.memory(), 3u * block_memory);
  b.set_capacity(1);
  auto out = std::make_unique<io::OutBuffer>();
  b.RefTo(1, block, out.get());  // a connection holds the first block
  b.Trim(b.end_offset() + 1);    // no replica needs anything any more
  EXPECT_LE(b.histlen(), 16u * 1024);
  EXPECT_EQ(b.memory(), 2u * block_memory);  // the last block, and the one being sent
  out.reset();                        // its send completed
  b.Trim(b.end_offset() + 1);
  EXPECT_EQ(b.memory(), block_memory);
}

// Blocks are 1/16 of the backlog, within Redis's 16 KiB and 64 KiB, and
// take exactly that memory with their header (a power-of-two size class; a
// power-of-two capacity would take the next class up, a quarter more): a small
// backlog with no replica behind shrinks to Redis's footprint (Redis's
// "Replication buffer will become smaller when no replica uses").
TEST(BacklogTest, BlockSizeFollowsCapacity) {
  EXPECT_EQ(Backlog(16 * 1024, 0).block_memory(), 16u * 1024);
  EXPECT_EQ(Backlog(1, 0).block_memory(), 16u * 1024);
  EXPECT_EQ(Backlog(512 * 1024, 0).block_memory(), 32u * 1024);
  EXPECT_EQ(Backlog(1 << 20, 0).block_memory(), 64u * 1024);
  EXPECT_EQ(Backlog(size_t{1} << 30, 0).block_memory(), 64u * 1024);
  EXPECT_EQ(Backlog(1 << 20, 0).block_size(), 64u * 1024 - sizeof(io::SharedBlock));
  Backlog b(16 * 1024, 0);
  b.Append(Pattern(1 << 20, 1));
  b.Trim(b.end_offset() + 1);
  EXPECT_LE(b.memory(), 32u * 1024);
  EXPECT_GE(b.histlen(), 16u * 1024);
}

}  // namespace
}  // namespace ringkv::repl

#include "io/out_buffer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace ringkv::io {
namespace {

// A block holding `text`, with the caller's one reference.
SharedBlock* BlockWith(const std::string& text) {
  SharedBlock* b = SharedBlock::Create(text.size());
  std::memcpy(b->data(), text.data(), text.size());
  return b;
}

std::string Drain(OutBuffer& out) {
  std::string sent;
  while (!out.empty()) {
    std::string_view f = out.Front();
    const size_t n = std::min<size_t>(f.size(), 3);  // short sends
    sent.append(f.substr(0, n));
    out.Consume(n);
  }
  return sent;
}

TEST(OutBufferTest, OwnedAndBorrowedBytesInterleaveInOrder) {
  SharedBlock* block = BlockWith("0123456789");
  OutBuffer out;
  out.Append("a");
  out.AppendShared(block, block->data() + 2, 3);
  out.Append("bc");
  out.AppendShared(block, block->data() + 8, 2);
  EXPECT_EQ(out.size(), 8u);
  EXPECT_EQ(out.ToString(), "a234bc89");
  EXPECT_EQ(Drain(out), "a234bc89");
  block->Unref();
}

TEST(OutBufferTest, ContiguousBorrowedRangesShareOneLink) {
  SharedBlock* block = BlockWith("abcdefgh");
  OutBuffer out;
  out.AppendShared(block, block->data(), 3);
  out.AppendShared(block, block->data() + 3, 4);
  EXPECT_EQ(out.Front(), "abcdefg");  // one contiguous range, one send
  EXPECT_EQ(out.allocated(), sizeof(ChunkHeader));
  // Appending owned bytes after a borrowed link never writes into the block.
  out.Append("XY");
  EXPECT_EQ(std::string(block->data(), 8), "abcdefgh");
  EXPECT_EQ(out.ToString(), "abcdefgXY");
  block->Unref();
}

TEST(OutBufferTest, BorrowedBlockOutlivesItsCreatorReference) {
  SharedBlock* block = BlockWith("hello");
  OutBuffer out;
  out.AppendShared(block, block->data(), 5);
  block->Unref();  // the backlog trimmed it; the buffer still holds a reference
  EXPECT_EQ(out.ToString(), "hello");  // ASan would flag a use after free
  OutBuffer moved;
  moved.Splice(out);
  EXPECT_EQ(Drain(moved), "hello");
}

TEST(OutBufferTest, ClearReleasesBorrowedLinks) {
  SharedBlock* block = BlockWith("xyz");
  {
    OutBuffer out;
    out.AppendShared(block, block->data(), 1);
    out.Append(std::string(ReplyChunk::kCapacity + 5, 'q'));
    out.AppendShared(block, block->data() + 2, 1);
    EXPECT_EQ(out.size(), ReplyChunk::kCapacity + 7);
  }  // destroyed: both references dropped (LeakSanitizer checks the block)
  block->Unref();
}

TEST(OutBufferTest, ConsumeReleasesChunksAndSplicePreservesOrder) {
  OutBuffer a, b;
  std::string x(ReplyChunk::kCapacity, 'x');
  a.Append(x);
  a.Append("tail");
  b.Append("more");
  a.Splice(b);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(a.size(), x.size() + 8);
  EXPECT_EQ(a.Front().size(), x.size());
  a.Consume(x.size() - 1);
  EXPECT_EQ(a.Front(), "x");
  a.Consume(1);
  EXPECT_EQ(a.ToString(), "tailmore");
  a.Consume(3);
  EXPECT_EQ(a.ToString(), "lmore");
  a.Consume(5);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a.allocated(), 0u);
}

}  // namespace
}  // namespace ringkv::io

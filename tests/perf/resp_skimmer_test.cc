#include "perf/resp_skimmer.h"

#include <gtest/gtest.h>

#include <string>

namespace {

// Feeds `stream` in pieces of `piece` bytes the way lean_load does: bytes
// not consumed are passed again in front of the next piece.
RespSkimmer::Counts FeedInPieces(const std::string& stream, size_t piece) {
  RespSkimmer skimmer;
  std::string carry;
  for (size_t at = 0; at < stream.size(); at += piece) {
    std::string chunk = carry + stream.substr(at, piece);
    carry = chunk.substr(skimmer.Feed(chunk.data(), chunk.size()));
  }
  EXPECT_TRUE(carry.empty());
  return skimmer.counts();
}

TEST(RespSkimmerTest, CountsEachTopLevelReplyOnceWhateverTheFragmentation) {
  // Seven replies: simple, integer, bulk, null bulk, nested array with an
  // empty array inside, RESP3 map, RESP3 null.
  const std::string stream =
      "+OK\r\n"
      ":42\r\n"
      "$5\r\nhe\r\nl\r\n"
      "$-1\r\n"
      "*3\r\n$1\r\na\r\n*0\r\n*2\r\n:1\r\n$0\r\n\r\n"
      "%2\r\n+k\r\n:1\r\n+k2\r\n*1\r\n,1.5\r\n"
      "_\r\n";
  for (size_t piece = 1; piece <= stream.size(); ++piece) {
    const RespSkimmer::Counts counts = FeedInPieces(stream, piece);
    EXPECT_EQ(counts.replies, 7u) << "piece " << piece;
    EXPECT_EQ(counts.errors, 0u) << "piece " << piece;
  }
}

TEST(RespSkimmerTest, BulkPayloadsWithLineBreaksAreSkippedByLength) {
  // A payload holding "\r\n*9\r\n" must not open an aggregate.
  const std::string stream = "*2\r\n$6\r\n\r\n*9\r\n\r\n$2\r\nab\r\n:7\r\n";
  for (size_t piece = 1; piece <= stream.size(); ++piece) {
    EXPECT_EQ(FeedInPieces(stream, piece).replies, 2u) << "piece " << piece;
  }
}

TEST(RespSkimmerTest, StopsBeforeAnUnfinishedHeaderLine) {
  RespSkimmer skimmer;
  const std::string partial = "+OK\r\n*2\r\n:1\r\n$1";
  EXPECT_EQ(skimmer.Feed(partial.data(), partial.size()), partial.size() - 2);
  EXPECT_EQ(skimmer.counts().replies, 1u);
}

TEST(RespSkimmerTest, CountsErrorsAndKeepsTheFirst) {
  const std::string stream = "-WRONGTYPE Operation against a key\r\n*1\r\n-ERR nested\r\n!3\r\nbad\r\n";
  RespSkimmer skimmer;
  EXPECT_EQ(skimmer.Feed(stream.data(), stream.size()), stream.size());
  EXPECT_EQ(skimmer.counts().replies, 3u);
  EXPECT_EQ(skimmer.counts().errors, 3u);
  EXPECT_EQ(skimmer.first_error(), "-WRONGTYPE Operation against a key");
}

}  // namespace

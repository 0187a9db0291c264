#include "io/resp_parser.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace ringkv::io {
namespace {

using Result = RespParser::Result;

// Feeds `input` to a parser the way a connection does (keeping the bytes of
// an incomplete command, appending what arrives next), in chunks of `chunk`
// bytes, and returns the commands it produced or the protocol error.
struct Feed {
  std::vector<std::vector<std::string>> commands;
  std::string error;
};

// Feeds `pieces` one after another to one parser, as reads arriving.
Feed FeedPieces(const std::vector<std::string>& pieces, ParserLimits limits = {}) {
  Feed out;
  RespParser parser;
  std::string pending;
  for (const std::string& piece : pieces) {
    pending.append(piece);
    while (!pending.empty()) {
      ParsedCommand cmd;
      size_t consumed = 0;
      Result r = parser.Parse(pending, limits, &cmd, &consumed);
      if (r == Result::kNeedMore) break;
      if (r == Result::kError) {
        out.error = parser.error();
        return out;
      }
      if (r == Result::kCommand) out.commands.emplace_back(cmd.argv.begin(), cmd.argv.end());
      pending.erase(0, consumed);
    }
  }
  return out;
}

Feed FeedInChunks(const std::string& input, size_t chunk, ParserLimits limits = {}) {
  std::vector<std::string> pieces;
  for (size_t off = 0; off < input.size(); off += chunk) pieces.push_back(input.substr(off, chunk));
  return FeedPieces(pieces, limits);
}

// A slot that held a 100,000-argument command does not keep its 1.6 MB for
// the commands after it, whichever path parsed it.
TEST(RespParserTest, ASlotKeepsNoHugeCommandsCapacity) {
  std::string big = "*100001\r\n$4\r\nSADD\r\n";
  for (int i = 0; i < 100000; ++i) big += "$1\r\nx\r\n";
  const std::string small = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
  for (size_t chunk : {big.size(), size_t{4096}}) {  // the whole-command path, then the incremental one
    RespParser parser;
    ParsedCommand cmd;
    std::string pending;
    size_t consumed = 0;
    Result r = Result::kNeedMore;
    for (size_t off = 0; off < big.size() && r == Result::kNeedMore; off += chunk) {
      pending.append(big, off, chunk);
      r = parser.Parse(pending, {}, &cmd, &consumed);
    }
    ASSERT_EQ(r, Result::kCommand) << chunk;
    ASSERT_EQ(cmd.argv.size(), 100001u);
    ASSERT_EQ(parser.Parse(small, {}, &cmd, &consumed), Result::kCommand);
    EXPECT_EQ(cmd.argv.size(), 2u);
    EXPECT_LE(cmd.argv.capacity(), ParsedCommand::kKeptArgs) << chunk;
  }
  ParsedCommand inline_cmd;
  inline_cmd.owned.assign(1 << 20, 'x');
  inline_cmd.clear();
  EXPECT_LE(inline_cmd.owned.capacity(), ParsedCommand::kKeptBytes);
}

TEST(RespParserTest, MultibulkAtEveryByteBoundary) {
  const std::string input = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nva\r\nl\r\n*1\r\n$4\r\nPING\r\n";
  for (size_t chunk = 1; chunk <= input.size(); ++chunk) {
    Feed f = FeedInChunks(input, chunk);
    ASSERT_EQ(f.error, "") << "chunk " << chunk;
    ASSERT_EQ(f.commands.size(), 2u) << "chunk " << chunk;
    EXPECT_EQ(f.commands[0], (std::vector<std::string>{"SET", "key", "va\r\nl"}));
    EXPECT_EQ(f.commands[1], (std::vector<std::string>{"PING"}));
  }
}

TEST(RespParserTest, InlineAtEveryByteBoundary) {
  const std::string input = "set k \"a b\\x41\\n\" 'x'\r\nPING\n";
  for (size_t chunk = 1; chunk <= input.size(); ++chunk) {
    Feed f = FeedInChunks(input, chunk);
    ASSERT_EQ(f.error, "");
    ASSERT_EQ(f.commands.size(), 2u);
    EXPECT_EQ(f.commands[0], (std::vector<std::string>{"set", "k", "a bA\n", "x"}));
    EXPECT_EQ(f.commands[1], (std::vector<std::string>{"PING"}));
  }
}

TEST(RespParserTest, EmptyLinesAndEmptyMultibulkAreSkipped) {
  Feed f = FeedInChunks("\r\n\n*0\r\n*-1\r\nPING\r\n", 3);
  ASSERT_EQ(f.error, "");
  ASSERT_EQ(f.commands.size(), 1u);
  EXPECT_EQ(f.commands[0][0], "PING");
}

TEST(RespParserTest, EmptyBulkArgument) {
  Feed f = FeedInChunks("*2\r\n$3\r\nGET\r\n$0\r\n\r\n", 1);
  ASSERT_EQ(f.commands.size(), 1u);
  EXPECT_EQ(f.commands[0][1], "");
}

TEST(RespParserTest, RedisErrorStrings) {
  EXPECT_EQ(FeedInChunks("*abc\r\n", 100).error, "Protocol error: invalid multibulk length");
  EXPECT_EQ(FeedInChunks("*3000000000\r\n", 100).error, "Protocol error: invalid multibulk length");
  EXPECT_EQ(FeedInChunks("*1\r\n$-1\r\n", 100).error, "Protocol error: invalid bulk length");
  EXPECT_EQ(FeedInChunks("*1\r\n$x\r\n", 100).error, "Protocol error: invalid bulk length");
  // "-0" is not an integer to Redis's string2ll.
  EXPECT_EQ(FeedInChunks("*-0\r\n", 100).error, "Protocol error: invalid multibulk length");
  EXPECT_EQ(FeedInChunks("*1\r\n$-0\r\n\r\n", 100).error, "Protocol error: invalid bulk length");
  EXPECT_EQ(FeedInChunks("*1\r\n+OK\r\n", 100).error, "Protocol error: expected '$', got '+'");
  EXPECT_EQ(FeedInChunks("SET \"abc\r\n", 100).error, "Protocol error: unbalanced quotes in request");
  EXPECT_EQ(FeedInChunks("GET 'a'b\r\n", 100).error, "Protocol error: unbalanced quotes in request");
  EXPECT_EQ(FeedInChunks(std::string(70000, 'a'), 4096).error, "Protocol error: too big inline request");
  EXPECT_EQ(FeedInChunks("*" + std::string(70000, '1'), 4096).error, "Protocol error: too big mbulk count string");
  EXPECT_EQ(FeedInChunks("*1\r\n$" + std::string(70000, '1'), 4096).error,
            "Protocol error: too big bulk count string");
}

TEST(RespParserTest, BulkLengthLimit) {
  ParserLimits limits;
  limits.max_bulk_len = 10;
  EXPECT_EQ(FeedInChunks("*1\r\n$11\r\n", 100, limits).error, "Protocol error: invalid bulk length");
  Feed ok = FeedInChunks("*1\r\n$10\r\n0123456789\r\n", 100, limits);
  EXPECT_EQ(ok.error, "");
  EXPECT_EQ(ok.commands.size(), 1u);
}

TEST(RespParserTest, UnauthenticatedLimits) {
  ParserLimits limits;
  limits.authenticated = false;
  EXPECT_EQ(FeedInChunks("*11\r\n", 100, limits).error, "Protocol error: unauthenticated multibulk length");
  EXPECT_EQ(FeedInChunks("*1\r\n$16385\r\n", 100, limits).error, "Protocol error: unauthenticated bulk length");
}

TEST(RespParserTest, LargeArgumentResumesWithoutRescanning) {
  std::string big(1 << 20, 'x');
  std::string input = "*2\r\n$4\r\nECHO\r\n$" + std::to_string(big.size()) + "\r\n" + big + "\r\n";
  RespParser parser;
  std::string pending;
  ParsedCommand cmd;
  size_t consumed = 0;
  size_t expected = 0;
  Result r = Result::kNeedMore;
  for (size_t off = 0; off < input.size(); off += 4096) {
    pending.append(input.substr(off, 4096));
    r = parser.Parse(pending, {}, &cmd, &consumed);
    if (r != Result::kNeedMore) break;
    if (parser.expected_size() != 0) expected = parser.expected_size();
  }
  ASSERT_EQ(r, Result::kCommand);
  EXPECT_EQ(expected, input.size());  // the size hint lets the caller reserve once
  EXPECT_EQ(cmd.argv[1].size(), big.size());
  EXPECT_EQ(consumed, input.size());
}

TEST(SplitInlineArgsTest, QuotesAndEscapes) {
  std::string storage;
  absl::InlinedVector<std::string_view, 8> argv;
  ASSERT_TRUE(SplitInlineArgs("a \"b c\" 'd\\'e' \"\\x41\\t\"", &storage, &argv));
  ASSERT_EQ(argv.size(), 4u);
  EXPECT_EQ(argv[1], "b c");
  EXPECT_EQ(argv[2], "d'e");
  EXPECT_EQ(argv[3], "A\t");
  EXPECT_FALSE(SplitInlineArgs("\"abc", &storage, &argv));
  ASSERT_TRUE(SplitInlineArgs("save \"\"", &storage, &argv));
  ASSERT_EQ(argv.size(), 2u);
  EXPECT_EQ(argv[1], "");
}

// Random and mutated inputs: parsing must never crash, and feeding the same
// bytes in random-sized chunks must give exactly the one-shot result (the
// same commands, then the same error or the same leftover).
TEST(RespParserTest, FuzzChunkingNeverChangesTheResult) {
  std::mt19937 rng(12345);
  const std::string seeds[] = {"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", "SET a \"b c\"\r\n", "*1\r\n$4\r\nPING\r\n",
                               "*3\r\n$3\r\nSET\r\n$0\r\n\r\n$2\r\nxy\r\n", "PING 'q'\n"};
  const char alphabet[] = "*$\r\n0123456789-abc \"'\\x";
  for (int iter = 0; iter < 3000; ++iter) {
    std::string input;
    int parts = 1 + rng() % 6;
    for (int p = 0; p < parts; ++p) input += seeds[rng() % std::size(seeds)];
    int mutations = rng() % 4;
    for (int m = 0; m < mutations && !input.empty(); ++m) {
      size_t at = rng() % input.size();
      switch (rng() % 3) {
        case 0: input[at] = alphabet[rng() % (sizeof(alphabet) - 1)]; break;
        case 1: input.erase(at, 1); break;
        default: input.insert(at, 1, alphabet[rng() % (sizeof(alphabet) - 1)]); break;
      }
    }
    ParserLimits limits;
    limits.max_bulk_len = 1 << 20;
    Feed whole = FeedInChunks(input, input.size() + 1, limits);
    size_t chunk = 1 + rng() % 7;
    Feed pieces = FeedInChunks(input, chunk, limits);
    ASSERT_EQ(whole.commands, pieces.commands) << "input: " << input << " chunk " << chunk;
    ASSERT_EQ(whole.error, pieces.error) << "input: " << input << " chunk " << chunk;
  }
}

// The one-pass fast path (a whole request in the buffer) must answer exactly
// as the incremental parser does when the same bytes arrive one at a time:
// same commands, same error, for odd but valid headers, limits, malformed
// and random inputs, and at every two-way split.
void ExpectSameAsByteByByte(const std::string& input, ParserLimits limits, const std::string& what) {
  const Feed slow = FeedInChunks(input, 1, limits);
  const Feed whole = FeedInChunks(input, input.size() == 0 ? 1 : input.size(), limits);
  ASSERT_EQ(whole.error, slow.error) << what;
  ASSERT_EQ(whole.commands, slow.commands) << what;
  if (input.size() > 96) return;
  for (size_t split = 1; split < input.size(); ++split) {
    const Feed two = FeedPieces({input.substr(0, split), input.substr(split)}, limits);
    ASSERT_EQ(two.error, slow.error) << what << " split " << split;
    ASSERT_EQ(two.commands, slow.commands) << what << " split " << split;
  }
}

TEST(RespParserTest, OddHeadersParseAsWhenFedByteByByte) {
  ParserLimits open;
  ParserLimits guest;
  guest.authenticated = false;
  ParserLimits small;
  small.max_bulk_len = 5;
  const std::vector<std::string> inputs = {
      "*1\r\n$0\r\n\r\n",                      // an empty argument
      "*2\r\n$0\r\n\r\n$0\r\n\r\n*1\r\n$1\r\nx\r\n",
      "*0\r\n*1\r\n$4\r\nPING\r\n",            // an empty request, then one
      "*-1\r\n*1\r\n$4\r\nPING\r\n",
      "*01\r\n$4\r\nPING\r\n",                 // a leading zero
      "*1\r\n$04\r\nPING\r\n",
      "*+1\r\n$4\r\nPING\r\n",                 // a sign
      "*1\r\n$-1\r\n",                         // a null bulk in a request
      "*1\r\n$+4\r\nPING\r\n",
      "*1 \r\n$4\r\nPING\r\n",                 // a space
      "*1\r\n$4 \r\nPING\r\n",
      "*1\rX$4\rXPINGXX*1\r\n$1\r\na\r\n",     // terminators the parser does not inspect
      "*1\r\n$4\r\nPINGxx",                    // the same, at the end of a bulk
      "*1\r\n:4\r\nPING\r\n",                  // not '$'
      "*2\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n",
      "*\r\n",                                 // no digits
      "*1\r\n$\r\n\r\n",
      "*abc\r\n",
      "*2147483647\r\n$1\r\na\r\n",            // the largest count, incomplete
      "*2147483648\r\n$1\r\na\r\n",            // one too many
      "*9223372036854775807\r\n",
      "*99999999999999999999\r\n",
      "*1\r\n$9223372036854775807\r\n",
      "*1\r\n$99999999999999999999\r\n",
      "*1\r\n$999999999999999999\r\nab\r\n",   // 18 digits
      "*1\r\n$1000000000000000000\r\nab\r\n",  // 19 digits
      "*11\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n",
      "*1\r\n$6\r\nabcdef\r\n",                // over `small`'s bulk limit
      "*1\r\n$5\r\nabcde\r\n",
      "*1\r\n$16385\r\n" + std::string(16385, 'q') + "\r\n",  // over the unauthenticated limit
      "*1\r\n$16384\r\n" + std::string(16384, 'q') + "\r\n",
      "PING\r\n*1\r\n$4\r\nPING\r\n",          // inline, then multibulk
      "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\na\r\n\r\n",  // CRLF inside a bulk
      // One- and two-digit headers (read without the digit loop), at and
      // near the end of the input.
      "*1\r\n$10\r\n0123456789\r\n",
      "*1\r\n$99\r\n" + std::string(99, 'n') + "\r\n",
      "*1\r\n$00\r\n\r\n",                 // a two-digit leading zero
      "*1\r\n$0",
      "*1\r\n$1",
      "*1\r\n$1\r",
      "*1\r\n$12",
      "*1\r\n$12\r",
      "*1\r\n$12\r\n",
      "*1\r\n$1x\r\n",
      "*1\r\n$9\r\n123456789\r\n*2\r\n$2\r\nab\r\n$10\r\n0123456789\r\n",
  };
  for (const std::string& in : inputs) {
    ExpectSameAsByteByByte(in, open, "open: " + in.substr(0, 40));
    ExpectSameAsByteByByte(in, guest, "guest: " + in.substr(0, 40));
    ExpectSameAsByteByByte(in, small, "small: " + in.substr(0, 40));
  }
  // Random pipelines of valid requests with a few bytes mutated, truncated or inserted.
  std::mt19937 rng(20261203);
  const std::string alphabet = "*$\r\n0123456789-+ :ab";
  for (int round = 0; round < 3000; ++round) {
    std::string in;
    const int commands = 1 + static_cast<int>(rng() % 4);
    for (int c = 0; c < commands; ++c) {
      const int argc = 1 + static_cast<int>(rng() % (round % 7 == 0 ? 14 : 4));
      in += "*" + std::to_string(argc) + "\r\n";
      for (int a = 0; a < argc; ++a) {
        std::string arg(rng() % 8, 'x');
        for (char& ch : arg) ch = alphabet[rng() % alphabet.size()];
        in += "$" + std::to_string(arg.size()) + "\r\n" + arg + "\r\n";
      }
    }
    const int mutations = static_cast<int>(rng() % 3);
    for (int m = 0; m < mutations && !in.empty(); ++m) {
      const size_t at = rng() % in.size();
      switch (rng() % 3) {
        case 0: in[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: in.insert(in.begin() + static_cast<std::ptrdiff_t>(at), alphabet[rng() % alphabet.size()]); break;
        default: in.resize(at + 1); break;
      }
    }
    ExpectSameAsByteByByte(in, open, "random " + std::to_string(round));
    ExpectSameAsByteByByte(in, round % 2 ? guest : small, "random limited " + std::to_string(round));
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace ringkv::io

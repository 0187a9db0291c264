// AppendRewriteCommands (server/persistence/aof_rewrite_value.h): the
// commands a rewrite without RDB preamble writes for a stream, as Redis
// 7.0's rewriteStreamObject writes them -- and in two XSETID steps where
// its single one would be refused on load.
#include "server/persistence/aof_rewrite_value.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/resp_command.h"
#include "core/stream_value.h"
#include "core/value.h"

namespace ringkv::server::aof_rewrite_value_test {
namespace {

using core::StreamId;
using core::StreamValue;

std::string Commands(std::vector<std::vector<std::string_view>> commands) {
  std::string out;
  for (const auto& argv : commands) core::AppendRespCommand(argv, &out);
  return out;
}

std::string Rewrite(std::unique_ptr<StreamValue> s) {
  const core::Value v(std::move(s));
  std::string out;
  AppendRewriteCommands("s", v, &out);
  return out;
}

TEST(AofRewriteValueTest, AStreamGetsItsEntriesThenOneXsetidWithItsCounters) {
  auto s = std::make_unique<StreamValue>();
  s->Append({1, 1}, std::vector<std::string_view>{"f", "a"}, {});
  s->Append({2, 0}, std::vector<std::string_view>{"f", "b"}, {});
  ASSERT_TRUE(s->Delete({1, 1}));
  EXPECT_EQ(Rewrite(std::move(s)),
            Commands({{"XADD", "s", "2-0", "f", "b"},
                      {"XSETID", "s", "2-0", "ENTRIESADDED", "2", "MAXDELETEDID", "1-1"}}));
}

TEST(AofRewriteValueTest, AnEmptiedStreamIsMadeByXaddMaxlenZero) {
  auto s = std::make_unique<StreamValue>();
  s->Append({3, 0}, std::vector<std::string_view>{"f", "a"}, {});
  ASSERT_TRUE(s->Delete({3, 0}));
  EXPECT_EQ(Rewrite(std::move(s)),
            Commands({{"XADD", "s", "MAXLEN", "0", "0-1", "x", "y"},
                      {"XSETID", "s", "3-0", "ENTRIESADDED", "1", "MAXDELETEDID", "3-0"}}));
}

// XSETID set the last ID below the largest deleted one: one XSETID with
// both would be refused ("smaller than the provided max_deleted_entry_id"),
// so the counters go with the deleted ID and a second XSETID lowers it.
TEST(AofRewriteValueTest, ALastIdBelowTheDeletedEntriesIsSetInTwoSteps) {
  auto s = std::make_unique<StreamValue>();
  s->Append({1, 1}, std::vector<std::string_view>{"f", "a"}, {});
  s->Append({9, 1}, std::vector<std::string_view>{"f", "b"}, {});
  ASSERT_TRUE(s->Delete({9, 1}));
  s->set_last_id({2, 0});
  EXPECT_EQ(Rewrite(std::move(s)),
            Commands({{"XADD", "s", "1-1", "f", "a"},
                      {"XSETID", "s", "9-1", "ENTRIESADDED", "2", "MAXDELETEDID", "9-1"},
                      {"XSETID", "s", "2-0"}}));
}

}  // namespace
}  // namespace ringkv::server::aof_rewrite_value_test

#include "server/persistence/durable_replies.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace ringkv::server {
namespace {

std::string Drain(io::OutBuffer& b) {
  std::string s;
  while (!b.empty()) {
    std::string_view f = b.Front();
    s.append(f);
    b.Consume(f.size());
  }
  return s;
}

TEST(DurableReplies, ReleasesInOrderOnlyWhatIsSynced) {
  DurableReplies d;
  // Client 1: a reply in turn 1 needing offset 100, one in turn 2 needing 250.
  d.Target(1, 1, 0).Append("+OK\r\n");
  d.Require(1, 100);
  d.Target(1, 2, 100).Append(":1\r\n");
  d.Require(1, 250);
  // Client 2: turn 2, needs 120.
  d.Target(2, 2, 120).Append("$1\r\nv\r\n");
  std::map<uint64_t, std::string> sent;
  std::vector<uint64_t> done;
  auto deliver = [&](uint64_t id, io::OutBuffer& out) { sent[id] += Drain(out); };
  auto finished = [&](uint64_t id) { done.push_back(id); };

  d.Release(99, deliver, finished);
  EXPECT_TRUE(sent.empty());
  d.Release(100, deliver, finished);
  EXPECT_EQ(sent[1], "+OK\r\n");  // the first segment only
  EXPECT_EQ(sent.count(2), 0u);
  EXPECT_TRUE(done.empty());
  d.Release(200, deliver, finished);
  EXPECT_EQ(sent[2], "$1\r\nv\r\n");
  EXPECT_EQ(done, std::vector<uint64_t>{2});
  d.Release(250, deliver, finished);
  EXPECT_EQ(sent[1], "+OK\r\n:1\r\n");
  EXPECT_EQ(d.clients(), 0u);
}

TEST(DurableReplies, OneSegmentPerTurnTakesTheHighestRequirement) {
  DurableReplies d;
  d.Target(7, 3, 10).Append("a");
  d.Require(7, 20);
  d.Target(7, 3, 20).Append("b");  // same turn: same segment
  d.Require(7, 30);
  std::string sent;
  auto deliver = [&](uint64_t, io::OutBuffer& out) { sent += Drain(out); };
  d.Release(29, deliver, [](uint64_t) {});
  EXPECT_EQ(sent, "");
  d.Release(30, deliver, [](uint64_t) {});
  EXPECT_EQ(sent, "ab");
}

TEST(DurableReplies, DroppedClientsAreForgotten) {
  DurableReplies d;
  d.Target(5, 1, 10).Append("x");
  d.Drop(5);
  EXPECT_EQ(d.clients(), 0u);
  bool called = false;
  d.Release(100, [&](uint64_t, io::OutBuffer&) { called = true; }, [](uint64_t) {});
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace ringkv::server

// StreamValue: entries checked against a std::map model through random
// appends, deletes and trims at small node limits; Redis's node layout
// (master-entry field compression, counters), node splitting, ranges in
// both directions, consumer groups and cloning.
#include "core/stream_value.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/crc64.h"
#include "core/dump_payload.h"
#include "core/exact_size_slabs.h"
#include "core/rax_shape.h"
#include "core/value.h"

namespace ringkv::core {
namespace {

using Entries = std::map<StreamId, std::vector<std::string>>;

Entries All(const StreamValue& s, bool reverse = false) {
  Entries out;
  StreamId prev = reverse ? StreamId::Max() : StreamId::Min();
  bool first = true;
  s.Range(StreamId::Min(), StreamId::Max(), reverse, [&](StreamId id, FieldValues fv) {
    if (!first) {
      EXPECT_TRUE(reverse ? id < prev : id > prev);
    }
    first = false;
    prev = id;
    out[id] = std::vector<std::string>(fv.begin(), fv.end());
    return true;
  });
  return out;
}

void Add(StreamValue* s, StreamId id, std::vector<std::string_view> fv, const StreamLimits& limits = {}) {
  s->Append(id, fv, limits);
}

TEST(StreamValueTest, MasterFieldCompressionAndLayout) {
  StreamValue s;
  Add(&s, {1, 0}, {"a", "1", "b", "x"});
  Add(&s, {1, 1}, {"a", "2", "b", "y"});   // same fields: values only
  Add(&s, {2, 0}, {"c", "3"});             // other fields: kept whole
  ASSERT_EQ(s.node_count(), 1u);
  std::vector<std::string> elems;
  s.ForEachNode([&](StreamId master, const Listpack& lp) {
    EXPECT_EQ(master, (StreamId{1, 0}));
    for (size_t p = lp.First(); p != Listpack::kEnd; p = lp.Next(p)) elems.push_back(lp.Get(p).ToString());
  });
  const std::vector<std::string> want = {
      "3", "0", "2", "a", "b", "0",                  // master: count deleted nfields fields 0
      "2", "0", "0", "1", "x", "5",                  // SAMEFIELDS entry
      "2", "0", "1", "2", "y", "5",                  // SAMEFIELDS entry
      "0", "1", "0", "1", "c", "3", "6"};            // full entry
  EXPECT_EQ(elems, want);
  EXPECT_EQ(All(s).at({1, 1}), (std::vector<std::string>{"a", "2", "b", "y"}));
  EXPECT_EQ(All(s).at({2, 0}), (std::vector<std::string>{"c", "3"}));
}

TEST(StreamValueTest, NodesSplitOnEntriesAndBytes) {
  StreamValue s;
  StreamLimits limits{4096, 3};
  for (uint64_t i = 1; i <= 10; ++i) Add(&s, {i, 0}, {"f", "v"}, limits);
  EXPECT_EQ(s.node_count(), 4u);
  StreamValue b;
  StreamLimits bytes{64, 0};
  const std::string big(40, 'x');
  for (uint64_t i = 1; i <= 4; ++i) Add(&b, {i, 0}, {"f", big}, bytes);
  EXPECT_EQ(b.node_count(), 4u);
  EXPECT_EQ(All(b).size(), 4u);
}

TEST(StreamValueTest, DeleteKeepsFirstAndMaxDeleted) {
  StreamValue s;
  for (uint64_t i = 1; i <= 5; ++i) Add(&s, {i, 0}, {"f", "v"});
  EXPECT_TRUE(s.Delete({1, 0}));
  EXPECT_FALSE(s.Delete({1, 0}));
  EXPECT_FALSE(s.Delete({9, 0}));
  EXPECT_EQ(s.first_id(), (StreamId{2, 0}));
  EXPECT_TRUE(s.Delete({3, 0}));
  EXPECT_EQ(s.max_deleted_id(), (StreamId{3, 0}));
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(s.entries_added(), 5u);
  EXPECT_TRUE(s.RangeHasTombstones({2, 0}, StreamId::Max()));
  for (uint64_t i : {2, 4, 5}) EXPECT_TRUE(s.Delete({i, 0}));
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.node_count(), 0u);
  EXPECT_EQ(s.last_id(), (StreamId{5, 0}));
}

TEST(StreamValueTest, RandomAgainstModel) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20; ++round) {
    StreamValue s;
    StreamLimits limits{static_cast<int64_t>(64 + rng() % 512), static_cast<int64_t>(rng() % 8)};
    Entries model;
    uint64_t ms = 1;
    for (int op = 0; op < 400; ++op) {
      const int r = static_cast<int>(rng() % 10);
      if (r < 6) {
        ms += rng() % 3;
        StreamId id{ms, rng() % 3 == 0 ? 1u : 0u};
        if (id <= s.last_id()) id = {s.last_id().ms, s.last_id().seq + 1};
        std::vector<std::string> fv = {rng() % 2 ? "a" : "b", std::to_string(rng() % 1000), "c",
                                       std::string(rng() % 20, 'z')};
        std::vector<std::string_view> views(fv.begin(), fv.end());
        s.Append(id, views, limits);
        model[id] = fv;
      } else if (r < 8 && !model.empty()) {
        auto it = model.begin();
        std::advance(it, static_cast<long>(rng() % model.size()));
        ASSERT_TRUE(s.Delete(it->first));
        model.erase(it);
      } else if (r == 8) {
        const int64_t maxlen = static_cast<int64_t>(rng() % 50);
        const bool approx = rng() % 2;
        const int64_t removed = s.TrimByLength(maxlen, approx, 0);
        for (int64_t i = 0; i < removed; ++i) model.erase(model.begin());
        if (!approx) {
          ASSERT_LE(model.size(), static_cast<size_t>(maxlen));
        }
      } else if (!model.empty()) {
        auto it = model.begin();
        std::advance(it, static_cast<long>(rng() % model.size()));
        const StreamId minid = it->first;
        const bool approx = rng() % 2;
        const int64_t removed = s.TrimByMinId(minid, approx, 0);
        for (int64_t i = 0; i < removed; ++i) model.erase(model.begin());
        if (!approx) {
          ASSERT_EQ(model.begin()->first, minid);
        }
      }
      ASSERT_EQ(s.size(), model.size());
    }
    ASSERT_EQ(All(s), model);
    ASSERT_EQ(All(s, true), model);
    // A sub-range, both directions.
    if (model.size() > 4) {
      auto lo = std::next(model.begin()), hi = std::prev(model.end(), 2);
      Entries want(lo, std::next(hi)), fwd, rev;
      s.Range(lo->first, hi->first, false, [&](StreamId id, FieldValues fv) {
        fwd[id] = std::vector<std::string>(fv.begin(), fv.end());
        return true;
      });
      s.Range(lo->first, hi->first, true, [&](StreamId id, FieldValues fv) {
        rev[id] = std::vector<std::string>(fv.begin(), fv.end());
        return true;
      });
      EXPECT_EQ(fwd, want);
      EXPECT_EQ(rev, want);
    }
    size_t live_total = 0;
    s.ForEachNode([&](StreamId master, const Listpack& lp) {
      size_t live;
      StreamId last;
      ASSERT_TRUE(StreamValue::ValidateNode(master, lp, &live, &last));
      live_total += live;
    });
    EXPECT_EQ(live_total, model.size());
  }
}

TEST(StreamValueTest, GroupsAndClone) {
  StreamValue s;
  Add(&s, {1, 0}, {"f", "v"});
  StreamGroup* g = s.CreateGroup("g", {0, 0}, 0);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(s.CreateGroup("g", {0, 0}, 0), nullptr);
  StreamConsumer* c = g->CreateConsumer("alice", 100);
  StreamNack nack;
  nack.consumer = c;
  nack.delivery_count = 3;
  c->pel.insert(StreamId{1, 0});
  g->pel.emplace(StreamId{1, 0}, nack);
  std::unique_ptr<StreamValue> copy = s.Clone();
  StreamGroup* cg = copy->FindGroup("g");
  ASSERT_NE(cg, nullptr);
  ASSERT_EQ(cg->pel.size(), 1u);
  // The copy's nack names the copy's consumer, not the original's.
  EXPECT_EQ(cg->pel.begin()->second.consumer, cg->FindConsumer("alice"));
  EXPECT_EQ(cg->pel.begin()->second.delivery_count, 3u);
  EXPECT_EQ(cg->FindConsumer("alice")->pel.size(), 1u);
  EXPECT_EQ(g->DeleteConsumer("alice"), 1u);
  EXPECT_TRUE(g->pel.empty());
  EXPECT_TRUE(s.DestroyGroup("g"));
  EXPECT_EQ(All(*copy), All(s));
}

TEST(StreamValueTest, IdEncodeIncr) {
  StreamId id{0x0102030405060708ULL, 9};
  StreamId back;
  ASSERT_TRUE(StreamId::Decode(id.Encode(), &back));
  EXPECT_EQ(back, id);
  StreamId max = StreamId::Max();
  EXPECT_FALSE(max.Incr());
  StreamId a{1, UINT64_MAX};
  ASSERT_TRUE(a.Incr());
  EXPECT_EQ(a, (StreamId{2, 0}));
  ASSERT_TRUE(a.Decr());
  EXPECT_EQ(a, (StreamId{1, UINT64_MAX}));
}

}  // namespace
}  // namespace ringkv::core

namespace ringkv::core {
namespace {

// The payload with its CRC-64 computed again over the (changed) bytes.
std::string Reseal(std::string p) {
  p.resize(p.size() - 8);
  const uint64_t crc = Crc64(0, p);
  for (int i = 0; i < 8; ++i) p.push_back(static_cast<char>(crc >> (8 * i)));
  return p;
}

// A stream with deletions, several nodes and a consumer group, through a
// DUMP payload and back; then every truncation and many byte flips of the
// payload are refused or load into something consistent, never crash.
TEST(StreamValueTest, DumpRoundTripAndCorruptPayloads) {
  auto s = std::make_unique<StreamValue>();
  StreamLimits limits{4096, 4};
  for (uint64_t i = 1; i <= 20; ++i) {
    const std::string v = std::to_string(i * 7);
    s->Append({i, i % 3}, std::vector<std::string_view>{"f", v, i % 2 ? "g" : "h", "x"}, limits);
  }
  s->Delete({3, 0});
  s->Delete({7, 1});
  StreamGroup* g = s->CreateGroup("grp", {5, 2}, 5);
  StreamConsumer* c = g->CreateConsumer("alice", 1234);
  for (uint64_t i : {1, 2, 4}) {
    StreamNack nack;
    nack.consumer = c;
    nack.delivery_time = 99;
    nack.delivery_count = i;
    c->pel.insert(StreamId{i, i % 3});
    g->pel.emplace(StreamId{i, i % 3}, nack);
  }
  g->CreateConsumer("bob", 5678);
  const Value v(std::move(s));
  const std::string payload = DumpPayload(v, false);
  absl::StatusOr<Value> back = ParseDumpPayload(payload);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->type(), ValueType::kStream);
  const StreamValue& b = back->stream();
  EXPECT_EQ(All(b), All(v.stream()));
  EXPECT_EQ(b.size(), 18u);
  EXPECT_EQ(b.max_deleted_id(), (StreamId{7, 1}));
  EXPECT_EQ(b.entries_added(), 20u);
  ASSERT_NE(b.FindGroup("grp"), nullptr);
  EXPECT_EQ(b.FindGroup("grp")->pel.size(), 3u);
  EXPECT_EQ(b.FindGroup("grp")->FindConsumer("alice")->pel.size(), 3u);
  EXPECT_EQ(b.FindGroup("grp")->FindConsumer("bob")->seen_time, 5678);
  EXPECT_EQ(DumpPayload(*back, false), payload);
  for (size_t n = 0; n < payload.size(); ++n) {
    EXPECT_FALSE(ParseDumpPayload(payload.substr(0, n)).ok()) << n;
  }
  // Byte flips: the payload's CRC is recomputed so the decoder sees them.
  std::mt19937_64 rng(3);
  for (int i = 0; i < 3000; ++i) {
    std::string bad = payload;
    const size_t body = bad.size() - 10;
    bad[rng() % body] = static_cast<char>(rng());
    bad = Reseal(bad);
    absl::StatusOr<Value> r = ParseDumpPayload(bad);
    if (!r.ok()) continue;
    ASSERT_EQ(r->type(), ValueType::kStream);
    size_t n = 0;
    r->stream().Range(StreamId::Min(), StreamId::Max(), false, [&](StreamId, FieldValues) {
      ++n;
      return true;
    });
    EXPECT_EQ(n, r->stream().size());
  }
}

// Every node but the open one is sealed at its exact size (slab blocks of
// ExactSizeSlabs), in a stream built by XADD, in its copy and in one rebuilt
// node by node as RDB loading does; XDEL and trimming still work on sealed
// nodes, and the slab blocks go back when the streams do.
TEST(StreamValueTest, SealedNodesAreExactAndFreedWithTheStream) {
  ExactSizeSlabs& slabs = ExactSizeSlabs::Global();
  const size_t blocks_before = slabs.stats().live_blocks;
  auto s = std::make_unique<StreamValue>();
  Entries model;
  for (uint64_t i = 1; i <= 1050; ++i) {
    const std::string v = std::to_string(i * 7919 % 1000);
    Add(s.get(), {i, 0}, {"sensor", v, "temperature", "21"});
    model[{i, 0}] = {"sensor", v, "temperature", "21"};
  }
  ASSERT_EQ(s->node_count(), 11u);
  auto check_sealed = [](const StreamValue& v) {
    size_t seen = 0, capacity = 0;
    v.ForEachNode([&](StreamId, const Listpack& lp) {
      const bool open = ++seen == v.node_count();
      EXPECT_EQ(lp.exact(), !open);
      if (!open) {
        EXPECT_EQ(lp.capacity(), ExactSizeSlabs::RoundUp(lp.byte_size()));
      }
      capacity += lp.capacity();
    });
    return capacity;
  };
  const size_t capacity = check_sealed(*s);
  EXPECT_EQ(s->heap_bytes(), capacity + 48 * s->node_count());
  EXPECT_EQ(slabs.stats().live_blocks, blocks_before + 10);

  std::unique_ptr<StreamValue> copy = s->Clone();
  check_sealed(*copy);
  EXPECT_EQ(All(*copy), model);
  EXPECT_EQ(slabs.stats().live_blocks, blocks_before + 20);

  StreamValue loaded;
  s->ForEachNode([&](StreamId master, const Listpack& lp) {
    loaded.AppendNode(master, Listpack::FromBytes(std::string(lp.bytes())));
  });
  loaded.set_length(s->size());
  check_sealed(loaded);
  EXPECT_EQ(All(loaded), model);

  // XDEL in sealed nodes: 150..200 of the node of 101..200 (its counters
  // rewritten), and the whole node of 201..300.
  for (uint64_t i = 150; i <= 300; ++i) {
    ASSERT_TRUE(s->Delete({i, 0}));
    model.erase({i, 0});
  }
  EXPECT_EQ(s->node_count(), 10u);
  // 899 entries down to 700: the first two nodes whole, then 301..350 flagged.
  EXPECT_EQ(s->TrimByLength(700, false, 0), 199);
  for (uint64_t i = 1; i <= 350; ++i) model.erase({i, 0});
  check_sealed(*s);
  EXPECT_EQ(All(*s), model);
  EXPECT_EQ(All(*s, true), model);

  s.reset();
  copy.reset();
  loaded = StreamValue();
  EXPECT_EQ(slabs.stats().live_blocks, blocks_before);
}

// Node counts of Redis's rax for the same keys (XINFO STREAM's
// radix-tree-nodes, read from redis-server 7.0 for these IDs).
TEST(RaxShape, CountsRaxNodesForStreamIds) {
  EXPECT_EQ(RaxNodeCount({}), 1u);  // the empty root
  EXPECT_EQ(RaxNodeCount({{1, 1}}), 2u);  // compressed 16 bytes, the key
  // Differ in the last byte only: shared prefix, branch, two keys.
  EXPECT_EQ(RaxNodeCount({{1, 1}, {1, 2}}), 4u);
  // Differ earlier: each branch also keeps the rest of its label.
  EXPECT_EQ(RaxNodeCount({{1, 0}, {1, 256}}), 6u);
  // No shared first byte: the root is the branching node.
  EXPECT_EQ(RaxNodeCount({{1, 0}, {uint64_t{1} << 63, 0}}), 5u);
  EXPECT_EQ(RaxNodeCount({{1, 1}, {1, 2}, {1, 3}}), 5u);
}

}  // namespace
}  // namespace ringkv::core

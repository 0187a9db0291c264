#include "core/keyspace_node.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/dict.h"
#include "core/expire_index.h"

namespace ringkv::core {
namespace {

struct NodeDeleter {
  void operator()(KeyspaceNode* n) const { KeyspaceNode::Destroy(n); }
};
using NodePtr = std::unique_ptr<KeyspaceNode, NodeDeleter>;

TEST(KeyspaceNodeTest, SizedToTheKeyAndTheValuesRoom) {
  // The figures perf/keyspace_memory.sh depends on: a 16-byte key with an
  // integer in 48 bytes, with a 32-byte string in 64.
  EXPECT_EQ(KeyspaceNode::AllocationSize(0, 16), 48u);
  EXPECT_EQ(KeyspaceNode::AllocationSize(2, 16), 64u);
  NodePtr n(KeyspaceNode::Create("key:000000000001", StringValue::SlotBytesFor(std::string(32, 'v'))));
  EXPECT_EQ(n->allocated_bytes(), 64u);
  n->value.value.SetString(std::string(32, 'v'));
  EXPECT_EQ(n->value.value.heap_bytes(), 0u);
  char scratch[24];
  EXPECT_EQ(n->value.value.str().View(scratch), std::string(32, 'v'));
  EXPECT_EQ(n->key().view(), "key:000000000001");  // the value's bytes end where the key's begin
  NodePtr room_capped(KeyspaceNode::Create("k", 1000));
  EXPECT_EQ(room_capped->value.value.slot_words(), StringValue::kMaxSlotWords);
}

TEST(KeyspaceNodeTest, KeysOfEveryLength) {
  for (size_t len : {size_t{0}, size_t{1}, size_t{16}, size_t{23}, size_t{24}, size_t{126}, size_t{127},
                     size_t{1000}}) {
    std::string key(len, 'k');
    if (len > 0) key.back() = 'z';
    NodePtr n(KeyspaceNode::Create(key, len % 3 == 0 ? 20 : 0));
    EXPECT_EQ(n->key().view(), key) << len;
    EXPECT_TRUE(n->key().Equals(key)) << len;
    if (len > 0) {
      EXPECT_FALSE(n->key().Equals(key.substr(1) + "a")) << len;
    }
    EXPECT_FALSE(n->key().Equals(key + "x")) << len;
    EXPECT_EQ(n->allocated_bytes(), KeyspaceNode::AllocationSize(n->value.value.slot_words(), len)) << len;
  }
}

TEST(KeyspaceNodeTest, EntryStateSharesNoBitsWithTheValueOrTheKey) {
  NodePtr n(KeyspaceNode::Create("some-key", 0));
  Entry& e = n->value;
  e.set_lru(0xABCDEF);
  e.set_snap(0x5A);
  e.set_has_expire(true);
  e.value = Value(StringValue(std::string(100, 'x')));
  e.value.SetString("12");
  e.value = Value(StringValue("short"));
  EXPECT_EQ(e.lru(), 0xABCDEFu);
  EXPECT_EQ(e.snap(), 0x5A);
  EXPECT_TRUE(e.has_expire());
  EXPECT_EQ(n->key().view(), "some-key");
  e.set_has_expire(false);
  e.set_lru(0xFFFFFFFF);  // 24 bits kept
  EXPECT_EQ(e.lru(), 0xFFFFFFu);
  EXPECT_FALSE(e.has_expire());
  EXPECT_EQ(n->key().view(), "some-key");
  EXPECT_EQ(e.snap(), 0x5A);
}

TEST(KeyspaceNodeTest, DictOfNodesFindsEraseAndRehashes) {
  Dict<Entry, KeyspaceNode> d;
  for (int i = 0; i < 5000; ++i) {
    const std::string key = "key:" + std::to_string(i);
    auto [node, inserted] = d.InsertNodeHashed(key, decltype(d)::Hash(key), i % 2 ? 16 : 0);
    ASSERT_TRUE(inserted);
    node->value.value.SetString(std::string(32, static_cast<char>('a' + i % 26)));
  }
  while (d.Rehash(100)) {
  }
  char scratch[24];
  for (int i = 0; i < 5000; ++i) {
    const std::string key = "key:" + std::to_string(i);
    const Entry* e = d.Find(key);
    ASSERT_NE(e, nullptr) << key;
    EXPECT_EQ(e->value.str().View(scratch), std::string(32, static_cast<char>('a' + i % 26)));
    EXPECT_EQ(e->value.heap_bytes(), i % 2 ? 0u : 32u);
  }
  for (int i = 0; i < 5000; i += 2) EXPECT_TRUE(d.Erase("key:" + std::to_string(i)));
  EXPECT_EQ(d.size(), 2500u);
  EXPECT_EQ(d.Find("key:2"), nullptr);
  EXPECT_NE(d.Find("key:3"), nullptr);
}

TEST(ExpireIndexTest, RecordsFollowTheirEntriesThroughRemovals) {
  NodePtr a(KeyspaceNode::Create("a", 0)), b(KeyspaceNode::Create("b", 0)), c(KeyspaceNode::Create("c", 0));
  ExpireIndex index;
  index.Set(a->value, 100);
  index.Set(b->value, 200);
  index.Set(c->value, 300);
  index.Set(b->value, 250);  // an update, not a second record
  EXPECT_EQ(index.size(), 3u);
  EXPECT_TRUE(b->value.has_expire());
  index.Remove(a->value);  // c's record moves into a's place
  EXPECT_FALSE(a->value.has_expire());
  EXPECT_EQ(index.size(), 2u);
  EXPECT_EQ(index.When(b->value), 250);
  EXPECT_EQ(index.When(c->value), 300);
  index.Remove(c->value);
  EXPECT_EQ(index.When(b->value), 250);
  EXPECT_EQ(index[0].key(), "b");
  ExpireIndex other;
  other.swap(index);
  EXPECT_TRUE(index.empty());
  EXPECT_EQ(other.When(b->value), 250);
}

}  // namespace
}  // namespace ringkv::core

#include "core/cluster/bus_message.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace ringkv::cluster::bus_message_test {
namespace {

constexpr size_t kMax = 1 << 20;
const std::string kA = "3020386048a95661230b23e12763a061b3d55ff9";
const std::string kB = "2fa8dbd4481c73f36fd817b7e0f18ee7e1f41380";

uint32_t Be32(const std::string& b, size_t at) {
  return static_cast<uint32_t>(static_cast<uint8_t>(b[at])) << 24 | static_cast<uint8_t>(b[at + 1]) << 16 |
         static_cast<uint8_t>(b[at + 2]) << 8 | static_cast<uint8_t>(b[at + 3]);
}

BusMessage Header(MsgType type) {
  BusMessage m;
  m.type = type;
  m.port = 7000;
  m.current_epoch = 7;
  m.config_epoch = 5;
  m.offset = 123456789012345ULL;
  m.sender = kA;
  for (int s = 0; s < 100; ++s) SetSlotBit(m.myslots, s);
  m.myip = "10.1.2.3";
  m.pport = 0;
  m.cport = 17000;
  m.flags = 1;
  return m;
}

// Every message type, with what its body carries.
std::vector<BusMessage> Samples() {
  std::vector<BusMessage> out;
  BusMessage ping = Header(MsgType::kPing);
  ping.gossip.push_back({kB, 1700000000, 1700000001, "10.1.2.4", 7001, 17001, 2, 0});
  ping.gossip.push_back({kA, 0, 0, "", 0, 0, 64, 6380});
  ping.ext.hostname = "node-a.example";
  ping.ext.human_nodename = "a";
  ping.ext.forgotten.push_back({kB, 60});
  ping.ext.shard_id = kB;
  out.push_back(ping);
  BusMessage meet = Header(MsgType::kMeet);  // no gossip, no extensions
  out.push_back(meet);
  BusMessage pong = Header(MsgType::kPong);
  pong.replica_of = kB;
  pong.ext.hostname = "";  // an empty hostname is still sent (8 + 8 bytes)
  out.push_back(pong);
  BusMessage fail = Header(MsgType::kFail);
  fail.fail_about = kB;
  out.push_back(fail);
  for (MsgType t : {MsgType::kPublish, MsgType::kPublishShard}) {
    BusMessage pub = Header(t);
    pub.channel = "news";
    pub.message = std::string("hello\0world", 11);
    out.push_back(pub);
  }
  BusMessage update = Header(MsgType::kUpdate);
  update.update_config_epoch = 9;
  update.update_node = kB;
  SetSlotBit(update.update_slots, 16383);
  out.push_back(update);
  BusMessage module = Header(MsgType::kModule);
  module.module_id = 0x1122334455667788ULL;
  module.module_type = 200;
  module.module_payload = "payload";
  out.push_back(module);
  for (MsgType t : {MsgType::kFailoverAuthRequest, MsgType::kFailoverAuthAck, MsgType::kMfStart}) {
    BusMessage m = Header(t);
    m.mflags[0] = kMsgFlagForceAck;
    out.push_back(m);
  }
  return out;
}

TEST(BusMessage, EveryTypeRoundTrips) {
  for (const BusMessage& m : Samples()) {
    const std::string bytes = Encode(m);
    EXPECT_EQ(Be32(bytes, 4), bytes.size());
    auto d = Decode(bytes, kMax);
    ASSERT_TRUE(d.ok()) << static_cast<int>(m.type) << ": " << d.status();
    BusMessage want = m;
    if (!want.ext.empty()) want.mflags[0] |= kMsgFlagExtData;
    EXPECT_EQ(*d, want) << static_cast<int>(m.type);
    EXPECT_EQ(Encode(*d), bytes);
  }
}

TEST(BusMessage, SizesAsRedisComputesThem) {
  const std::vector<BusMessage> s = Samples();
  // PING: header + 2 gossip + hostname (8+16) + human name (8+8) + forgotten (8+48) + shard id (8+40).
  EXPECT_EQ(Encode(s[0]).size(), kBusHeaderLen + 2 * kGossipLen + 24 + 16 + 56 + 48);
  EXPECT_EQ(Encode(s[1]).size(), kBusHeaderLen);
  EXPECT_EQ(Encode(s[2]).size(), kBusHeaderLen + 16);
  EXPECT_EQ(Encode(s[3]).size(), kBusHeaderLen + 40);
  EXPECT_EQ(Encode(s[4]).size(), kBusHeaderLen + 8 + 4 + 11);
  EXPECT_EQ(Encode(s[6]).size(), kBusHeaderLen + kUpdateLen);
  EXPECT_EQ(Encode(s[7]).size(), kBusHeaderLen + 13 + 7);
  EXPECT_EQ(kBusMessageStructLen, 4352u);  // sizeof(clusterMsg) on x86-64
}

// A PING redis-server 7.0.15 sent on its bus (captured with strace): node
// kA, port 17011, bus port 27011, slots 0-100, currentEpoch 1, hostname
// "host-c", no gossip (two nodes), cluster state fail.
TEST(BusMessage, DecodesARedis70Ping) {
  std::ifstream in(std::string(RINGKV_SOURCE_DIR) + "/tests/core/cluster/redis70_ping.bin", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  ASSERT_EQ(bytes.size(), 2272u);
  auto m = Decode(bytes, kMax);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->type, MsgType::kPing);
  EXPECT_EQ(m->sender, kA);
  EXPECT_EQ(m->port, 17011);
  EXPECT_EQ(m->cport, 27011);
  EXPECT_EQ(m->pport, 0);
  EXPECT_EQ(m->flags, 17);  // myself,master
  EXPECT_EQ(m->current_epoch, 1u);
  EXPECT_EQ(m->config_epoch, 0u);
  EXPECT_EQ(m->state, 1);
  EXPECT_EQ(m->replica_of, "");
  EXPECT_TRUE(m->gossip.empty());
  ASSERT_TRUE(m->ext.hostname.has_value());
  EXPECT_EQ(*m->ext.hostname, "host-c");
  for (int s = 0; s < 16384; ++s) ASSERT_EQ(SlotBit(m->myslots, s), s <= 100) << s;
  // And ringkv writes the very same bytes for it.
  EXPECT_EQ(Encode(*m), bytes);
}

TEST(BusMessage, RefusesWithAReason) {
  const std::string ping = Encode(Samples()[0]);
  auto why = [](const std::string& b) { return std::string(Decode(b, kMax).status().message()); };
  EXPECT_NE(why(ping.substr(0, 100)).find("truncated"), std::string::npos);
  std::string bad_sig = ping;
  bad_sig[0] = 'X';
  EXPECT_NE(why(bad_sig).find("signature"), std::string::npos);
  std::string bad_len = ping;
  bad_len[7] = static_cast<char>(bad_len[7] + 1);
  EXPECT_NE(why(bad_len).find("length"), std::string::npos);
  EXPECT_EQ(Decode(ping, ping.size() - 1).status().code(), absl::StatusCode::kOutOfRange);
  std::string v2 = ping;
  v2[9] = 2;
  EXPECT_EQ(Decode(v2, kMax).status().code(), absl::StatusCode::kFailedPrecondition);
  // A gossip count past the end.
  std::string many = ping;
  many[14] = 0x7f;
  EXPECT_FALSE(Decode(many, kMax).ok());
  // An extension whose length is not a multiple of 8.
  std::string pad = ping;
  pad[kBusHeaderLen + 2 * kGossipLen + 3] = 23;
  EXPECT_NE(why(pad).find("padding"), std::string::npos);
  // More extensions announced than sent.
  std::string more = ping;
  more[2215] = 9;
  EXPECT_FALSE(Decode(more, kMax).ok());
  // FAIL with a body of the wrong size.
  std::string fail = Encode(Samples()[3]) + "x";
  fail[7] = static_cast<char>(fail.size() & 0xff);
  fail[6] = static_cast<char>(fail.size() >> 8);
  EXPECT_NE(why(fail).find("expected length"), std::string::npos);
  // An unknown type is accepted, header only (Redis ignores it).
  std::string unknown = Encode(Samples()[1]);
  unknown[13] = 42;
  EXPECT_TRUE(Decode(unknown, kMax).ok());
}

TEST(BusMessage, FrameLength) {
  const std::string b = Encode(Samples()[3]);
  EXPECT_EQ(*FrameLength(b.substr(0, 8), kMax), b.size());
  EXPECT_FALSE(FrameLength("RCmb\0\0\0\x10", kMax).ok());  // below the header
  EXPECT_FALSE(FrameLength("RCmb", kMax).ok());
  EXPECT_EQ(FrameLength(b.substr(0, 8), 100).status().code(), absl::StatusCode::kOutOfRange);
}

// Thousands of mutated messages: flipped bytes, length fields, counts,
// truncations and extensions. Decode either refuses or parses; a parse is
// re-encoded and must decode to the same message. Never a crash (the ASan
// build checks the reads).
TEST(BusMessage, SeededMutationFuzz) {
  std::mt19937_64 rng(20261202);
  const std::vector<BusMessage> samples = Samples();
  int parsed = 0, refused = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string b = Encode(samples[rng() % samples.size()]);
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      switch (rng() % 6) {
        case 0:  // any byte
          if (!b.empty()) b[rng() % b.size()] = static_cast<char>(rng());
          break;
        case 1:  // the count or extension count fields
          if (b.size() >= kBusHeaderLen) b[(rng() % 2 ? 14 : 2214) + rng() % 2] = static_cast<char>(rng());
          break;
        case 2:  // a byte of the body (gossip, extensions, publish lengths)
          if (b.size() > kBusHeaderLen) {
            b[kBusHeaderLen + rng() % (b.size() - kBusHeaderLen)] = static_cast<char>(rng());
          }
          break;
        case 3:  // truncate, keeping totlen consistent or not
          b.resize(rng() % (b.size() + 1));
          break;
        case 4:  // extend with junk
          b.append(rng() % 64, static_cast<char>(rng()));
          break;
        case 5:  // the type
          if (b.size() > 13) b[13] = static_cast<char>(rng() % 12);
          break;
      }
      if (rng() % 2 && b.size() >= 8) {  // often: fix totlen so the body checks run
        const uint32_t n = static_cast<uint32_t>(b.size());
        for (int k = 0; k < 4; ++k) b[4 + k] = static_cast<char>(n >> (24 - 8 * k));
      }
    }
    auto d = Decode(b, kMax);
    if (!d.ok()) {
      ++refused;
      EXPECT_FALSE(d.status().message().empty());
      continue;
    }
    ++parsed;
    auto again = Decode(Encode(*d), kMax);
    ASSERT_TRUE(again.ok()) << again.status();
    if (d->ext.unknown == 0) {
      EXPECT_EQ(again->gossip, d->gossip);
      EXPECT_EQ(again->ext, d->ext);
      EXPECT_EQ(again->channel, d->channel);
      EXPECT_EQ(again->message, d->message);
    }
  }
  EXPECT_GT(parsed, 100);
  EXPECT_GT(refused, 100);
}

}  // namespace
}  // namespace ringkv::cluster::bus_message_test

// The cluster bus message codec: Redis 7.0's clusterMsg (src/cluster.h),
// byte for byte, so ringkv and redis-server nodes can gossip with each other.
// No sockets here: Encode makes the bytes of one message, FrameLength tells
// a reader how long the message starting in its buffer is, Decode checks and
// parses one whole message.
//
// Wire layout (integers in network byte order):
//   header, 2256 bytes: "RCmb" totlen:u32 ver:u16(=1) port:u16 type:u16
//     count:u16 currentEpoch:u64 configEpoch:u64 offset:u64 sender[40]
//     myslots[2048] slaveof[40] myip[46] extensions:u16 notused[30]
//     pport:u16 cport:u16 flags:u16 state:u8 mflags[3]
//   then by type:
//     PING/PONG/MEET  count gossip entries of 104 bytes (name[40]
//                     ping_sent:u32 pong_received:u32 ip[46] port:u16
//                     cport:u16 flags:u16 pport:u16 notused:u16), then,
//                     when mflags[0] has EXT_DATA, `extensions` extensions:
//                     length:u32 type:u16 unused:u16 body, 8-byte aligned
//     FAIL            about[40]
//     PUBLISH(SHARD)  channel_len:u32 message_len:u32 channel message
//     UPDATE          configEpoch:u64 nodename[40] slots[2048]
//     MODULE          module_id:u64 len:u32 type:u8 payload
//     FAILOVER_AUTH_REQUEST / _ACK, MFSTART: the header only
//
// Decode refuses what Redis's clusterIsValidPacket refuses (and what it
// would read past the end of: an extension header cut short), and messages
// longer than the caller's limit; the error says why, for the log line.
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace ringkv::cluster {

enum class MsgType : uint16_t {
  kPing = 0,
  kPong = 1,
  kMeet = 2,
  kFail = 3,
  kPublish = 4,
  kFailoverAuthRequest = 5,
  kFailoverAuthAck = 6,
  kUpdate = 7,
  kMfStart = 8,
  kModule = 9,
  kPublishShard = 10,
};
inline constexpr uint16_t kMsgTypeCount = 11;

// Ping extension types. Redis 7.0 sends only HOSTNAME; the later ones are
// numbered as Redis 7.2 numbers them (7.0 skips types it does not know).
enum class PingExtType : uint16_t {
  kHostname = 0,
  kHumanNodename = 1,
  kForgottenNode = 2,
  kShardId = 3,
};

inline constexpr uint16_t kBusProtocolVersion = 1;
inline constexpr size_t kBusHeaderLen = 2256;  // CLUSTERMSG_MIN_LEN
inline constexpr size_t kGossipLen = 104;
inline constexpr size_t kSlotBitmapLen = 2048;
inline constexpr size_t kIpLen = 46;  // NET_IP_STR_LEN
inline constexpr size_t kUpdateLen = 8 + 40 + kSlotBitmapLen;
inline constexpr size_t kBusMessageStructLen = kBusHeaderLen + kUpdateLen;  // sizeof(clusterMsg)

// mflags[0] bits.
inline constexpr uint8_t kMsgFlagPaused = 1 << 0;
inline constexpr uint8_t kMsgFlagForceAck = 1 << 1;
inline constexpr uint8_t kMsgFlagExtData = 1 << 2;

using SlotBitmap = std::array<uint8_t, kSlotBitmapLen>;  // bit (slot & 7) of byte slot / 8
inline bool SlotBit(const SlotBitmap& b, int slot) { return b[slot >> 3] & (1 << (slot & 7)); }
inline void SetSlotBit(SlotBitmap& b, int slot) { b[slot >> 3] |= static_cast<uint8_t>(1 << (slot & 7)); }

struct GossipEntry {
  std::string name;  // 40 bytes on the wire
  uint32_t ping_sent = 0;      // seconds
  uint32_t pong_received = 0;  // seconds
  std::string ip;
  uint16_t port = 0;
  uint16_t cport = 0;
  uint16_t flags = 0;
  uint16_t pport = 0;
  bool operator==(const GossipEntry&) const = default;
};

struct ForgottenNode {
  std::string name;
  uint64_t ttl_s = 0;
  bool operator==(const ForgottenNode&) const = default;
};

// The extensions of a PING, PONG or MEET. Encode writes them in this order.
struct PingExtensions {
  std::optional<std::string> hostname;
  std::optional<std::string> human_nodename;
  std::vector<ForgottenNode> forgotten;
  std::optional<std::string> shard_id;  // 40 bytes
  int unknown = 0;                      // extensions of other types skipped by Decode
  bool empty() const { return !hostname && !human_nodename && forgotten.empty() && !shard_id; }
  bool operator==(const PingExtensions&) const = default;
};

struct BusMessage {
  // ---- header ----
  MsgType type = MsgType::kPing;
  uint16_t port = 0;
  uint64_t current_epoch = 0;
  uint64_t config_epoch = 0;
  uint64_t offset = 0;
  std::string sender;      // 40 bytes
  SlotBitmap myslots{};
  std::string replica_of;  // 40 bytes; "" = none (all zero bytes on the wire)
  std::string myip;        // "" = not sent (all zero)
  uint16_t pport = 0;
  uint16_t cport = 0;
  uint16_t flags = 0;
  uint8_t state = 0;       // 0 ok, 1 fail
  std::array<uint8_t, 3> mflags{};  // Encode sets/clears kMsgFlagExtData itself
  // ---- PING / PONG / MEET ----
  std::vector<GossipEntry> gossip;
  PingExtensions ext;
  // ---- FAIL ----
  std::string fail_about;
  // ---- PUBLISH / PUBLISHSHARD ----
  std::string channel;
  std::string message;
  // ---- UPDATE ----
  uint64_t update_config_epoch = 0;
  std::string update_node;
  SlotBitmap update_slots{};
  // ---- MODULE ----
  uint64_t module_id = 0;
  uint8_t module_type = 0;
  std::string module_payload;

  bool operator==(const BusMessage&) const = default;
};

bool IsPingLike(MsgType t);  // PING, PONG, MEET

// The bytes of `msg` (totlen and the extension count computed).
std::string Encode(const BusMessage& msg);

// A reader's framing step: given at least the first 8 bytes of a message,
// its total length; an error (drop the link, as Redis does) on a bad
// signature, a length below the header's or above max_len.
absl::StatusOr<uint32_t> FrameLength(std::string_view first8, size_t max_len);

// Parses one whole message (`bytes` is exactly totlen long). Errors:
// InvalidArgument for a malformed message, FailedPrecondition for a
// version other than 1 (Redis ignores those without dropping the link),
// OutOfRange for one longer than max_len. An unknown type is accepted with
// its header only (Redis ignores it).
absl::StatusOr<BusMessage> Decode(std::string_view bytes, size_t max_len);

}  // namespace ringkv::cluster

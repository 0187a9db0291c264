#include "core/cluster/bus_message.h"

#include <cstring>

#include "core/strings.h"

namespace ringkv::cluster {
namespace {

// Field offsets of the header (Redis asserts the same ones).
constexpr size_t kOffTotlen = 4, kOffVer = 8, kOffPort = 10, kOffType = 12, kOffCount = 14, kOffCurrentEpoch = 16,
                 kOffConfigEpoch = 24, kOffOffset = 32, kOffSender = 40, kOffMyslots = 80, kOffSlaveof = 2128,
                 kOffMyip = 2168, kOffExtensions = 2214, kOffPport = 2246, kOffCport = 2248, kOffFlags = 2250,
                 kOffState = 2252, kOffMflags = 2253;
static_assert(kOffMflags + 3 == kBusHeaderLen);
constexpr size_t kNameLen = 40;
constexpr size_t kPublishFixed = 8;  // sizeof(clusterMsgDataPublish) - 8
constexpr size_t kModuleFixed = 13;  // sizeof(clusterMsgModule) - 3
constexpr size_t kExtHeaderLen = 8;

class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}
  void U8(uint8_t v) { out_->push_back(static_cast<char>(v)); }
  void U16(uint16_t v) {
    U8(static_cast<uint8_t>(v >> 8));
    U8(static_cast<uint8_t>(v));
  }
  void U32(uint32_t v) {
    U16(static_cast<uint16_t>(v >> 16));
    U16(static_cast<uint16_t>(v));
  }
  void U64(uint64_t v) {
    U32(static_cast<uint32_t>(v >> 32));
    U32(static_cast<uint32_t>(v));
  }
  // `s` in a field of `len` bytes, zero-padded (cut when longer).
  void Fixed(std::string_view s, size_t len) {
    const size_t n = std::min(s.size(), len);
    out_->append(s.data(), n);
    out_->append(len - n, '\0');
  }
  void Bytes(std::string_view s) { out_->append(s); }
  void Zeros(size_t n) { out_->append(n, '\0'); }
  size_t size() const { return out_->size(); }

 private:
  std::string* out_;
};

// Reads inside a bounded view; the caller checks lengths before reading, so
// an out-of-range read is a bug, caught by the checks of Decode.
class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  uint8_t U8(size_t at) const { return static_cast<uint8_t>(b_[at]); }
  uint16_t U16(size_t at) const { return static_cast<uint16_t>(U8(at) << 8 | U8(at + 1)); }
  uint32_t U32(size_t at) const { return static_cast<uint32_t>(U16(at)) << 16 | U16(at + 2); }
  uint64_t U64(size_t at) const { return static_cast<uint64_t>(U32(at)) << 32 | U32(at + 4); }
  std::string_view Raw(size_t at, size_t len) const { return b_.substr(at, len); }
  // A NUL-terminated string inside a fixed field (the field's end when no NUL).
  std::string CStr(size_t at, size_t len) const {
    std::string_view f = Raw(at, len);
    return std::string(f.substr(0, f.find('\0')));
  }
  // A name field: "" when all zero bytes (Redis's CLUSTER_NODE_NULL_NAME).
  std::string Name(size_t at) const {
    std::string_view f = Raw(at, kNameLen);
    return f.find_first_not_of('\0') == std::string_view::npos ? std::string() : std::string(f);
  }

 private:
  std::string_view b_;
};

size_t Align8(size_t n) { return (n + 7) / 8 * 8; }

void WriteExt(Writer& w, PingExtType type, std::string_view body, size_t body_len) {
  w.U32(static_cast<uint32_t>(kExtHeaderLen + body_len));
  w.U16(static_cast<uint16_t>(type));
  w.U16(0);
  w.Fixed(body, body_len);
}

absl::Status Invalid(std::string_view why) { return absl::InvalidArgumentError(ToAbsl(why)); }

const char* TypeName(uint16_t t) {
  static constexpr const char* kNames[] = {"ping",   "pong",   "meet",    "fail",   "publish",     "auth-req",
                                           "auth-ack", "update", "mfstart", "module", "publishshard"};
  return t < kMsgTypeCount ? kNames[t] : "unknown";
}

absl::Status DecodeExtensions(const Reader& r, size_t at, size_t end, uint16_t count, PingExtensions* ext) {
  for (uint16_t i = 0; i < count; ++i) {
    if (end - at < kExtHeaderLen) return Invalid("ping extension header past the end of the message");
    const uint32_t len = r.U32(at);
    const uint16_t type = r.U16(at + 4);
    if (len < kExtHeaderLen || len % 8 != 0) {
      return Invalid(StrCat("ping extension without proper padding (", len, " bytes)"));
    }
    if (len > end - at) return Invalid("ping extension data exceeds the message length");
    const size_t body = at + kExtHeaderLen, body_len = len - kExtHeaderLen;
    switch (static_cast<PingExtType>(type)) {
      case PingExtType::kHostname:
        ext->hostname = r.CStr(body, body_len);
        break;
      case PingExtType::kHumanNodename:
        ext->human_nodename = r.CStr(body, body_len);
        break;
      case PingExtType::kForgottenNode:
        if (body_len < kNameLen + 8) return Invalid("forgotten node extension too short");
        ext->forgotten.push_back({std::string(r.Raw(body, kNameLen)), r.U64(body + kNameLen)});
        break;
      case PingExtType::kShardId:
        if (body_len < kNameLen) return Invalid("shard id extension too short");
        ext->shard_id = std::string(r.Raw(body, kNameLen));
        break;
      default:
        ++ext->unknown;
        break;
    }
    at += len;
  }
  if (at != end) return Invalid("bytes left after the ping extensions");
  return absl::OkStatus();
}

}  // namespace

bool IsPingLike(MsgType t) { return t == MsgType::kPing || t == MsgType::kPong || t == MsgType::kMeet; }

std::string Encode(const BusMessage& m) {
  std::string out;
  out.reserve(kBusHeaderLen + m.gossip.size() * kGossipLen + m.channel.size() + m.message.size() + 256);
  Writer w(&out);
  const bool ping = IsPingLike(m.type);
  uint16_t extensions = 0;
  if (ping) {
    extensions = static_cast<uint16_t>((m.ext.hostname ? 1 : 0) + (m.ext.human_nodename ? 1 : 0) +
                                       m.ext.forgotten.size() + (m.ext.shard_id ? 1 : 0));
  }
  w.Bytes("RCmb");
  w.U32(0);  // totlen, patched below
  w.U16(kBusProtocolVersion);
  w.U16(m.port);
  w.U16(static_cast<uint16_t>(m.type));
  w.U16(ping ? static_cast<uint16_t>(m.gossip.size()) : 0);
  w.U64(m.current_epoch);
  w.U64(m.config_epoch);
  w.U64(m.offset);
  w.Fixed(m.sender, kNameLen);
  w.Bytes(std::string_view(reinterpret_cast<const char*>(m.myslots.data()), kSlotBitmapLen));
  w.Fixed(m.replica_of, kNameLen);
  w.Fixed(m.myip, kIpLen);
  w.U16(extensions);
  w.Zeros(30);
  w.U16(m.pport);
  w.U16(m.cport);
  w.U16(m.flags);
  w.U8(m.state);
  w.U8(extensions > 0 ? (m.mflags[0] | kMsgFlagExtData) : (m.mflags[0] & ~kMsgFlagExtData));
  w.U8(m.mflags[1]);
  w.U8(m.mflags[2]);
  switch (m.type) {
    case MsgType::kPing:
    case MsgType::kPong:
    case MsgType::kMeet:
      for (const GossipEntry& g : m.gossip) {
        w.Fixed(g.name, kNameLen);
        w.U32(g.ping_sent);
        w.U32(g.pong_received);
        w.Fixed(g.ip, kIpLen);
        w.U16(g.port);
        w.U16(g.cport);
        w.U16(g.flags);
        w.U16(g.pport);
        w.U16(0);
      }
      // The hostname and the human nodename end with a NUL, padded to 8.
      if (m.ext.hostname) WriteExt(w, PingExtType::kHostname, *m.ext.hostname, Align8(m.ext.hostname->size() + 1));
      if (m.ext.human_nodename) {
        WriteExt(w, PingExtType::kHumanNodename, *m.ext.human_nodename, Align8(m.ext.human_nodename->size() + 1));
      }
      for (const ForgottenNode& f : m.ext.forgotten) {
        w.U32(static_cast<uint32_t>(kExtHeaderLen + kNameLen + 8));
        w.U16(static_cast<uint16_t>(PingExtType::kForgottenNode));
        w.U16(0);
        w.Fixed(f.name, kNameLen);
        w.U64(f.ttl_s);
      }
      if (m.ext.shard_id) WriteExt(w, PingExtType::kShardId, *m.ext.shard_id, kNameLen);
      break;
    case MsgType::kFail:
      w.Fixed(m.fail_about, kNameLen);
      break;
    case MsgType::kPublish:
    case MsgType::kPublishShard:
      w.U32(static_cast<uint32_t>(m.channel.size()));
      w.U32(static_cast<uint32_t>(m.message.size()));
      w.Bytes(m.channel);
      w.Bytes(m.message);
      break;
    case MsgType::kUpdate:
      w.U64(m.update_config_epoch);
      w.Fixed(m.update_node, kNameLen);
      w.Bytes(std::string_view(reinterpret_cast<const char*>(m.update_slots.data()), kSlotBitmapLen));
      break;
    case MsgType::kModule:
      w.U64(m.module_id);
      w.U32(static_cast<uint32_t>(m.module_payload.size()));
      w.U8(m.module_type);
      w.Bytes(m.module_payload);
      break;
    case MsgType::kFailoverAuthRequest:
    case MsgType::kFailoverAuthAck:
    case MsgType::kMfStart:
      break;
  }
  const uint32_t totlen = static_cast<uint32_t>(out.size());
  for (int i = 0; i < 4; ++i) out[kOffTotlen + i] = static_cast<char>(totlen >> (24 - 8 * i));
  return out;
}

absl::StatusOr<uint32_t> FrameLength(std::string_view first8, size_t max_len) {
  if (first8.size() < 8) return Invalid("fewer than 8 bytes");
  if (first8.substr(0, 4) != "RCmb") return Invalid("bad message signature");
  const uint32_t totlen = Reader(first8).U32(kOffTotlen);
  if (totlen < kBusHeaderLen) return Invalid(StrCat("message length ", totlen, " below the header's"));
  if (totlen > max_len) return absl::OutOfRangeError(StrCat("message length ", totlen, " over the limit"));
  return totlen;
}

absl::StatusOr<BusMessage> Decode(std::string_view bytes, size_t max_len) {
  if (bytes.size() < kBusHeaderLen) return Invalid(StrCat("message of ", bytes.size(), " bytes is truncated"));
  absl::StatusOr<uint32_t> framed = FrameLength(bytes.substr(0, 8), max_len);
  if (!framed.ok()) return framed.status();
  const size_t totlen = *framed;
  if (totlen != bytes.size()) {
    return Invalid(StrCat("message length field ", totlen, " but ", bytes.size(), " bytes"));
  }
  const Reader r(bytes);
  if (r.U16(kOffVer) != kBusProtocolVersion) {
    return absl::FailedPreconditionError(StrCat("unsupported bus protocol version ", r.U16(kOffVer)));
  }
  BusMessage m;
  const uint16_t type = r.U16(kOffType);
  const uint16_t count = r.U16(kOffCount);
  m.type = static_cast<MsgType>(type);
  m.port = r.U16(kOffPort);
  m.current_epoch = r.U64(kOffCurrentEpoch);
  m.config_epoch = r.U64(kOffConfigEpoch);
  m.offset = r.U64(kOffOffset);
  m.sender = std::string(r.Raw(kOffSender, kNameLen));
  std::memcpy(m.myslots.data(), bytes.data() + kOffMyslots, kSlotBitmapLen);
  m.replica_of = r.Name(kOffSlaveof);
  m.myip = r.CStr(kOffMyip, kIpLen);
  m.pport = r.U16(kOffPport);
  m.cport = r.U16(kOffCport);
  m.flags = r.U16(kOffFlags);
  m.state = r.U8(kOffState);
  for (int i = 0; i < 3; ++i) m.mflags[i] = r.U8(kOffMflags + i);
  const uint16_t extensions = r.U16(kOffExtensions);
  const size_t body = totlen - kBusHeaderLen;
  auto expect = [&](size_t want) -> absl::Status {
    if (body == want) return absl::OkStatus();
    return Invalid(StrCat("invalid ", TypeName(type), " message of length ", totlen, " but expected length ",
                                kBusHeaderLen + want));
  };
  switch (m.type) {
    case MsgType::kPing:
    case MsgType::kPong:
    case MsgType::kMeet: {
      const size_t gossip_len = size_t{count} * kGossipLen;
      if (gossip_len > body) return expect(gossip_len);
      m.gossip.resize(count);
      for (size_t i = 0; i < count; ++i) {
        const size_t at = kBusHeaderLen + i * kGossipLen;
        GossipEntry& g = m.gossip[i];
        g.name = std::string(r.Raw(at, kNameLen));
        g.ping_sent = r.U32(at + 40);
        g.pong_received = r.U32(at + 44);
        g.ip = r.CStr(at + 48, kIpLen);
        g.port = r.U16(at + 94);
        g.cport = r.U16(at + 96);
        g.flags = r.U16(at + 98);
        g.pport = r.U16(at + 100);
      }
      const size_t ext_at = kBusHeaderLen + gossip_len;
      if (m.mflags[0] & kMsgFlagExtData) {
        if (absl::Status s = DecodeExtensions(r, ext_at, totlen, extensions, &m.ext); !s.ok()) return s;
      } else if (ext_at != totlen) {
        return expect(gossip_len);
      }
      break;
    }
    case MsgType::kFail:
      if (absl::Status s = expect(kNameLen); !s.ok()) return s;
      m.fail_about = std::string(r.Raw(kBusHeaderLen, kNameLen));
      break;
    case MsgType::kPublish:
    case MsgType::kPublishShard: {
      if (body < kPublishFixed) return expect(kPublishFixed);
      const uint64_t channel_len = r.U32(kBusHeaderLen), message_len = r.U32(kBusHeaderLen + 4);
      if (kPublishFixed + channel_len + message_len != body) {
        return expect(static_cast<size_t>(kPublishFixed + channel_len + message_len));
      }
      m.channel = std::string(r.Raw(kBusHeaderLen + kPublishFixed, channel_len));
      m.message = std::string(r.Raw(kBusHeaderLen + kPublishFixed + channel_len, message_len));
      break;
    }
    case MsgType::kUpdate:
      if (absl::Status s = expect(kUpdateLen); !s.ok()) return s;
      m.update_config_epoch = r.U64(kBusHeaderLen);
      m.update_node = std::string(r.Raw(kBusHeaderLen + 8, kNameLen));
      std::memcpy(m.update_slots.data(), bytes.data() + kBusHeaderLen + 8 + kNameLen, kSlotBitmapLen);
      break;
    case MsgType::kModule: {
      if (body < kModuleFixed) return expect(kModuleFixed);
      const uint64_t len = r.U32(kBusHeaderLen + 8);
      if (absl::Status s = expect(static_cast<size_t>(kModuleFixed + len)); !s.ok()) return s;
      m.module_id = r.U64(kBusHeaderLen);
      m.module_type = r.U8(kBusHeaderLen + 12);
      m.module_payload = std::string(r.Raw(kBusHeaderLen + kModuleFixed, len));
      break;
    }
    case MsgType::kFailoverAuthRequest:
    case MsgType::kFailoverAuthAck:
    case MsgType::kMfStart:
      if (absl::Status s = expect(0); !s.ok()) return s;
      break;
    default:
      break;  // an unknown type: well formed by definition, ignored by the caller
  }
  return m;
}

}  // namespace ringkv::cluster

// Versions reported to clients. ringkv speaks Redis 7.0's protocol and
// replies, and says so in INFO (redis_version) so that tools which gate
// features on the version (redis-cli, sentinel, client libraries) treat it
// as the Redis it behaves like; ringkv_version names the real build.
#pragma once

namespace ringkv::server {
inline constexpr char kRedisVersion[] = "7.0.15";
inline constexpr char kRingkvVersion[] = "0.1.0";
}  // namespace ringkv::server

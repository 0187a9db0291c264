// BlockKind: what a blocked client waits for. Apart from blocking.h so that
// the command families that block (BLPOP & co., through BlockOnKeys in
// commands/util.h) name it without seeing the component.
#pragma once

#include <cstdint>

namespace ringkv::server {

enum class BlockKind : uint8_t {
  kWait,  // WAIT / WAITAOF: acknowledgements (WaitRegistry holds the conditions)
  kList,  // BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP: a list at one of its keys
  kZSet,  // BZPOPMIN BZPOPMAX BZMPOP: a sorted set at one of its keys
  kStream,  // XREAD XREADGROUP: new entries in a stream at one of its keys
  kShutdown,  // SHUTDOWN waiting for lagging replicas: answered only if it fails
};

}  // namespace ringkv::server

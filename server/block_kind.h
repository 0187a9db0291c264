// BlockKind: what a blocked client waits for. Apart from blocking.h so that
// the command families that block (BLPOP & co., through BlockOnKeys in
// commands/util.h) name it without seeing the component.
#pragma once

#include <cstdint>
#include <string>

#include "core/stream_value.h"

namespace ringkv::server {

enum class BlockKind : uint8_t {
  kWait,  // WAIT / WAITAOF: acknowledgements (WaitRegistry holds the conditions)
  kList,  // BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP: a list at one of its keys
  kZSet,  // BZPOPMIN BZPOPMAX BZMPOP: a sorted set at one of its keys
  kStream,  // XREAD XREADGROUP: new entries in a stream at one of its keys
  kShutdown,  // SHUTDOWN waiting for lagging replicas: answered only if it fails
};

// A stream an XREAD / XREADGROUP waits on. It is looked at once an entry
// was added since the reader last looked (the stream's last ID or its
// entries-added count changed: an XADD, or the key made anew, as Redis
// readies a stream key; the writes Redis does not ready it for, XTRIM, XDEL,
// XGROUP SETID, change neither), and served if its last ID is past the ID
// read after: XREAD's `after` (the first given for a key named twice, `$`
// resolved), XREADGROUP's group's last delivered ID then.
struct StreamWait {
  std::string key;
  core::StreamId after;      // XREAD
  core::StreamId last_seen;  // the stream's last ID when it blocked, or was last passed over
  uint64_t added_seen = 0;   // and its entries-added count then
};

}  // namespace ringkv::server

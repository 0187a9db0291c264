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

// A stream an XREAD / XREADGROUP waits on. It is looked at when Redis
// readies the key -- created (dbAdd: RENAME, COPY, MOVE, RESTORE, XADD or
// XGROUP CREATE MKSTREAM of a new key), an XADD, XGROUP DESTROY, SWAPDB,
// FLUSHDB; not on XTRIM, XDEL or XGROUP SETID -- and served if its last ID
// (deleted entries included) is past the ID read after: XREAD's `after`
// (the first given for a key named twice, `$` resolved), XREADGROUP's
// group's last delivered ID then.
struct StreamWait {
  std::string key;
  core::StreamId after;  // XREAD
};

}  // namespace ringkv::server

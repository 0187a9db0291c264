// GatherMemoryOverhead: where the server's memory goes, as Redis 7.0's
// getMemoryOverheadData fills it for INFO memory, MEMORY STATS and MEMORY
// DOCTOR. Main thread only.
#pragma once

#include "server/memory_stats.h"

namespace ringkv::server {

class Server;

MemoryOverhead GatherMemoryOverhead(Server& s);

}  // namespace ringkv::server

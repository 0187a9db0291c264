// The RDB encoding of streams (internal to core/): STREAM_LISTPACKS_2 (19) as
// Redis 7.0 writes it, and STREAM_LISTPACKS (15, Redis 5 to 6.2) on load.
//
// Record: nodes, each <master ID: 16-byte string> <listpack string>; the
// length; last ID; (v2: first ID, max deleted ID, entries added); groups,
// each <name> <last ID> (v2: <entries read>) <PEL: raw 16-byte ID, ms time
// (8 bytes LE), delivery count> <consumers: name, seen time, raw PEL IDs>.
//
// The loader refuses anything inconsistent (malformed nodes, IDs out of
// order, a consumer PEL entry missing from the group's, a pending entry
// without an owner, counts that disagree) with an error: the input may be
// hostile (RESTORE).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/rdb_input.h"
#include "core/stream_value.h"
#include "core/value.h"

namespace ringkv::core {

void RdbAppendStream(const StreamValue& s, bool compress, std::string* out);
absl::StatusOr<Value> ReadRdbStream(RdbInput& in, uint8_t type);

}  // namespace ringkv::core

// CollectionLimits: the encoding thresholds of every collection type
// (hash-max-listpack-*, list-max-listpack-size, list-compress-depth,
// set-max-intset-entries, zset-max-listpack-*, stream-node-max-*), as the
// server's config sets them. Commands pass the relevant part to a value's
// mutators; the RDB loader uses them to pick the encoding of what it loads,
// as Redis does.
#pragma once

#include "core/hash_value.h"
#include "core/list_value.h"
#include "core/set_value.h"
#include "core/stream_value.h"
#include "core/zset_value.h"

namespace ringkv::core {

struct CollectionLimits {
  HashLimits hash;
  ListLimits list;
  SetLimits set;
  ZSetLimits zset;
  StreamLimits stream;
};

}  // namespace ringkv::core

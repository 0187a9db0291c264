// CollectionLimits: the encoding thresholds of every collection type
// (hash-max-listpack-*, list-max-listpack-size, list-compress-depth,
// set-max-intset-entries, zset-max-listpack-*, stream-node-max-*) and of the
// HyperLogLog strings (hll-sparse-max-bytes), as the server's config sets
// them. Commands pass the relevant part to a value's
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
  // hll-sparse-max-bytes: a sparse HLL an update would grow past this many
  // bytes turns dense (hll::Set).
  size_t hll_sparse_max_bytes = 3000;
  // proto-max-bulk-len: SETRANGE, APPEND, SETBIT and BITFIELD refuse to grow
  // a string past this many bytes (Redis's checkStringLength).
  int64_t max_string_len = 512LL * 1024 * 1024;
};

}  // namespace ringkv::core

// RaxNodeCount: the number of nodes Redis's radix tree (rax.c) has when it
// holds a given set of stream IDs as keys (16 bytes, big-endian ms then
// seq), for XINFO STREAM's radix-tree-nodes. ringkv indexes stream nodes in
// a B-tree; the count reproduces the shape rax builds for keys of equal
// length: a compressed node for the prefix all keys share, a node per
// branching point (holding the first byte of each branch), a compressed node
// for the rest of a branch's label when it is longer than that byte, and a
// node per key. Equal to Redis's count whenever its tree is in that compact
// form, which insertions and removals of whole keys keep it in.
#pragma once

#include <cstddef>
#include <vector>

#include "core/stream_value.h"

namespace ringkv::core {

// REQUIRES: ids ascending and distinct. An empty tree is its root: 1.
size_t RaxNodeCount(const std::vector<StreamId>& ids);

}  // namespace ringkv::core

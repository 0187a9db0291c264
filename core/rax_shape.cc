#include "core/rax_shape.h"

#include <bit>
#include <cstdint>

namespace ringkv::core {
namespace {

constexpr size_t kKeyBytes = 16;

// Bytes shared at the start of the two IDs' 16-byte keys.
size_t CommonPrefix(const StreamId& a, const StreamId& b) {
  if (a.ms != b.ms) return static_cast<size_t>(std::countl_zero(a.ms ^ b.ms)) / 8;
  if (a.seq != b.seq) return 8 + static_cast<size_t>(std::countl_zero(a.seq ^ b.seq)) / 8;
  return kKeyBytes;
}

uint8_t ByteAt(const StreamId& id, size_t i) {
  const uint64_t half = i < 8 ? id.ms : id.seq;
  return static_cast<uint8_t>(half >> (56 - 8 * (i % 8)));
}

// Nodes of the subtree whose keys are ids[lo, hi): a leaf for one key, else
// the branching node at their common prefix, and per branch a compressed
// node for the label past its first byte (when there is one) and the
// branch's own subtree. Recursion depth is at most 16.
size_t Subtree(const std::vector<StreamId>& ids, size_t lo, size_t hi) {
  if (hi - lo == 1) return 1;
  const size_t at = CommonPrefix(ids[lo], ids[hi - 1]);
  size_t n = 1;
  for (size_t i = lo; i < hi;) {
    const uint8_t c = ByteAt(ids[i], at);
    size_t j = i + 1;
    while (j < hi && ByteAt(ids[j], at) == c) ++j;
    const size_t child_depth = j - i == 1 ? kKeyBytes : CommonPrefix(ids[i], ids[j - 1]);
    if (child_depth - at >= 2) ++n;  // the rest of the label, compressed
    n += Subtree(ids, i, j);
    i = j;
  }
  return n;
}

}  // namespace

size_t RaxNodeCount(const std::vector<StreamId>& ids) {
  if (ids.empty()) return 1;
  const size_t shared = CommonPrefix(ids.front(), ids.back());
  return (shared > 0 ? 1 : 0) + Subtree(ids, 0, ids.size());
}

}  // namespace ringkv::core

#include "core/hash_table_stats.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace ringkv::core {

void HashTableStats::AddBucket(uint64_t chain) {
  ++size;
  ++buckets_by_chain[std::min(chain, kChainLengths - 1)];
  if (chain == 0) return;
  ++slots;
  max_chain = std::max(max_chain, chain);
  total_chain += chain;
}

HashTableStats HashTableStats::OfSlots(uint64_t n, uint64_t used) {
  HashTableStats s;
  s.size = n;
  s.used = used;
  s.slots = used;
  s.max_chain = used > 0 ? 1 : 0;
  s.total_chain = used;
  s.buckets_by_chain[0] = n - used;
  s.buckets_by_chain[1] = used;
  return s;
}

std::string FormatHashTableStats(int table, const HashTableStats& s) {
  std::string text =
      absl::StrFormat("Hash table %d stats (%s):\n", table, table == 0 ? "main hash table" : "rehashing target");
  if (s.used == 0) return text + "No stats available for empty dictionaries\n";
  // Redis computes the averages and shares in single precision.
  const float slots = static_cast<float>(s.slots);
  absl::StrAppendFormat(&text,
                        " table size: %u\n"
                        " number of elements: %u\n"
                        " different slots: %u\n"
                        " max chain length: %u\n"
                        " avg chain length (counted): %.02f\n"
                        " avg chain length (computed): %.02f\n"
                        " Chain length distribution:\n",
                        s.size, s.used, s.slots, s.max_chain, static_cast<float>(s.total_chain) / slots,
                        static_cast<float>(s.used) / slots);
  // As Redis, the last count (49 and longer) is not listed.
  for (uint64_t i = 0; i + 1 < HashTableStats::kChainLengths; ++i) {
    const uint64_t n = s.buckets_by_chain[i];
    if (n == 0) continue;
    absl::StrAppendFormat(&text, "   %u: %u (%.02f%%)\n", i, n,
                          static_cast<float>(n) / static_cast<float>(s.size) * 100);
  }
  return text;
}

}  // namespace ringkv::core

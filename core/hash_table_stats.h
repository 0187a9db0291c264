// HashTableStats: how one hash table's entries lie in its buckets -- what
// DEBUG HTSTATS and DEBUG HTSTATS-KEY report, in Redis 7.0's words.
//
//   HashTableStats s;
//   for (each bucket) s.AddBucket(entries_in_it);
//   s.used = entries;
//   std::string text = FormatHashTableStats(0, s);  // "Hash table 0 stats (main hash table):\n..."
//
// A chained table (core/dict.h) fills it bucket by bucket. An open-addressing
// table (the expiry index's map) has buckets of one slot: each slot is a
// bucket with a chain of 0 or 1.
//
// Thread-safety: a value type.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace ringkv::core {

struct HashTableStats {
  // Chain lengths counted one by one; the last counts that length and
  // longer (Redis's DICT_STATS_VECTLEN).
  static constexpr uint64_t kChainLengths = 50;

  uint64_t size = 0;         // buckets
  uint64_t used = 0;         // entries
  uint64_t slots = 0;        // buckets holding at least one entry
  uint64_t max_chain = 0;    // the longest chain
  uint64_t total_chain = 0;  // entries found along the chains
  std::array<uint64_t, kChainLengths> buckets_by_chain{};

  // Counts one bucket holding `chain` entries (size grows by one).
  void AddBucket(uint64_t chain);
  // `n` buckets of one slot, `used` of them full (an open-addressing table).
  static HashTableStats OfSlots(uint64_t n, uint64_t used);
};

// Redis 7.0's text for table `table` of a dict (0: "main hash table", 1:
// "rehashing target"): size, entries, different slots, the longest and the
// average chains and the chain lengths' distribution -- or, with no entry,
// "No stats available for empty dictionaries". Each line ends in "\n".
std::string FormatHashTableStats(int table, const HashTableStats& s);

// A dict's whole report: its main table, and its rehashing target while it
// rehashes. D has TableStats(int) and rehashing() (core/dict.h).
template <typename D>
std::string DictStatsText(const D& dict) {
  std::string text = FormatHashTableStats(0, dict.TableStats(0));
  if (dict.rehashing()) text += FormatHashTableStats(1, dict.TableStats(1));
  return text;
}

}  // namespace ringkv::core

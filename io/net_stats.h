// NetStats: bytes and calls an I/O thread moved, for INFO stats
// (total_net_input_bytes ... io_threaded_writes_processed).
//
// Thread-safety: each IoThread has its own and is its only writer (plain
// relaxed load + store, no read-modify-write); any thread may read a
// snapshot (Totals sums them).
#pragma once

#include <atomic>
#include <cstdint>

namespace ringkv::io {

struct NetTotals {
  uint64_t input_bytes = 0;        // from clients (not from our primary)
  uint64_t output_bytes = 0;       // to clients (not to our replicas)
  uint64_t repl_input_bytes = 0;   // from our primary's link
  uint64_t repl_output_bytes = 0;  // to our replicas
  uint64_t reads = 0;              // receive completions with data or EOF
  uint64_t writes = 0;             // send completions
  uint64_t threaded_reads = 0;     // of those, done by I/O threads other than the main one
  uint64_t threaded_writes = 0;
};

class NetStats {
 public:
  void AddRead(uint64_t bytes, bool replication) {
    Add(replication ? repl_input_bytes_ : input_bytes_, bytes);
    Add(reads_, 1);
  }
  void AddWrite(uint64_t bytes, bool replication) {
    Add(replication ? repl_output_bytes_ : output_bytes_, bytes);
    Add(writes_, 1);
  }
  // Adds this thread's counts to *t (`threaded`: it is not the main thread).
  void AddTo(NetTotals* t, bool threaded) const {
    t->input_bytes += input_bytes_.load(std::memory_order_relaxed);
    t->output_bytes += output_bytes_.load(std::memory_order_relaxed);
    t->repl_input_bytes += repl_input_bytes_.load(std::memory_order_relaxed);
    t->repl_output_bytes += repl_output_bytes_.load(std::memory_order_relaxed);
    const uint64_t reads = reads_.load(std::memory_order_relaxed);
    const uint64_t writes = writes_.load(std::memory_order_relaxed);
    t->reads += reads;
    t->writes += writes;
    if (threaded) {
      t->threaded_reads += reads;
      t->threaded_writes += writes;
    }
  }

 private:
  static void Add(std::atomic<uint64_t>& a, uint64_t n) {
    a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::atomic<uint64_t> input_bytes_{0}, output_bytes_{0}, repl_input_bytes_{0}, repl_output_bytes_{0};
  std::atomic<uint64_t> reads_{0}, writes_{0};
};

}  // namespace ringkv::io

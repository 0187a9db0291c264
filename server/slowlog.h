// SlowLog: the SLOWLOG entries -- commands that ran longer than
// slowlog-log-slower-than -- newest first, at most slowlog-max-len of them.
//
// Owns its settings (bound to the config at construction) and its entries.
// The command gate asks ShouldRecord() after every command (inlined: one or
// two compares) and Record() only for a slow one.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "server/command_table.h"

namespace ringkv::server {

class Config;

struct SlowlogEntry {
  uint64_t id;
  int64_t time_s;
  int64_t duration_us;
  std::vector<std::string> argv;  // trimmed as Redis trims it
  std::string peer;
  std::string name;
};

class SlowLog {
 public:
  // Binds slowlog-log-slower-than and slowlog-max-len (set now, refreshed by
  // CONFIG SET). `config` outlives this object.
  explicit SlowLog(Config& config);
  SlowLog(const SlowLog&) = delete;
  SlowLog& operator=(const SlowLog&) = delete;

  // Whether a command that ran `duration_us` is logged (a negative
  // threshold turns the log off).
  bool ShouldRecord(int64_t duration_us) const { return threshold_us_ >= 0 && duration_us >= threshold_us_; }
  // Adds an entry, the arguments trimmed as Redis trims them (at most 32,
  // each at most 128 bytes); `peer` and `name` identify the client.
  void Record(Argv argv, int64_t duration_us, int64_t now_ms, std::string peer, std::string name);

  // SLOWLOG GET / LEN / RESET.
  const std::deque<SlowlogEntry>& entries() const { return entries_; }
  void Reset() { entries_.clear(); }
  // slowlog-log-slower-than in microseconds (LATENCY DOCTOR weighs it).
  int64_t threshold_us() const { return threshold_us_; }

 private:
  std::deque<SlowlogEntry> entries_;
  uint64_t next_id_ = 0;
  int64_t threshold_us_ = 10000;
  size_t max_len_ = 128;
};

}  // namespace ringkv::server

// MasterLink: what a replica keeps of its link to its primary -- where it
// points, how far the link got, and what of the primary's stream is not
// applied yet. ReplicaSide (replica_side.h) owns it; ROLE and INFO
// replication read it.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace ringkv::repl {

struct MasterLink {
  std::string host;
  int port = 0;
  enum class State : uint8_t { kConnect, kSyncing, kConnected } state = State::kConnect;
  uint64_t client_id = 0;       // the primary's client once the stream runs
  int64_t retry_at_ms = 0;
  int64_t last_io_ms = 0;
  uint64_t fsynced_offset = 0;  // replication offset known fsynced to our AOF
  int64_t last_ack_ms = 0;
  // The database the primary's stream has selected. It outlives the link,
  // as Redis's cached master client does: a partial resync continues the
  // stream without a SELECT.
  int db = 0;
  // The primary's MULTI ... (queued commands), not yet counted: the offset
  // moves past a transaction only at its EXEC, so a link cut inside one
  // discards it and the partial resync sends it again whole.
  std::string open_transaction;
  // The primary's commands that arrived while a script of ours was busy,
  // applied in order once it ends (Redis stops reading the link then:
  // neither refused with -BUSY nor counted in the offset meanwhile).
  std::deque<std::vector<std::string>> held;
};

}  // namespace ringkv::repl

// DisklessTransfer: a full sync's RDB streamed from a fork child straight to
// the replica sockets, with no file (repl-diskless-sync yes).
//
// The child writes "$EOF:<mark>\r\n", the RDB and the 40-byte mark into a
// pipe; the primary reads the pipe a block at a time into a SharedBlock and
// hands the same block, by reference, to every replica of the transfer. It
// reads on only while each of them has little unsent, so a slow replica slows
// the child (the pipe fills) instead of growing the primary's memory.
//
// Replicas that ask for a full sync after the child started cannot join (they
// missed the start of the payload); they wait for the next transfer.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/io_system.h"
#include "replication/primary.h"

namespace ringkv::repl {

// A fresh random end-of-payload mark (40 characters, as Redis's).
std::string NewEofMark();

class DisklessTransfer {
 public:
  // Takes over `pipe_fd` (the read end, non-blocking), serving `replica_ids`.
  DisklessTransfer(int pipe_fd, std::vector<uint64_t> replica_ids);
  ~DisklessTransfer();
  DisklessTransfer(const DisklessTransfer&) = delete;
  DisklessTransfer& operator=(const DisklessTransfer&) = delete;

  enum class Progress {
    kWaiting,     // the pipe is empty for now: wait until it is readable
    kThrottled,   // a replica has too much unsent: try again shortly
    kEof,         // the child closed the pipe: the whole payload was handed over
    kNoReplicas,  // every replica of the transfer is gone
    kError,       // reading the pipe failed
  };
  // Moves what the pipe holds (up to a bounded amount per call) to the
  // replicas still attached and in kWaitBgsaveEnd.
  Progress Pump(Primary& primary, io::IoSystem& io);

  int fd() const { return fd_; }
  bool eof() const { return eof_; }
  uint64_t bytes() const { return bytes_; }
  const std::vector<uint64_t>& replica_ids() const { return replica_ids_; }

 private:
  int fd_;
  bool eof_ = false;
  uint64_t bytes_ = 0;
  std::vector<uint64_t> replica_ids_;
};

}  // namespace ringkv::repl

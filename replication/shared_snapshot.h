// SharedSnapshot: the RDB file of a disk-based full sync, read once for
// every replica that waited on it.
//
// Every replica attached to the same BGSAVE is sent the same file. Instead
// of one descriptor and one read() per replica, the file is read into a
// window of shared blocks (an io::BlockStream addressed by file offset), and
// each replica connection of the main thread is sent from those blocks by
// offset, exactly as it is later sent the backlog (io::ReplicaSend,
// IoThread::FlushReplica): one read of each byte, no per-replica copy.
//
// The window is bounded (kMaxHeld): it follows the replicas reading from it.
// A replica that cannot be sent from it -- a TLS link, whose bytes are
// encrypted on the way out, a connection of another I/O thread, or one that
// fell more than half a window behind the others -- reads its bytes itself
// with ReadAt() (pread on the one shared descriptor), so a stalled replica
// never holds the others back nor makes the window grow.
//
// Thread-safety: main thread only. Blocks dropped from the window are freed
// when the last send in flight that references them completes.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "io/block_stream.h"

namespace ringkv::repl {

class SharedSnapshot {
 public:
  static constexpr size_t kBlockSize = io::SharedBlockCapacityFor(64 * 1024);  // 64 KiB blocks
  // Most bytes the window holds: the sends in flight read from it, and the
  // fastest replica is never more than this ahead of the slowest sent from it.
  static constexpr uint64_t kMaxHeld = 8u << 20;

  // Takes ownership of `fd`, an RDB file of `size` bytes.
  SharedSnapshot(int fd, uint64_t size);
  ~SharedSnapshot();
  SharedSnapshot(const SharedSnapshot&) = delete;
  SharedSnapshot& operator=(const SharedSnapshot&) = delete;

  uint64_t size() const { return size_; }
  // The window: file bytes [front_offset(), end()).
  const io::BlockStream& stream() const { return stream_; }

  // Reads the file into the window until it ends at `target` (at most
  // size(), and at most kMaxHeld past its front). False when the file is
  // shorter than size() or cannot be read: the sync must start over.
  bool FillTo(uint64_t target);
  // Drops the window's blocks that end at or before `offset` (the last
  // block always stays).
  void DropBefore(uint64_t offset);
  // For a replica not sent from the window: up to `n` bytes of the file at
  // `offset`, as pread() answers (0 at an unexpected end of file).
  ssize_t ReadAt(char* dst, size_t n, uint64_t offset) const;

 private:
  const int fd_;
  const uint64_t size_;
  io::BlockStream stream_;
  std::string scratch_;  // one block: the bytes read before they are appended
};

}  // namespace ringkv::repl

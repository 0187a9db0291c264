// FsyncWindow: with appendfsync always, how long the next fdatasync waits
// after one completes, so that the clients the completion released can
// join it.
//
// One fdatasync is in flight at a time (AofSyncer). A client released by
// fsync N writes again about a round trip later; started at once, fsync N+1
// covers only the writes that came during N, and the released client waits
// for N+2. The clients then split into two groups that alternate, each
// writing once every two fsyncs (docs/performance.md 24.3 and 26.1). The
// window holds fsync N+1 until every client N released has written again
// (or is gone), or until a cap passes, whichever comes first; it opens only
// when N released somebody.
//
// It moves when the next fsync starts, never what an fsync covers: a reply
// is still released by the first fsync submitted after its write reached
// the file, so nothing is acknowledged before it is durable.
//
//   after a completion:  for each released id: window.AddReleased(id);
//                        if (window.Open(now_us, cap_us)) wake the loop at the cap
//   a held reply:        if (window.open()) window.Returned(id);
//   before each sleep:   if (window.open() && window.Due(now_us)) { window.Close(); resume the syncer; }
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>

#include "absl/container/flat_hash_set.h"

namespace ringkv::server {

class FsyncWindow {
 public:
  // A completion released every reply client `id` had held.
  void AddReleased(uint64_t id) { awaiting_.insert(id); }
  // After the completion's releases: opens until now_us + cap_us when
  // somebody was released (and cap_us > 0). Returns whether it is open.
  bool Open(int64_t now_us, int64_t cap_us) {
    open_ = !awaiting_.empty() && cap_us > 0;
    if (!open_) awaiting_.clear();
    deadline_us_ = now_us + cap_us;
    return open_;
  }
  bool open() const { return open_; }
  // Client `id` wrote again (a reply of its was held), or is gone.
  void Returned(uint64_t id) { awaiting_.erase(id); }
  // Every released client is back, or the cap has passed.
  bool Due(int64_t now_us) const { return awaiting_.empty() || now_us >= deadline_us_; }
  void Close() {
    open_ = false;
    awaiting_.clear();
  }

 private:
  absl::flat_hash_set<uint64_t> awaiting_;
  int64_t deadline_us_ = 0;
  bool open_ = false;
};

}  // namespace ringkv::server

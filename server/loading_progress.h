// LoadingProgress: how far a start-up load has come, for INFO persistence's
// loading_* fields (Redis's loadingAbsProgress / startLoading).
//
// Thread-safety: none (main thread).
#pragma once

#include <cstdint>
#include <string>

namespace ringkv::server {

class LoadingProgress {
 public:
  // A load of `total_bytes` (the file's size; 0 when unknown) begins.
  void Start(int64_t now_ms, uint64_t total_bytes);
  void set_loaded_bytes(uint64_t bytes) { loaded_bytes_ = bytes; }
  uint64_t loaded_bytes() const { return loaded_bytes_; }
  // Redis's loading_start_time ... loading_eta_seconds lines, as INFO shows
  // them while loading.
  void AppendInfo(std::string* out, int64_t now_ms) const;

 private:
  int64_t start_ms_ = 0;
  uint64_t total_bytes_ = 0;
  uint64_t loaded_bytes_ = 0;
};

}  // namespace ringkv::server

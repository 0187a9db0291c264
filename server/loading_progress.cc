#include "server/loading_progress.h"

#include "absl/strings/str_format.h"

namespace ringkv::server {

void LoadingProgress::Start(int64_t now_ms, uint64_t total_bytes) {
  start_ms_ = now_ms;
  total_bytes_ = total_bytes;
  loaded_bytes_ = 0;
}

void LoadingProgress::AppendInfo(std::string* out, int64_t now_ms) const {
  // As Redis: the ETA is the rate so far applied to what is left, 1 second
  // until a first byte gives a rate.
  const double elapsed_s = static_cast<double>(now_ms - start_ms_) / 1000.0;
  const double perc = total_bytes_ == 0 ? 0 : 100.0 * static_cast<double>(loaded_bytes_) / total_bytes_;
  int64_t eta_s = 1;
  if (loaded_bytes_ > 0 && elapsed_s > 0) {
    const double rate = static_cast<double>(loaded_bytes_) / elapsed_s;
    const uint64_t left = total_bytes_ > loaded_bytes_ ? total_bytes_ - loaded_bytes_ : 0;
    eta_s = static_cast<int64_t>(static_cast<double>(left) / rate);
  }
  absl::StrAppendFormat(out,
                        "loading_start_time:%d\r\nloading_total_bytes:%u\r\nloading_rdb_used_mem:0\r\n"
                        "loading_loaded_bytes:%u\r\nloading_loaded_perc:%.2f\r\nloading_eta_seconds:%d\r\n",
                        start_ms_ / 1000, total_bytes_, loaded_bytes_, perc, eta_s);
}

}  // namespace ringkv::server

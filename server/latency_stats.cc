#include "server/latency_stats.h"

#include <cstdlib>
#include <string>

#include "core/eviction.h"
#include "core/strings.h"
#include "server/config.h"

namespace ringkv::server {

LatencyStats::LatencyStats(Config& config, core::Evictor& evictor) {
  config.Bind("latency-monitor-threshold", [this, &config, &evictor] {
    monitor_.set_threshold_ms(config.Int("latency-monitor-threshold"));
    evictor.set_time_deletions(monitor_.threshold_ms() > 0);
  });
  config.Bind("latency-tracking", &tracking_);
  // The canonical value is checked already (config_params.cc): numbers
  // between 0 and 100 separated by single spaces, or "".
  config.Bind("latency-tracking-info-percentiles", [this, &config] {
    percentiles_.clear();
    for (std::string_view p : Split(config.Str("latency-tracking-info-percentiles"), ' ', /*skip_empty=*/true)) {
      percentiles_.push_back(std::strtod(std::string(p).c_str(), nullptr));
    }
  });
}

void LatencyStats::OnForked(int64_t fork_us, uint64_t allocated) {
  // Redis's stat_fork_rate: GB of used memory forked per second.
  if (fork_us > 0) {
    fork_rate_gb_per_s_ =
        static_cast<double>(allocated) * 1000000 / static_cast<double>(fork_us) / (1024.0 * 1024 * 1024);
  }
  monitor_.AddIfNeeded("fork", fork_us / 1000);
}

}  // namespace ringkv::server

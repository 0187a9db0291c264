#include "server/output_limits.h"

#include <algorithm>

#include "core/string_value.h"
#include "core/strings.h"

namespace ringkv::server {

OutputLimits::OutputLimits(Config& config) {
  config.Bind("client-output-buffer-limit", [this, &config] {
    normal_ = config.OutputLimit("normal");
    pubsub_ = config.OutputLimit("pubsub");
    replica_ = config.OutputLimit("slave");
    normal_on_ = normal_.hard > 0 || normal_.soft > 0;
    pubsub_on_ = pubsub_.hard > 0 || pubsub_.soft > 0;
  });
  config.Bind({"maxmemory", "maxmemory-clients"},
              [this, &config] { client_eviction_limit_ = ClientEvictionLimit(config); });
}

bool OutputLimits::Over(Client& c, const Config::OutputBufferLimit& limit, uint64_t unsent, int64_t now_ms) {
  if (limit.hard > 0 && unsent > limit.hard) return true;
  if (limit.soft == 0 || unsent <= limit.soft) {
    if (c.over_soft_limit) {  // drained below it: the clock restarts
      c.over_soft_limit = false;
      over_soft_limit_since_.erase(c.id());
    }
    return false;
  }
  if (!c.over_soft_limit) {
    c.over_soft_limit = true;
    over_soft_limit_since_[c.id()] = now_ms;
    return false;
  }
  return now_ms - over_soft_limit_since_[c.id()] > limit.soft_seconds * 1000;
}

uint64_t OutputLimits::ClientEvictionLimit(const Config& config) {
  const std::string& v = config.Str("maxmemory-clients");
  uint64_t limit = 0;
  if (!v.empty() && v.back() == '%') {
    int64_t percent = 0;
    core::StringToInt64(std::string_view(v).substr(0, v.size() - 1), &percent);
    const int64_t maxmemory = config.Int("maxmemory");  // the server's cached maxmemory may not be refreshed yet
    if (maxmemory > 0 && percent > 0) limit = static_cast<uint64_t>(maxmemory) * static_cast<uint64_t>(percent) / 100;
  } else {
    limit = static_cast<uint64_t>(std::max<int64_t>(0, config.Int("maxmemory-clients")));
  }
  if (limit == 0) return 0;
  return std::max<uint64_t>(limit, 128 * 1024);
}

}  // namespace ringkv::server

#include "server/latency_monitor.h"

#include <strings.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "absl/strings/str_format.h"
#include "core/strings.h"

namespace ringkv::server {

std::vector<LatencyMonitor::Sample> LatencyMonitor::Series::InOrder() const {
  std::vector<Sample> out;
  for (int j = 0; j < kSamples; ++j) {
    const Sample& s = samples[(next + j) % kSamples];
    if (s.time != 0) out.push_back(s);
  }
  return out;
}

int64_t LatencyMonitor::NowSeconds() { return static_cast<int64_t>(std::time(nullptr)); }

void LatencyMonitor::Add(std::string_view event, int64_t latency_ms, int64_t now_s) {
  Series* ts = nullptr;
  for (const auto& s : events_) {
    if (s->name == event) ts = s.get();
  }
  if (ts == nullptr) {
    ts = events_.emplace_back(std::make_unique<Series>()).get();
    ts->name = std::string(event);
  }
  const uint32_t latency = static_cast<uint32_t>(std::clamp<int64_t>(latency_ms, 0, UINT32_MAX));
  ts->max = std::max(ts->max, latency);
  // One sample per second: a later one in the same second raises it.
  Sample& prev = ts->samples[(ts->next + kSamples - 1) % kSamples];
  if (prev.time == static_cast<int32_t>(now_s)) {
    prev.latency = std::max(prev.latency, latency);
    return;
  }
  ts->samples[ts->next] = Sample{static_cast<int32_t>(now_s), latency};
  ts->next = (ts->next + 1) % kSamples;
}

int LatencyMonitor::ResetAll() {
  const int n = static_cast<int>(events_.size());
  events_.clear();
  return n;
}

int LatencyMonitor::Reset(std::string_view event) {
  const auto gone = std::remove_if(events_.begin(), events_.end(), [&](const std::unique_ptr<Series>& s) {
    return s->name.size() == event.size() && strncasecmp(s->name.data(), event.data(), event.size()) == 0;
  });
  const int n = static_cast<int>(events_.end() - gone);
  events_.erase(gone, events_.end());
  return n;
}

const LatencyMonitor::Series* LatencyMonitor::Find(std::string_view event) const {
  for (const auto& s : events_) {
    if (s->name == event) return s.get();
  }
  return nullptr;
}

// ---- LATENCY DOCTOR ---------------------------------------------------------------

namespace {

// Redis's analyzeLatencyForEvent.
struct EventStats {
  uint64_t avg = 0, mad = 0;
  int samples = 0;
  int64_t period = 0;
};

EventStats Analyze(const LatencyMonitor::Series& ts, int64_t now_s) {
  EventStats st;
  const std::vector<LatencyMonitor::Sample> samples = ts.InOrder();
  if (samples.empty()) return st;
  uint64_t sum = 0;
  int64_t oldest = 0;
  for (const LatencyMonitor::Sample& s : samples) {
    sum += s.latency;
    if (oldest == 0 || s.time < oldest) oldest = s.time;
  }
  st.samples = static_cast<int>(samples.size());
  st.avg = sum / samples.size();
  st.period = now_s - oldest;
  if (st.period == 0) st.period = 1;
  uint64_t deviation = 0;
  for (const LatencyMonitor::Sample& s : samples) {
    const int64_t delta = static_cast<int64_t>(st.avg) - static_cast<int64_t>(s.latency);
    deviation += static_cast<uint64_t>(delta < 0 ? -delta : delta);
  }
  st.mad = deviation / samples.size();
  return st;
}

// Which advice the events call for (Redis's advise_* flags), in the order
// the report prints them.
struct Advice {
  bool better_vm = false, slowlog_enabled = false, slowlog_tuning = false, slowlog_inspect = false;
  bool scheduler = false, local_disk = false, ssd = false, data_writeback = false, disk_contention = false;
  bool no_appendfsync = false, relax_fsync_policy = false, write_load_info = false, hz = false;
  bool large_objects = false, mass_eviction = false, disable_thp = false;
  int count = 0;
};

void AdviseForEvent(std::string_view event, const LatencyDoctorInput& in, Advice* a) {
  auto is = [&](const char* name) { return AsciiLower(event) == name; };
  if (is("command")) {
    if (in.slowlog_log_slower_than_us < 0) {
      a->slowlog_enabled = true;
      a->count++;
    } else if (in.slowlog_log_slower_than_us / 1000 > in.threshold_ms) {
      a->slowlog_tuning = true;
      a->count++;
    }
    a->slowlog_inspect = a->large_objects = true;
    a->count += 2;
  }
  if (is("fast-command")) {
    a->scheduler = true;
    a->count++;
  }
  if (is("aof-write-pending-fsync")) {
    a->local_disk = a->disk_contention = a->ssd = a->data_writeback = true;
    a->count += 4;
  }
  if (is("aof-write-active-child")) {
    a->no_appendfsync = a->data_writeback = a->ssd = true;
    a->count += 3;
  }
  if (is("aof-write-alone")) {
    a->local_disk = a->data_writeback = a->ssd = true;
    a->count += 3;
  }
  if (is("aof-fsync-always")) {
    a->relax_fsync_policy = true;
    a->count++;
  }
  if (is("aof-fstat") || is("rdb-unlink-temp-file")) {
    a->disk_contention = a->local_disk = true;
    a->count += 2;
  }
  if (is("aof-rewrite-diff-write") || is("aof-rename")) {
    a->write_load_info = a->data_writeback = a->ssd = a->local_disk = true;
    a->count += 4;
  }
  if (is("expire-cycle")) {
    a->hz = a->large_objects = true;
    a->count += 2;
  }
  if (is("eviction-del")) {
    a->large_objects = true;
    a->count++;
  }
  if (is("eviction-cycle")) {
    a->mass_eviction = true;
    a->count++;
  }
}

void AppendAdvice(const Advice& a, const LatencyDoctorInput& in, std::string* r) {
  const unsigned long long threshold_us = static_cast<unsigned long long>(in.threshold_ms) * 1000;
  r->append("\nI have a few advices for you:\n\n");
  if (a.better_vm) {
    r->append(
        "- If you are using a virtual machine, consider upgrading it with a faster one using a hypervisior that "
        "provides less latency during fork() calls. Xen is known to have poor fork() performance. Even in the context "
        "of the same VM provider, certain kinds of instances can execute fork faster than others.\n");
  }
  if (a.slowlog_enabled) {
    absl::StrAppendFormat(r,
                          "- There are latency issues with potentially slow commands you are using. Try to enable the "
                          "Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %u'. If the "
                          "Slow log is disabled Redis is not able to log slow commands execution for you.\n",
                          threshold_us);
  }
  if (a.slowlog_tuning) {
    absl::StrAppendFormat(r,
                          "- Your current Slow Log configuration only logs events that are slower than your configured "
                          "latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %u'.\n",
                          threshold_us);
  }
  if (a.slowlog_inspect) {
    r->append(
        "- Check your Slow Log to understand what are the commands you are running which are too slow to execute. "
        "Please check https://redis.io/commands/slowlog for more information.\n");
  }
  if (a.scheduler) {
    r->append(
        "- The system is slow to execute Redis code paths not containing system calls. This usually means the system "
        "does not provide Redis CPU time to run for long periods. You should try to:\n"
        "  1) Lower the system load.\n"
        "  2) Use a computer / VM just for Redis if you are running other software in the same system.\n"
        "  3) Check if you have a \"noisy neighbour\" problem.\n"
        "  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n"
        "  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using "
        "Jemalloc. However this may create fragmentation problems.\n");
  }
  if (a.local_disk) {
    r->append(
        "- It is strongly advised to use local disks for persistence, especially if you are using AOF. Remote disks "
        "provided by platform-as-a-service providers are known to be slow.\n");
  }
  if (a.ssd) {
    r->append(
        "- SSD disks are able to reduce fsync latency, and total time needed for snapshotting and AOF log rewriting "
        "(resulting in smaller memory usage). With extremely high write load SSD disks can be a good option. However "
        "Redis should perform reasonably with high load using normal disks. Use this advice as a last resort.\n");
  }
  if (a.data_writeback) {
    r->append(
        "- Mounting ext3/4 filesystems with data=writeback can provide a performance boost compared to data=ordered, "
        "however this mode of operation provides less guarantees, and sometimes it can happen that after a hard crash "
        "the AOF file will have a half-written command at the end and will require to be repaired before Redis "
        "restarts.\n");
  }
  if (a.disk_contention) {
    r->append(
        "- Try to lower the disk contention. This is often caused by other disk intensive processes running in the "
        "same computer (including other Redis instances).\n");
  }
  if (a.no_appendfsync) {
    r->append(
        "- Assuming from the point of view of data safety this is viable in your environment, you could try to enable "
        "the 'no-appendfsync-on-rewrite' option, so that fsync will not be performed while there is a child rewriting "
        "the AOF file or producing an RDB file (the moment where there is high disk contention).\n");
  }
  if (a.relax_fsync_policy && in.appendfsync_always) {
    r->append(
        "- Your fsync policy is set to 'always'. It is very hard to get good performances with such a setup, if "
        "possible try to relax the fsync policy to 'onesec'.\n");
  }
  if (a.write_load_info) {
    r->append(
        "- Latency during the AOF atomic rename operation or when the final difference is flushed to the AOF file at "
        "the end of the rewrite, sometimes is caused by very high write load, causing the AOF buffer to get very "
        "large. If possible try to send less commands to accomplish the same work, or use Lua scripts to group "
        "multiple operations into a single EVALSHA call.\n");
  }
  if (a.hz && in.hz < 100) {
    r->append(
        "- In order to make the Redis keys expiring process more incremental, try to set the 'hz' configuration "
        "parameter to 100 using 'CONFIG SET hz 100'.\n");
  }
  if (a.large_objects) {
    r->append(
        "- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you "
        "have very large objects that are often deleted, expired, or evicted, try to fragment those objects into "
        "multiple smaller objects.\n");
  }
  if (a.mass_eviction) {
    r->append(
        "- Sudden changes to the 'maxmemory' setting via 'CONFIG SET', or allocation of large objects via sets or "
        "sorted sets intersections, STORE option of SORT, Redis Cluster large keys migrations (RESTORE command), may "
        "create sudden memory pressure forcing the server to block trying to evict keys. \n");
  }
  if (a.disable_thp) {
    r->append(
        "- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious "
        "latency events in different conditions, especially when Redis is persisting on disk. To disable THP support "
        "use the command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into "
        "/etc/rc.local so that the command will be executed again after a reboot. Note that even if you have already "
        "disabled THP, you still need to restart the Redis process to get rid of the huge pages already created.\n");
  }
}

}  // namespace

std::string LatencyDoctorReport(const LatencyMonitor& monitor, const LatencyDoctorInput& in, int64_t now_s) {
  if (monitor.events().empty() && in.threshold_ms == 0) {
    return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use "
           "\"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep "
           "space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n";
  }
  std::string r;
  Advice advice;
  int eventnum = 0;
  for (const auto& ts : monitor.events()) {
    if (++eventnum == 1) {
      r.append(
          "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you "
          "Dave?\n\n");
    }
    const EventStats st = Analyze(*ts, now_s);
    absl::StrAppendFormat(&r,
                          "%d. %s: %d latency spikes (average %ums, mean deviation %ums, period %.2f sec). Worst all "
                          "time event %ums.",
                          eventnum, ts->name, st.samples, st.avg, st.mad,
                          st.samples ? static_cast<double>(st.period) / st.samples : 0.0, ts->max);
    if (AsciiLower(ts->name) == "fork") {
      const char* quality = "excellent";
      if (in.fork_rate_gb_per_s < 10) {
        quality = "terrible";
      } else if (in.fork_rate_gb_per_s < 25) {
        quality = "poor";
      } else if (in.fork_rate_gb_per_s < 100) {
        quality = "good";
      }
      if (in.fork_rate_gb_per_s < 25) {
        advice.better_vm = true;
        advice.count++;
      }
      absl::StrAppendFormat(&r, " Fork rate is %.2f GB/sec (%s).", in.fork_rate_gb_per_s, quality);
    }
    AdviseForEvent(ts->name, in, &advice);
    r.push_back('\n');
  }
  if (in.anon_huge_pages) {
    advice.disable_thp = true;
    advice.count++;
  }
  if (eventnum == 0 && advice.count == 0) {
    r.append(
        "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest "
        "bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n");
  } else if (eventnum > 0 && advice.count == 0) {
    r.append(
        "\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis "
        "community to get some help, providing this report in your help request.\n");
  } else {
    AppendAdvice(advice, in, &r);
  }
  return r;
}

// ---- LATENCY GRAPH: Redis's sparkline.c, rows of "_o#" and '|' ----------------------

namespace {

struct SparkSample {
  double value;
  std::string label;
};

void RenderSparkRange(const std::vector<SparkSample>& seq, double min, double max, int rows, size_t offset, size_t len,
                      std::string* out) {
  static constexpr char kFill[] = "_o#";
  constexpr int kCharsetLen = 3;
  constexpr int kLabelMarginTop = 1;
  double relmax = max - min;
  if (relmax == 0) relmax = 1;
  const int steps = kCharsetLen * rows;
  std::string chars(len, ' ');
  for (int row = 0;; ++row) {
    bool loop = false;
    std::fill(chars.begin(), chars.end(), ' ');
    for (size_t j = 0; j < len; ++j) {
      const SparkSample& s = seq[j + offset];
      // As Redis: (int)(relval * steps), then divided by relmax, truncated.
      int step = static_cast<int>(static_cast<int>((s.value - min) * steps) / relmax);
      step = std::clamp(step, 0, steps - 1);
      if (row < rows) {
        const int charidx = step - ((rows - row - 1) * kCharsetLen);
        loop = true;
        if (charidx >= 0 && charidx < kCharsetLen) {
          chars[j] = kFill[charidx];
        } else if (charidx >= kCharsetLen) {
          chars[j] = '|';
        }
      } else {
        if (row - rows < kLabelMarginTop) {  // every sample has a label
          loop = true;
          break;
        }
        const int label_char = row - rows - kLabelMarginTop;
        if (static_cast<int>(s.label.size()) > label_char) {
          loop = true;
          chars[j] = s.label[label_char];
        }
      }
    }
    if (!loop) break;
    out->append(chars);
    out->push_back('\n');
  }
}

}  // namespace

std::string LatencyGraph(const LatencyMonitor::Series& series, int64_t now_s) {
  constexpr size_t kColumns = 80;
  std::vector<SparkSample> seq;
  uint32_t lo = 0, hi = 0;
  for (const LatencyMonitor::Sample& s : series.InOrder()) {
    if (seq.empty()) {
      lo = hi = s.latency;
    } else {
      lo = std::min(lo, s.latency);
      hi = std::max(hi, s.latency);
    }
    const int64_t elapsed = now_s - s.time;
    std::string label;
    if (elapsed < 60) {
      label = absl::StrFormat("%ds", elapsed);
    } else if (elapsed < 3600) {
      label = absl::StrFormat("%dm", elapsed / 60);
    } else if (elapsed < 3600 * 24) {
      label = absl::StrFormat("%dh", elapsed / 3600);
    } else {
      label = absl::StrFormat("%dd", elapsed / (3600 * 24));
    }
    seq.push_back({static_cast<double>(s.latency), std::move(label)});
  }
  std::string out =
      absl::StrFormat("%s - high %u ms, low %u ms (all time high %u ms)\n", series.name, hi, lo, series.max);
  out.append(kColumns, '-');
  out.push_back('\n');
  for (size_t j = 0; j < seq.size(); j += kColumns) {
    if (j != 0) out.push_back('\n');
    RenderSparkRange(seq, lo, hi, 4, j, std::min(kColumns, seq.size() - j), &out);
  }
  return out;
}

std::string FormatPercentile(double p) {
  std::string s = absl::StrFormat("%f", p);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

bool ProcessHasAnonHugePages() {
  FILE* f = std::fopen("/proc/self/smaps_rollup", "r");
  if (f == nullptr) return false;
  char line[256];
  long kb = 0;
  bool found = false;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) {
      found = kb > 0;
      break;
    }
  }
  std::fclose(f);
  return found;
}

}  // namespace ringkv::server

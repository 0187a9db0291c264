// oom-score-adj: the kernel's OOM-killer preference for this process, set
// per role as Redis 7.0 does (`oom-score-adj no|yes|relative|absolute`,
// `oom-score-adj-values <primary> <replica> <bgchild>`).
//
// `relative` (also spelled `yes`) adds the configured value to the score the
// process had when ringkv first changed it; `absolute` writes the value
// itself; both are clamped to [-1000, 1000]. `no` restores the score from
// before ringkv's first change (if it made one). Lowering the score needs
// CAP_SYS_RESOURCE: an unprivileged process may only raise it.
//
//   ApplyOomScore(config, OomClass::kPrimary);   // at start-up, and from the cron
//
// Thread-safety: main thread only (and a forked child, for kBgChild).
#pragma once

#include "absl/status/status.h"

namespace ringkv::server {

class Config;

enum class OomClass { kPrimary = 0, kReplica = 1, kBgChild = 2 };

// Writes /proc/self/oom_score_adj for `cls` when the setting or the class
// changed since the last call (cheap to call every cron tick). On failure
// logs Redis's line ("Unable to write oom_score_adj: ...") and returns an
// error whose message is CONFIG SET's reason.
absl::Status ApplyOomScore(const Config& config, OomClass cls);
// Re-applies after CONFIG SET oom-score-adj / oom-score-adj-values (logs
// Redis's warning when the values do not grow primary <= replica <= child).
absl::Status ApplyOomScoreAfterConfigSet(const Config& config, OomClass cls, bool values_changed);
// In a freshly forked child (BGSAVE, AOF rewrite, diskless transfer): the
// background-child score computed by the parent's last ApplyOomScore, if
// ringkv adjusts scores at all. Async-signal-safe (open/write/close).
void ApplyOomScoreInChild();

}  // namespace ringkv::server

// Supervision: how ringkv tells a service manager what it is doing, as Redis
// 7.0 does (`supervised no|upstart|systemd|auto`).
//
// systemd (Type=notify units): datagrams through libsystemd's sd_notify to
// $NOTIFY_SOCKET -- "STATUS=ringkv is loading..." at start-up, READY=1 once
// the dataset is loaded and the listeners are up, STATUS= lines for a
// replica's sync, STOPPING=1 when a shutdown starts its final work.
// upstart (`expect stop` jobs): the process stops itself with SIGSTOP once
// ready and upstart continues it.
//
//   SetUpSupervision(config.Str("supervised"));   // in main, before daemonizing
//   ...load, listen...
//   NotifyReady(is_replica);
//
// Every Notify* is a no-op unless systemd supervision is in effect, so
// callers need no check. Thread-safety: SetUpSupervision before any other
// thread starts; the Notify* functions from the main thread (sd_notify
// itself is thread-safe, the ordering of the lines is what needs one thread).
#pragma once

#include <cstdint>
#include <string_view>

namespace ringkv::server {

enum class Supervision { kNone, kUpstart, kSystemd };

// Resolves the configured mode against the environment and logs as Redis
// does: `auto` is upstart when $UPSTART_JOB is set, systemd when
// $NOTIFY_SOCKET is. systemd without $NOTIFY_SOCKET (or a build whose
// sd_notify fails) falls back to kNone with Redis's error line. Under
// systemd it sends "STATUS=ringkv is loading...".
Supervision SetUpSupervision(std::string_view configured);
Supervision CurrentSupervision();
// True when the process runs under a supervisor: `daemonize` is then ignored.
inline bool Supervised() { return CurrentSupervision() != Supervision::kNone; }

// Once the dataset is loaded and the listeners are up: systemd gets a STATUS
// line (read-only wording for a replica still to sync) and READY=1; upstart
// gets SIGSTOP. Idempotent: only the first call notifies.
void NotifyReady(bool replica);
// "STATUS=<status>" (systemd only).
void NotifyStatus(std::string_view status);
// While a start-up load runs: "STATUS=Loading the dataset: <n> bytes
// loaded", at most once a second (systemd only; cheap to call often).
void NotifyLoading(uint64_t loaded_bytes);
// STOPPING=1 (systemd only): the shutdown's final work has started.
void NotifyStopping();

}  // namespace ringkv::server

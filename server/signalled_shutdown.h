// Whether a shutdown that SIGTERM / SIGINT started is under way: from the
// main loop taking the signal until the shutdown ends or is cancelled. A
// second SIGINT meanwhile (Redis's "You insist on killing Redis") exits at
// once, from the signal handler, removing the snapshot's temp file.
//
// Thread-safety: set on the main thread, read in signal handlers
// (lock-free, async-signal-safe).
#pragma once

namespace ringkv::server {

void SetSignalledShutdown(bool under_way);
// Async-signal-safe: true while SetSignalledShutdown(true) holds.
bool SignalledShutdownUnderWay();
// Async-signal-safe: logs Redis's line, unlinks temp-<pid>.rdb in the
// working directory and _exit(1)s (not a clean shutdown).
[[noreturn]] void ExitOnInsistentSignal();

}  // namespace ringkv::server

// Redis-style log lines: "pid:M 30 Nov 2026 04:36:34.123 * message".
// Levels: 0 debug '.', 1 verbose '-', 2 notice '*', 3 warning '#'.
// Thread-safety: Log() may be called from any thread; each line is written
// with one write(2).
#pragma once

#include <string>
#include <string_view>

#include "io/io_log.h"

namespace ringkv::server {

// The I/O layer's levels (io/io_log.h): its lines come through this log.
enum LogLevel {
  kDebug = io::kLogDebug,
  kVerbose = io::kLogVerbose,
  kNotice = io::kLogNotice,
  kWarning = io::kLogWarning,
};

// REQUIRES: called before other threads start. Empty path = stdout.
bool OpenLog(const std::string& path);
void SetLogLevel(int level);
int LogLevelFromName(std::string_view name);
void Log(int level, std::string_view message);
// Writes `text` as it is, without the prefix (Redis's LL_RAW: the banner).
void LogRaw(int level, std::string_view text);
// For signal handlers: writes `len` bytes with one write(2), nothing else.
void LogRawFromHandler(const char* text, size_t len);
// The log's file descriptor (stdout or the logfile).
int LogFileDescriptor();
// True when the log goes to a terminal.
bool LogIsTerminal();
// In a forked child: lines are marked 'C' instead of 'M'.
void SetLogRoleChild();
// While the server replicates a primary (REPLICAOF host port): 'S'.
void SetLogRoleReplica(bool replica);
// A broken invariant the server must not continue past: logs Redis's
// serverPanic report ("Guru Meditation: <why>") and aborts.
[[noreturn]] void Panic(std::string_view why);

}  // namespace ringkv::server

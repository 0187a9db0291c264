// A logging hook for the I/O layer. io/ has no logger of its own: the server
// installs one at start-up (before any thread starts). Levels follow Redis:
// 0 debug, 1 verbose, 2 notice, 3 warning.
#pragma once

#include <string_view>

namespace ringkv::io {

using LogFunction = void (*)(int level, std::string_view message);
void SetLogFunction(LogFunction fn);
void Log(int level, std::string_view message);

// The levels by name, for the layers below the server (the server's
// LogLevel, server/logging.h, is defined by them).
inline constexpr int kLogDebug = 0;
inline constexpr int kLogVerbose = 1;
inline constexpr int kLogNotice = 2;
inline constexpr int kLogWarning = 3;

}  // namespace ringkv::io

// A logging hook for the I/O layer. io/ has no logger of its own: the server
// installs one at start-up (before any thread starts). Levels follow Redis:
// 0 debug, 1 verbose, 2 notice, 3 warning.
#pragma once

#include <string_view>

namespace ringkv::io {

using LogFunction = void (*)(int level, std::string_view message);
void SetLogFunction(LogFunction fn);
void Log(int level, std::string_view message);

}  // namespace ringkv::io

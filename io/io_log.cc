#include "io/io_log.h"

#include <cstdio>

namespace ringkv::io {
namespace {
void StderrLog(int, std::string_view m) { std::fprintf(stderr, "%.*s\n", static_cast<int>(m.size()), m.data()); }
LogFunction log_fn = StderrLog;
}  // namespace

void SetLogFunction(LogFunction fn) { log_fn = fn; }
void Log(int level, std::string_view message) { log_fn(level, message); }

}  // namespace ringkv::io

// Helpers for the persistence end-to-end tests: commands on a RawConn,
// INFO fields, running the Redis tools, files.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/test_server.h"

namespace ringkv::testing {

// Sends one command and returns the raw reply.
inline std::string Call(RawConn& c, const std::vector<std::string>& argv) {
  c.Send(Resp(argv));
  return c.ReadReply();
}

// The payload of a bulk reply ("$n\r\n...\r\n").
inline std::string BulkPayload(const std::string& reply) {
  size_t p = reply.find("\r\n");
  if (reply.empty() || reply[0] != '$' || p == std::string::npos) return "";
  return reply.substr(p + 2, reply.size() - p - 4);
}

inline std::string Info(RawConn& c, const std::string& field, const std::string& section = "persistence") {
  std::string info = Call(c, {"INFO", section});
  size_t p = info.find("\r\n" + field + ":");
  if (p == std::string::npos) return "";
  p += field.size() + 3;
  return info.substr(p, info.find("\r\n", p) - p);
}

// Polls INFO until field == value (up to timeout_ms). True if it got there.
inline bool WaitInfo(RawConn& c, const std::string& field, const std::string& value, int timeout_ms = 10000,
                     const std::string& section = "all") {
  for (int i = 0; i < timeout_ms / 20; ++i) {
    if (Info(c, field, section) == value) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Runs a shell command; returns its exit status and stdout+stderr.
inline int RunShell(const std::string& cmd, std::string* output = nullptr) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int status = pclose(p);
  if (output) *output = out;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline bool HaveTool(const std::string& name) { return RunShell("command -v " + name) == 0; }

inline std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

// A directory removed at the end of the test (test_server.h).
using TempDir = ScopedTempDir;

// DEBUG DIGEST's raw reply.
inline std::string Digest(RawConn& c) { return Call(c, {"DEBUG", "DIGEST"}); }

// A server working in `dir`, without save points, DEBUG enabled, plus `extra`.
inline std::vector<std::string> InDir(const TempDir& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"--dir", dir.path(), "--save", "", "--enable-debug-command", "yes"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

}  // namespace ringkv::testing

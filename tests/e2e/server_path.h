// The ringkv-server binary an e2e harness starts, and whether it was built
// with the sanitizers. From the environment when set: scripts/test.sh's ASan
// pass runs the release build's harnesses (they share no code with the
// server: tests/CMakeLists.txt, RINGKV_HARNESSES_FROM) against the ASan
// build's server, with RINGKV_TEST_SERVER and RINGKV_TEST_SERVER_SANITIZED.
// Otherwise the server of the harness's own build (RINGKV_BUILT_SERVER, a
// compile definition) and the harness's own build flags.
#pragma once

#include <cstdlib>

namespace ringkv::testing {

inline const char* ServerPath() {
  const char* path = std::getenv("RINGKV_TEST_SERVER");
  return path != nullptr && *path != '\0' ? path : RINGKV_BUILT_SERVER;
}

inline bool ServerSanitized() {
#if defined(__SANITIZE_ADDRESS__) || defined(RINGKV_SERVER_SANITIZED)
  return true;
#else
  const char* s = std::getenv("RINGKV_TEST_SERVER_SANITIZED");
  return s != nullptr && *s == '1';
#endif
}

}  // namespace ringkv::testing

// What the harnesses name the server by.
#define RINGKV_SERVER_PATH (::ringkv::testing::ServerPath())

// The throw-away PKI of tests/tls/gen_test_certs.sh (a CA, a server
// certificate "redis", a client certificate "client", ...), made once per
// test process in a fresh directory under /tmp and removed at exit.
//
// Dependency-free on purpose: unit tests (tests/io) and e2e tests
// (tests/e2e/tls_test_util.h) both use it; only RINGKV_SOURCE_DIR, which
// every test target defines, is needed.
//
// TestCertDir() is empty when the certificates could not be made (openssl
// missing): callers assert that it is not.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace ringkv::testing {

inline const std::string& TestCertDir() {
  static const std::string dir = [] {
    char templ[] = "/tmp/ringkv-test-pki-XXXXXX";
    if (mkdtemp(templ) == nullptr) return std::string();
    std::string d = templ;
    const std::string cmd = std::string(RINGKV_SOURCE_DIR) + "/tests/tls/gen_test_certs.sh " + d;
    if (std::system(cmd.c_str()) != 0) return std::string();
    static std::string cleanup = d;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(cleanup, ec);
    });
    return d;
  }();
  return dir;
}

// The path of one file of the test PKI, e.g. TestCert("ca.crt").
inline std::string TestCert(const std::string& name) { return TestCertDir() + "/" + name; }

}  // namespace ringkv::testing

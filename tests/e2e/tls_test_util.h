// TLS helpers for e2e tests: a throw-away PKI made once per test binary
// (tests/tls/gen_test_certs.sh) and TlsConn, a blocking OpenSSL client
// connection that sends RESP commands and reads replies, for byte-exact
// checks over TLS.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "tests/e2e/test_server.h"
#include "tests/tls/test_certs.h"

namespace ringkv::testing {

inline const std::string& CertDir() { return TestCertDir(); }
inline std::string Cert(const std::string& name) { return TestCert(name); }

// Server arguments for TLS on `tls_port` with the test PKI.
inline std::vector<std::string> TlsArgs(int tls_port) {
  return {"--tls-port", std::to_string(tls_port), "--tls-cert-file", Cert("redis.crt"), "--tls-key-file",
          Cert("redis.key"), "--tls-ca-cert-file", Cert("ca.crt")};
}

class TlsConn {
 public:
  struct Options {
    std::string cert = "client.crt", key = "client.key";  // empty: no client certificate
    std::string ca = "ca.crt";
    int timeout_s = 10;  // for the handshake and each read
  };
  TlsConn(int port, const Options& o) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    SSL_CTX_load_verify_locations(ctx_, Cert(o.ca).c_str(), nullptr);
    if (!o.cert.empty()) {
      SSL_CTX_use_certificate_chain_file(ctx_, Cert(o.cert).c_str());
      SSL_CTX_use_PrivateKey_file(ctx_, Cert(o.key).c_str(), SSL_FILETYPE_PEM);
    }
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{o.timeout_s, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return;
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    handshake_ok_ = SSL_connect(ssl_) == 1;
    ERR_clear_error();
  }
  explicit TlsConn(int port) : TlsConn(port, Options{}) {}
  ~TlsConn() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    if (fd_ >= 0) close(fd_);
    SSL_CTX_free(ctx_);
  }
  TlsConn(const TlsConn&) = delete;
  TlsConn& operator=(const TlsConn&) = delete;

  // The client's side of the handshake completed (with TLS 1.3 a server
  // that refuses the client's certificate says so only afterwards).
  bool handshake_ok() const { return handshake_ok_; }
  // The server certificate's serial number, in decimal.
  long PeerSerial() const {
    X509* cert = SSL_get1_peer_certificate(ssl_);
    if (cert == nullptr) return -1;
    const long serial = ASN1_INTEGER_get(X509_get_serialNumber(cert));
    X509_free(cert);
    return serial;
  }
  bool Send(const std::string& s) {
    if (!handshake_ok_) return false;
    size_t off = 0;
    while (off < s.size()) {
      const int n = SSL_write(ssl_, s.data() + off, static_cast<int>(s.size() - off));
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }
  // One reply of a simple type, a bulk string or an array of those, raw;
  // "<eof>" when the connection ended first.
  std::string ReadReply() {
    std::string out;
    if (!ReadValue(&out)) out += "<eof>";
    return out;
  }
  std::string Command(const std::vector<std::string>& argv) {
    if (!Send(Resp(argv))) return "<eof>";
    return ReadReply();
  }

 private:
  bool Fill() {
    if (!handshake_ok_) return false;
    char buf[16384];
    const int n = SSL_read(ssl_, buf, sizeof(buf));
    ERR_clear_error();
    if (n <= 0) return false;
    buf_.append(buf, static_cast<size_t>(n));
    return true;
  }
  bool Line(std::string* out, std::string* line) {
    size_t eol;
    while ((eol = buf_.find("\r\n")) == std::string::npos) {
      if (!Fill()) return false;
    }
    *line = buf_.substr(0, eol + 2);
    buf_.erase(0, eol + 2);
    out->append(*line);
    return true;
  }
  bool ReadValue(std::string* out) {
    std::string line;
    if (!Line(out, &line)) return false;
    const long long n = atoll(line.c_str() + 1);
    if (line[0] == '$' && n >= 0) {
      while (buf_.size() < static_cast<size_t>(n) + 2) {
        if (!Fill()) return false;
      }
      out->append(buf_, 0, static_cast<size_t>(n) + 2);
      buf_.erase(0, static_cast<size_t>(n) + 2);
    } else if (line[0] == '*') {
      for (long long i = 0; i < n; ++i) {
        if (!ReadValue(out)) return false;
      }
    }
    return true;
  }

  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  bool handshake_ok_ = false;
  std::string buf_;
};

}  // namespace ringkv::testing

#include "io/tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "io/fork_gate.h"

namespace ringkv::io {
namespace {

constexpr int kProtoTls1 = 1, kProtoTls11 = 2, kProtoTls12 = 4, kProtoTls13 = 8;

bool ParseProtocols(const std::string& text, int* out) {
  if (text.empty()) {
    *out = kProtoTls12 | kProtoTls13;
    return true;
  }
  int p = 0;
  for (absl::string_view w : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    const std::string word = absl::AsciiStrToLower(w);
    if (word == "tlsv1") {
      p |= kProtoTls1;
    } else if (word == "tlsv1.1") {
      p |= kProtoTls11;
    } else if (word == "tlsv1.2") {
      p |= kProtoTls12;
    } else if (word == "tlsv1.3") {
      p |= kProtoTls13;
    } else {
      return false;
    }
  }
  *out = p;
  return p != 0;
}

// The pass phrase callback's user data: the configured pass phrase.
int PassphraseCallback(char* buf, int size, int, void* user) {
  const auto* pass = static_cast<const std::string*>(user);
  if (pass == nullptr || pass->empty()) return 0;
  const int n = std::min(size, static_cast<int>(pass->size()));
  std::memcpy(buf, pass->data(), static_cast<size_t>(n));
  return n;
}

SslCtxPtr Wrap(SSL_CTX* ctx) { return SslCtxPtr(ctx, SSL_CTX_free); }

// What server and client contexts share: protocols, ciphers, verification
// of the peer against the CA, and the certificate this side presents.
absl::Status Common(SSL_CTX* ctx, const TlsOptions& o, int protocols, bool server, const std::string& cert,
                    const std::string& key, const std::string& pass) {
  long opts = SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION;
  if (!(protocols & kProtoTls1)) opts |= SSL_OP_NO_TLSv1;
  if (!(protocols & kProtoTls11)) opts |= SSL_OP_NO_TLSv1_1;
  if (!(protocols & kProtoTls12)) opts |= SSL_OP_NO_TLSv1_2;
  if (!(protocols & kProtoTls13)) opts |= SSL_OP_NO_TLSv1_3;
  if (protocols & (kProtoTls1 | kProtoTls11)) SSL_CTX_set_security_level(ctx, 0);  // old protocols need SHA-1
  if (server && o.prefer_server_ciphers) opts |= SSL_OP_CIPHER_SERVER_PREFERENCE;
  SSL_CTX_set_options(ctx, opts);
  // Memory BIOs never refuse a write; releasing buffers keeps idle TLS
  // connections from holding 2 x 16 KiB of record buffers each.
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_default_passwd_cb(ctx, PassphraseCallback);
  SSL_CTX_set_default_passwd_cb_userdata(ctx, const_cast<std::string*>(&pass));
  const bool cert_ok = SSL_CTX_use_certificate_chain_file(ctx, cert.c_str()) > 0;
  if (!cert_ok) return absl::InvalidArgumentError(absl::StrCat("Failed to load certificate: ", cert, ": ", TlsErrorString()));
  const bool key_ok = SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) > 0;
  SSL_CTX_set_default_passwd_cb_userdata(ctx, nullptr);  // `pass` does not outlive this call
  if (!key_ok) return absl::InvalidArgumentError(absl::StrCat("Failed to load private key: ", key, ": ", TlsErrorString()));
  if ((!o.ca_cert_file.empty() || !o.ca_cert_dir.empty()) &&
      SSL_CTX_load_verify_locations(ctx, o.ca_cert_file.empty() ? nullptr : o.ca_cert_file.c_str(),
                                    o.ca_cert_dir.empty() ? nullptr : o.ca_cert_dir.c_str()) <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Failed to configure CA certificate(s) file/directory: ", TlsErrorString()));
  }
  if (!o.ciphers.empty() && !SSL_CTX_set_cipher_list(ctx, o.ciphers.c_str())) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat("Failed to configure ciphers: ", o.ciphers));
  }
  if (!o.ciphersuites.empty() && !SSL_CTX_set_ciphersuites(ctx, o.ciphersuites.c_str())) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat("Failed to configure ciphersuites: ", o.ciphersuites));
  }
  return absl::OkStatus();
}

absl::Status ServerSide(SSL_CTX* ctx, const TlsOptions& o) {
  if (o.session_caching) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(ctx, o.session_cache_size);
    SSL_CTX_set_timeout(ctx, static_cast<long>(o.session_cache_timeout));
    static const unsigned char kSessionContext[] = "ringkv";
    SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof(kSessionContext) - 1);
  } else {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  }
  if (!o.dh_params_file.empty()) {
    BIO* bio = BIO_new_file(o.dh_params_file.c_str(), "r");
    if (bio == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("Failed to load ", o.dh_params_file, ": ", TlsErrorString()));
    }
    EVP_PKEY* dh = PEM_read_bio_Parameters(bio, nullptr);
    BIO_free(bio);
    if (dh == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("Failed to load DH parameters file: ", o.dh_params_file, ": ", TlsErrorString()));
    }
    if (SSL_CTX_set0_tmp_dh_pkey(ctx, dh) <= 0) {  // takes `dh` only on success
      EVP_PKEY_free(dh);
      return absl::InvalidArgumentError(absl::StrCat("Failed to load DH parameters file: ", TlsErrorString()));
    }
  } else {
    SSL_CTX_set_dh_auto(ctx, 1);
  }
  int mode = SSL_VERIFY_NONE;
  if (o.auth_clients == TlsOptions::AuthClients::kYes) mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
  if (o.auth_clients == TlsOptions::AuthClients::kOptional) mode = SSL_VERIFY_PEER;
  SSL_CTX_set_verify(ctx, mode, nullptr);
  return absl::OkStatus();
}

}  // namespace

std::string TlsErrorString() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "unknown error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

absl::Status TlsContext::Configure(const TlsOptions& o) {
  ERR_clear_error();
  if (o.cert_file.empty()) return absl::InvalidArgumentError("No tls-cert-file configured!");
  if (o.key_file.empty()) return absl::InvalidArgumentError("No tls-key-file configured!");
  if ((o.auth_clients != TlsOptions::AuthClients::kNo || o.replication) && o.ca_cert_file.empty() &&
      o.ca_cert_dir.empty()) {
    return absl::InvalidArgumentError(
        "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or "
        "tls-auth-clients are enabled!");
  }
  int protocols = 0;
  if (!ParseProtocols(o.protocols, &protocols)) {
    return absl::InvalidArgumentError(
        "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.");
  }
  SslCtxPtr server = Wrap(SSL_CTX_new(TLS_server_method()));
  SslCtxPtr client = Wrap(SSL_CTX_new(TLS_client_method()));
  if (server == nullptr || client == nullptr) {
    return absl::InternalError(absl::StrCat("Failed to create SSL context: ", TlsErrorString()));
  }
  if (absl::Status s = Common(server.get(), o, protocols, true, o.cert_file, o.key_file, o.key_file_pass); !s.ok()) {
    return s;
  }
  if (absl::Status s = ServerSide(server.get(), o); !s.ok()) return s;
  // The client side presents tls-client-cert-file when set, else the server's.
  const bool own = !o.client_cert_file.empty();
  if (absl::Status s = Common(client.get(), o, protocols, false, own ? o.client_cert_file : o.cert_file,
                              own ? o.client_key_file : o.key_file, own ? o.client_key_file_pass : o.key_file_pass);
      !s.ok()) {
    return s;
  }
  SSL_CTX_set_verify(client.get(), SSL_VERIFY_PEER, nullptr);
  server_ = std::move(server);
  client_ = std::move(client);
  return absl::OkStatus();
}

bool RouteOpenSslAllocations() {
  return CRYPTO_set_mem_functions(
             [](size_t n, const char*, int) -> void* {
               ForkGate::AllocationScope gate;
               return std::malloc(n);
             },
             [](void* p, size_t n, const char*, int) -> void* {
               ForkGate::AllocationScope gate;
               return std::realloc(p, n);
             },
             [](void* p, const char*, int) {
               ForkGate::AllocationScope gate;
               std::free(p);
             }) == 1;
}

}  // namespace ringkv::io

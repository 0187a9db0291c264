#include "server/tls_config.h"

#include <string>

#include "core/strings.h"
#include "server/logging.h"

namespace ringkv::server {

io::TlsOptions TlsOptionsFrom(const Config& c) {
  io::TlsOptions o;
  o.cert_file = c.Str("tls-cert-file");
  o.key_file = c.Str("tls-key-file");
  o.key_file_pass = c.Str("tls-key-file-pass");
  o.client_cert_file = c.Str("tls-client-cert-file");
  o.client_key_file = c.Str("tls-client-key-file");
  o.client_key_file_pass = c.Str("tls-client-key-file-pass");
  o.ca_cert_file = c.Str("tls-ca-cert-file");
  o.ca_cert_dir = c.Str("tls-ca-cert-dir");
  const std::string& auth = c.Str("tls-auth-clients");
  o.auth_clients = auth == "no"         ? io::TlsOptions::AuthClients::kNo
                   : auth == "optional" ? io::TlsOptions::AuthClients::kOptional
                                        : io::TlsOptions::AuthClients::kYes;
  o.replication = c.Bool("tls-replication") || c.Bool("tls-cluster");
  o.protocols = c.Str("tls-protocols");
  o.ciphers = c.Str("tls-ciphers");
  o.ciphersuites = c.Str("tls-ciphersuites");
  o.prefer_server_ciphers = c.Bool("tls-prefer-server-ciphers");
  o.session_caching = c.Bool("tls-session-caching");
  o.session_cache_size = c.Int("tls-session-cache-size");
  o.session_cache_timeout = c.Int("tls-session-cache-timeout");
  o.dh_params_file = c.Str("tls-dh-params-file");
  return o;
}

bool TlsEnabled(const Config& c) {
  return c.Int("tls-port") != 0 || c.Bool("tls-replication") || c.Bool("tls-cluster");
}

absl::Status ConfigureTls(const Config& config, io::IoSystem& io) {
  absl::Status s = io.tls().Configure(TlsOptionsFrom(config));
  if (!s.ok()) Log(kWarning, ToStd(s.message()));
  return s;
}

void BindTlsConfig(Config& config, io::IoSystem& io) {
  config.OnChange({"tls-cert-file", "tls-key-file", "tls-key-file-pass", "tls-client-cert-file", "tls-client-key-file",
                   "tls-client-key-file-pass", "tls-ca-cert-file", "tls-ca-cert-dir", "tls-auth-clients",
                   "tls-replication", "tls-cluster", "tls-protocols", "tls-ciphers", "tls-ciphersuites",
                   "tls-prefer-server-ciphers", "tls-session-caching", "tls-session-cache-size",
                   "tls-session-cache-timeout", "tls-dh-params-file"},
                  [&config, &io]() -> absl::Status {
                    if (!TlsEnabled(config)) return absl::OkStatus();
                    if (!ConfigureTls(config, io).ok()) return absl::InvalidArgumentError(kTlsConfigError);
                    return absl::OkStatus();
                  });
}

}  // namespace ringkv::server

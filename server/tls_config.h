// The tls-* parameters and the I/O layer's TLS context (io/tls_context.h).
//
// TLS is "enabled" when tls-port, tls-replication or tls-cluster is set, as
// in Redis: only then are the certificates loaded (at start-up, where a bad
// certificate stops the server) and reloaded by CONFIG SET of any tls-*
// parameter (certificate rotation without a restart; an error answers
// "Unable to update TLS configuration. Check server logs." and keeps the
// running context). docs/security.md, "TLS".
//
// Thread-safety: main thread only.
#pragma once

#include "absl/status/status.h"
#include "io/io_system.h"
#include "io/tls_context.h"
#include "server/config.h"

namespace ringkv::server {

io::TlsOptions TlsOptionsFrom(const Config& config);
bool TlsEnabled(const Config& config);
// Configures io's TLS context from the parameters when TLS is enabled; the
// failure's reason is logged (Redis's line) before it is returned.
absl::Status ConfigureTls(const Config& config, io::IoSystem& io);
// The CONFIG SET callbacks of the tls-* parameters but tls-port (a listener
// change: server.cc binds it with port and bind).
void BindTlsConfig(Config& config, io::IoSystem& io);
// The error text of a CONFIG SET whose TLS configuration failed.
inline constexpr char kTlsConfigError[] = "Unable to update TLS configuration. Check server logs.";

}  // namespace ringkv::server

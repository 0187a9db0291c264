// syslog-enabled: log lines also go to syslog(3). Apart from logging.h so
// that the many files logging through that header do not depend on this.
//
// Thread-safety: OpenSyslog before other threads start; afterwards every
// Log()/LogRaw() line (without its prefix) goes to syslog too, from any thread.
#pragma once

#include <string>
#include <string_view>

namespace ringkv::server {

// Opens syslog as `ident` with `facility` ("user", "local0".."local7"; other
// names mean "user"); levels map to debug, info, notice, warning.
void OpenSyslog(const std::string& ident, std::string_view facility);

}  // namespace ringkv::server

// The process title, from Redis 7.0's proc-title-template.
//
// A template is text with {variables}: {title} (the name the server was
// started as), {listen-addr} ("bind-address:port", "*" when bound to all),
// {server-mode} ("" -- ringkv has no cluster or sentinel mode), {port},
// {tls-port}, {unixsocket}, {config-file}. "{{" is a literal "{"; an
// unknown variable or an unclosed "{" makes the template invalid. The
// expansion is trimmed of spaces at both ends.
//
// ringkv sets the kernel's thread name of the process (prctl(PR_SET_NAME),
// what `ps -o comm`, `top` and /proc/PID/comm show), which holds 15
// characters: the expanded title is cut there. Redis rewrites argv instead
// (what `ps -o args` shows); ringkv leaves its command line as it was.
//
// Example: ExpandProcTitle("{title} {listen-addr}", vars, &out) -> "ringkv-server *:6379".
//
// Thread-safety: SetProcTitle from the main thread (it names the calling
// thread, the main one being the process's name).
#pragma once

#include <string>
#include <string_view>

namespace ringkv::server {

struct ProcTitleVars {
  std::string title;
  std::string listen_addr;
  std::string server_mode;
  std::string port;
  std::string tls_port;
  std::string unixsocket;
  std::string config_file;
};

// False when the template is invalid (unknown variable, unclosed brace).
bool ExpandProcTitle(std::string_view tmpl, const ProcTitleVars& vars, std::string* out);

// Expands tmpl and names the process after it; false when tmpl is invalid.
bool SetProcTitle(std::string_view tmpl, const ProcTitleVars& vars);

}  // namespace ringkv::server

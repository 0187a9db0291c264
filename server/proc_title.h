// The process title, from Redis 7.0's proc-title-template.
//
// A template is text with {variables}: {title} (the name the server was
// started as), {listen-addr} ("bind-address:port", "*" when bound to all),
// {server-mode} ("[cluster]" in cluster mode, else ""), {port},
// {tls-port}, {unixsocket}, {config-file}. "{{" is a literal "{"; an
// unknown variable or an unclosed "{" makes the template invalid. The
// expansion is trimmed of spaces at both ends.
//
// As Redis does, ringkv rewrites its command line (the memory the kernel
// shows as /proc/PID/cmdline, what `ps -o args`, `top -c` and `pgrep -f`
// read), and leaves the process name (/proc/PID/comm, what `pgrep -x`,
// `pidof` and `killall` match) as the executable's. InitProcTitle claims the
// room first: the argv strings and the environment strings that follow them
// in one block; both are moved to the heap, so argv, environ, getenv and
// program_invocation_name keep working. A title longer than that room is
// cut to it.
//
// Example: ExpandProcTitle("{title} {listen-addr}", vars, &out)
//   -> "/usr/bin/ringkv-server *:6379".
//
// Thread-safety: InitProcTitle once, first thing in main, before any thread
// starts or anything reads the environment; SetProcTitle from the main
// thread only.
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

// Moves argv's strings and the environment to the heap (argv[i] and environ
// then point at the copies) and keeps their old block for the title.
void InitProcTitle(int argc, char** argv);

// Expands tmpl and writes it over the command line; false when tmpl is
// invalid. Without InitProcTitle it only checks tmpl.
bool SetProcTitle(std::string_view tmpl, const ProcTitleVars& vars);

}  // namespace ringkv::server

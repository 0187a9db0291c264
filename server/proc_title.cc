#include "server/proc_title.h"

#include <errno.h>  // program_invocation_name
#include <unistd.h>  // environ

#include <cstring>
#include <string>
#include <vector>

namespace ringkv::server {
namespace {

// The block of the command line and the environment that the title is
// written into. Main thread only.
struct TitleArea {
  char* base = nullptr;
  size_t size = 0;
};
TitleArea g_area;

// Heap copies of argv's and the environment's strings: alive until exit
// (argv, environ and program_invocation_name point into them).
std::vector<std::string>* g_moved = nullptr;

char* Keep(const char* s) {
  g_moved->emplace_back(s);
  return g_moved->back().data();
}

const std::string* Lookup(std::string_view name, const ProcTitleVars& v) {
  if (name == "title") return &v.title;
  if (name == "listen-addr") return &v.listen_addr;
  if (name == "server-mode") return &v.server_mode;
  if (name == "port") return &v.port;
  if (name == "tls-port") return &v.tls_port;
  if (name == "unixsocket") return &v.unixsocket;
  if (name == "config-file") return &v.config_file;
  return nullptr;
}

}  // namespace

bool ExpandProcTitle(std::string_view tmpl, const ProcTitleVars& vars, std::string* out) {
  std::string res;
  size_t i = 0;
  while (i < tmpl.size()) {
    const size_t open = tmpl.find('{', i);
    if (open == std::string_view::npos) {
      res.append(tmpl.substr(i));
      break;
    }
    res.append(tmpl.substr(i, open - i));
    if (open + 1 >= tmpl.size()) return false;  // a "{" at the very end
    if (tmpl[open + 1] == '{') {
      res.push_back('{');
      i = open + 2;
      continue;
    }
    const size_t close = tmpl.find('}', open + 1);
    if (close == std::string_view::npos) return false;
    const std::string* value = Lookup(tmpl.substr(open + 1, close - open - 1), vars);
    if (value == nullptr) return false;
    res.append(*value);
    i = close + 1;
  }
  const size_t first = res.find_first_not_of(' ');
  if (first == std::string::npos) {
    out->clear();
  } else {
    *out = res.substr(first, res.find_last_not_of(' ') - first + 1);
  }
  return true;
}

void InitProcTitle(int argc, char** argv) {
  if (g_area.base != nullptr || argc <= 0 || argv == nullptr || argv[0] == nullptr) return;
  // The room: argv[0], then every string that starts right where the one
  // before it ended (the kernel lays out argv and then the environment).
  char* const base = argv[0];
  char* end = base + std::strlen(base) + 1;
  for (int i = 1; i < argc && argv[i] == end; ++i) end += std::strlen(argv[i]) + 1;
  size_t env_count = 0;
  while (environ != nullptr && environ[env_count] != nullptr) ++env_count;
  for (size_t i = 0; i < env_count && environ[i] == end; ++i) end += std::strlen(environ[i]) + 1;

  // The strings move before the room is written over. std::vector may not
  // reallocate once pointers into its strings are handed out, so reserve.
  g_moved = new std::vector<std::string>();
  g_moved->reserve(static_cast<size_t>(argc) + env_count);
  auto** env = new char*[env_count + 1];
  for (size_t i = 0; i < env_count; ++i) env[i] = Keep(environ[i]);
  env[env_count] = nullptr;
  environ = env;
  for (int i = 0; i < argc; ++i) {
    const bool is_name = program_invocation_name == argv[i];
    argv[i] = Keep(argv[i]);
    if (is_name) program_invocation_name = argv[i];
  }
  const char* slash = std::strrchr(program_invocation_name, '/');
  program_invocation_short_name = slash != nullptr ? const_cast<char*>(slash + 1) : program_invocation_name;
  g_area = {base, static_cast<size_t>(end - base)};
}

bool SetProcTitle(std::string_view tmpl, const ProcTitleVars& vars) {
  std::string title;
  if (!ExpandProcTitle(tmpl, vars, &title)) return false;
  if (g_area.base == nullptr) return true;
  // Keep the last byte of the room a NUL: the kernel then shows the title up
  // to its first NUL and no further.
  const size_t n = std::min(title.size(), g_area.size - 1);
  std::memcpy(g_area.base, title.data(), n);
  std::memset(g_area.base + n, 0, g_area.size - n);
  return true;
}

}  // namespace ringkv::server

#include "server/proc_title.h"

#include <sys/prctl.h>

namespace ringkv::server {
namespace {

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

bool SetProcTitle(std::string_view tmpl, const ProcTitleVars& vars) {
  std::string title;
  if (!ExpandProcTitle(tmpl, vars, &title)) return false;
  title.resize(std::min<size_t>(title.size(), 15));  // the kernel's TASK_COMM_LEN less the NUL
  prctl(PR_SET_NAME, title.c_str(), 0, 0, 0);
  return true;
}

}  // namespace ringkv::server

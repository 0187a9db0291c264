#include "core/resp_command.h"

#include "core/strings.h"

namespace ringkv::core {

void AppendRespCommand(std::span<const std::string_view> argv, std::string* out) {
  StrAppend(out, "*", argv.size(), "\r\n");
  for (std::string_view a : argv) {
    StrAppend(out, "$", a.size(), "\r\n");
    out->append(a);
    out->append("\r\n");
  }
}

}  // namespace ringkv::core

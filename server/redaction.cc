#include "server/redaction.h"

#include "core/strings.h"
#include "server/config_params.h"

namespace ringkv::server {

std::vector<bool> RedactedArguments(std::span<const std::string_view> argv) {
  std::vector<bool> hidden;
  if (argv.empty()) return hidden;
  auto hide = [&](size_t from, size_t count) {
    if (hidden.empty()) hidden.assign(argv.size(), false);
    for (size_t i = from; i < from + count && i < argv.size(); ++i) hidden[i] = true;
  };
  const std::string_view name = argv[0];
  if (EqualsIgnoreCase(name, "auth")) {
    hide(1, argv.size());
  } else if (EqualsIgnoreCase(name, "hello")) {
    for (size_t i = 2; i < argv.size(); ++i) {
      if (EqualsIgnoreCase(argv[i], "auth")) {
        hide(i + 1, 2);
        break;
      }
    }
  } else if (EqualsIgnoreCase(name, "acl") && argv.size() >= 3 && EqualsIgnoreCase(argv[1], "setuser")) {
    hide(2, argv.size());  // the user and its rules (passwords), as Redis
  } else if (EqualsIgnoreCase(name, "config") && argv.size() >= 4 && EqualsIgnoreCase(argv[1], "set")) {
    // Sensitive parameters' values: the config table marks them.
    for (size_t i = 2; i + 1 < argv.size(); i += 2) {
      if (IsSensitiveConfig(argv[i])) hide(i + 1, 1);
    }
  } else if (EqualsIgnoreCase(name, "migrate")) {
    // Options from the 7th argument up to KEYS, which takes the rest.
    for (size_t i = 6; i < argv.size(); ++i) {
      if (EqualsIgnoreCase(argv[i], "keys")) break;
      if (EqualsIgnoreCase(argv[i], "auth")) {
        hide(i + 1, 1);
        ++i;
      } else if (EqualsIgnoreCase(argv[i], "auth2")) {
        hide(i + 1, 2);
        i += 2;
      }
    }
  }
  return hidden;
}

}  // namespace ringkv::server

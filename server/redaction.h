// Which arguments of a command MONITOR and SLOWLOG show as "(redacted)",
// as Redis 7.0 hides them (redactClientCommandArgument): the arguments of
// AUTH, HELLO's AUTH username password, and MIGRATE's AUTH password and
// AUTH2 username password. Secrets never reach an observer.
#pragma once

#include <span>
#include <string_view>
#include <vector>

namespace ringkv::server {

// One flag per argument of `argv`: true where it is to be redacted. Empty
// when nothing is (the common case: no allocation).
std::vector<bool> RedactedArguments(std::span<const std::string_view> argv);

}  // namespace ringkv::server

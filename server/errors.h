// Error replies, spelled exactly as Redis 7.0 spells them (without the '-').
// One place for every string a client can match on.
#pragma once

#include <string_view>

namespace ringkv::server::errors {

// An argument as Redis writes it into an error: its messages format their
// arguments with printf's %s, which ends at the first NUL byte.
inline std::string_view UpToNul(std::string_view arg) { return arg.substr(0, arg.find('\0')); }

inline constexpr char kSyntax[] = "ERR syntax error";
inline constexpr char kWrongType[] = "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr char kNotInteger[] = "ERR value is not an integer or out of range";
inline constexpr char kNotFloat[] = "ERR value is not a valid float";
inline constexpr char kOverflow[] = "ERR increment or decrement would overflow";
inline constexpr char kNanOrInf[] = "ERR increment would produce NaN or Infinity";
inline constexpr char kLoading[] = "LOADING Redis is loading the dataset in memory";
inline constexpr char kNoAuth[] = "NOAUTH Authentication required.";
inline constexpr char kWrongPass[] = "WRONGPASS invalid username-password pair or user is disabled.";
inline constexpr char kAuthNotSet[] =
    "ERR AUTH <password> called without any password configured for the default user. Are you sure your "
    "configuration is correct?";
inline constexpr char kDbIndexRange[] = "ERR DB index is out of range";
inline constexpr char kMaxClients[] = "ERR max number of clients reached";
inline constexpr char kStringTooLong[] = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
inline constexpr char kOffsetRange[] = "ERR offset is out of range";
inline constexpr char kNoSuchKey[] = "ERR no such key";
inline constexpr char kNoScript[] = "NOSCRIPT No matching script. Please use EVAL.";
inline constexpr char kIndexRange[] = "ERR index out of range";
inline constexpr char kTimeout[] = "ERR timeout is not an integer or out of range";
inline constexpr char kProtectedMode[] =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for "
    "the default user. In this mode connections are only accepted from the loopback interface. If you want to "
    "connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable "
    "protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by "
    "connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly "
    "accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) "
    "Alternatively you can just disable the protected mode by editing the Redis configuration file, and "
    "setting the protected mode option to 'no', and then restarting the server. 3) If you started the server "
    "manually just for testing, restart it with the '--protected-mode no' option. 4) Set up an "
    "authentication password for the default user. NOTE: You only need to do one of the above things in "
    "order for the server to start accepting connections from the outside.\r\n";

}  // namespace ringkv::server::errors

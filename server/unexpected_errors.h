// UnexpectedErrors: errors that should never happen, and what they do.
//
// An error reply sent to the primary's link, to a replica or to the AOF
// loader means this server's data may now differ from its source: it is
// logged ("== CRITICAL == ...") and, where propagation-error-behavior says
// so, the server panics. A replica unable to persist what its primary sends
// panics too, unless replica-ignore-disk-write-errors (then a log line at
// most every 10 seconds).
//
// Owns those two settings (bound to the config at construction) and the
// log line's rate limit. Counting the error (unexpected_error_replies) is
// the caller's (Server::CountErrorReply).
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <string_view>

namespace ringkv::server {

class Config;
struct Client;
struct CommandSpec;

class UnexpectedErrors {
 public:
  // `config` outlives this object.
  explicit UnexpectedErrors(Config& config);
  UnexpectedErrors(const UnexpectedErrors&) = delete;
  UnexpectedErrors& operator=(const UnexpectedErrors&) = delete;

  // `msg` was sent to `c`: the primary's link (c.is_master), a replica
  // (c.is_replica) or, neither, the AOF loader. Logs it; panics for a
  // read-only replica (`replica_read_only`) unless the behavior is
  // "ignore", and for the AOF loader under "panic".
  void OnErrorReply(const Client& c, std::string_view msg, bool replica_read_only);
  // A write from the primary while this replica cannot persist: a panic
  // (PING excepted), unless replica-ignore-disk-write-errors.
  void ApplyDespiteDiskError(const CommandSpec& spec);

 private:
  enum class Behavior : uint8_t { kIgnore, kPanic, kPanicOnReplicas };
  Behavior behavior_ = Behavior::kIgnore;  // propagation-error-behavior
  bool ignore_disk_write_errors_ = false;  // replica-ignore-disk-write-errors
  int64_t last_disk_error_log_ms_ = 0;
};

}  // namespace ringkv::server

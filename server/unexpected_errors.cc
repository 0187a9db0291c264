#include "server/unexpected_errors.h"

#include <string>

#include "core/strings.h"
#include "server/client.h"
#include "server/clock.h"
#include "server/command.h"
#include "server/config.h"
#include "server/logging.h"

namespace ringkv::server {

UnexpectedErrors::UnexpectedErrors(Config& config) {
  config.Bind("propagation-error-behavior", [this, &config] {
    const std::string& v = config.Str("propagation-error-behavior");
    behavior_ = v == "panic"               ? Behavior::kPanic
                : v == "panic-on-replicas" ? Behavior::kPanicOnReplicas
                                           : Behavior::kIgnore;
  });
  config.Bind("replica-ignore-disk-write-errors", &ignore_disk_write_errors_);
}

void UnexpectedErrors::OnErrorReply(const Client& c, std::string_view msg, bool replica_read_only) {
  const bool aof = !c.is_master && !c.is_replica;
  const char* from = aof ? "server" : c.is_master ? "replica" : "master";
  const char* to = aof ? "AOF-loading-client" : c.is_master ? "master" : "replica";
  const std::string_view command = c.last_command != nullptr ? std::string_view(c.last_command->name) : "<unknown>";
  // Redis logs the error as its code made it: "-CODE text", or the text
  // alone for the generic ERR.
  std::string error = msg.starts_with("ERR ") ? std::string(msg.substr(4)) : StrCat("-", msg);
  if (error.size() > 4096) error.resize(4096);
  Log(kWarning, StrCat("== CRITICAL == This ", from, " is sending an error to its ", to, ": '", error,
                       "' after processing the command '", command, "'"));
  // A read-only replica erring on its primary's command, or the AOF erring
  // on load: the data set is no longer what its source says.
  const bool panic_on_replica = c.is_master && replica_read_only && behavior_ != Behavior::kIgnore;
  const bool panic_on_aof = aof && behavior_ == Behavior::kPanic;
  if (panic_on_replica || panic_on_aof) {
    Panic(StrCat("This ", from, " panicked sending an error to its ", to, " after processing the command '", command,
                 "'"));
  }
}

void UnexpectedErrors::ApplyDespiteDiskError(const CommandSpec& spec) {
  if (!ignore_disk_write_errors_ && spec.name != "ping") {
    Panic("Replica was unable to write command to disk.");
  }
  // At most once in 10 seconds, as Redis.
  const int64_t now_ms = UnixMs();
  if (now_ms > last_disk_error_log_ms_ + 10000) {
    last_disk_error_log_ms_ = now_ms;
    Log(kWarning, "Replica is applying a command even though it is unable to write to disk.");
  }
}

}  // namespace ringkv::server

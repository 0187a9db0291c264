// Server: error replies -- their statistics (total_error_replies, INFO
// errorstats, failed calls), and errors that should never happen: those sent
// to the primary's link, to a replica or to the AOF loader, which mean this
// server's data may now differ from its source (propagation-error-behavior),
// and a replica unable to persist what its primary sends
// (replica-ignore-disk-write-errors).
#include "core/strings.h"
#include "server/logging.h"
#include "server/server.h"

namespace ringkv::server {

void Server::BindErrorConfig() {
  Config& c = *config_;
  c.Bind("propagation-error-behavior", [this] {
    const std::string& v = config_->Str("propagation-error-behavior");
    propagation_error_behavior_ = v == "panic"               ? PropagationErrorBehavior::kPanic
                                  : v == "panic-on-replicas" ? PropagationErrorBehavior::kPanicOnReplicas
                                                             : PropagationErrorBehavior::kIgnore;
  });
  c.Bind("replica-ignore-disk-write-errors", &replica_ignore_disk_write_errors_);
}

void Server::CountErrorReply(Client& c, std::string_view msg, bool update_stats) {
  if (update_stats) {
    ++stats_.total_error_replies;
    error_stats_.Count(msg);
  } else if (c.last_command != nullptr) {
    // Counted where it arose (a script's call); the command replying it
    // still failed.
    ++c.last_command->failed_calls;
  }
  if (c.is_master || c.is_replica || (aof_client_ && &c == aof_client_.get())) UnexpectedErrorReply(c, msg);
}

void Server::UnexpectedErrorReply(const Client& c, std::string_view msg) {
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
  ++stats_.unexpected_error_replies;
  // A read-only replica erring on its primary's command, or the AOF erring
  // on load: the data set is no longer what its source says.
  const bool panic_on_replica = c.is_master && replica_read_only_ &&
                                propagation_error_behavior_ != PropagationErrorBehavior::kIgnore;
  const bool panic_on_aof = aof && propagation_error_behavior_ == PropagationErrorBehavior::kPanic;
  if (panic_on_replica || panic_on_aof) {
    Panic(StrCat("This ", from, " panicked sending an error to its ", to, " after processing the command '", command,
                 "'"));
  }
}

void Server::ApplyDespiteDiskError(const CommandSpec& spec) {
  if (!replica_ignore_disk_write_errors_ && spec.name != "ping") {
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

// Server: counting error replies -- total_error_replies, INFO errorstats,
// failed calls -- and handing the ones that should never happen (to the
// primary's link, a replica or the AOF loader) to UnexpectedErrors
// (unexpected_errors.h).
#include "server/server.h"

namespace ringkv::server {

void Server::CountErrorReply(Client& c, std::string_view msg, bool update_stats) {
  if (update_stats) {
    ++stats_.total_error_replies;
    error_stats_.Count(msg);
  } else if (c.last_command != nullptr) {
    // Counted where it arose (a script's call); the command replying it
    // still failed.
    ++c.last_command->failed_calls;
  }
  if (c.is_master || c.is_replica || loading_.IsAofClient(c)) {
    ++stats_.unexpected_error_replies;
    unexpected_errors_.OnErrorReply(c, msg, replica_side_.refuses_writes());  // a read-only replica
  }
}

}  // namespace ringkv::server

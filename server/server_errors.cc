// Server: error replies -- their statistics (total_error_replies, INFO
// errorstats, failed calls), and errors that should never happen: those sent
// to the primary's link, to a replica or to the AOF loader, which mean this
// server's data may now differ from its source.
#include "core/strings.h"
#include "server/logging.h"
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
}

}  // namespace ringkv::server

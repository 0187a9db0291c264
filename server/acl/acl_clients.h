// Where ACL meets the server's clients: which user a client runs as,
// authentication, closing the clients of a dropped user, the denial log.
//
// Thread-safety: main thread only.
#pragma once

#include <memory>
#include <string_view>

#include "server/acl/acl.h"
#include "server/client.h"
#include "server/command.h"

namespace ringkv::server {

class Server;

// The user `c` runs as (the default user unless it authenticated as another).
const acl::User& AclUserOf(Server& s, const Client& c);
// SORT's BY / GET: `c`'s user may run the command with a selector that
// reads every key (Redis's ACLUserCheckCmdWithUnrestrictedKeyAccess).
bool AclMayReadAnyKey(Server& s, const Client& c, const CommandSpec& spec, Argv argv);
// AUTH / HELLO AUTH: checks the pair; on success `c` is authenticated as
// the user. On failure the attempt is logged (ACL LOG "auth", `object` the
// command as typed) and false returned.
bool AclAuthenticate(Server& s, Client& c, std::string_view user, std::string_view pass, std::string_view object,
                     int64_t now_ms);
// Back to the default user (RESET), authenticated when it needs no password.
void AclResetAuth(Server& s, Client& c);
// Closes every client authenticated as `u` (deleted, or replaced by ACL
// LOAD), after the replies already queued for it.
void CloseClientsOfUser(Server& s, const acl::User* u);
// ACL SETUSER took channels away: the user's subscribers whose channels or
// patterns are no longer all allowed are closed, as Redis 7.0 does.
void CloseRevokedSubscribers(Server& s, const acl::User& before, const acl::User& after);
// The gate's and the scripts' check of `argv` run as `c`'s user (a script's
// commands: its caller's); a denial is logged with `c`'s CLIENT INFO.
acl::Verdict AclCheck(Server& s, Client& c, const CommandSpec& spec, Argv argv, acl::LogContext context,
                      int64_t now_ms);

}  // namespace ringkv::server

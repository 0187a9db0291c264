#include "server/acl/acl_clients.h"

#include <vector>

#include "server/server.h"

namespace ringkv::server {

const acl::User& AclUserOf(Server& s, const Client& c) {
  // A script's commands run as its caller.
  if (c.is_script && s.current_client() != nullptr && s.current_client() != &c) {
    return AclUserOf(s, *s.current_client());
  }
  return c.meta && c.meta->user ? *c.meta->user : s.acl().default_user();
}

bool AclMayReadAnyKey(Server& s, const Client& c, const CommandSpec& spec, Argv argv) {
  if (c.is_master || (c.conn == nullptr && !c.is_script)) return true;
  const acl::User& u = AclUserOf(s, c);
  return u.unrestricted || s.acl().CheckWithFullKeyRead(u, spec, argv);
}

bool AclAuthenticate(Server& s, Client& c, std::string_view user, std::string_view pass, std::string_view object,
                     int64_t now_ms) {
  std::shared_ptr<acl::User> u = s.acl().Find(user);
  if (u == nullptr || !u->CheckPassword(pass)) {
    s.acl().Log(acl::Denied::kAuth, c.in_multi ? acl::LogContext::kMulti : acl::LogContext::kToplevel,
                std::string(object), std::string(user), s.ClientInfoLine(c, now_ms), now_ms);
    return false;
  }
  c.authenticated = true;
  if (c.conn != nullptr) s.io().SetAuthenticated(c.conn, true);
  if (u == s.acl().default_ptr()) {
    if (c.meta) c.meta->user.reset();
  } else {
    c.mutable_meta().user = std::move(u);
  }
  return true;
}

void AclResetAuth(Server& s, Client& c) {
  if (c.meta) c.meta->user.reset();
  c.authenticated = s.acl().DefaultAuthenticates();
  if (c.conn != nullptr) s.io().SetAuthenticated(c.conn, c.authenticated);
  if (!c.authenticated) s.client_control().NoteDeauthenticated(c);
}

void CloseClientsOfUser(Server& s, const acl::User* u) {
  std::vector<Client*> victims;
  for (const auto& [id, c] : s.clients()) {
    if (c->meta && c->meta->user.get() == u) victims.push_back(c);
  }
  for (Client* c : victims) {
    // As Redis: back to the default user, unauthenticated, then closed.
    c->meta->user.reset();
    c->authenticated = false;
    s.CloseClient(*c);
  }
}

void CloseRevokedSubscribers(Server& s, const acl::User& before, const acl::User& after) {
  if (acl::Acl::KeepsChannelsOf(before, after)) return;
  std::vector<Client*> victims;
  for (const auto& [id, c] : s.clients()) {
    if (!c->pubsub || &AclUserOf(s, *c) != &after) continue;
    bool kill = false;
    for (const std::string& p : s.pubsub().Subscriptions(id, PubSub::Kind::kPattern)) {
      kill = kill || !acl::Acl::ChannelAllowed(after, p, true);
    }
    for (PubSub::Kind kind : {PubSub::Kind::kChannel, PubSub::Kind::kShard}) {
      for (const std::string& ch : s.pubsub().Subscriptions(id, kind)) {
        kill = kill || !acl::Acl::ChannelAllowed(after, ch, false);
      }
    }
    if (kill) victims.push_back(c);
  }
  for (Client* c : victims) s.CloseClient(*c);
}

acl::Verdict AclCheck(Server& s, Client& c, const CommandSpec& spec, Argv argv, acl::LogContext context,
                      int64_t now_ms) {
  const acl::User& u = AclUserOf(s, c);
  if (u.unrestricted) return {};
  acl::Verdict v = s.acl().Check(u, spec, argv);
  if (!v.ok()) {
    std::string object = v.denied == acl::Denied::kCommand ? spec.name : std::string(argv[v.pos]);
    s.acl().Log(v.denied, context, std::move(object), u.name, s.ClientInfoLine(c, now_ms, argv), now_ms);
  }
  return v;
}

}  // namespace ringkv::server

// Connection commands: PING, ECHO, QUIT, HELLO, AUTH, SELECT, RESET (and
// the cluster-only READONLY / READWRITE).
#include "core/strings.h"
#include "absl/strings/str_cat.h"
#include "server/acl/acl.h"
#include "server/acl/acl_clients.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/server.h"
#include "server/version.h"

namespace ringkv::server {
namespace {

void CmdPing(ServerCommandContext& ctx) {
  if (ctx.argv.size() > 2) {
    ctx.reply.Error("ERR wrong number of arguments for 'ping' command");
    return;
  }
  if (ctx.client.pubsub && ctx.client.resp == 2) {  // subscribed: a "pong" message
    ctx.reply.ArrayHeader(2);
    ctx.reply.Bulk("pong");
    ctx.reply.Bulk(ctx.argv.size() == 2 ? ctx.argv[1] : std::string_view());
    return;
  }
  if (ctx.argv.size() == 2) {
    ctx.reply.Bulk(ctx.argv[1]);
  } else {
    ctx.reply.SimpleString("PONG");
  }
}

void CmdEcho(ServerCommandContext& ctx) { ctx.reply.Bulk(ctx.argv[1]); }

void CmdQuit(ServerCommandContext& ctx) {
  ctx.reply.Ok();
  ctx.server.CloseClient(ctx.client);
}

// Authenticates the client as `user` (ACL users; requirepass is the default
// user's password). Replies with the error and returns false when the pair
// does not match or the user is disabled.
bool CheckPassword(ServerCommandContext& ctx, std::string_view user, std::string_view pass) {
  if (!AclAuthenticate(ctx.server, ctx.client, user, pass, ctx.argv[0], ctx.now_ms)) {
    ctx.reply.Error(errors::kWrongPass);
    return false;
  }
  return true;
}

void CmdAuth(ServerCommandContext& ctx) {
  if (ctx.argv.size() > 3) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  if (ctx.argv.size() == 2 && ctx.server.acl().default_user().nopass) {
    ctx.reply.Error(errors::kAuthNotSet);
    return;
  }
  std::string_view user = ctx.argv.size() == 3 ? ctx.argv[1] : "default";
  if (CheckPassword(ctx, user, ctx.argv.back())) ctx.reply.Ok();
}

void CmdHello(ServerCommandContext& ctx) {
  Client& c = ctx.client;
  int64_t ver = c.resp;
  size_t i = 1;
  if (ctx.argv.size() >= 2) {
    if (!core::StringToInt64(ctx.argv[1], &ver)) {
      ctx.reply.Error("ERR Protocol version is not an integer or out of range");
      return;
    }
    if (ver < 2 || ver > 3) {
      ctx.reply.Error("NOPROTO unsupported protocol version");
      return;
    }
    i = 2;
  }
  // Redis 7.0 takes the options in order, each at once: a name is set (or
  // refused) and a password checked where they stand, before the check that
  // the client is authenticated (so HELLO 3 SETNAME x sets the name even
  // when it then answers NOAUTH).
  for (; i < ctx.argv.size(); ++i) {
    size_t more = ctx.argv.size() - i - 1;
    if (Is(ctx.argv[i], "AUTH") && more >= 2) {
      if (!CheckPassword(ctx, ctx.argv[i + 1], ctx.argv[i + 2])) return;
      i += 2;
    } else if (Is(ctx.argv[i], "SETNAME") && more >= 1) {
      const std::string_view name = ctx.argv[++i];
      for (char ch : name) {
        if (ch < '!' || ch > '~') {
          ctx.reply.Error("ERR Client names cannot contain spaces, newlines or special characters.");
          return;
        }
      }
      c.mutable_meta().name = std::string(name);
    } else {
      ctx.reply.Error(StrCat("ERR Syntax error in HELLO option '", ctx.argv[i], "'"));
      return;
    }
  }
  if (!c.authenticated) {
    ctx.reply.Error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
                    "AUTH <user> <pass> option can be used to authenticate the client and select the RESP "
                    "protocol version at the same time");
    return;
  }
  c.resp = static_cast<uint8_t>(ver);
  io::ReplyBuilder rb(ctx.reply.out(), c.resp);  // the reply uses the new protocol
  rb.MapHeader(7);
  rb.Bulk("server");
  rb.Bulk("redis");
  rb.Bulk("version");
  rb.Bulk(kRedisVersion);
  rb.Bulk("proto");
  rb.Integer(ver);
  rb.Bulk("id");
  rb.Integer(static_cast<int64_t>(c.id()));
  rb.Bulk("mode");
  rb.Bulk(ctx.server.cluster() != nullptr ? "cluster" : "standalone");
  rb.Bulk("role");
  rb.Bulk("master");
  rb.Bulk("modules");
  rb.ArrayHeader(0);
}

// READONLY / READWRITE: cluster commands; ACL rules may name them.
void CmdSelect(ServerCommandContext& ctx) {
  int32_t index;
  if (!ParseInt32(ctx, ctx.argv[1], &index)) return;
  if (ctx.server.cluster() != nullptr && index != 0) {
    ctx.reply.Error("ERR SELECT is not allowed in cluster mode");
    return;
  }
  if (index < 0 || index >= ctx.server.keyspace().count()) {
    ctx.reply.Error(errors::kDbIndexRange);
    return;
  }
  ctx.client.db = index;
  ctx.reply.Ok();
}

void CmdReset(ServerCommandContext& ctx) {
  Client& c = ctx.client;
  c.db = 0;
  c.resp = 2;
  c.reply_mode = ReplyMode::kOn;
  c.no_evict = false;
  c.meta.reset();
  ctx.server.ResetClientState(c);  // MULTI, WATCH, MONITOR
  if (c.pubsub) ctx.server.pubsub().RemoveClient(c.id());  // silently, as Redis
  c.pubsub = false;
  AclResetAuth(ctx.server, c);  // back to the default user
  io::ReplyBuilder rb(ctx.reply.out(), 2);
  rb.SimpleString("RESET");
}

}  // namespace

void RegisterConnectionCommands(CommandTable& t) {
  using namespace cmd;
  t.Add(Cmd("ping", -1, kFast | kSentinel, 0, 0, 0, "@fast @connection", "connection", "Returns the server's liveliness response.", "1.0.0", CmdPing));
  t.Add(Cmd("echo", 2, kLoading | kStale | kFast, 0, 0, 0, "@fast @connection", "connection", "Returns the given string.", "1.0.0", CmdEcho));
  t.Add(Cmd("quit", -1, kAllowBusy | kNoAuth | kFast | kNoscript | kLoading | kStale, 0, 0, 0, "@fast @connection", "connection", "Closes the connection.", "1.0.0", CmdQuit));
  t.Add(Cmd("auth", -2, kNoscript | kLoading | kStale | kFast | kNoAuth | kSentinel | kAllowBusy, 0, 0, 0, "@fast @connection", "connection", "Authenticates the connection.", "1.0.0", CmdAuth));
  t.Add(Cmd("hello", -1, kNoscript | kLoading | kStale | kFast | kNoAuth | kSentinel | kAllowBusy, 0, 0, 0, "@fast @connection", "connection", "Handshakes with the Redis server.", "6.0.0", CmdHello));
  t.Add(Cmd("select", 2, kLoading | kStale | kFast, 0, 0, 0, "@fast @connection", "connection", "Changes the selected database.", "1.0.0", CmdSelect));
  t.Add(Cmd("reset", 1, kNoscript | kLoading | kStale | kFast | kNoAuth | kAllowBusy, 0, 0, 0, "@fast @connection", "connection", "Resets the connection.", "6.2.0", CmdReset));
}

}  // namespace ringkv::server

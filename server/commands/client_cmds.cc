// CLIENT and its subcommands, one handler each.
#include <algorithm>

#include "core/strings.h"
#include "absl/strings/str_cat.h"
#include "server/acl/acl.h"
#include "server/acl/acl_clients.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/server.h"

namespace ringkv::server {

Server::ClientMemoryUse Server::MemoryOf(const Client& c) const {
  const io::Connection& conn = *c.conn;
  ClientMemoryUse m;
  m.qbuf = io::QueryBufferSize(conn);
  m.qbuf_cap = io::QueryBufferCapacity(conn);
  m.obuf = conn.thread == 0 ? conn.out.size() : conn.stat_obuf();
  m.omem = io::OutputBufferMemory(conn) + conn.main_out_allocated();
  const MultiState* running = transactions_.RunningQueue(c);
  const MultiState* multi = running != nullptr ? running : transactions_.Find(c);
  // Everything this client holds: the structs, its components and buffers
  // -- as Redis 7.0 counts them, its watched keys, subscriptions and
  // tracking prefixes too, so that maxmemory-clients sees a client that
  // grows by them.
  m.total = sizeof(Client) + sizeof(io::Connection) + (conn.extras() != nullptr ? sizeof(io::ConnectionExtras) : 0) +
            m.qbuf_cap + m.omem +
            (c.meta ? sizeof(ClientMeta) + c.meta->name.capacity() + c.meta->lib_name.capacity() +
                          c.meta->lib_ver.capacity()
                    : 0) +
            (conn.pending ? sizeof(io::PendingInput) : 0) + (multi ? sizeof(MultiState) + multi->bytes : 0);
  if (c.watching) m.total += transactions_.watched().MemoryOf(c.id());
  if (c.pubsub) m.total += pubsub_.MemoryOf(c.id());
  if (c.tracking) m.total += tracking_.MemoryOf(c.id());
  return m;
}

std::string Server::ClientInfoLine(const Client& c, int64_t now_ms, Argv running) const {
  const io::Connection& conn = *c.conn;
  const ClientMemoryUse mem = MemoryOf(c);
  uint64_t qbuf = mem.qbuf, qbuf_cap = mem.qbuf_cap;
  const uint64_t obuf = mem.obuf, omem = mem.omem, tot = mem.total;
  // The running command's bytes are still in the receive buffer (a pool
  // buffer of the I/O thread): Redis's querybuf holds them the same way.
  uint64_t argv_mem = 0;
  if (!running.empty()) {
    uint64_t resp = StrCat("*", running.size(), "\r\n").size();
    for (std::string_view a : running) {
      argv_mem += a.size();
      resp += StrCat("$", a.size(), "\r\n").size() + a.size() + 2;
    }
    qbuf = std::max(qbuf, resp);
    qbuf_cap = std::max(qbuf_cap, qbuf);
  }
  static const ClientMeta kNoMeta;
  const ClientMeta& meta = c.meta ? *c.meta : kNoMeta;
  char flag_buf[16];
  size_t nflags = 0;
  const MultiState* exec_queue = transactions_.RunningQueue(c);
  const bool in_exec = exec_queue != nullptr;
  const MultiState* multi = in_exec ? exec_queue : transactions_.Find(c);
  if (c.monitor) flag_buf[nflags++] = 'O';
  if (c.is_replica) flag_buf[nflags++] = 'S';
  if (c.is_master) flag_buf[nflags++] = 'M';
  if (c.pubsub) flag_buf[nflags++] = 'P';
  if (c.in_multi || in_exec) flag_buf[nflags++] = 'x';
  if (c.paused_wait || c.blocked) flag_buf[nflags++] = 'b';
  const ClientTracking* tracking = c.tracking ? tracking_.Find(c.id()) : nullptr;
  if (tracking != nullptr) flag_buf[nflags++] = 't';
  if (tracking != nullptr && tracking->broken_redirect) flag_buf[nflags++] = 'R';
  if (tracking != nullptr && tracking->options.bcast) flag_buf[nflags++] = 'B';
  if (transactions_.WatchDirty(c)) flag_buf[nflags++] = 'd';
  if (c.closing) flag_buf[nflags++] = 'A';
  if (c.no_evict) flag_buf[nflags++] = 'e';
  if (nflags == 0) flag_buf[nflags++] = 'N';
  std::string_view flags(flag_buf, nflags);
  std::string_view cmd = in_exec           ? std::string_view("exec")
                         : c.last_command ? std::string_view(c.last_command->name)
                                          : std::string_view("NULL");
  return StrCat("id=", c.id(), " addr=", conn.peer.ToString(), " laddr=", io::LocalAddress(conn, &io_->unix_socket()).ToString(), " fd=", conn.fd,
                      " name=", meta.name, " age=", now_ms / 1000 - c.created_s,
                      " idle=", now_ms / 1000 - c.last_interaction_s, " flags=", flags, " db=", c.db,
                      " sub=", pubsub_.Count(c.id(), PubSub::Kind::kChannel),
                      " psub=", pubsub_.Count(c.id(), PubSub::Kind::kPattern),
                      " ssub=", pubsub_.Count(c.id(), PubSub::Kind::kShard),
                      " multi=", multi ? static_cast<int64_t>(multi->commands.size()) : -1, " qbuf=", qbuf,
                      " qbuf-free=", qbuf_cap - qbuf, " argv-mem=", argv_mem, " multi-mem=", multi ? multi->bytes : 0, " rbs=0 rbp=0 obl=0 oll=0 omem=", omem, " tot-mem=", tot,
                      " events=r", obuf ? "w" : "", " cmd=", cmd, " user=", meta.user ? std::string_view(meta.user->name) : std::string_view("default"), " redir=", tracking ? static_cast<int64_t>(tracking->options.redirect) : -1, " resp=", c.resp,
                      " lib-name=", meta.lib_name, " lib-ver=", meta.lib_ver);
}

namespace {

bool ValidClientName(std::string_view name) {
  return std::all_of(name.begin(), name.end(), [](char ch) { return ch >= '!' && ch <= '~'; });
}

void CmdClientId(ServerCommandContext& ctx) { ctx.reply.Integer(static_cast<int64_t>(ctx.client.id())); }

void CmdClientInfo(ServerCommandContext& ctx) {
  ctx.reply.Verbatim(ctx.server.ClientInfoLine(ctx.client, ctx.now_ms, ctx.argv) + "\n");
}

// CLIENT LIST / KILL TYPE: normal, master, replica (or slave), pubsub.
enum class ClientType { kNormal, kMaster, kReplica, kPubsub };

bool ParseClientType(std::string_view t, ClientType* out) {
  if (Is(t, "normal")) {
    *out = ClientType::kNormal;
  } else if (Is(t, "master")) {
    *out = ClientType::kMaster;
  } else if (Is(t, "replica") || Is(t, "slave")) {
    *out = ClientType::kReplica;
  } else if (Is(t, "pubsub")) {
    *out = ClientType::kPubsub;
  } else {
    return false;
  }
  return true;
}

// As Redis's getClientType: a subscriber is of type pubsub (CLIENT LIST /
// KILL TYPE pubsub), the replication links of theirs.
ClientType TypeOf(const Client& c) {
  return c.is_master    ? ClientType::kMaster
         : c.is_replica ? ClientType::kReplica
         : c.pubsub     ? ClientType::kPubsub
                        : ClientType::kNormal;
}

void CmdClientList(ServerCommandContext& ctx) {
  // CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id ...]
  bool only_ids = false;
  std::vector<uint64_t> ids;
  bool by_type = false;
  ClientType type = ClientType::kNormal;
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    if (Is(ctx.argv[i], "TYPE") && i + 1 < ctx.argv.size()) {
      std::string_view t = ctx.argv[++i];
      if (!ParseClientType(t, &type)) {
        ctx.reply.Error(StrCat("ERR Unknown client type '", t, "'"));
        return;
      }
      by_type = true;
    } else if (Is(ctx.argv[i], "ID") && i + 1 < ctx.argv.size()) {
      only_ids = true;
      for (++i; i < ctx.argv.size(); ++i) {
        int64_t id;
        if (!core::StringToInt64(ctx.argv[i], &id) || id <= 0) {
          ctx.reply.Error("ERR Invalid client ID");
          return;
        }
        ids.push_back(static_cast<uint64_t>(id));
      }
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  std::vector<const Client*> list;
  for (const auto& [id, c] : ctx.server.clients()) {
    if (only_ids && std::find(ids.begin(), ids.end(), id) == ids.end()) continue;
    if (by_type && TypeOf(*c) != type) continue;
    if (c->closed_at_once()) continue;
    list.push_back(c);
  }
  std::sort(list.begin(), list.end(), [](const Client* a, const Client* b) { return a->id() < b->id(); });
  std::string out;
  for (const Client* c : list) {
    StrAppend(&out, ctx.server.ClientInfoLine(*c, ctx.now_ms, c == &ctx.client ? ctx.argv : Argv()), "\n");
  }
  ctx.reply.Verbatim(out);
}

void CmdClientSetname(ServerCommandContext& ctx) {
  if (!ValidClientName(ctx.argv[2])) {
    ctx.reply.Error("ERR Client names cannot contain spaces, newlines or special characters.");
    return;
  }
  ctx.client.mutable_meta().name = std::string(ctx.argv[2]);
  ctx.reply.Ok();
}

void CmdClientGetname(ServerCommandContext& ctx) {
  if (!ctx.client.meta || ctx.client.meta->name.empty()) {
    ctx.reply.Null();
  } else {
    ctx.reply.Bulk(ctx.client.meta->name);
  }
}

void CmdClientSetinfo(ServerCommandContext& ctx) {
  std::string_view attr = ctx.argv[2], value = ctx.argv[3];
  if (!ValidClientName(value) && !value.empty()) {
    ctx.reply.Error(StrCat("ERR ", attr, " cannot contain spaces, newlines or special characters."));
    return;
  }
  if (Is(attr, "lib-name")) {
    ctx.client.mutable_meta().lib_name = std::string(value);
  } else if (Is(attr, "lib-ver")) {
    ctx.client.mutable_meta().lib_ver = std::string(value);
  } else {
    ctx.reply.Error(StrCat("ERR Unrecognized option '", attr, "'"));
    return;
  }
  ctx.reply.Ok();
}

void CmdClientKill(ServerCommandContext& ctx) {
  Server& s = ctx.server;
  if (ctx.argv.size() == 3) {  // old form: CLIENT KILL addr:port
    for (const auto& [id, c] : s.clients()) {
      if (c->conn->peer.ToString() == ctx.argv[2] && !c->closing) {
        ctx.reply.Ok();  // first: the caller may be closing itself
        s.KillClient(*c, ctx.client);
        return;
      }
    }
    ctx.reply.Error("ERR No such client");
    return;
  }
  // New form: filters, all of which must match. SKIPME yes by default.
  int64_t id_filter = -1;
  std::string addr, laddr;
  bool skipme = true;
  bool by_type = false;
  ClientType type = ClientType::kNormal;
  const acl::User* by_user = nullptr;
  if ((ctx.argv.size() - 2) % 2 != 0) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  for (size_t i = 2; i + 1 < ctx.argv.size(); i += 2) {
    std::string_view opt = ctx.argv[i], val = ctx.argv[i + 1];
    if (Is(opt, "ID")) {
      if (!core::StringToInt64(val, &id_filter) || id_filter <= 0) {
        ctx.reply.Error("ERR client-id should be greater than 0");
        return;
      }
    } else if (Is(opt, "ADDR")) {
      addr = std::string(val);
    } else if (Is(opt, "LADDR")) {
      laddr = std::string(val);
    } else if (Is(opt, "TYPE")) {
      if (!ParseClientType(val, &type)) {
        ctx.reply.Error(StrCat("ERR Unknown client type '", val, "'"));
        return;
      }
      by_type = true;
    } else if (Is(opt, "USER")) {
      std::shared_ptr<acl::User> u = s.acl().Find(val);
      if (u == nullptr) {
        ctx.reply.Error(StrCat("ERR No such user '", val, "'"));
        return;
      }
      by_user = u.get();
    } else if (Is(opt, "SKIPME")) {
      if (Is(val, "yes")) {
        skipme = true;
      } else if (Is(val, "no")) {
        skipme = false;
      } else {
        ctx.reply.Error(errors::kSyntax);
        return;
      }
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  std::vector<Client*> victims;
  for (const auto& [id, c] : s.clients()) {
    if (id_filter > 0 && c->id() != static_cast<uint64_t>(id_filter)) continue;
    if (by_type && TypeOf(*c) != type) continue;
    if (by_user != nullptr && &AclUserOf(s, *c) != by_user) continue;
    if (!addr.empty() && c->conn->peer.ToString() != addr) continue;
    if (!laddr.empty() && io::LocalAddress(*c->conn, &s.io().unix_socket()).ToString() != laddr) continue;
    if (skipme && c == &ctx.client) continue;
    if (c->closing) continue;
    victims.push_back(c);
  }
  // The reply first: with SKIPME no the caller is among them and still gets it.
  ctx.reply.Integer(static_cast<int64_t>(victims.size()));
  for (Client* c : victims) s.KillClient(*c, ctx.client);
}

void CmdClientPause(ServerCommandContext& ctx) {
  int64_t ms;
  if (!core::StringToInt64(ctx.argv[2], &ms) || ms < 0) {
    ctx.reply.Error(errors::kTimeout);
    return;
  }
  bool all = true;
  if (ctx.argv.size() == 4) {
    if (Is(ctx.argv[3], "WRITE")) {
      all = false;
    } else if (!Is(ctx.argv[3], "ALL")) {
      ctx.reply.Error("ERR CLIENT PAUSE mode must be WRITE or ALL");
      return;
    }
  } else if (ctx.argv.size() > 4) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  ctx.server.client_control().Pause(ctx.now_ms + ms, all);
  ctx.reply.Ok();
}

void CmdClientUnpause(ServerCommandContext& ctx) {
  ctx.reply.Ok();
  ctx.server.client_control().Unpause();
}

void CmdClientReply(ServerCommandContext& ctx) {
  Client& c = ctx.client;
  if (Is(ctx.argv[2], "ON")) {
    // Redis checks for silence as each reply is added: ON answers +OK even
    // when the command started silent (after OFF, or as the one SKIP skips).
    const bool was_silent = c.reply_mode == ReplyMode::kOff || c.reply_mode == ReplyMode::kSkipThis;
    c.reply_mode = ReplyMode::kOn;
    if (was_silent && c.conn != nullptr && !c.is_replica && !c.is_master) {
      io::ReplyBuilder(&ctx.server.ReplyTarget(c), c.resp).Ok();
    } else {
      ctx.reply.Ok();
    }
  } else if (Is(ctx.argv[2], "OFF")) {
    c.reply_mode = ReplyMode::kOff;
  } else if (Is(ctx.argv[2], "SKIP")) {
    if (c.reply_mode != ReplyMode::kOff) c.reply_mode = ReplyMode::kSkipNext;
  } else {
    ctx.reply.Error(errors::kSyntax);
  }
}

void CmdClientNoEvict(ServerCommandContext& ctx) {
  if (Is(ctx.argv[2], "ON")) {
    ctx.client.no_evict = true;
  } else if (Is(ctx.argv[2], "OFF")) {
    ctx.client.no_evict = false;
  } else {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  ctx.reply.Ok();
}

void CmdClientHelp(ServerCommandContext& ctx) {
  static const char* kLines[] = {
      "CACHING (YES|NO)",
      "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
      "GETREDIR",
      "    Return the client ID we are redirecting to when tracking is enabled.",
      "GETNAME",
      "    Return the name of the current connection.",
      "ID",
      "    Return the ID of the current connection.",
      "INFO",
      "    Return information about the current client connection.",
      "KILL <ip:port>",
      "    Kill connection made from <ip:port>.",
      "KILL <option> <value> [<option> <value> [...]]",
      "    Kill connections. Options are:",
      "    * ADDR (<ip:port>|<unixsocket>:0)",
      "      Kill connections made from the specified address",
      "    * LADDR (<ip:port>|<unixsocket>:0)",
      "      Kill connections made to specified local address",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Kill connections by type.",
      "    * USER <username>",
      "      Kill connections authenticated by <username>.",
      "    * SKIPME (YES|NO)",
      "      Skip killing current connection (default: yes).",
      "LIST [options ...]",
      "    Return information about client connections. Options:",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Return clients of specified type.",
      "UNPAUSE",
      "    Stop the current client pause, resuming traffic.",
      "PAUSE <timeout> [WRITE|ALL]",
      "    Suspend all, or just write, clients for <timeout> milliseconds.",
      "REPLY (ON|OFF|SKIP)",
      "    Control the replies sent to the current connection.",
      "SETNAME <name>",
      "    Assign the name <name> to the current connection.",
      "SETINFO <option> <value>",
      "    Set client meta attr. Options are:",
      "    * LIB-NAME: the client lib name.",
      "    * LIB-VER: the client lib version.",
      "UNBLOCK <clientid> [TIMEOUT|ERROR]",
      "    Unblock the specified blocked client.",
      "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
      "         [OPTIN] [OPTOUT] [NOLOOP]",
      "    Control server assisted client side caching.",
      "TRACKINGINFO",
      "    Report tracking status for the current connection.",
      "NO-EVICT (ON|OFF)",
      "    Protect current client connection from eviction.",
  };
  ReplyHelp(ctx, kLines);
}

// CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]
void CmdClientTracking(ServerCommandContext& ctx) {
  bool on;
  if (Is(ctx.argv[2], "on")) {
    on = true;
  } else if (Is(ctx.argv[2], "off")) {
    on = false;
  } else {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  TrackingOptions options;
  for (size_t i = 3; i < ctx.argv.size(); ++i) {
    std::string_view opt = ctx.argv[i];
    const bool more = i + 1 < ctx.argv.size();
    if (Is(opt, "redirect") && more) {
      if (options.redirect != 0) {
        ctx.reply.Error("ERR A client can only redirect to a single other client");
        return;
      }
      int64_t id;
      if (!ParseInt(ctx, ctx.argv[++i], &id)) return;
      if (ctx.server.FindClient(static_cast<uint64_t>(id)) == nullptr) {
        ctx.reply.Error("ERR The client ID you want redirect to does not exist");
        return;
      }
      options.redirect = static_cast<uint64_t>(id);
    } else if (Is(opt, "bcast")) {
      options.bcast = true;
    } else if (Is(opt, "optin")) {
      options.optin = true;
    } else if (Is(opt, "optout")) {
      options.optout = true;
    } else if (Is(opt, "noloop")) {
      options.noloop = true;
    } else if (Is(opt, "prefix") && more) {
      options.prefixes.emplace_back(ctx.argv[++i]);
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  if (!on) {
    ctx.server.tracking().Disable(ctx.client);
    ctx.reply.Ok();
    return;
  }
  if (std::string error = ctx.server.tracking().Enable(ctx.client, options); !error.empty()) {
    ctx.reply.Error(error);
    return;
  }
  ctx.reply.Ok();
}

// CLIENT CACHING YES|NO: whether the next command's reads are tracked.
void CmdClientCaching(ServerCommandContext& ctx) {
  ClientTracking* t = ctx.client.tracking ? ctx.server.tracking().Find(ctx.client.id()) : nullptr;
  if (t == nullptr) {
    ctx.reply.Error(
        "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode "
        "enabled");
    return;
  }
  if (Is(ctx.argv[2], "yes")) {
    if (!t->options.optin) {
      ctx.reply.Error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
      return;
    }
    t->caching_yes = true;
  } else if (Is(ctx.argv[2], "no")) {
    if (!t->options.optout) {
      ctx.reply.Error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
      return;
    }
    t->caching_no = true;
  } else {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  ctx.reply.Ok();
}

void CmdClientGetredir(ServerCommandContext& ctx) {
  const ClientTracking* t = ctx.client.tracking ? ctx.server.tracking().Find(ctx.client.id()) : nullptr;
  ctx.reply.Integer(t == nullptr ? -1 : static_cast<int64_t>(t->options.redirect));
}

void CmdClientTrackinginfo(ServerCommandContext& ctx) {
  const ClientTracking* t = ctx.client.tracking ? ctx.server.tracking().Find(ctx.client.id()) : nullptr;
  std::vector<std::string_view> flags;
  if (t == nullptr) {
    flags.push_back("off");
  } else {
    flags.push_back("on");
    if (t->options.bcast) flags.push_back("bcast");
    if (t->options.optin) flags.push_back("optin");
    if (t->options.optout) flags.push_back("optout");
    if (t->options.optin && t->caching_yes) flags.push_back("caching-yes");
    if (t->options.optout && t->caching_no) flags.push_back("caching-no");
    if (t->options.noloop) flags.push_back("noloop");
    if (t->broken_redirect) flags.push_back("broken_redirect");
  }
  ctx.reply.MapHeader(3);
  ctx.reply.Bulk("flags");
  ctx.reply.SetHeader(static_cast<int64_t>(flags.size()));
  for (std::string_view f : flags) ctx.reply.Bulk(f);
  ctx.reply.Bulk("redirect");
  ctx.reply.Integer(t == nullptr ? -1 : static_cast<int64_t>(t->options.redirect));
  ctx.reply.Bulk("prefixes");
  const size_t n = t == nullptr ? 0 : t->options.prefixes.size();
  ctx.reply.ArrayHeader(static_cast<int64_t>(n));
  for (size_t i = 0; i < n; ++i) ctx.reply.Bulk(t->options.prefixes[i]);
}

// CLIENT UNBLOCK client-id [TIMEOUT|ERROR]: 1 when that client was blocked
// (BLPOP & co., WAIT); it answers as on timeout, or with -UNBLOCKED.
void CmdClientUnblock(ServerCommandContext& ctx) {
  if (ctx.argv.size() > 4) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  // The reason is checked before the id, as Redis checks them.
  bool error = false;
  if (ctx.argv.size() == 4) {
    if (Is(ctx.argv[3], "ERROR")) {
      error = true;
    } else if (!Is(ctx.argv[3], "TIMEOUT")) {
      ctx.reply.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
      return;
    }
  }
  int64_t id;
  if (!ParseInt(ctx, ctx.argv[2], &id)) return;
  ctx.reply.Integer(ctx.server.blocking().UnblockByRequest(static_cast<uint64_t>(id), error) ? 1 : 0);
}

}  // namespace

void RegisterClientCommands(CommandTable& t) {
  using namespace cmd;
  const uint32_t kConn = kNoscript | kLoading | kStale;
  std::vector<CommandSpec> subs;
  subs.push_back(Cmd("client|id", 2, kConn, 0, 0, 0, "@slow @connection", "connection", "Returns the unique client ID of the connection.", "5.0.0", CmdClientId));
  subs.push_back(Cmd("client|info", 2, kConn, 0, 0, 0, "@slow @connection", "connection", "Returns information about the connection.", "6.2.0", CmdClientInfo));
  subs.push_back(Cmd("client|list", -2, kAdmin | kConn, 0, 0, 0, "@admin @slow @dangerous @connection", "connection", "Lists open connections.", "2.4.0", CmdClientList));
  subs.push_back(Cmd("client|setname", 3, kConn, 0, 0, 0, "@slow @connection", "connection", "Sets the connection name.", "2.6.9", CmdClientSetname));
  subs.push_back(Cmd("client|getname", 2, kConn, 0, 0, 0, "@slow @connection", "connection", "Returns the name of the connection.", "2.6.9", CmdClientGetname));
  subs.push_back(Cmd("client|setinfo", 4, kConn, 0, 0, 0, "@slow @connection", "connection", "Sets information specific to the client or connection.", "7.2.0", CmdClientSetinfo));
  subs.push_back(Cmd("client|kill", -3, kAdmin | kConn, 0, 0, 0, "@admin @slow @dangerous @connection", "connection", "Terminates open connections.", "2.4.0", CmdClientKill));
  subs.push_back(Cmd("client|pause", -3, kAdmin | kConn, 0, 0, 0, "@admin @slow @dangerous @connection", "connection", "Suspends commands processing.", "3.0.0", CmdClientPause));
  subs.push_back(Cmd("client|unpause", 2, kAdmin | kConn, 0, 0, 0, "@admin @slow @dangerous @connection", "connection", "Resumes processing commands from paused clients.", "6.2.0", CmdClientUnpause));
  subs.push_back(Cmd("client|reply", 3, kConn, 0, 0, 0, "@slow @connection", "connection", "Instructs the server whether to reply to commands.", "3.2.0", CmdClientReply));
  subs.push_back(Cmd("client|no-evict", 3, kAdmin | kConn, 0, 0, 0, "@admin @slow @dangerous @connection", "connection", "Sets the client eviction mode of the connection.", "7.0.0", CmdClientNoEvict));
  subs.push_back(Cmd("client|tracking", -3, kConn, 0, 0, 0, "@slow @connection", "connection", "Enable or disable server assisted client side caching support", "6.0.0", CmdClientTracking));
  subs.push_back(Cmd("client|caching", 3, kConn, 0, 0, 0, "@slow @connection", "connection", "Instruct the server about tracking or not keys in the next request", "6.0.0", CmdClientCaching));
  subs.push_back(Cmd("client|getredir", 2, kConn, 0, 0, 0, "@slow @connection", "connection", "Get tracking notifications redirection client ID if any", "6.0.0", CmdClientGetredir));
  subs.push_back(Cmd("client|trackinginfo", 2, kConn, 0, 0, 0, "@slow @connection", "connection", "Return information about server assisted client side caching for the current connection", "6.2.0", CmdClientTrackinginfo));
  subs.push_back(Cmd("client|unblock", -3, kAdmin | kConn, 0, 0, 0, "@admin @slow @dangerous @connection", "connection", "Unblock a client blocked in a blocking command from a different connection", "5.0.0", CmdClientUnblock));
  subs.push_back(Cmd("client|help", 2, kLoading | kStale, 0, 0, 0, "@slow @connection", "connection", "Returns helpful text about the different subcommands.", "5.0.0", CmdClientHelp));
  t.Add(Cmd("client", -2, 0, 0, 0, 0, "@slow", "connection", "A container for client connection commands.", "2.4.0", nullptr, std::move(subs)));
}

}  // namespace ringkv::server

// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
//         [AUTH password] [AUTH2 username password] [KEYS key [key ...]]
//
// Moves keys to another server as Redis 7.0 does: one RESTORE per key
// (RESTORE-ASKING in cluster mode; relative TTL, the DUMP payload, REPLACE when asked) on a cached
// connection (server/migrate_sockets.h), preceded by AUTH when a password
// is given and SELECT when the target database changed. Each key the
// target acknowledged is deleted here unless COPY, and the command is
// propagated as DEL of those keys. A failed connection is retried once
// unless the failure was a timeout; replies are Redis's (+NOKEY, -IOERR
// ..., "Target instance replied with error: ...").
#include <cerrno>
#include <string>
#include <vector>

#include "core/dump_payload.h"
#include "core/resp_command.h"
#include "core/strings.h"
#include "server/command_table.h"
#include "server/commands/key_ops.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/migrate_sockets.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

using namespace cmd;  // NOLINT: flag names in the table below

struct MigrateArgs {
  bool copy = false, replace = false;
  std::string_view username, password;  // empty password: no AUTH
  bool has_password = false;
  size_t first_key = 3, num_keys = 1;
  int64_t db = 0, timeout_ms = 0;
};

// Options first, then the integers, in Redis's order of errors.
bool ParseMigrateArgs(ServerCommandContext& ctx, MigrateArgs* a) {
  const Argv argv = ctx.argv;
  for (size_t j = 6; j < argv.size(); ++j) {
    const size_t more = argv.size() - 1 - j;
    if (Is(argv[j], "COPY")) {
      a->copy = true;
    } else if (Is(argv[j], "REPLACE")) {
      a->replace = true;
    } else if (Is(argv[j], "AUTH")) {
      if (more < 1) {
        ctx.reply.Error(errors::kSyntax);
        return false;
      }
      a->password = argv[++j];
      a->has_password = true;
    } else if (Is(argv[j], "AUTH2")) {
      if (more < 2) {
        ctx.reply.Error(errors::kSyntax);
        return false;
      }
      a->username = argv[++j];
      a->password = argv[++j];
      a->has_password = true;
    } else if (Is(argv[j], "KEYS")) {
      if (!argv[3].empty()) {
        ctx.reply.Error("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string");
        return false;
      }
      a->first_key = j + 1;
      a->num_keys = argv.size() - j - 1;
      break;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  if (!ParseInt(ctx, argv[5], &a->timeout_ms) || !ParseInt(ctx, argv[4], &a->db)) return false;
  if (a->timeout_ms <= 0) a->timeout_ms = 1000;
  return true;
}

void AppendCommand(std::initializer_list<std::string_view> argv, std::string* out) {
  core::AppendRespCommand(std::span<const std::string_view>(argv.begin(), argv.size()), out);
}

void CmdMigrate(ServerCommandContext& ctx) {
  MigrateArgs a;
  if (!ParseMigrateArgs(ctx, &a)) return;
  const std::string_view host = ctx.argv[1], port = ctx.argv[2];
  core::Database& db = ctx.server.db(ctx.client);
  // The keys that are here (an expired or missing one is skipped, not an
  // error: it may have expired in the meantime).
  std::vector<std::string_view> keys;
  for (size_t j = 0; j < a.num_keys; ++j) {
    if (db.FindForRead(ctx.argv[a.first_key + j], ctx.now_ms) != nullptr) keys.push_back(ctx.argv[a.first_key + j]);
  }
  if (keys.empty()) {
    ctx.reply.SimpleString("NOKEY");
    return;
  }
  MigrateSockets& sockets = ctx.server.migrate_sockets();
  const bool compress = ctx.server.config().Bool("rdbcompression");
  for (bool may_retry = true;; may_retry = false) {
    // TLS with tls-cluster, as Redis's migrateGetSocket (cluster mode or
    // not); never a plain connection instead.
    const bool use_tls = ctx.server.config().Bool("tls-cluster");
    const io::SslCtxPtr tls = use_tls ? ctx.server.io().tls().client_ctx() : nullptr;
    MigrateSockets::Socket* s =
        use_tls && tls == nullptr ? nullptr : sockets.Get(host, port, a.timeout_ms, ctx.now_ms, tls);
    if (s == nullptr) {
      ctx.reply.Error("IOERR error or timeout connecting to the client");
      return;
    }
    // AUTH, SELECT, then one RESTORE per key still live.
    std::string out;
    if (a.has_password) {
      if (a.username.empty()) {
        AppendCommand({"AUTH", a.password}, &out);
      } else {
        AppendCommand({"AUTH", a.username, a.password}, &out);
      }
    }
    const bool select = s->last_db != a.db;
    const std::string db_text = StrCat(a.db);
    if (select) AppendCommand({"SELECT", db_text}, &out);
    // In cluster mode RESTORE-ASKING, which the target accepts into a
    // slot it is importing (Redis's migrateCommand).
    const std::string_view restore = ctx.server.cluster() != nullptr ? "RESTORE-ASKING" : "RESTORE";
    std::vector<std::string_view> sent;
    for (std::string_view key : keys) {
      core::Entry* e = db.FindForRead(key, ctx.now_ms, /*touch=*/false);
      if (e == nullptr) continue;
      int64_t ttl = 0;
      if (const int64_t at = db.GetExpire(e); at >= 0) {
        ttl = at - ctx.now_ms;
        if (ttl < 0) continue;
        if (ttl < 1) ttl = 1;
      }
      const std::string ttl_text = StrCat(ttl);
      const std::string payload = core::DumpPayload(e->value, compress);
      if (a.replace) {
        AppendCommand({restore, key, ttl_text, payload, "REPLACE"}, &out);
      } else {
        AppendCommand({restore, key, ttl_text, payload}, &out);
      }
      sent.push_back(key);
    }
    errno = 0;
    bool write_error = false, socket_error = false;
    std::string auth_reply, select_reply, reply;
    if (!MigrateSockets::WriteAll(*s, out, a.timeout_ms)) {
      write_error = socket_error = true;
    } else if ((a.has_password && !MigrateSockets::ReadLine(*s, &auth_reply, 1024, a.timeout_ms)) ||
               (select && !MigrateSockets::ReadLine(*s, &select_reply, 1024, a.timeout_ms))) {
      socket_error = true;
    }
    // The replies, one per RESTORE: acknowledged keys are deleted here.
    std::string target_error;
    std::vector<std::string_view> deleted;
    size_t read = 0;
    for (; !socket_error && read < sent.size(); ++read) {
      if (!MigrateSockets::ReadLine(*s, &reply, 1024, a.timeout_ms)) {
        socket_error = true;
        break;
      }
      const std::string* failed = (a.has_password && auth_reply.starts_with('-'))   ? &auth_reply
                                  : (select && select_reply.starts_with('-')) ? &select_reply
                                  : reply.starts_with('-')                    ? &reply
                                                                              : nullptr;
      if (failed != nullptr) {
        if (target_error.empty()) {
          s->last_db = -1;  // the target's database is unknown now
          target_error = failed->substr(1);
        }
      } else if (!a.copy) {
        const std::string_view one[] = {sent[read]};
        OpDel(OpArgsOf(ctx), one, false);
        deleted.push_back(sent[read]);
      }
    }
    const int saved_errno = errno;
    if (!deleted.empty()) {
      std::vector<std::string> del{"DEL"};
      for (std::string_view k : deleted) del.emplace_back(k);
      ctx.effects.PropagateAs(std::move(del));
    }
    if (!target_error.empty()) {
      if (socket_error) sockets.Close(host, port);
      ctx.reply.Error(StrCat("ERR Target instance replied with error: ", target_error));
      return;
    }
    if (!socket_error) {
      s->last_db = a.db;
      ctx.reply.Ok();
      return;
    }
    sockets.Close(host, port);
    // Retried once, when nothing was acknowledged and it was no timeout:
    // a cached connection the target had closed is the common case.
    if (may_retry && read == 0 && deleted.empty() && saved_errno != ETIMEDOUT) continue;
    ctx.reply.Error(StrCat("IOERR error or timeout ", write_error ? "writing" : "reading", " to target instance"));
    return;
  }
}

// COMMAND GETKEYS: argv[3], or what follows KEYS (Redis's migrateGetKeys,
// which skips the arguments of AUTH and AUTH2 while it looks for KEYS).
bool MigrateKeys(std::span<const std::string_view> argv, std::vector<std::string_view>* keys) {
  for (size_t i = 6; i < argv.size(); ++i) {
    if (Is(argv[i], "KEYS")) {
      if (!argv[3].empty()) return false;
      keys->insert(keys->end(), argv.begin() + static_cast<std::ptrdiff_t>(i) + 1, argv.end());
      return true;
    }
    if (Is(argv[i], "AUTH")) {
      i += 1;
    } else if (Is(argv[i], "AUTH2")) {
      i += 2;
    }
  }
  keys->push_back(argv[3]);
  return true;
}

}  // namespace

void RegisterMigrateCommands(CommandTable& t) {
  t.Add(MovableKeys(Cmd("migrate", -6, kWrite, 3, 3, 1, "@keyspace @write @slow @dangerous", "generic",
                        "Atomically transfer a key from a Redis instance to another one.", "2.6.0", CmdMigrate),
                    MigrateKeys));
}

}  // namespace ringkv::server

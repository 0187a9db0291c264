// DUMP and RESTORE: a value in Redis's serialized form (RDB encoding, RDB
// version, CRC-64), interchangeable with redis-server 7.0.
#include "core/access_policy.h"
#include "core/dump_payload.h"
#include "core/rdb_writer.h"
#include "core/strings.h"
#include "server/acl/users.h"
#include "server/command_table.h"
#include "server/commands/key_ops.h"
#include "server/commands/util.h"
#include "server/errors.h"
#include "server/logging.h"
#include "server/server.h"

namespace ringkv::server {
namespace {

using namespace cmd;  // NOLINT: flag names in the table below

void CmdDump(ServerCommandContext& ctx) {
  core::Entry* e = ctx.server.db(ctx.client).FindForRead(ctx.argv[1], ctx.now_ms);
  if (e == nullptr) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Bulk(core::DumpPayload(e->value, ctx.server.config().Bool("rdbcompression")));
}

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]
void CmdRestore(ServerCommandContext& ctx) {
  bool replace = false, absttl = false;
  int64_t idle = -1, freq = -1;
  for (size_t j = 4; j < ctx.argv.size(); ++j) {
    const size_t additional = ctx.argv.size() - j - 1;
    std::string_view a = ctx.argv[j];
    if (Is(a, "REPLACE")) {
      replace = true;
    } else if (Is(a, "ABSTTL")) {
      absttl = true;
    } else if (Is(a, "IDLETIME") && additional >= 1 && freq == -1) {
      if (!ParseInt(ctx, ctx.argv[++j], &idle)) return;
      if (idle < 0) {
        ctx.reply.Error("ERR Invalid IDLETIME value, must be >= 0");
        return;
      }
    } else if (Is(a, "FREQ") && additional >= 1 && idle == -1) {
      if (!ParseInt(ctx, ctx.argv[++j], &freq)) return;
      if (freq < 0 || freq > 255) {
        ctx.reply.Error("ERR Invalid FREQ value, must be >= 0 and <= 255");
        return;
      }
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  core::Database& db = ctx.server.db(ctx.client);
  const std::string_view key = ctx.argv[1];
  if (!replace && db.Find(key, ctx.now_ms) != nullptr) {
    ctx.reply.Error("BUSYKEY Target key name already exists.");
    return;
  }
  int64_t ttl;
  if (!ParseInt(ctx, ctx.argv[2], &ttl)) return;
  if (ttl < 0) {
    ctx.reply.Error("ERR Invalid TTL value, must be >= 0");
    return;
  }
  std::string reason;
  uint64_t packed_blobs = 0;
  absl::StatusOr<core::Value> value =
      core::ParseDumpPayload(ctx.argv[3], ctx.server.keyspace().limits(), &reason, &packed_blobs);
  // ringkv validates every payload deeply; INFO's dump_payload_sanitizations
  // counts the packed blobs as Redis does, when sanitize-dump-payload asks
  // for it (yes; or clients, unless the primary or a skip-sanitize-payload
  // user sent it).
  const std::string& sanitize = ctx.server.config().Str("sanitize-dump-payload");
  const bool skip_user = ctx.client.meta && ctx.client.meta->user && ctx.client.meta->user->sanitize < 0;
  if (sanitize == "yes" || (sanitize == "clients" && !ctx.client.is_master && !skip_user)) {
    ctx.server.stats().dump_payload_sanitizations += packed_blobs;
  }
  if (!value.ok()) {
    // As Redis (at verbose): why the payload was refused.
    if (!reason.empty()) Log(kVerbose, StrCat("Internal error in RDB reading the RESTORE payload: ", reason));
    ctx.reply.Error(StrCat("ERR ", value.status().message()));
    return;
  }
  OpRestore(OpArgsOf(ctx), key, std::move(*value), replace, ttl, !absttl, idle, freq, ctx.argv);
  ctx.reply.Ok();
}

}  // namespace

void RegisterDumpCommands(CommandTable& t) {
  t.Add(Cmd("dump", 2, kReadonly, 1, 1, 1, "@keyspace @read @slow", "generic",
            "Returns a serialized representation of the value stored at a key.", "2.6.0", CmdDump));
  t.Add(Cmd("restore", -4, kWrite | kDenyOom, 1, 1, 1, "@keyspace @write @slow @dangerous", "generic",
            "Creates a key from the serialized representation of a value.", "2.6.0", CmdRestore));
  // What MIGRATE sends to a cluster node importing the key's slot; without
  // cluster mode it is RESTORE, as in Redis.
  t.Add(Cmd("restore-asking", -4, kWrite | kDenyOom | kAsking, 1, 1, 1, "@keyspace @write @slow @dangerous", "server",
            "An internal command for migrating keys in a cluster", "3.0.0", CmdRestore));
}

}  // namespace ringkv::server

// The CLUSTER subcommands that report state -- INFO, NODES, SLOTS, SHARDS,
// LINKS, HELP -- with Redis 7.0's reply shapes (cluster_info.cc).
// REQUIRES: cluster mode (ctx.server.cluster() not null).
#pragma once

#include "server/command.h"

namespace ringkv::server::cluster_replies {

void Info(ServerCommandContext& ctx);
void Nodes(ServerCommandContext& ctx);
void Slots(ServerCommandContext& ctx);
void Shards(ServerCommandContext& ctx);
void Links(ServerCommandContext& ctx);
void Help(ServerCommandContext& ctx);

}  // namespace ringkv::server::cluster_replies

// The CLUSTER subcommands that report state -- INFO, NODES, SLOTS, SHARDS,
// LINKS, HELP -- with Redis 7.0's reply shapes (cluster_info.cc).
// REQUIRES: cluster mode (ctx.server.cluster() not null).
#pragma once

#include "server/command.h"

namespace ringkv::server::cluster_replies {

void Info(CommandContext& ctx);
void Nodes(CommandContext& ctx);
void Slots(CommandContext& ctx);
void Shards(CommandContext& ctx);
void Links(CommandContext& ctx);
void Help(CommandContext& ctx);

}  // namespace ringkv::server::cluster_replies

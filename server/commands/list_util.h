// List command helpers shared by the list family (list_cmds.cc) and the
// blocking commands (blocking_cmds.cc): the parts that parse and reply
// around the list Op* functions (server/commands/list_ops.h).
#pragma once

#include <string_view>

#include "server/command.h"
#include "server/commands/list_ops.h"

namespace ringkv::server {

struct MpopArgs;

// LMOVE argv[1] argv[2]: moves one element between the ends given and
// replies with it (null when the source is missing; WRONGTYPE when either
// key holds something else, checked before anything moves).
void ListMove(CommandContext& ctx, bool from_head, bool to_head, MoveForm form);
// LMPOP / BLMPOP: pops from the first of args.keys that holds a list and
// replies [key, [elements]] (propagated as LPOP/RPOP key count). False when
// none holds one (nothing replied); true when served or an error replied.
bool ListMpopFirst(CommandContext& ctx, const MpopArgs& args);
// LEFT / RIGHT (syntax error otherwise).
bool ParseListEnd(CommandContext& ctx, std::string_view arg, bool* head);

}  // namespace ringkv::server

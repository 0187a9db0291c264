// List helpers shared by the list family (list_cmds.cc) and the blocking
// commands (blocking_cmds.cc).
#pragma once

#include <string_view>

#include "core/list_value.h"
#include "server/command.h"

namespace ringkv::server {

struct MpopArgs;

// The list at `key`: nullptr when missing (nothing replied) or of another
// type (WRONGTYPE replied, *failed set). `for_read` counts keyspace hits.
core::ListValue* ListLookup(CommandContext& ctx, std::string_view key, bool for_read, bool* failed);
// Creates `key` holding an empty list.
core::ListValue* ListCreate(CommandContext& ctx, std::string_view key);
// Deletes `key` when its list became empty.
void ListDeleteIfEmpty(CommandContext& ctx, std::string_view key, const core::ListValue& l);
// Pops one element from an end of the list at `key` (which exists) and
// reports it ("lpop" / "rpop"); the caller replies, then deletes an emptied
// key.
std::string ListPopOne(CommandContext& ctx, std::string_view key, core::ListValue& l, bool head);
// Pops up to `count` elements from one end of the list at `key` (which
// exists) and replies with them as an array; deletes the key when emptied.
void ListPopCountAndReply(CommandContext& ctx, std::string_view key, core::ListValue& l, int64_t count, bool head);
// LMOVE argv[1] argv[2]: moves one element between the ends given and
// replies with it (null when the source is missing; WRONGTYPE when either
// key holds something else, checked before anything moves).
void ListMove(CommandContext& ctx, bool from_head, bool to_head);
// LMPOP / BLMPOP: pops from the first of args.keys that holds a list and
// replies [key, [elements]] (propagated as LPOP/RPOP key count). False when
// none holds one (nothing replied); true when served or an error replied.
bool ListMpopFirst(CommandContext& ctx, const MpopArgs& args);
// LEFT / RIGHT (syntax error otherwise).
bool ParseListEnd(CommandContext& ctx, std::string_view arg, bool* head);

}  // namespace ringkv::server

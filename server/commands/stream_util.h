// Helpers shared by the stream command families (stream_cmds.cc,
// stream_group_cmds.cc, stream_info_cmds.cc): Redis 7.0's stream ID
// parsing and the reply shapes of entries.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/stream_value.h"
#include "server/command.h"

namespace ringkv::server {

inline constexpr char kInvalidStreamId[] = "ERR Invalid stream ID specified as stream command argument";

// Parses `<ms>[-<seq>]`, "-" (0-0) and "+" (the maximum) as Redis's
// streamGenericParseIDOrReply: a missing sequence is `missing_seq`;
// `strict` refuses "-" and "+"; where `seq_given` is given, `<ms>-*` is
// accepted and *seq_given says whether the sequence was explicit. False for
// an invalid ID (nothing replied).
bool ParseStreamId(std::string_view arg, uint64_t missing_seq, bool strict, bool* seq_given, core::StreamId* out);
// The same, replying Redis's "Invalid stream ID" error on failure.
bool ParseStreamIdOrReply(CommandContext& ctx, std::string_view arg, uint64_t missing_seq, bool strict,
                          core::StreamId* out);

// One entry's reply, [id, [field, value, ...]], as RESP appended to *out
// (the same bytes in RESP2 and RESP3).
void AppendStreamEntryResp(core::StreamId id, core::FieldValues fv, std::string* out);
// One entry: [id, [field, value, ...]].
void ReplyStreamEntry(CommandContext& ctx, core::StreamId id, core::FieldValues fv);
// Entries in [start, end], ascending (or descending), at most `count`
// (0: all) as an array; returns how many.
size_t ReplyStreamRange(CommandContext& ctx, const core::StreamValue& s, core::StreamId start, core::StreamId end,
                        size_t count, bool reverse);

}  // namespace ringkv::server

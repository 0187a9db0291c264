// Data operations of stream consumer groups: group and consumer life cycle
// (XGROUP), delivery to a consumer (XREADGROUP), acknowledgement (XACK) and
// ownership changes (XCLAIM, XAUTOCLAIM). The command files parse and reply.
//
// Delivery and claims propagate as Redis 7.0 does: each entry a consumer
// takes is replayed as `XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n
// FORCE JUSTID LASTID last`, a NOACK read's progress as `XGROUP SETID ...
// ENTRIESREAD n`, a consumer a NOACK read created as XGROUP CREATECONSUMER
// (through Effects::AlsoPropagate; the command's own argv is never sent).
//
// REQUIRES: main thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/stream_value.h"
#include "server/commands/op_args.h"
#include "server/commands/stream_ops.h"

namespace ringkv::server {

// One entry as delivered: its fields and values, or none when the entry
// was deleted while pending (a history read, XCLAIM).
struct StreamRow {
  core::StreamId id;
  bool deleted = false;
  std::vector<std::string> fv;
};

// "NOGROUP No such consumer group 'g' for key name 'k'".
std::string NoGroupError(std::string_view key, std::string_view group);

// The consumer `name` of `g`, created (seen now, "xgroup-createconsumer"
// counting `dirty` changes) when missing; *created says so.
core::StreamConsumer* LookupOrCreateConsumer(const OpArgs& op, std::string_view key, core::StreamGroup& g,
                                             std::string_view name, uint64_t dirty, bool* created);

// XREADGROUP `>`: the entries after the group's last ID (at most `count`,
// 0: all), each recorded as pending for `c` unless `noack`; advances the
// group's last ID and entries-read.
std::vector<StreamRow> DeliverNew(const OpArgs& op, std::string_view key, std::string_view group_name,
                                  core::StreamValue& s, core::StreamGroup& g, core::StreamConsumer& c, size_t count,
                                  bool noack);
// XREADGROUP with an ID: `c`'s pending entries (in `g`) from `start` (at
// most `count`), each delivered once more (time now, count + 1).
std::vector<StreamRow> DeliverHistory(const OpArgs& op, const core::StreamValue& s, core::StreamGroup& g,
                                      const core::StreamConsumer& c, core::StreamId start, size_t count);

// XGROUP CREATE's `entries_read` default and XGROUP SETID's: the counter
// for a group whose last ID is `id`.
int64_t EntriesReadFor(const core::StreamValue& s, core::StreamId id);

// The delivery time XCLAIM gives the entries it claims: `requested` (from
// TIME or IDLE; -1 when neither was given), or now when that is negative or
// in the future. The future is judged by the later of `now_ms` (the
// command's timestamp, from the TSC: server/clock.h) and `system_now_ms`
// (the system clock, which Redis reads): the first may trail the second by
// a fraction of a millisecond, and a replica judging its primary's TIME --
// the primary's own now -- by it alone would clamp it a millisecond down,
// and hold a PEL that differs from its primary's.
int64_t ClaimedDeliveryTime(int64_t requested, int64_t now_ms, int64_t system_now_ms);
// Gives the pending entry `id` (which must be pending in `g`) to `c`,
// creating it when `create` (XCLAIM FORCE). Returns the nack, in `g.pel`:
// valid until the next insert or erase there.
core::StreamNack* ClaimNack(core::StreamGroup& g, core::StreamConsumer& c, core::StreamId id, bool create);
// Removes a pending entry from the group and its owner; false if not pending.
bool AckNack(core::StreamGroup& g, core::StreamId id);
// The XCLAIM Redis propagates for a pending entry.
std::vector<std::string> XclaimPropagation(std::string_view key, std::string_view group, const core::StreamGroup& g,
                                           core::StreamId id, const core::StreamNack& nack);

}  // namespace ringkv::server

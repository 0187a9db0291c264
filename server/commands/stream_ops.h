// Data operations of the stream family (XADD, XTRIM, XDEL, XSETID and the
// consumer-group writes), apart from their replies: stream_cmds.cc,
// stream_group_cmds.cc and stream_info_cmds.cc parse and reply. Each
// reports what it changed through OpArgs (server/commands/op_args.h).
//
// Errors are Redis 7.0's reply texts (a stream op has many of its own), or
// WRONGTYPE; `missing` says the key does not exist where that is no error
// but its own reply (XADD NOMKSTREAM: a null).
//
// REQUIRES: main thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/stream_value.h"
#include "server/commands/op_args.h"

namespace ringkv::server {

template <typename T>
struct StreamResult {
  T value{};
  const char* error = nullptr;  // the error reply, when set
  bool missing = false;         // the key does not exist
  bool ok() const { return error == nullptr && !missing; }
  static StreamResult Error(const char* e) {
    StreamResult r;
    r.error = e;
    return r;
  }
  static StreamResult Missing() {
    StreamResult r;
    r.missing = true;
    return r;
  }
};

// MAXLEN / MINID [=|~] threshold [LIMIT n] of XADD and XTRIM.
struct StreamTrim {
  enum class Strategy : uint8_t { kNone, kMaxLen, kMinId };
  Strategy strategy = Strategy::kNone;
  bool approx = false;
  int64_t limit = 0;  // 0: unlimited
  int64_t maxlen = 0;
  core::StreamId minid;
  size_t arg_index = 0;  // argv index of the threshold (rewritten for propagation)
};

struct XaddArgs {
  bool id_given = false;
  bool seq_given = true;  // false for <ms>-*
  core::StreamId id;
  bool nomkstream = false;
  StreamTrim trim;
};

struct TrimOutcome {
  int64_t removed = 0;
  // With `~`: the threshold that reproduces the result exactly (the new
  // length, or the first remaining ID), for replicas and the AOF.
  std::string exact_threshold;
};

struct XaddOutcome {
  core::StreamId id;
  TrimOutcome trim;
};

// XADD: appends the entry `fv` (field, value, ...), creating the stream
// unless NOMKSTREAM (then `missing`), then trims.
StreamResult<XaddOutcome> OpXadd(const OpArgs& op, std::string_view key, const XaddArgs& args,
                                 core::FieldValues fv);
// XTRIM: 0 removed for a missing key.
StreamResult<TrimOutcome> OpXtrim(const OpArgs& op, std::string_view key, const StreamTrim& trim);
// XDEL: how many of `ids` were deleted (0 for a missing key).
StreamResult<int64_t> OpXdel(const OpArgs& op, std::string_view key, const std::vector<core::StreamId>& ids);
// XSETID: entries_added -1 and max_deleted 0-0 when not given.
StreamResult<bool> OpXsetid(const OpArgs& op, std::string_view key, core::StreamId last, int64_t entries_added,
                            core::StreamId max_deleted);

// Applies `trim` to `s` (the trimming shared by XADD and XTRIM).
TrimOutcome TrimStream(core::StreamValue& s, const StreamTrim& trim);

}  // namespace ringkv::server

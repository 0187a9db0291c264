#include "server/persistence/aof_rewrite_value.h"

#include <vector>

#include "core/hash_value.h"
#include "core/list_value.h"
#include "core/set_value.h"
#include "core/stream_value.h"
#include "core/zset_value.h"
#include "core/resp_command.h"

namespace ringkv::server {
namespace {

constexpr size_t kItemsPerCommand = 64;

// Collects items of one collection into commands of up to 64 items each:
// `command key item...`, where an item is one or more arguments.
class BatchWriter {
 public:
  BatchWriter(std::string_view command, std::string_view key, std::string* out) : out_(out) {
    argv_.emplace_back(command);
    argv_.emplace_back(key);
  }
  ~BatchWriter() { Flush(); }
  void Item(std::string_view a) {
    argv_.emplace_back(a);
    Count();
  }
  void Item(std::string_view a, std::string_view b) {
    argv_.emplace_back(a);
    argv_.emplace_back(b);
    Count();
  }

 private:
  void Count() {
    if (++items_ == kItemsPerCommand) Flush();
  }
  void Flush() {
    if (items_ == 0) return;
    std::vector<std::string_view> views(argv_.begin(), argv_.end());
    core::AppendRespCommand(views, out_);
    argv_.resize(2);
    items_ = 0;
  }
  std::string* out_;
  std::vector<std::string> argv_;
  size_t items_ = 0;
};

void Emit(std::span<const std::string_view> argv, std::string* out) { core::AppendRespCommand(argv, out); }

// What Redis 7.0's rewriteStreamObject emits: an XADD per entry (or
// XADD MAXLEN 0 0-1 x y for an empty stream), XSETID with the counters
// (in two steps where the last ID is below the largest deleted one),
// then per group XGROUP CREATE ... ENTRIESREAD, and per consumer an XCLAIM
// ... JUSTID FORCE for each pending entry or XGROUP CREATECONSUMER.
void AppendStream(std::string_view key, const core::StreamValue& s, std::string* out) {
  using core::StreamId;
  if (s.size() > 0) {
    std::vector<std::string_view> argv;
    s.Range(StreamId::Min(), StreamId::Max(), false, [&](StreamId id, core::FieldValues fv) {
      const std::string ids = id.ToString();
      argv.assign({"XADD", key, ids});
      argv.insert(argv.end(), fv.begin(), fv.end());
      Emit(argv, out);
      return true;
    });
  } else {
    std::string_view argv[] = {"XADD", key, "MAXLEN", "0", "0-1", "x", "y"};
    Emit(argv, out);
  }
  // XSETID may set the last ID below what XDEL removed (Redis 7.0 checks the
  // top entry only) but refuses a MAXDELETEDID above the ID it sets, so
  // Redis's own rewrite of such a stream loads without its counters. Here
  // the counters go with the deleted ID, and a second XSETID lowers it.
  const bool lowered = s.last_id() < s.max_deleted_id();
  const std::string last = s.last_id().ToString(), added = std::to_string(s.entries_added()),
                    maxdel = s.max_deleted_id().ToString();
  std::string_view setid[] = {"XSETID", key, lowered ? maxdel : last, "ENTRIESADDED", added, "MAXDELETEDID", maxdel};
  Emit(setid, out);
  if (lowered) {
    std::string_view down[] = {"XSETID", key, last};
    Emit(down, out);
  }
  for (const auto& [name, g] : s.groups()) {
    const std::string glast = g->last_id.ToString(), read = std::to_string(g->entries_read);
    std::string_view create[] = {"XGROUP", "CREATE", key, name, glast, "ENTRIESREAD", read};
    Emit(create, out);
    for (const auto& [cname, c] : g->consumers) {
      if (c->pel.empty()) {
        std::string_view cc[] = {"XGROUP", "CREATECONSUMER", key, name, cname};
        Emit(cc, out);
        continue;
      }
      for (core::StreamId id : c->pel) {
        const core::StreamNack& nack = g->pel.find(id)->second;
        const std::string ids = id.ToString(), time = std::to_string(nack.delivery_time),
                          count = std::to_string(nack.delivery_count);
        std::string_view claim[] = {"XCLAIM", key, name, cname, "0", ids, "TIME", time, "RETRYCOUNT", count,
                                    "JUSTID", "FORCE"};
        Emit(claim, out);
      }
    }
  }
}

}  // namespace

void AppendRewriteCommands(std::string_view key, const core::Value& value, std::string* out) {
  switch (value.type()) {
    case core::ValueType::kString: {
      char scratch[24];
      std::string_view set[] = {"SET", key, value.str().View(scratch)};
      core::AppendRespCommand(set, out);
      return;
    }
    case core::ValueType::kHash: {
      BatchWriter w("HMSET", key, out);
      value.hash().ForEach([&](std::string_view f, std::string_view v) { w.Item(f, v); });
      return;
    }
    case core::ValueType::kSet: {
      BatchWriter w("SADD", key, out);
      value.set().ForEach([&](std::string_view m) { w.Item(m); });
      return;
    }
    case core::ValueType::kZSet: {
      const core::ZSetValue& z = value.zset();
      BatchWriter w("ZADD", key, out);
      z.Walk(0, false, [&](std::string_view m, double score) {
        char buf[64];
        const int n = std::snprintf(buf, sizeof(buf), "%.17g", score);
        w.Item(std::string_view(buf, static_cast<size_t>(n)), m);
        return true;
      });
      return;
    }
    case core::ValueType::kList: {
      BatchWriter w("RPUSH", key, out);
      value.list().Walk(0, false, [&](std::string_view v) {
        w.Item(v);
        return true;
      });
      return;
    }
    case core::ValueType::kStream:
      AppendStream(key, value.stream(), out);
      return;
  }
}

}  // namespace ringkv::server

#include "server/commands/stream_group_ops.h"

#include <algorithm>
#include <memory>

#include "core/strings.h"

namespace ringkv::server {

using core::StreamConsumer;
using core::StreamGroup;
using core::StreamId;
using core::StreamNack;
using core::StreamValue;

std::string NoGroupError(std::string_view key, std::string_view group) {
  return StrCat("NOGROUP No such consumer group '", group, "' for key name '", key, "'");
}

StreamConsumer* LookupOrCreateConsumer(const OpArgs& op, std::string_view key, StreamGroup& g, std::string_view name,
                                       uint64_t dirty, bool* created) {
  *created = false;
  if (StreamConsumer* c = g.FindConsumer(name)) return c;
  *created = true;
  StreamConsumer* c = g.CreateConsumer(name, op.now_ms);
  op.Notified(notify::kStream, "xgroup-createconsumer", key, dirty);  // no signal, as Redis
  return c;
}

int64_t EntriesReadFor(const StreamValue& s, StreamId id) { return s.EstimateDistanceFromFirstEverEntry(id); }

std::vector<std::string> XclaimPropagation(std::string_view key, std::string_view group, const StreamGroup& g,
                                           StreamId id, const StreamNack& nack) {
  return {"XCLAIM",     std::string(key), std::string(group), nack.consumer->name,
          "0",          id.ToString(),    "TIME",             std::to_string(nack.delivery_time),
          "RETRYCOUNT", std::to_string(nack.delivery_count),  "FORCE",
          "JUSTID",     "LASTID",         g.last_id.ToString()};
}

int64_t ClaimedDeliveryTime(int64_t requested, int64_t now_ms, int64_t system_now_ms) {
  const int64_t now = std::max(now_ms, system_now_ms);
  return requested < 0 || requested > now ? now : requested;
}

StreamNack* ClaimNack(StreamGroup& g, StreamConsumer& c, StreamId id, bool create) {
  auto it = g.pel.find(id);
  if (it == g.pel.end()) {
    if (!create) return nullptr;
    it = g.pel.emplace(id, StreamNack{}).first;
  } else if (it->second.consumer != nullptr) {
    it->second.consumer->pel.erase(id);
  }
  StreamNack* nack = &it->second;
  nack->consumer = &c;
  c.pel.insert(id);
  return nack;
}

bool AckNack(StreamGroup& g, StreamId id) {
  auto it = g.pel.find(id);
  if (it == g.pel.end()) return false;
  if (it->second.consumer != nullptr) it->second.consumer->pel.erase(id);
  g.pel.erase(it);
  return true;
}

std::vector<StreamRow> DeliverNew(const OpArgs& op, std::string_view key, std::string_view group_name,
                                  StreamValue& s, StreamGroup& g, StreamConsumer& c, size_t count, bool noack) {
  std::vector<StreamRow> rows;
  StreamId start = g.last_id;
  if (!start.Incr()) return rows;
  bool propagate_last_id = false;
  s.Range(start, StreamId::Max(), false, [&](StreamId id, core::FieldValues fv) {
    rows.push_back({id, false, std::vector<std::string>(fv.begin(), fv.end())});
    return count == 0 || rows.size() < count;
  });
  for (const StreamRow& row : rows) {
    const StreamId id = row.id;
    if (id > g.last_id) {
      // Redis's rule: count on entries_read while no tombstone lies ahead,
      // otherwise estimate it again.
      if (g.entries_read != StreamGroup::kInvalidEntriesRead && !s.RangeHasTombstones(id, StreamId::Max())) {
        ++g.entries_read;
      } else if (s.entries_added() != 0) {
        g.entries_read = s.EstimateDistanceFromFirstEverEntry(id);
      }
      g.last_id = id;
      if (noack) propagate_last_id = true;
    }
    if (noack) continue;
    StreamNack* nack = ClaimNack(g, c, id, true);
    nack->delivery_time = op.now_ms;
    nack->delivery_count = 1;
    op.effects.AlsoPropagate(XclaimPropagation(key, group_name, g, id, *nack));
  }
  if (propagate_last_id) {
    op.effects.AlsoPropagate({"XGROUP", "SETID", std::string(key), std::string(group_name), g.last_id.ToString(),
                              "ENTRIESREAD", std::to_string(g.entries_read)});
  }
  return rows;
}

std::vector<StreamRow> DeliverHistory(const OpArgs& op, const StreamValue& s, StreamGroup& g,
                                      const StreamConsumer& c, StreamId start, size_t count) {
  std::vector<StreamRow> rows;
  for (auto it = c.pel.lower_bound(start); it != c.pel.end() && (count == 0 || rows.size() < count); ++it) {
    const StreamId id = *it;
    StreamRow row{id, true, {}};
    s.Range(id, id, false, [&](StreamId, core::FieldValues fv) {
      row.deleted = false;
      row.fv.assign(fv.begin(), fv.end());
      return false;
    });
    if (!row.deleted) {
      StreamNack& nack = g.pel.find(id)->second;  // a consumer's ids are all in its group's PEL
      nack.delivery_time = op.now_ms;
      ++nack.delivery_count;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace ringkv::server

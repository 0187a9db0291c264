#include "core/rdb_stream.h"

#include <memory>
#include <utility>

#include "core/rdb_string.h"

namespace ringkv::core {
namespace {

void AppendMs(int64_t ms, std::string* out) {
  const uint64_t u = static_cast<uint64_t>(ms);
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(u >> (8 * i)));
}

void AppendRawId(StreamId id, std::string* out) { out->append(id.Encode()); }

absl::Status ReadMs(RdbInput& in, int64_t* ms) {
  unsigned char raw[8];
  if (!in.Bytes(reinterpret_cast<char*>(raw), 8)) return in.ShortRead();
  uint64_t u = 0;
  for (int i = 7; i >= 0; --i) u = (u << 8) | raw[i];
  *ms = static_cast<int64_t>(u);
  return absl::OkStatus();
}

absl::Status ReadRawId(RdbInput& in, StreamId* id) {
  char raw[16];
  if (!in.Bytes(raw, 16)) return in.ShortRead();
  StreamId::Decode(std::string_view(raw, 16), id);
  return absl::OkStatus();
}

absl::Status ReadId(RdbInput& in, StreamId* id) {
  if (absl::Status s = in.Length(&id->ms); !s.ok()) return s;
  return in.Length(&id->seq);
}

absl::Status ReadGroups(RdbInput& in, uint8_t type, StreamValue* s) {
  uint64_t groups;
  if (absl::Status st = in.Length(&groups); !st.ok()) return st;
  for (uint64_t g = 0; g < groups; ++g) {
    std::string name;
    if (absl::Status st = in.String(&name); !st.ok()) return st;
    StreamId last;
    if (absl::Status st = ReadId(in, &last); !st.ok()) return st;
    int64_t entries_read;
    if (type >= rdb::kTypeStreamListpacks2) {
      uint64_t u;
      if (absl::Status st = in.Length(&u); !st.ok()) return st;
      entries_read = static_cast<int64_t>(u);
    } else {
      entries_read = s->EstimateDistanceFromFirstEverEntry(last);
    }
    StreamGroup* cg = s->CreateGroup(name, last, entries_read);
    if (cg == nullptr) return in.Error(StrCat("Duplicated consumer group name ", name));
    uint64_t pel;
    if (absl::Status st = in.Length(&pel); !st.ok()) return st;
    for (uint64_t i = 0; i < pel; ++i) {
      StreamId id;
      StreamNack nack;
      if (absl::Status st = ReadRawId(in, &id); !st.ok()) return st;
      if (absl::Status st = ReadMs(in, &nack.delivery_time); !st.ok()) return st;
      if (absl::Status st = in.Length(&nack.delivery_count); !st.ok()) return st;
      if (!cg->pel.emplace(id, nack).second) {
        return in.Error("Duplicated global PEL entry loading stream consumer group");
      }
    }
    uint64_t consumers;
    if (absl::Status st = in.Length(&consumers); !st.ok()) return st;
    for (uint64_t c = 0; c < consumers; ++c) {
      std::string cname;
      if (absl::Status st = in.String(&cname); !st.ok()) return st;
      if (cg->FindConsumer(cname) != nullptr) return in.Error("Duplicate stream consumer detected.");
      StreamConsumer* consumer = cg->CreateConsumer(cname, 0);
      if (absl::Status st = ReadMs(in, &consumer->seen_time); !st.ok()) return st;
      uint64_t owned;
      if (absl::Status st = in.Length(&owned); !st.ok()) return st;
      for (uint64_t i = 0; i < owned; ++i) {
        StreamId id;
        if (absl::Status st = ReadRawId(in, &id); !st.ok()) return st;
        auto it = cg->pel.find(id);
        if (it == cg->pel.end()) return in.Error("Consumer entry not found in group global PEL");
        if (it->second.consumer != nullptr || !consumer->pel.insert(id).second) {
          return in.Error("Duplicated consumer PEL entry loading a stream consumer group");
        }
        it->second.consumer = consumer;
      }
    }
    for (const auto& [id, nack] : cg->pel) {
      if (nack.consumer == nullptr) return in.Error("Stream CG PEL entry without consumer");
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RdbAppendStream(const StreamValue& s, bool compress, std::string* out) {
  RdbAppendLength(s.node_count(), out);
  s.ForEachNode([&](StreamId master, const Listpack& lp) {
    RdbEncodeString(master.Encode(), compress, out);
    RdbEncodeString(lp.bytes(), compress, out);
  });
  RdbAppendLength(s.size(), out);
  RdbAppendLength(s.last_id().ms, out);
  RdbAppendLength(s.last_id().seq, out);
  RdbAppendLength(s.first_id().ms, out);
  RdbAppendLength(s.first_id().seq, out);
  RdbAppendLength(s.max_deleted_id().ms, out);
  RdbAppendLength(s.max_deleted_id().seq, out);
  RdbAppendLength(s.entries_added(), out);
  RdbAppendLength(s.groups().size(), out);
  for (const auto& [name, cg] : s.groups()) {
    RdbEncodeString(name, compress, out);
    RdbAppendLength(cg->last_id.ms, out);
    RdbAppendLength(cg->last_id.seq, out);
    RdbAppendLength(static_cast<uint64_t>(cg->entries_read), out);
    RdbAppendLength(cg->pel.size(), out);
    for (const auto& [id, nack] : cg->pel) {
      AppendRawId(id, out);
      AppendMs(nack.delivery_time, out);
      RdbAppendLength(nack.delivery_count, out);
    }
    RdbAppendLength(cg->consumers.size(), out);
    for (const auto& [cname, c] : cg->consumers) {
      RdbEncodeString(cname, compress, out);
      AppendMs(c->seen_time, out);
      RdbAppendLength(c->pel.size(), out);
      for (StreamId id : c->pel) AppendRawId(id, out);
    }
  }
}

absl::StatusOr<Value> ReadRdbStream(RdbInput& in, uint8_t type) {
  auto s = std::make_unique<StreamValue>();
  uint64_t nodes;
  if (absl::Status st = in.Length(&nodes); !st.ok()) return st;
  size_t live = 0;
  StreamId prev_last;
  bool any = false;
  for (uint64_t i = 0; i < nodes; ++i) {
    std::string key, blob;
    if (absl::Status st = in.String(&key); !st.ok()) return st;
    StreamId master;
    if (!StreamId::Decode(key, &master)) return in.Error("Stream node key entry is not the size of a stream ID");
    if (absl::Status st = in.String(&blob); !st.ok()) return st;
    in.CountPackedBlob();
    if (absl::Status st = Listpack::Validate(blob); !st.ok()) {
      return in.Error(StrCat("Stream listpack integrity check failed: ", ToStd(st.message())));
    }
    Listpack lp = Listpack::FromBytes(std::move(blob));
    if (lp.empty()) return in.Error("Empty listpack inside stream");
    size_t n;
    StreamId last;
    if (!StreamValue::ValidateNode(master, lp, &n, &last) || (any && master <= prev_last)) {
      return in.Error("Stream listpack integrity check failed");
    }
    any = true;
    prev_last = last;
    live += n;
    s->AppendNode(master, std::move(lp));
  }
  uint64_t length;
  StreamId last_id;
  if (absl::Status st = in.Length(&length); !st.ok()) return st;
  if (absl::Status st = ReadId(in, &last_id); !st.ok()) return st;
  if (length != live || (any && prev_last > last_id)) return in.Error("Stream length inconsistent with rax entries");
  s->set_length(live);
  s->set_last_id(last_id);
  if (type >= rdb::kTypeStreamListpacks2) {
    StreamId first, max_deleted;
    uint64_t added;
    if (absl::Status st = ReadId(in, &first); !st.ok()) return st;
    if (absl::Status st = ReadId(in, &max_deleted); !st.ok()) return st;
    if (absl::Status st = in.Length(&added); !st.ok()) return st;
    s->set_first_id(first);
    s->set_max_deleted_id(max_deleted);
    s->set_entries_added(added);
  } else {
    s->set_entries_added(length);
    StreamId first;
    if (!s->EdgeId(true, &first)) first = StreamId::Max();
    s->set_first_id(first);
  }
  if (absl::Status st = ReadGroups(in, type, s.get()); !st.ok()) return st;
  return Value(std::move(s));
}

}  // namespace ringkv::core

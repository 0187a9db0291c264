// The RDB encodings of values: strings and the collection types, in every
// form Redis 7.0 reads (the legacy ziplist/zipmap ones converted to
// listpacks) and the forms Redis 7.0 writes.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/legacy_encodings.h"
#include "core/rdb_input.h"
#include "core/rdb_stream.h"
#include "core/rdb_string.h"
#include "core/rdb_writer.h"

namespace ringkv::core {
namespace {

constexpr char kEmptyKey[] = "empty collection";
// Quicklist 2 node containers.
constexpr uint64_t kContainerPlain = 1;
constexpr uint64_t kContainerPacked = 2;

// Malformed packed data, named as Redis names it ("Ziplist integrity check
// failed", what operators and Redis's tests grep), then the detail.
absl::Status IntegrityError(RdbInput& in, std::string_view what, std::string_view detail) {
  return in.Error(StrCat(what, " integrity check failed: ", detail));
}

// A listpack of field/value or member/score pairs: well formed, an even
// number of entries, no key twice (Redis's lpValidateIntegrityAndDups).
// `what`: the encoding it was read from ("Hash ziplist", ...).
absl::Status ValidatePairs(RdbInput& in, const Listpack& lp, std::string_view what) {
  if (lp.size() % 2 != 0) return IntegrityError(in, what, "an odd number of entries");
  absl::flat_hash_set<std::string> seen;
  for (size_t pos = lp.First(); pos != Listpack::kEnd; pos = lp.Next(lp.Next(pos))) {
    // Redis's words for it ("listpack with dup elements", its panic when it
    // converts such a hash), which operators and its tests grep.
    if (!seen.insert(lp.Get(pos).ToString()).second) return IntegrityError(in, what, "listpack with dup elements");
  }
  return absl::OkStatus();
}

// `what`: the encoding's name in errors ("Listpack", "Hash listpack", ...).
absl::StatusOr<Listpack> ReadListpack(RdbInput& in, std::string_view what) {
  std::string blob;
  if (absl::Status s = in.String(&blob); !s.ok()) return s;
  in.CountPackedBlob();
  if (absl::Status s = Listpack::Validate(blob); !s.ok()) return IntegrityError(in, what, ToStd(s.message()));
  return Listpack::FromBytes(std::move(blob));
}

// A legacy ziplist or zipmap, rebuilt as a listpack.
absl::StatusOr<Listpack> ReadLegacyAsListpack(RdbInput& in, bool zipmap, std::string_view what) {
  std::string blob;
  if (absl::Status s = in.String(&blob); !s.ok()) return s;
  in.CountPackedBlob();
  absl::StatusOr<std::vector<std::string>> items = zipmap ? DecodeZipmap(blob) : DecodeZiplist(blob);
  if (!items.ok()) return IntegrityError(in, what, ToStd(items.status().message()));
  Listpack lp;
  for (const std::string& item : *items) lp.Append(item);
  return lp;
}

bool ParseScore(const ListpackValue& v, double* score) {
  if (v.is_int) {
    *score = static_cast<double>(v.int_value);
    return true;
  }
  // ZSetValue::PackedScore reads at most 63 bytes of a score; Redis writes
  // at most 24 ("%.17g"), so a longer one is corrupt.
  if (v.str.size() > 63) return false;
  std::string text(v.str);
  char* end;
  *score = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() && !std::isnan(*score);
}

absl::StatusOr<Value> HashFromListpack(RdbInput& in, Listpack lp, const HashLimits& limits, std::string_view what) {
  if (absl::Status s = ValidatePairs(in, lp, what); !s.ok()) return s;
  if (lp.empty()) return in.Error(kEmptyKey);
  size_t longest = 0;
  for (size_t pos = lp.First(); pos != Listpack::kEnd; pos = lp.Next(pos)) {
    const ListpackValue v = lp.Get(pos);
    if (!v.is_int) longest = std::max(longest, v.str.size());
  }
  HashValue hash(std::move(lp));
  if (hash.size() > limits.max_listpack_entries || longest > limits.max_listpack_value) hash.ConvertToTable();
  return Value(std::move(hash));
}

absl::StatusOr<Value> ZSetFromListpack(RdbInput& in, Listpack lp, const ZSetLimits& limits, std::string_view what) {
  if (absl::Status s = ValidatePairs(in, lp, what); !s.ok()) return s;
  if (lp.empty()) return in.Error(kEmptyKey);
  // Pairs must be valid scores in (score, member) order: ZSetValue relies on it.
  double prev_score = -INFINITY;
  std::string prev_member;
  bool first = true;
  for (size_t pos = lp.First(); pos != Listpack::kEnd; pos = lp.Next(lp.Next(pos))) {
    double score;
    if (!ParseScore(lp.Get(lp.Next(pos)), &score)) return IntegrityError(in, what, "an invalid score");
    std::string member = lp.Get(pos).ToString();
    if (!first && (score < prev_score || (score == prev_score && member < prev_member))) {
      return IntegrityError(in, what, "entries out of order");
    }
    first = false;
    prev_score = score;
    prev_member = std::move(member);
  }
  ZSetValue zset(std::move(lp));
  if (zset.size() > limits.max_listpack_entries) zset.ConvertToSkiplist();
  return Value(std::move(zset));
}

// An old zset record's score: a length-prefixed text (253 nan, 254 +inf, 255 -inf).
absl::Status ReadTextScore(RdbInput& in, double* score) {
  uint8_t len;
  if (!in.Byte(&len)) return in.ShortRead();
  if (len == 253) return in.Error("Zset with NAN score detected");
  if (len == 254 || len == 255) {
    *score = len == 254 ? INFINITY : -INFINITY;
    return absl::OkStatus();
  }
  char buf[256];
  if (!in.Bytes(buf, len)) return in.ShortRead();
  buf[len] = '\0';
  *score = std::strtod(buf, nullptr);
  return absl::OkStatus();
}

absl::StatusOr<Value> ReadZSetPairs(RdbInput& in, bool binary_scores, const ZSetLimits& limits) {
  uint64_t len;
  if (absl::Status s = in.Length(&len); !s.ok()) return s;
  if (len == 0) return in.Error(kEmptyKey);
  // Redis loads into a skiplist and packs the set only if all of it fits,
  // so a set that stays a skiplist keeps every score as written (-0
  // included; a listpack stores it as "0"). A set short enough to fit is
  // read whole before its encoding is chosen; a longer one cannot fit.
  ZSetValue zset;
  auto add = [&](const std::string& member, double score) {
    double unused;
    return zset.Add(member, score, ZAddFlags{}, limits, &unused) == ZAddOutcome::kAdded;
  };
  std::vector<std::pair<std::string, double>> small;
  const bool may_fit = len <= limits.max_listpack_entries;
  if (!may_fit) zset.ConvertToSkiplist();
  for (uint64_t i = 0; i < len; ++i) {
    std::string member;
    if (absl::Status s = in.String(&member); !s.ok()) return s;
    double score;
    if (binary_scores) {
      char raw[8];
      if (!in.Bytes(raw, 8)) return in.ShortRead();
      std::memcpy(&score, raw, 8);  // little-endian IEEE 754, as written
      if (std::isnan(score)) return in.Error("Zset with NAN score detected");
    } else if (absl::Status s = ReadTextScore(in, &score); !s.ok()) {
      return s;
    }
    if (may_fit) {
      small.emplace_back(std::move(member), score);
    } else if (!add(member, score)) {
      return in.Error("Duplicate zset fields detected");
    }
  }
  if (may_fit) {
    for (const auto& [member, score] : small) {
      if (member.size() > limits.max_listpack_value) {
        zset.ConvertToSkiplist();
        break;
      }
    }
    for (const auto& [member, score] : small) {
      if (!add(member, score)) return in.Error("Duplicate zset fields detected");
    }
  }
  return Value(std::move(zset));
}

absl::StatusOr<Value> ReadHashPairs(RdbInput& in, const HashLimits& limits) {
  uint64_t len;
  if (absl::Status s = in.Length(&len); !s.ok()) return s;
  if (len == 0) return in.Error(kEmptyKey);
  HashValue hash;
  if (len > limits.max_listpack_entries) hash.ConvertToTable();
  std::string field, value;
  for (uint64_t i = 0; i < len; ++i) {
    if (absl::Status s = in.String(&field); !s.ok()) return s;
    if (absl::Status s = in.String(&value); !s.ok()) return s;
    if (!hash.Set(field, value, limits)) return in.Error("Duplicate hash fields detected");
  }
  return Value(std::move(hash));
}

absl::StatusOr<Value> ReadSetMembers(RdbInput& in, const SetLimits& limits) {
  uint64_t len;
  if (absl::Status s = in.Length(&len); !s.ok()) return s;
  if (len == 0) return in.Error(kEmptyKey);
  SetValue set;
  if (len > limits.max_intset_entries) set.ConvertToTable(static_cast<size_t>(std::min<uint64_t>(len, 1 << 20)));
  std::string member;
  for (uint64_t i = 0; i < len; ++i) {
    if (absl::Status s = in.String(&member); !s.ok()) return s;
    if (!set.Add(member, limits)) return in.Error("Duplicate set members detected");
  }
  return Value(std::move(set));
}

absl::StatusOr<Value> ReadIntset(RdbInput& in, const SetLimits& limits) {
  std::string blob;
  if (absl::Status s = in.String(&blob); !s.ok()) return s;
  in.CountPackedBlob();
  if (absl::Status s = Intset::Validate(blob); !s.ok()) return IntegrityError(in, "Intset", ToStd(s.message()));
  SetValue set(Intset::FromBytes(std::move(blob)));
  if (set.empty()) return in.Error(kEmptyKey);
  if (set.size() > limits.max_intset_entries) set.ConvertToTable(set.size());
  return Value(std::move(set));
}

// RDB_TYPE_LIST: a length and that many strings.
absl::StatusOr<Value> ReadListElements(RdbInput& in, const ListLimits& limits) {
  uint64_t len;
  if (absl::Status s = in.Length(&len); !s.ok()) return s;
  if (len == 0) return in.Error(kEmptyKey);
  auto list = std::make_unique<ListValue>(limits);
  std::string v;
  for (uint64_t i = 0; i < len; ++i) {
    if (absl::Status s = in.String(&v); !s.ok()) return s;
    list->PushBack(v);
  }
  return Value(std::move(list));
}

// RDB_TYPE_LIST_QUICKLIST (ziplist nodes, Redis 3.2 to 6.2) and
// RDB_TYPE_LIST_QUICKLIST_2 (listpack nodes with a container, 7.0).
absl::StatusOr<Value> ReadQuicklist(RdbInput& in, bool v2, const ListLimits& limits) {
  uint64_t nodes;
  if (absl::Status s = in.Length(&nodes); !s.ok()) return s;
  auto list = std::make_unique<ListValue>(limits);
  for (uint64_t i = 0; i < nodes; ++i) {
    uint64_t container = kContainerPacked;
    if (v2) {
      if (absl::Status s = in.Length(&container); !s.ok()) return s;
      if (container != kContainerPacked && container != kContainerPlain) {
        return in.Error(StrCat("Quicklist integrity check failed: unknown container ", container));
      }
    }
    if (container == kContainerPlain) {
      std::string v;
      if (absl::Status s = in.String(&v); !s.ok()) return s;
      if (v.empty()) return in.Error("Quicklist integrity check failed: empty plain node");  // as Redis
      list->PushBack(v);
      continue;
    }
    absl::StatusOr<Listpack> lp = v2 ? ReadListpack(in, "Listpack") : ReadLegacyAsListpack(in, false, "Ziplist");
    if (!lp.ok()) return lp.status();
    if (lp->empty()) continue;  // Redis skips empty nodes too
    list->AppendNode(std::move(*lp));
  }
  if (list->empty()) return in.Error(kEmptyKey);
  return Value(std::move(list));
}

// RDB_TYPE_LIST_ZIPLIST: a whole list in one ziplist (Redis 2.6 to 3.0).
absl::StatusOr<Value> ReadZiplistList(RdbInput& in, const ListLimits& limits) {
  absl::StatusOr<Listpack> lp = ReadLegacyAsListpack(in, false, "List ziplist");
  if (!lp.ok()) return lp.status();
  if (lp->empty()) return in.Error(kEmptyKey);
  auto list = std::make_unique<ListValue>(limits);
  char scratch[24];
  for (size_t pos = lp->First(); pos != Listpack::kEnd; pos = lp->Next(pos)) {
    const ListpackValue v = lp->Get(pos);
    list->PushBack(v.is_int ? std::string_view(scratch, static_cast<size_t>(
                                  std::snprintf(scratch, sizeof(scratch), "%lld", static_cast<long long>(v.int_value))))
                            : v.str);
  }
  return Value(std::move(list));
}

void AppendBinaryDouble(double v, std::string* out) {
  char raw[8];
  std::memcpy(raw, &v, 8);
  out->append(raw, 8);
}

}  // namespace

absl::StatusOr<Value> ReadRdbValueOfType(RdbInput& in, uint8_t type, const CollectionLimits& limits) {
  switch (type) {
    case rdb::kTypeString: {
      std::string s;
      if (absl::Status st = in.String(&s); !st.ok()) return st;
      return Value(StringValue(s));
    }
    case rdb::kTypeList:
      return ReadListElements(in, limits.list);
    case rdb::kTypeListQuicklist:
    case rdb::kTypeListQuicklist2:
      return ReadQuicklist(in, type == rdb::kTypeListQuicklist2, limits.list);
    case rdb::kTypeListZiplist:
      return ReadZiplistList(in, limits.list);
    case rdb::kTypeHash:
      return ReadHashPairs(in, limits.hash);
    case rdb::kTypeHashListpack:
    case rdb::kTypeHashZiplist:
    case rdb::kTypeHashZipmap: {
      const std::string_view what = type == rdb::kTypeHashListpack ? "Hash listpack"
                                    : type == rdb::kTypeHashZipmap  ? "Zipmap"
                                                                    : "Hash ziplist";
      absl::StatusOr<Listpack> lp = type == rdb::kTypeHashListpack
                                        ? ReadListpack(in, what)
                                        : ReadLegacyAsListpack(in, type == rdb::kTypeHashZipmap, what);
      if (!lp.ok()) return lp.status();
      return HashFromListpack(in, std::move(*lp), limits.hash, what);
    }
    case rdb::kTypeSet:
      return ReadSetMembers(in, limits.set);
    case rdb::kTypeSetIntset:
      return ReadIntset(in, limits.set);
    case rdb::kTypeZset:
    case rdb::kTypeZset2:
      return ReadZSetPairs(in, type == rdb::kTypeZset2, limits.zset);
    case rdb::kTypeZsetListpack:
    case rdb::kTypeZsetZiplist: {
      const std::string_view what = type == rdb::kTypeZsetListpack ? "Zset listpack" : "Zset ziplist";
      absl::StatusOr<Listpack> lp =
          type == rdb::kTypeZsetListpack ? ReadListpack(in, what) : ReadLegacyAsListpack(in, false, what);
      if (!lp.ok()) return lp.status();
      return ZSetFromListpack(in, std::move(*lp), limits.zset, what);
    }
    case rdb::kTypeStreamListpacks:
    case rdb::kTypeStreamListpacks2:
      return ReadRdbStream(in, type);
    default:
      return in.Error(StrCat("Unsupported RDB value type ", static_cast<int>(type), " (", rdb::TypeName(type),
                             "): ringkv does not store this type"));
  }
}

bool IsEmptyKeyError(const absl::Status& status) {
  return absl::StartsWith(status.message(), kEmptyKey);
}

uint8_t RdbTypeOf(const Value& value) {
  switch (value.type()) {
    case ValueType::kString: return rdb::kTypeString;
    case ValueType::kHash:
      return value.hash().encoding() == HashValue::Encoding::kListpack ? rdb::kTypeHashListpack : rdb::kTypeHash;
    case ValueType::kSet:
      return value.set().encoding() == SetValue::Encoding::kIntset ? rdb::kTypeSetIntset : rdb::kTypeSet;
    case ValueType::kZSet:
      return value.zset().encoding() == ZSetValue::Encoding::kListpack ? rdb::kTypeZsetListpack : rdb::kTypeZset2;
    case ValueType::kList: return rdb::kTypeListQuicklist2;
    case ValueType::kStream: return rdb::kTypeStreamListpacks2;
  }
  return rdb::kTypeString;
}

void RdbAppendValueBody(const Value& value, bool compress, std::string* out) {
  switch (value.type()) {
    case ValueType::kString: {
      char scratch[24];
      RdbEncodeString(value.str().View(scratch), compress, out);
      return;
    }
    case ValueType::kHash: {
      const HashValue& h = value.hash();
      if (h.encoding() == HashValue::Encoding::kListpack) {
        RdbEncodeString(h.packed().bytes(), compress, out);
        return;
      }
      RdbAppendLength(h.size(), out);
      h.ForEach([&](std::string_view f, std::string_view v) {
        RdbEncodeString(f, compress, out);
        RdbEncodeString(v, compress, out);
      });
      return;
    }
    case ValueType::kSet: {
      const SetValue& s = value.set();
      if (s.encoding() == SetValue::Encoding::kIntset) {
        RdbEncodeString(s.intset().bytes(), compress, out);
        return;
      }
      RdbAppendLength(s.size(), out);
      s.ForEach([&](std::string_view m) { RdbEncodeString(m, compress, out); });
      return;
    }
    case ValueType::kZSet: {
      const ZSetValue& z = value.zset();
      if (z.encoding() == ZSetValue::Encoding::kListpack) {
        RdbEncodeString(z.packed().bytes(), compress, out);
        return;
      }
      // Highest first, as Redis writes it (so a loader inserting at the head
      // of a skiplist does it in O(1)).
      RdbAppendLength(z.size(), out);
      z.Walk(0, /*reverse=*/true, [&](std::string_view m, double score) {
        RdbEncodeString(m, compress, out);
        AppendBinaryDouble(score, out);
        return true;
      });
      return;
    }
    case ValueType::kList: {
      // One record per node: its container (2 = packed) and its listpack.
      const ListValue& l = value.list();
      RdbAppendLength(l.node_count(), out);
      l.ForEachNode([&](const Listpack& lp) {
        RdbAppendLength(kContainerPacked, out);
        RdbEncodeString(lp.bytes(), compress, out);
      });
      return;
    }
    case ValueType::kStream:
      RdbAppendStream(value.stream(), compress, out);
      return;
  }
}

}  // namespace ringkv::core

// The RDB fuzzer's corpus: see rdb_fuzz_corpus.h.
#include "tests/core/rdb_fuzz_corpus.h"

#include <string_view>
#include <utility>

#include "core/crc64.h"
#include "core/keyspace.h"
#include "core/rdb_format.h"
#include "core/rdb_string.h"
#include "core/rdb_writer.h"
#include "core/strings.h"

namespace ringkv::core::fuzz {

void PutLe(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

namespace {

// A ziplist (Redis 2.6 to 6.2), integers in the smallest encoding Redis picks.
std::string Ziplist(const std::vector<std::string>& items) {
  std::string body;
  size_t prev = 0, tail = 10;
  for (const std::string& item : items) {
    std::string e;
    if (prev < 254) {
      e.push_back(static_cast<char>(prev));
    } else {
      e.push_back(static_cast<char>(0xFE));
      PutLe(prev, 4, &e);
    }
    int64_t v;
    if (item.size() <= 20 && StringToInt64(item, &v)) {
      if (v >= 0 && v <= 12) {
        e.push_back(static_cast<char>(0xF1 + v));
      } else if (v >= INT8_MIN && v <= INT8_MAX) {
        e.push_back(static_cast<char>(0xFE));
        PutLe(static_cast<uint64_t>(v), 1, &e);
      } else if (v >= INT16_MIN && v <= INT16_MAX) {
        e.push_back(static_cast<char>(0xC0));
        PutLe(static_cast<uint64_t>(v), 2, &e);
      } else if (v >= -(1 << 23) && v < (1 << 23)) {
        e.push_back(static_cast<char>(0xF0));
        PutLe(static_cast<uint64_t>(v), 3, &e);
      } else if (v >= INT32_MIN && v <= INT32_MAX) {
        e.push_back(static_cast<char>(0xD0));
        PutLe(static_cast<uint64_t>(v), 4, &e);
      } else {
        e.push_back(static_cast<char>(0xE0));
        PutLe(static_cast<uint64_t>(v), 8, &e);
      }
    } else if (item.size() <= 63) {
      e.push_back(static_cast<char>(item.size()));
      e += item;
    } else if (item.size() <= 16383) {
      e.push_back(static_cast<char>(0x40 | (item.size() >> 8)));
      e.push_back(static_cast<char>(item.size() & 0xFF));
      e += item;
    } else {
      e.push_back(static_cast<char>(0x80));
      for (int i = 3; i >= 0; --i) e.push_back(static_cast<char>((item.size() >> (8 * i)) & 0xFF));
      e += item;
    }
    tail = 10 + body.size();
    prev = e.size();
    body += e;
  }
  std::string out;
  PutLe(10 + body.size() + 1, 4, &out);
  PutLe(tail, 4, &out);
  PutLe(std::min<size_t>(items.size(), 0xFFFF), 2, &out);
  out += body;
  out.push_back(static_cast<char>(0xFF));
  return out;
}

// A zipmap (hashes before Redis 2.6): pairs, with a little free space.
std::string Zipmap(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string out;
  out.push_back(static_cast<char>(pairs.size() < 254 ? pairs.size() : 254));
  auto len = [&out](size_t n) {
    if (n < 254) {
      out.push_back(static_cast<char>(n));
    } else {
      out.push_back(static_cast<char>(254));
      PutLe(n, 4, &out);
    }
  };
  for (size_t i = 0; i < pairs.size(); ++i) {
    len(pairs[i].first.size());
    out += pairs[i].first;
    len(pairs[i].second.size());
    const size_t free = i % 3;
    out.push_back(static_cast<char>(free));
    out += pairs[i].second;
    out.append(free, '\0');
  }
  out.push_back(static_cast<char>(0xFF));
  return out;
}


std::vector<std::string> Words(int n, int len, char seed) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    std::string w = StrCat(std::string(1, static_cast<char>(seed + i % 26)), i);
    while (static_cast<int>(w.size()) < len) w += static_cast<char>('a' + (i + w.size()) % 26);
    out.push_back(w);
  }
  return out;
}

void AddValue(std::vector<Encoded>* out, std::string name, const Value& v, bool compress) {
  std::string body;
  RdbAppendValueBody(v, compress, &body);
  out->push_back({std::move(name), RdbTypeOf(v), std::move(body)});
}

}  // namespace

std::vector<Encoded> BuildValues() {
  std::vector<Encoded> out;
  const CollectionLimits limits;
  double unused;
  for (bool compress : {false, true}) {
    const std::string z = compress ? "/lzf" : "";
    for (const char* s : {"0", "-7", "300", "-40000", "123456789", "12345678901234", "hello", "", "01"}) {
      AddValue(&out, StrCat("string ", s, z), StringValue(s), compress);
    }
    AddValue(&out, "string raw" + z, StringValue(std::string(90, 'x') + "yz"), compress);
    AddValue(&out, "string lzf-able" + z, StringValue(std::string(300, 'a') + std::string(40, 'b')), compress);

    // Lists: one small listpack node, several nodes (fill 4), plain nodes
    // (fill -1 with values over 4 KB), compressed inner nodes.
    for (ListLimits ll : {ListLimits{-2, 0}, ListLimits{4, 0}, ListLimits{4, 1}, ListLimits{-1, 0}}) {
      auto list = std::make_unique<ListValue>(ll);
      const int n = ll.fill == 4 ? 13 : 6;
      for (int i = 0; i < n; ++i) {
        list->PushBack(i % 3 == 0 ? StrCat(i * 1000 - 5) : std::string(ll.fill == -1 && i == 2 ? 5000 : 10, 'a' + i));
      }
      AddValue(&out, StrCat("list fill ", ll.fill, " depth ", ll.compress_depth, z), Value(std::move(list)), compress);
    }
    // Sets: intsets of 16, 32 and 64-bit members, a hashtable.
    for (int64_t scale : {int64_t{1}, int64_t{100000}, int64_t{10000000000}}) {
      SetValue s = SetValue::ForFirstMember("1");
      for (int i = 0; i < 9; ++i) s.Add(StrCat((i - 4) * scale), limits.set);
      AddValue(&out, StrCat("set intset x", scale, z), Value(std::move(s)), compress);
    }
    SetValue words = SetValue::ForFirstMember("a");
    for (const std::string& w : Words(12, 6, 'a')) words.Add(w, limits.set);
    words.Add("17", limits.set);
    AddValue(&out, "set hashtable" + z, Value(std::move(words)), compress);
    // Hashes.
    HashValue small_hash;
    small_hash.Set("f", "v", limits.hash);
    small_hash.Set("n", "12", limits.hash);
    small_hash.Set("77", std::string(30, 'q'), limits.hash);
    AddValue(&out, "hash listpack" + z, Value(std::move(small_hash)), compress);
    HashValue big_hash;
    for (int i = 0; i < 20; ++i) big_hash.Set(StrCat("field", i), std::string(i % 2 ? 70 : 3, 'v'), limits.hash);
    AddValue(&out, "hash hashtable" + z, Value(std::move(big_hash)), compress);
    // Sorted sets.
    ZSetValue small_z;
    small_z.Add("a", 1.5, ZAddFlags{}, limits.zset, &unused);
    small_z.Add("b", -3, ZAddFlags{}, limits.zset, &unused);
    small_z.Add("12", 7, ZAddFlags{}, limits.zset, &unused);
    small_z.Add("inf", INFINITY, ZAddFlags{}, limits.zset, &unused);
    small_z.Add("c", 0.1, ZAddFlags{}, limits.zset, &unused);
    AddValue(&out, "zset listpack" + z, Value(std::move(small_z)), compress);
    ZSetValue big_z;
    for (int i = 0; i < 140; ++i) big_z.Add(StrCat("m", i), i * 0.25 - 3, ZAddFlags{}, limits.zset, &unused);
    big_z.Add("neg-inf", -INFINITY, ZAddFlags{}, limits.zset, &unused);
    AddValue(&out, "zset skiplist" + z, Value(std::move(big_z)), compress);
  }

  // Legacy encodings, written by hand.
  auto str = [](std::string_view s) {
    std::string b;
    RdbEncodeString(s, false, &b);
    return b;
  };
  const std::vector<std::string> items = {"a", "300", "-2", "hello world", "70000", "-9000000000", "5",
                                          std::string(70, 'L')};
  {
    std::string b;
    RdbAppendLength(items.size(), &b);
    for (const std::string& s : items) b += str(s);
    out.push_back({"list plain (type 1)", rdb::kTypeList, b});
  }
  out.push_back({"list ziplist (type 10)", rdb::kTypeListZiplist, str(Ziplist(items))});
  {
    std::string b;
    RdbAppendLength(2, &b);
    b += str(Ziplist({"x", "1", "y"}));
    b += str(Ziplist(items));
    out.push_back({"list quicklist of ziplists (type 14)", rdb::kTypeListQuicklist, b});
  }
  {
    std::string b;
    RdbAppendLength(4, &b);
    for (const char* m : {"m1", "42", "-5", "m2"}) b += str(m);
    out.push_back({"set plain (type 2)", rdb::kTypeSet, b});
  }
  {
    std::string b;
    RdbAppendLength(4, &b);
    const std::pair<const char*, const char*> members[] = {{"a", "1.5"}, {"b", "+inf"}, {"c", "-inf"}, {"d", "-2e3"}};
    for (const auto& [m, s] : members) {
      b += str(m);
      if (std::string_view(s) == "+inf") {
        b.push_back(static_cast<char>(254));
      } else if (std::string_view(s) == "-inf") {
        b.push_back(static_cast<char>(255));
      } else {
        b.push_back(static_cast<char>(std::strlen(s)));
        b += s;
      }
    }
    out.push_back({"zset text scores (type 3)", rdb::kTypeZset, b});
  }
  {
    std::string b;
    RdbAppendLength(3, &b);
    for (double score : {0.5, -0.0, 1e300}) {
      b += str(StrCat("m", score));
      char raw[8];
      std::memcpy(raw, &score, 8);
      b.append(raw, 8);
    }
    out.push_back({"zset binary scores (type 5)", rdb::kTypeZset2, b});
  }
  {
    std::string b;
    RdbAppendLength(3, &b);
    for (const char* f : {"f1", "f2", "33"}) b += str(f) + str(StrCat(f, "-value"));
    out.push_back({"hash plain (type 4)", rdb::kTypeHash, b});
  }
  out.push_back({"hash zipmap (type 9)", rdb::kTypeHashZipmap,
                 str(Zipmap({{"k1", "v1"}, {"12", "300"}, {"long", std::string(300, 'z')}}))});
  out.push_back({"zset ziplist (type 12)", rdb::kTypeZsetZiplist, str(Ziplist({"a", "1", "b", "2.5", "c", "300"}))});
  out.push_back({"hash ziplist (type 13)", rdb::kTypeHashZiplist, str(Ziplist({"a", "1", "b", "x", "77", "-300"}))});
  return out;
}

std::string Payload(const Encoded& e) {
  std::string p(1, static_cast<char>(e.type));
  p += e.body;
  p.push_back(static_cast<char>(rdb::kVersion));
  p.push_back('\0');
  PutLe(Crc64(0, p), 8, &p);
  return p;
}

// Whole RDB files: the values above spread over several databases, with
// AUX fields, RESIZEDB, expiries, IDLE and FREQ records.
std::vector<std::string> BuildFiles(const std::vector<Encoded>& values) {
  std::vector<std::string> files;
  auto key = [](std::string_view k) {
    std::string b;
    RdbEncodeString(k, false, &b);
    return b;
  };
  auto aux = [&key](std::string_view k, std::string_view v) {
    return std::string(1, static_cast<char>(rdb::kOpAux)) + key(k) + key(v);
  };
  for (size_t start = 0; start < values.size(); start += 6) {
    std::string f = "REDIS0010";
    f += aux("redis-ver", "7.0.15") + aux("redis-bits", "64") + aux("ctime", "1700000000") + aux("used-mem", "1048576");
    f += aux("repl-stream-db", "0") + aux("repl-id", std::string(40, 'f')) + aux("repl-offset", "12345");
    f += aux("aof-base", "0");
    const size_t end = std::min(values.size(), start + 6);
    for (size_t i = start; i < end; ++i) {
      const int db = static_cast<int>(i % 3) * 5;  // databases 0, 5 and 10
      if (i == start || (i % 3) == 0) {
        f.push_back(static_cast<char>(rdb::kOpSelectDb));
        RdbAppendLength(static_cast<uint64_t>(db), &f);
        f.push_back(static_cast<char>(rdb::kOpResizeDb));
        RdbAppendLength(end - start, &f);
        RdbAppendLength(1, &f);
      }
      if (i % 2 == 0) {
        f.push_back(static_cast<char>(rdb::kOpExpireMs));
        PutLe(i % 4 == 0 ? 4102444800000 : 1000, 8, &f);  // 2100, and one long past
      }
      if (i % 5 == 1) {
        f.push_back(static_cast<char>(rdb::kOpIdle));
        RdbAppendLength(3600, &f);
      }
      if (i % 5 == 2) {
        f.push_back(static_cast<char>(rdb::kOpFreq));
        f.push_back(static_cast<char>(100));
      }
      f.push_back(static_cast<char>(values[i].type));
      f += key(StrCat("key:", i));
      f += values[i].body;
    }
    f.push_back(static_cast<char>(rdb::kOpEof));
    PutLe(Crc64(0, f), 8, &f);
    files.push_back(std::move(f));
  }
  // Version 3: no checksum, an expiry in seconds.
  std::string old = "REDIS0003";
  old.push_back(static_cast<char>(rdb::kOpSelectDb));
  old.push_back('\0');
  old.push_back(static_cast<char>(rdb::kOpExpireSec));
  PutLe(2000000000, 4, &old);
  old.push_back(static_cast<char>(rdb::kTypeString));
  old += key("k") + key("v");
  old.push_back(static_cast<char>(rdb::kTypeHashZipmap));
  old += key("h") + key(Zipmap({{"a", "b"}}));
  old.push_back(static_cast<char>(rdb::kOpEof));
  files.push_back(std::move(old));
  return files;
}


}  // namespace ringkv::core::fuzz

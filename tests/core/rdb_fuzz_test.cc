// A seeded mutation fuzzer for the RDB reader and the DUMP payload verifier
// (issue 16: "corrupt input never crashes").
//
// The corpus is every type and encoding ringkv reads: strings (int, short,
// raw, LZF), lists (quicklist of listpacks, plain nodes, Redis 3.2-6.2
// quicklists of ziplists, 2.6 ziplists, plain lists), sets (intset of each
// width, hashtable, plain), hashes (listpack, hashtable, ziplist, zipmap,
// plain), sorted sets (listpack, skiplist, ziplist, text and binary
// scores), as DUMP payloads and inside whole RDB files (AUX fields, several
// databases, RESIZEDB, expiries in ms and in seconds, IDLE and FREQ, an old
// version without a checksum). Each case takes a corpus entry, applies 1-4
// seeded mutations (bit flips, interesting bytes and integers, truncation,
// insertion, deletion and duplication of ranges, corrupted length fields,
// splices with another entry), usually fixes the checksum up so that the
// decoders see the damage, and runs ParseDumpPayload or LoadRdb (into a
// real core::Keyspace, RESIZEDB hints included). Either it is refused with
// an error, or every value it yields passes its type's consistency checks
// (sizes, lookups of every element, order, removal of every element) and
// survives DUMP and RESTORE (and the whole file a save and a load).
// The sanitizer build is what turns a bad read into a failure.
//
// Long runs by hand: RINGKV_FUZZ_ITERATIONS (DUMP payload cases, default
// 4000; a quarter as many whole files), RINGKV_FUZZ_SEED (default 1) and
// RINGKV_FUZZ_TRACE=1 (prints every case before it runs, to find the one
// that crashed):
//   RINGKV_FUZZ_ITERATIONS=1000000 RINGKV_FUZZ_SEED=7 build-asan/tests/rdb_fuzz_test
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/crc64.h"
#include "core/keyspace.h"
#include "core/dump_payload.h"
#include "core/rdb_format.h"
#include "core/rdb_reader.h"
#include "core/rdb_string.h"
#include "core/rdb_writer.h"
#include "core/stream_value.h"
#include "core/strings.h"
#include "tests/core/rdb_fuzz_corpus.h"

namespace ringkv::core {
namespace {

using fuzz::BuildFiles;
using fuzz::BuildValues;
using fuzz::Encoded;
using fuzz::Payload;
using fuzz::PutLe;

uint64_t EnvU64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

// --- Mutations --------------------------------------------------------------

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  uint64_t Below(uint64_t n) { return n == 0 ? 0 : std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }
  bool OneIn(uint64_t n) { return Below(n) == 0; }

  // Applies 1 to 4 mutations to *s; `other` is a splice donor.
  void Mutate(std::string* s, const std::string& other) {
    const int n = 1 + static_cast<int>(Below(4) == 0 ? Below(4) : 0);
    for (int i = 0; i < n; ++i) MutateOnce(s, other);
  }

 private:
  size_t Pos(const std::string& s) { return static_cast<size_t>(Below(s.size())); }

  void MutateOnce(std::string* s, const std::string& other) {
    if (s->empty()) {
      s->push_back(static_cast<char>(Below(256)));
      return;
    }
    static constexpr uint8_t kBytes[] = {0x00, 0xFF, 0x7F, 0x80, 0xFE, 0x01, 0x3F, 0x40, 0xC0, 0xC3, 0xF0, 0xF4, 0xFD};
    switch (Below(12)) {
      case 0:
      case 1:  // flip a bit
        (*s)[Pos(*s)] ^= static_cast<char>(1 << Below(8));
        return;
      case 2:  // an interesting byte
        (*s)[Pos(*s)] = static_cast<char>(kBytes[Below(sizeof(kBytes))]);
        return;
      case 3:  // a random byte
        (*s)[Pos(*s)] = static_cast<char>(Below(256));
        return;
      case 4:  // truncate
        s->resize(Pos(*s));
        return;
      case 5: {  // insert 1-8 random bytes
        std::string ins(1 + Below(8), '\0');
        for (char& c : ins) c = static_cast<char>(Below(256));
        s->insert(Pos(*s), ins);
        return;
      }
      case 6: {  // delete a range
        const size_t at = Pos(*s);
        s->erase(at, 1 + Below(std::min<size_t>(16, s->size() - at)));
        return;
      }
      case 7: {  // duplicate a range somewhere
        const size_t at = Pos(*s);
        const std::string range = s->substr(at, 1 + Below(32));
        s->insert(Below(s->size() + 1), range);
        return;
      }
      case 8: {  // an RDB length field: 6-bit, 14-bit, 32-bit, 64-bit or an encoding marker
        const size_t at = Pos(*s);
        std::string len;
        switch (Below(5)) {
          case 0: len.push_back(static_cast<char>(Below(64))); break;
          case 1:
            len.push_back(static_cast<char>(0x40 | Below(64)));
            len.push_back(static_cast<char>(Below(256)));
            break;
          case 2:
            len.push_back(static_cast<char>(0x80));
            for (int i = 0; i < 4; ++i) len.push_back(static_cast<char>(OneIn(2) ? 0xFF : Below(256)));
            break;
          case 3:
            len.push_back(static_cast<char>(0x81));
            for (int i = 0; i < 8; ++i) len.push_back(static_cast<char>(OneIn(2) ? 0xFF : Below(256)));
            break;
          default: len.push_back(static_cast<char>(0xC0 | Below(5))); break;
        }
        s->replace(at, std::min(len.size(), s->size() - at), len);
        return;
      }
      case 9: {  // a 16/32/64-bit little-endian integer: off by one, zero, huge
        const int width = 2 << Below(3);
        const size_t at = Pos(*s);
        if (s->size() - at < static_cast<size_t>(width)) return;
        uint64_t v = 0;
        for (int i = 0; i < width; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>((*s)[at + i])) << (8 * i);
        const uint64_t choices[] = {v + 1, v - 1, 0, ~uint64_t{0}, uint64_t{1} << (8 * width - 1), v * 2, v / 2};
        v = choices[Below(std::size(choices))];
        for (int i = 0; i < width; ++i) (*s)[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
        return;
      }
      case 10: {  // splice a range of another input
        if (other.empty()) return;
        const size_t from = Below(other.size());
        const std::string range = other.substr(from, 1 + Below(64));
        const size_t at = Pos(*s);
        if (OneIn(2)) {
          s->insert(at, range);
        } else {
          s->replace(at, std::min(range.size(), s->size() - at), range);
        }
        return;
      }
      default: {  // swap two bytes
        std::swap((*s)[Pos(*s)], (*s)[Pos(*s)]);
        return;
      }
    }
  }

  std::mt19937_64 rng_;
};

// The checksum of a mutated payload or file recomputed, so the decoders
// see the damage rather than the CRC check.
void FixDumpCrc(std::string* p) {
  if (p->size() < 10) return;
  p->resize(p->size() - 8);
  PutLe(Crc64(0, *p), 8, p);
}

void FixFileCrc(std::string* f) {
  if (f->size() < 18) return;
  f->resize(f->size() - 8);
  PutLe(Crc64(0, *f), 8, f);
}

// --- Consistency checks -----------------------------------------------------

// Everything a value holds, in a form that does not depend on its encoding
// (table iteration order included), for comparisons after a round trip.
std::string Canonical(const Value& v) {
  std::string out = StrCat(static_cast<int>(v.type()), ":");
  auto add = [&out](std::string_view s) { StrAppend(&out, s.size(), "=", s, ";"); };
  switch (v.type()) {
    case ValueType::kString:
      add(v.str().ToString());
      break;
    case ValueType::kList:
      v.list().Walk(0, false, [&](std::string_view e) {
        add(e);
        return true;
      });
      break;
    case ValueType::kSet: {
      std::vector<std::string> members;
      v.set().ForEach([&](std::string_view m) { members.emplace_back(m); });
      std::sort(members.begin(), members.end());
      for (const std::string& m : members) add(m);
      break;
    }
    case ValueType::kHash: {
      std::vector<std::pair<std::string, std::string>> pairs;
      v.hash().ForEach([&](std::string_view f, std::string_view x) { pairs.emplace_back(f, x); });
      std::sort(pairs.begin(), pairs.end());
      for (const auto& [f, x] : pairs) {
        add(f);
        add(x);
      }
      break;
    }
    case ValueType::kZSet:
      v.zset().Walk(0, false, [&](std::string_view m, double score) {
        add(m);
        StrAppend(&out, absl::StrFormat("%.17g", score), ";");
        return true;
      });
      break;
    case ValueType::kStream:
      v.stream().Range(StreamId::Min(), StreamId::Max(), false, [&](StreamId id, FieldValues fv) {
        add(id.ToString());
        for (std::string_view x : fv) add(x);
        return true;
      });
      break;
  }
  return out;
}

// Problems with a decoded value, "" when there are none: sizes against
// iteration, every element found by lookup, order, every element removable
// from a copy, and a DUMP / RESTORE round trip to the same contents.
std::string CheckValue(const Value& v, const CollectionLimits& limits) {
  switch (v.type()) {
    case ValueType::kString:
      break;
    case ValueType::kStream: {
      const StreamValue& s = v.stream();
      std::vector<StreamId> fwd, rev;
      s.Range(StreamId::Min(), StreamId::Max(), false, [&](StreamId id, FieldValues) {
        fwd.push_back(id);
        return true;
      });
      s.Range(StreamId::Min(), StreamId::Max(), true, [&](StreamId id, FieldValues) {
        rev.push_back(id);
        return true;
      });
      if (fwd.size() != s.size()) return StrCat("stream of size ", s.size(), " walks ", fwd.size());
      std::reverse(rev.begin(), rev.end());
      if (rev != fwd) return "stream walks differ forwards and backwards";
      break;
    }
    case ValueType::kList: {
      const ListValue& l = v.list();
      std::vector<std::string> fwd, rev;
      l.Walk(0, false, [&](std::string_view e) {
        fwd.emplace_back(e);
        return true;
      });
      l.Walk(0, true, [&](std::string_view e) {
        rev.emplace_back(e);
        return true;
      });
      if (fwd.size() != l.size() || l.empty()) return StrCat("list of size ", l.size(), " walks ", fwd.size());
      std::reverse(rev.begin(), rev.end());
      if (rev != fwd) return "list walks differ forwards and backwards";
      for (size_t i = 0; i < fwd.size(); i += 1 + fwd.size() / 64) {
        std::string e;
        if (!l.Index(static_cast<int64_t>(i), &e) || e != fwd[i]) return StrCat("list index ", i, " differs");
      }
      std::unique_ptr<ListValue> copy = l.Clone();
      for (const std::string& expect : fwd) {
        std::string e;
        if (!copy->PopFront(&e) || e != expect) return "list pops differ from its walk";
      }
      if (!copy->empty()) return "list not empty after popping every element";
      break;
    }
    case ValueType::kSet: {
      const SetValue& s = v.set();
      std::set<std::string> members;
      size_t n = 0;
      s.ForEach([&](std::string_view m) {
        members.emplace(m);
        ++n;
      });
      if (n != s.size() || members.size() != n || n == 0) return StrCat("set of size ", s.size(), " iterates ", n);
      SetValue copy = s.Clone();
      for (const std::string& m : members) {
        if (!s.Contains(m)) return StrCat("set member not found: ", absl::CEscape(ToAbsl(m)));
        if (!copy.Remove(m)) return StrCat("set member not removable: ", absl::CEscape(ToAbsl(m)));
      }
      if (!copy.empty()) return "set not empty after removing every member";
      break;
    }
    case ValueType::kHash: {
      const HashValue& h = v.hash();
      std::map<std::string, std::string> pairs;
      size_t n = 0;
      h.ForEach([&](std::string_view f, std::string_view x) {
        pairs.emplace(f, x);
        ++n;
      });
      if (n != h.size() || pairs.size() != n || n == 0) return StrCat("hash of size ", h.size(), " iterates ", n);
      HashValue copy = h.Clone();
      for (const auto& [f, x] : pairs) {
        std::string got;
        if (!h.Get(f, &got) || got != x) return StrCat("hash field lookup differs: ", absl::CEscape(ToAbsl(f)));
        if (!copy.Delete(f)) return StrCat("hash field not removable: ", absl::CEscape(ToAbsl(f)));
      }
      if (!copy.empty()) return "hash not empty after deleting every field";
      break;
    }
    case ValueType::kZSet: {
      const ZSetValue& z = v.zset();
      std::vector<std::pair<std::string, double>> walk;
      z.Walk(0, false, [&](std::string_view m, double score) {
        walk.emplace_back(m, score);
        return true;
      });
      if (walk.size() != z.size() || walk.empty()) return StrCat("zset of size ", z.size(), " walks ", walk.size());
      ZSetValue copy = z.Clone();
      for (size_t i = 0; i < walk.size(); ++i) {
        const auto& [m, score] = walk[i];
        if (std::isnan(score)) return "zset holds a NaN score";
        if (i > 0 && (score < walk[i - 1].second || (score == walk[i - 1].second && m <= walk[i - 1].first))) {
          return StrCat("zset out of order at rank ", i);
        }
        double got;
        if (!z.Score(m, &got) || got != score) return StrCat("zset score lookup differs: ", absl::CEscape(ToAbsl(m)));
        if (z.Rank(m, false) != static_cast<int64_t>(i)) return StrCat("zset rank differs at ", i);
        if (!copy.Remove(m)) return StrCat("zset member not removable: ", absl::CEscape(ToAbsl(m)));
      }
      if (copy.size() != 0) return "zset not empty after removing every member";
      break;
    }
  }
  const std::string before = Canonical(v);
  for (bool compress : {false, true}) {
    std::string reason;
    absl::StatusOr<Value> again = ParseDumpPayload(DumpPayload(v, compress), limits, &reason);
    if (!again.ok()) return StrCat("its own DUMP is refused: ", reason);
    if (Canonical(*again) != before) return "its DUMP restores to other contents";
  }
  return "";
}

// Loads into a real keyspace, as the server's loader does (RESIZEDB hints
// reserve tables; keys, expiries), checking every value on the way.
class CheckingLoader : public RdbVisitor {
 public:
  CheckingLoader(Keyspace& ks, const CollectionLimits& limits) : ks_(ks), limits_(limits) {}
  absl::Status OnEntry(int db, std::string key, Value value, int64_t expire_ms, KeyMeta meta) override {
    (void)meta;
    if (std::string problem = CheckValue(value, limits_); !problem.empty() && first_problem.empty()) {
      first_problem = StrCat("key ", absl::CEscape(ToAbsl(key)), ": ", problem);
    }
    Database& d = ks_.db(db);
    bool created;
    Entry* e = d.FindOrInsert(key, 0, &created);
    if (!created) return absl::DataLossError("duplicated key");
    e->value = std::move(value);
    if (expire_ms >= 0) d.SetExpire(key, e, expire_ms);
    return absl::OkStatus();
  }
  void OnResizeDb(int db, uint64_t keys, uint64_t expires) override {
    (void)expires;
    ks_.db(db).Reserve(static_cast<size_t>(keys));
  }
  std::string first_problem;

 private:
  Keyspace& ks_;
  const CollectionLimits& limits_;
};

// Saves a loaded keyspace and loads it back: the same keys must come back.
std::string CheckResave(Keyspace& ks, const CollectionLimits& limits) {
  StringSink sink;
  RdbWriter w(&sink, true, true);
  w.Header();
  size_t keys = 0;
  for (int i = 0; i < ks.count(); ++i) {
    Database& d = ks.db(i);
    if (d.size() == 0) continue;
    w.SelectDb(i);
    w.ResizeDb(d.size(), d.expires());
    d.ForEachIncludingExpired([&](std::string_view key, const Entry& e) {
      w.Entry(key, e.value, d.GetExpire(&e));
      ++keys;
    });
  }
  if (!w.Finish().ok()) return "the resave failed";
  Keyspace again(ks.count());
  again.set_expiry_mode(ExpiryMode::kKeep);
  CheckingLoader loader(again, limits);
  MemorySource src(sink.data);
  RdbLoadOptions options;
  options.databases = ks.count();
  options.limits = limits;
  if (absl::Status s = LoadRdb(&src, &loader, options); !s.ok()) return StrCat("the resave is refused: ", s.message());
  size_t loaded = 0;
  for (int i = 0; i < again.count(); ++i) loaded += again.db(i).size();
  if (loaded != keys) return StrCat("the resave holds ", loaded, " keys, not ", keys);
  return loader.first_problem;
}

// Default limits, or small ones that make loading convert encodings.
CollectionLimits PickLimits(Mutator& m) {
  CollectionLimits l;
  if (m.OneIn(3)) {
    l.hash.max_listpack_entries = 2;
    l.hash.max_listpack_value = 8;
    l.set.max_intset_entries = 4;
    l.zset.max_listpack_entries = 3;
    l.zset.max_listpack_value = 8;
    l.list = ListLimits{static_cast<int32_t>(m.OneIn(2) ? 3 : -1), static_cast<int32_t>(m.Below(3))};
  }
  return l;
}

struct Tally {
  uint64_t cases = 0, refused = 0, loaded = 0;
  double slowest_ms = 0;
};

class RdbFuzz : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    values_ = new std::vector<Encoded>(BuildValues());
    for (const Encoded& e : *values_) payloads_.push_back(Payload(e));
    files_ = new std::vector<std::string>(BuildFiles(*values_));
  }
  static void TearDownTestSuite() {
    delete values_;
    delete files_;
    payloads_.clear();
  }

  static uint64_t Iterations() { return EnvU64("RINGKV_FUZZ_ITERATIONS", 4000); }
  static uint64_t Seed() { return EnvU64("RINGKV_FUZZ_SEED", 1); }
  static bool Trace() { return EnvU64("RINGKV_FUZZ_TRACE", 0) != 0; }

  static std::vector<Encoded>* values_;
  static std::vector<std::string> payloads_;
  static std::vector<std::string>* files_;
};
std::vector<Encoded>* RdbFuzz::values_ = nullptr;
std::vector<std::string> RdbFuzz::payloads_;
std::vector<std::string>* RdbFuzz::files_ = nullptr;

// The unmutated corpus loads and passes every check: the checks themselves
// are sound, and every encoding above is one the reader accepts.
TEST_F(RdbFuzz, CorpusIsValid) {
  for (size_t i = 0; i < values_->size(); ++i) {
    std::string reason;
    absl::StatusOr<Value> v = ParseDumpPayload(payloads_[i], {}, &reason);
    ASSERT_TRUE(v.ok()) << (*values_)[i].name << ": " << reason;
    EXPECT_EQ(CheckValue(*v, {}), "") << (*values_)[i].name;
  }
  for (const std::string& f : *files_) {
    Keyspace ks(16);
    ks.set_expiry_mode(ExpiryMode::kKeep);
    CollectionLimits limits;
    CheckingLoader loader(ks, limits);
    MemorySource src(f);
    absl::Status s = LoadRdb(&src, &loader, RdbLoadOptions{});
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(loader.first_problem, "");
    EXPECT_EQ(CheckResave(ks, limits), "");
  }
}

TEST_F(RdbFuzz, MutatedDumpPayloadsAreRefusedOrSound) {
  const uint64_t iterations = Iterations(), seed = Seed();
  Tally tally;
  for (uint64_t i = 0; i < iterations; ++i) {
    Mutator m(seed * 0x9E3779B97F4A7C15ULL + i);
    const size_t pick = m.Below(payloads_.size());
    std::string p = payloads_[pick];
    m.Mutate(&p, payloads_[m.Below(payloads_.size())]);
    const bool fix_crc = !m.OneIn(10);
    if (fix_crc) FixDumpCrc(&p);
    const CollectionLimits limits = PickLimits(m);
    if (Trace()) {
      std::fprintf(stderr, "dump case %llu: %s\n", static_cast<unsigned long long>(i),
                   absl::CHexEscape(ToAbsl(p)).c_str());
    }
    const auto start = std::chrono::steady_clock::now();
    std::string reason;
    absl::StatusOr<Value> v = ParseDumpPayload(p, limits, &reason);
    ++tally.cases;
    if (!v.ok()) {
      ++tally.refused;
      const std::string_view msg = ToStd(v.status().message());
      ASSERT_TRUE(msg == "Bad data format" || msg == "DUMP payload version or checksum are wrong")
          << "case " << i << " refused with " << msg;
    } else {
      ++tally.loaded;
      const std::string problem = CheckValue(*v, limits);
      ASSERT_EQ(problem, "") << "seed " << seed << " case " << i << " (from " << (*values_)[pick].name
                             << "): " << absl::CHexEscape(ToAbsl(p));
    }
    tally.slowest_ms = std::max(
        tally.slowest_ms, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::printf("DUMP payloads: %llu cases, %llu refused, %llu loaded and sound; slowest %.1f ms\n",
              static_cast<unsigned long long>(tally.cases), static_cast<unsigned long long>(tally.refused),
              static_cast<unsigned long long>(tally.loaded), tally.slowest_ms);
  EXPECT_LT(tally.slowest_ms, 10000.0) << "a case took too long (a hang in waiting)";
}

TEST_F(RdbFuzz, MutatedRdbFilesAreRefusedOrSound) {
  const uint64_t iterations = Iterations() / 4, seed = Seed();
  Tally tally;
  for (uint64_t i = 0; i < iterations; ++i) {
    Mutator m(seed * 0xC2B2AE3D27D4EB4FULL + i);
    const size_t pick = m.Below(files_->size());
    std::string f = (*files_)[pick];
    m.Mutate(&f, m.OneIn(2) ? (*files_)[m.Below(files_->size())] : payloads_[m.Below(payloads_.size())]);
    if (!m.OneIn(10)) FixFileCrc(&f);
    const CollectionLimits limits = PickLimits(m);
    if (Trace()) {
      std::fprintf(stderr, "file case %llu: %s\n", static_cast<unsigned long long>(i),
                   absl::CHexEscape(ToAbsl(f)).c_str());
    }
    const auto start = std::chrono::steady_clock::now();
    Keyspace ks(16);
    ks.set_expiry_mode(ExpiryMode::kKeep);
    CheckingLoader loader(ks, limits);
    MemorySource src(f);
    RdbLoadOptions options;
    options.limits = limits;
    absl::Status s = LoadRdb(&src, &loader, options);
    ++tally.cases;
    // Values are checked as they arrive, also those of a file refused later.
    ASSERT_EQ(loader.first_problem, "") << "seed " << seed << " case " << i << ": " << absl::CHexEscape(ToAbsl(f));
    if (!s.ok()) {
      ++tally.refused;
    } else {
      ++tally.loaded;
      ASSERT_EQ(CheckResave(ks, limits), "") << "seed " << seed << " case " << i << ": " << absl::CHexEscape(ToAbsl(f));
    }
    tally.slowest_ms = std::max(
        tally.slowest_ms, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::printf("RDB files: %llu cases, %llu refused, %llu loaded and sound; slowest %.1f ms\n",
              static_cast<unsigned long long>(tally.cases), static_cast<unsigned long long>(tally.refused),
              static_cast<unsigned long long>(tally.loaded), tally.slowest_ms);
  EXPECT_LT(tally.slowest_ms, 10000.0) << "a case took too long (a hang in waiting)";
}

}  // namespace
}  // namespace ringkv::core

#include "server/command_table.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/ascii.h"
#include "core/string_value.h"
#include "core/strings.h"

namespace ringkv::server {

std::vector<std::string_view> FlagNames(uint32_t flags) {
  static const std::pair<uint32_t, std::string_view> kNames[] = {
      {cmd::kWrite, "write"},        {cmd::kReadonly, "readonly"},      {cmd::kDenyOom, "denyoom"},
      {cmd::kAdmin, "admin"},        {cmd::kPubsub, "pubsub"},          {cmd::kNoscript, "noscript"},
      {cmd::kBlocking, "blocking"},  {cmd::kLoading, "loading"},        {cmd::kStale, "stale"},
      {cmd::kSkipMonitor, "skip_monitor"}, {cmd::kSkipSlowlog, "skip_slowlog"}, {cmd::kFast, "fast"},
      {cmd::kNoAuth, "no_auth"},     {cmd::kNoMandatoryKeys, "no_mandatory_keys"},
      {cmd::kNoAsyncLoading, "no_async_loading"},
      {cmd::kNoMulti, "no_multi"},
      {cmd::kAllowBusy, "allow_busy"},  {cmd::kAsking, "asking"},
      // kMayReplicate, kSentinel and kOnlySentinel are not listed: redis-server
      // 7.0 hides them too.
  };
  std::vector<std::string_view> out;
  for (auto [bit, name] : kNames) {
    if (flags & bit) out.push_back(name);
  }
  return out;
}

namespace {

constexpr uint64_t kOnes = 0x0101010101010101ULL;
constexpr uint64_t kHighBits = 0x8080808080808080ULL;

// ASCII 'A'..'Z' to lower case in every byte of `w`; other bytes (digits,
// '_', '|', non-ASCII) unchanged.
inline uint64_t FoldWord(uint64_t w) {
  const uint64_t heptets = w & ~kHighBits;
  const uint64_t above_z = heptets + (0x7f - 'Z') * kOnes;  // high bit: byte > 'Z'
  const uint64_t from_a = heptets + (0x80 - 'A') * kOnes;   // high bit: byte >= 'A'
  const uint64_t upper = ~w & (from_a ^ above_z) & kHighBits;
  return w | (upper >> 2);
}

}  // namespace

CommandTable::Folded CommandTable::Fold(std::string_view name) {
  const size_t n = name.size();
  Folded f;
  f.w0 = FoldWord(CommandTable::LoadUpTo8(name.data(), n));
  if (n > 8) f.w1 = FoldWord(CommandTable::LoadUpTo8(name.data() + 8, n - 8));
  return f;
}

size_t CommandTable::SlotOf(const Folded& f, size_t len, size_t mask) {
  uint64_t h = (f.w0 ^ (f.w1 * 0x9e3779b97f4a7c15ULL) ^ len) * 0xff51afd7ed558ccdULL;
  return static_cast<size_t>(h >> 40) & mask;
}

void CommandTable::Insert(const CommandSpec* spec, std::string_view name) {
  const size_t mask = slots_.size() - 1;
  const Folded folded = Fold(name);
  for (size_t i = SlotOf(folded, name.size(), mask);; i = (i + 1) & mask) {
    if (slots_[i].spec == nullptr) {
      slots_[i] = Slot{folded, spec, static_cast<uint32_t>(name.size()), name.data()};
      return;
    }
  }
}

std::string_view CommandTable::LookupName(const CommandSpec* spec) const {
  auto it = renamed_.find(spec);
  return it == renamed_.end() ? std::string_view(spec->name) : std::string_view(it->second);
}

void CommandTable::Rebuild() {
  last_word_ = 0;  // forget the last name found: nothing remembered is stale
  last_len_ = 0;
  last_spec_ = nullptr;
  while (commands_.size() * 4 > slots_.size()) slots_.resize(slots_.size() * 2);
  slots_.assign(slots_.size(), Slot{});
  for (const auto& c : commands_) {
    const std::string_view name = LookupName(c.get());
    if (!name.empty()) Insert(c.get(), name);
  }
}

void CommandTable::Add(CommandSpec spec) {
  last_word_ = 0;
  last_len_ = 0;
  last_spec_ = nullptr;
  auto owned = std::make_unique<CommandSpec>(std::move(spec));
  const CommandSpec* added = owned.get();
  commands_.push_back(std::move(owned));
  if (commands_.size() * 4 > slots_.size()) {
    Rebuild();
  } else {
    Insert(added, added->name);
  }
}

absl::Status CommandTable::Rename(std::string_view from, std::string_view to) {
  const CommandSpec* spec = FindSlow(from);
  if (spec == nullptr) return absl::NotFoundError("No such command in rename-command");
  if (!to.empty() && FindSlow(to) != nullptr) return absl::AlreadyExistsError("Target command name already exists");
  renamed_[spec] = AsciiLower(to);
  Rebuild();
  return absl::OkStatus();
}

const CommandSpec* CommandTable::FindAndRemember(std::string_view name) const {
  const CommandSpec* spec = FindSlow(name);
  // Only what was found, by its exact bytes: another case of the same name
  // is another entry (and found again the slow way once).
  if (spec != nullptr && name.size() <= 8) {
    last_word_ = LoadUpTo8(name.data(), name.size());
    last_len_ = name.size();
    last_spec_ = spec;
  }
  return spec;
}

const CommandSpec* CommandTable::FindSlow(std::string_view name) const {
  const Folded f = Fold(name);
  const size_t mask = slots_.size() - 1;
  for (size_t i = SlotOf(f, name.size(), mask);; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.spec == nullptr) return nullptr;
    if (s.folded == f && s.len == name.size()) {
      // Names are stored in lower case; the first 16 bytes matched folded.
      if (name.size() <= 16 || EqualsIgnoreCase(name.substr(16), std::string_view(s.name, s.len).substr(16))) {
        return s.spec;
      }
    }
  }
}

const CommandSpec* CommandTable::FindSub(const CommandSpec& parent, std::string_view sub) {
  std::string full = parent.name + "|" + AsciiLower(sub);
  for (const CommandSpec& s : parent.subcommands) {
    if (s.name == full) return &s;
  }
  return nullptr;
}

void CommandTable::ResetStats() {
  for (auto& c : commands_) {
    c->calls = c->usec = c->rejected_calls = c->failed_calls = 0;
    c->latency_histogram.reset();
    for (auto& s : c->subcommands) {
      s.calls = s.usec = s.rejected_calls = s.failed_calls = 0;
      s.latency_histogram.reset();
    }
  }
}

void RegisterAllCommands(CommandTable& table) {
  RegisterConnectionCommands(table);
  RegisterServerCommands(table);
  RegisterLolwutCommands(table);
  RegisterConfigCommands(table);
  RegisterClientCommands(table);
  RegisterIntrospectionCommands(table);
  RegisterStringCommands(table);
  RegisterBitmapCommands(table);
  RegisterHyperLogLogCommands(table);
  RegisterGeoCommands(table);
  RegisterHashCommands(table);
  RegisterStreamCommands(table);
  RegisterListCommands(table);
  RegisterBlockingCommands(table);
  RegisterTransactionCommands(table);
  RegisterSortCommands(table);
  RegisterSetCommands(table);
  RegisterZSetCommands(table);
  RegisterZSetRangeCommands(table);
  RegisterZSetAlgebraCommands(table);
  RegisterKeyCommands(table);
  RegisterFlushCommands(table);
  RegisterInfoCommand(table);
  RegisterDebugCommand(table);
  RegisterMemoryCommands(table);
  RegisterLatencyCommands(table);
  RegisterPersistenceCommands(table);
  RegisterReplicationCommands(table);
  RegisterDumpCommands(table);
  RegisterMigrateCommands(table);
  RegisterPubsubCommands(table);
  RegisterScriptingCommands(table);
  RegisterFunctionCommands(table);
  RegisterAclCommands(table);
  RegisterClusterCommands(table);
  RegisterModuleCommands(table);
}

std::vector<std::string_view> CommandKeys(const CommandSpec& spec, std::span<const std::string_view> argv) {
  std::vector<std::string_view> keys;
  if (spec.find_keys != nullptr) {
    if (!spec.find_keys(argv, &keys)) keys.clear();
  } else if (spec.first_key > 0) {
    const int argc = static_cast<int>(argv.size());
    const int last = spec.last_key < 0 ? argc + spec.last_key : spec.last_key;
    for (int i = spec.first_key; i <= last && i < argc; i += std::max(1, spec.step)) keys.push_back(argv[i]);
  }
  return keys;
}

namespace keys {
namespace {

// The `count` keys after argv[at]: false unless the count is a number of at
// least one and that many arguments follow.
// A count as Redis's key finders read it, with atoi: leading spaces, a
// sign, then digits up to the first other character ("1.0" and " 1" are 1,
// "x" is 0); clamped where atoi's result is undefined.
int64_t AtoiCount(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r'))) ++i;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  int64_t n = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9' && n < INT32_MAX; ++i) n = n * 10 + (s[i] - '0');
  return negative ? -n : n;
}

bool AfterCount(std::span<const std::string_view> argv, size_t at, std::vector<std::string_view>* keys) {
  if (argv.size() <= at) return false;
  const int64_t n = AtoiCount(argv[at]);
  if (n < 1 || static_cast<uint64_t>(n) > argv.size() - at - 1) return false;
  for (size_t i = at + 1; i <= at + static_cast<size_t>(n); ++i) keys->push_back(argv[i]);
  return true;
}

}  // namespace

bool AfterCountAt1(std::span<const std::string_view> argv, std::vector<std::string_view>* keys) {
  return AfterCount(argv, 1, keys);
}

bool AfterCountAt2(std::span<const std::string_view> argv, std::vector<std::string_view>* keys) {
  return AfterCount(argv, 2, keys);
}

bool DestinationThenCount(std::span<const std::string_view> argv, std::vector<std::string_view>* keys) {
  if (argv.size() < 2) return false;
  keys->push_back(argv[1]);
  return AfterCount(argv, 2, keys);
}

bool ScriptKeys(std::span<const std::string_view> argv, std::vector<std::string_view>* keys) {
  if (!AfterCount(argv, 2, keys)) keys->clear();
  return true;
}

bool SortKeys(std::span<const std::string_view> argv, std::vector<std::string_view>* keys) {
  if (argv.size() < 2) return false;
  keys->push_back(argv[1]);
  // As Redis's sortGetKeys: LIMIT skips two arguments, GET and BY one; the
  // last STORE with an argument after it names the destination.
  std::optional<std::string_view> store;
  for (size_t i = 2; i < argv.size(); ++i) {
    if (EqualsIgnoreCase(argv[i], "limit")) {
      i += 2;
    } else if (EqualsIgnoreCase(argv[i], "get") || EqualsIgnoreCase(argv[i], "by")) {
      i += 1;
    } else if (EqualsIgnoreCase(argv[i], "store") && i + 1 < argv.size()) {
      store = argv[i + 1];
    }
  }
  if (store) keys->push_back(*store);
  return true;
}

}  // namespace keys

}  // namespace ringkv::server

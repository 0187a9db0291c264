#include "server/command_table.h"

#include <algorithm>
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
      {cmd::kNoAuth, "no_auth"},     {cmd::kNoAsyncLoading, "no_async_loading"},
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

void CommandTable::Add(CommandSpec spec) {
  auto owned = std::make_unique<CommandSpec>(std::move(spec));
  by_name_[owned->name] = owned.get();
  commands_.push_back(std::move(owned));
}

const CommandSpec* CommandTable::Find(std::string_view name) const {
  char buf[64];
  if (name.size() >= sizeof(buf)) return nullptr;
  for (size_t i = 0; i < name.size(); ++i) buf[i] = absl::ascii_tolower(static_cast<unsigned char>(name[i]));
  auto it = by_name_.find(std::string_view(buf, name.size()));
  return it == by_name_.end() ? nullptr : it->second;
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
bool AfterCount(std::span<const std::string_view> argv, size_t at, std::vector<std::string_view>* keys) {
  int64_t n = 0;
  if (argv.size() <= at || !core::StringToInt64(argv[at], &n) || n < 1 ||
      static_cast<uint64_t>(n) > argv.size() - at - 1) {
    return false;
  }
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

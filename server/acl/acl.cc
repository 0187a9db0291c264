#include "server/acl/acl.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/glob.h"
#include "core/strings.h"
#include "server/key_flags.h"

namespace ringkv::server::acl {

Acl::Acl(const CommandTable& table) : index_(table) {
  default_ = NewDefaultUser();
  users_["default"] = default_;
}

std::shared_ptr<User> Acl::NewDefaultUser() const {
  auto u = std::make_shared<User>("default", pubsub_all_);
  std::string reason;
  for (std::string_view op : {"+@all", "~*", "&*", "on", "nopass"}) ApplyRule(index_, pubsub_all_, op, u.get(), &reason);
  u->Refresh();
  return u;
}

std::shared_ptr<User> Acl::Find(std::string_view name) const {
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : it->second;
}

void Acl::SetDefaultPassword(std::string_view pass) {
  std::string reason;
  ApplyRule(index_, pubsub_all_, "resetpass", default_.get(), &reason);
  if (pass.empty()) {
    ApplyRule(index_, pubsub_all_, "nopass", default_.get(), &reason);
  } else {
    ApplyRule(index_, pubsub_all_, StrCat(">", pass), default_.get(), &reason);
  }
}

bool Acl::SetUser(std::string_view name, std::span<const std::string_view> ops, std::string* err,
                  std::shared_ptr<const User>* before) {
  std::vector<std::string> merged;
  size_t invalid = 0;
  if (!MergeSelectorArgs(ops, &merged, &invalid)) {
    *err = StrCat("Unmatched parenthesis in acl selector starting at '", ops[invalid], "'.");
    return false;
  }
  std::shared_ptr<User> existing = Find(name);
  User staged = existing ? *existing : User(std::string(name), pubsub_all_);
  if (!ApplyRules(index_, pubsub_all_, merged, &staged, err)) return false;
  if (existing) {
    if (before != nullptr) *before = std::make_shared<const User>(*existing);
    *existing = std::move(staged);
  } else {
    users_[std::string(name)] = std::make_shared<User>(std::move(staged));
  }
  return true;
}

std::shared_ptr<User> Acl::DeleteUser(std::string_view name) {
  auto it = users_.find(name);
  if (it == users_.end() || name == "default") return nullptr;
  std::shared_ptr<User> u = it->second;
  users_.erase(it);
  return u;
}

absl::Status Acl::LoadConfiguredUsers(const std::vector<std::vector<std::string>>& users) {
  for (const std::vector<std::string>& line : users) {
    const std::string& name = line[0];
    if (HasSpaces(name)) return absl::InvalidArgumentError("Spaces not allowed in ACL usernames");
    std::vector<std::string_view> ops(line.begin() + 1, line.end());
    std::vector<std::string> merged;
    size_t invalid = 0;
    if (!MergeSelectorArgs(ops, &merged, &invalid)) {
      return absl::InvalidArgumentError(
          StrCat("Unmatched parenthesis in acl selector starting at '", ops[invalid], "'."));
    }
    std::shared_ptr<User> u = Find(name);
    if (u == nullptr) {
      u = std::make_shared<User>(name, pubsub_all_);
      users_[name] = u;
    } else {
      std::string reason;
      ApplyRule(index_, pubsub_all_, "reset", u.get(), &reason);
    }
    for (const std::string& op : merged) {
      std::string reason;
      if (!ApplyRule(index_, pubsub_all_, op, u.get(), &reason)) {
        return absl::InvalidArgumentError(
            StrCat("Error loading ACL rule '", op, "' for the user named '", name, "': ", reason));
      }
    }
    u->Refresh();
  }
  return absl::OkStatus();
}

bool Acl::LoadFile(const std::string& path, std::string* err, std::vector<std::shared_ptr<User>>* dropped) {
  std::ifstream in(path);
  if (!in) {
    *err = StrCat("Error loading ACLs, opening file '", path, "': ", std::strerror(errno));
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  UserMap loaded;
  std::string errors;
  int linenum = 0;
  for (std::string_view raw : Split(text, '\n', false)) {
    ++linenum;
    std::string_view line = raw;
    while (!line.empty() && std::strchr(" \t\r\n", line.front()) != nullptr) line.remove_prefix(1);
    while (!line.empty() && std::strchr(" \t\r\n", line.back()) != nullptr) line.remove_suffix(1);
    if (line.empty()) continue;
    std::vector<std::string_view> argv = Split(line, ' ', false);
    if (argv[0] != "user" || argv.size() < 2) {
      StrAppend(&errors, path, ":", linenum, " should start with user keyword followed by the username. ");
      continue;
    }
    if (HasSpaces(argv[1])) {
      StrAppend(&errors, "'", path, ":", linenum, ": username '", argv[1], "' contains invalid characters. ");
      continue;
    }
    if (loaded.contains(argv[1])) {
      StrAppend(&errors, "WARNING: Duplicate user '", argv[1], "' found on line ", linenum, ". ");
      continue;
    }
    auto u = std::make_shared<User>(std::string(argv[1]), pubsub_all_);
    loaded[std::string(argv[1])] = u;
    std::vector<std::string> merged;
    if (!MergeSelectorArgs(std::span(argv).subspan(2), &merged, nullptr)) {
      StrAppend(&errors, path, ":", linenum, ": Unmatched parenthesis in selector definition.");
    }
    bool syntax_error = false;
    for (std::string& op : merged) {
      while (!op.empty() && std::strchr("\t\r\n", op.back()) != nullptr) op.pop_back();
      std::string reason;
      if (!ApplyRule(index_, pubsub_all_, op, u.get(), &reason)) {
        if (reason == "Unknown command or category name in ACL") {
          StrAppend(&errors, path, ":", linenum, ": Error in applying operation '", op, "': ", reason, ". ");
        } else if (!syntax_error) {
          StrAppend(&errors, path, ":", linenum, ": ", reason, ". ");
          syntax_error = true;
        }
      }
    }
    u->Refresh();
  }
  if (!errors.empty()) {
    *err = StrCat(errors, "WARNING: ACL errors detected, no change to the previously active ACL rules was performed");
    return false;
  }
  // The default user keeps its identity (clients point at it): the file's
  // rules are copied into it.
  std::shared_ptr<User> new_default = loaded.contains("default") ? loaded["default"] : NewDefaultUser();
  *default_ = *new_default;
  default_->name = "default";
  loaded["default"] = default_;
  if (dropped != nullptr) {
    for (auto& [name, u] : users_) {
      if (u != default_) dropped->push_back(u);
    }
  }
  users_ = std::move(loaded);
  return true;
}

std::vector<std::string> Acl::UserLines() const {
  std::vector<std::string> lines;
  for (const auto& [name, u] : users_) lines.push_back(StrCat("user ", name, " ", DescribeUser(index_, *u)));
  return lines;
}

bool Acl::SaveFile(const std::string& path, std::string* err) const {
  std::string text;
  for (const std::string& line : UserLines()) StrAppend(&text, line, "\n");
  const std::string tmp = StrCat(path, ".tmp-", getpid());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  bool ok = fd >= 0;
  size_t off = 0;
  while (ok && off < text.size()) {
    ssize_t n = write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) off += static_cast<size_t>(n);
  }
  if (ok) ok = fsync(fd) == 0;
  if (fd >= 0) close(fd);
  if (ok) ok = rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) {
    unlink(tmp.c_str());
    *err = "There was an error trying to save the ACLs. Please check the server logs for more information";
  }
  return ok;
}

// ---- the check ---------------------------------------------------------------------

namespace {

bool KeyAllowed(const Selector& s, std::string_view key, uint8_t perms) {
  if (s.all_keys) return true;
  for (const KeyPattern& k : s.keys) {
    if ((k.perms & perms) != perms) continue;
    if (core::GlobMatch(k.pattern, key)) return true;
  }
  return false;
}

bool ChannelInList(const std::vector<std::string>& list, std::string_view channel, bool is_pattern) {
  for (const std::string& p : list) {
    if (is_pattern ? p == channel : core::GlobMatch(p, channel)) return true;
  }
  return false;
}

// The channels a call publishes to or subscribes to: (first index, is_pattern).
bool ChannelArgs(const CommandSpec& spec, size_t* first, size_t* last, size_t argc, bool* is_pattern) {
  *is_pattern = false;
  if (spec.name == "publish" || spec.name == "spublish") {
    *first = *last = 1;
  } else if (spec.name == "subscribe" || spec.name == "ssubscribe" || spec.name == "psubscribe") {
    *first = 1;
    *last = argc - 1;
    *is_pattern = spec.name == "psubscribe";
  } else {
    return false;
  }
  return argc > *first;
}

struct KeyCache {
  bool init = false;
  std::vector<KeyWithFlags> keys;
};

Verdict CheckSelector(const CommandIndex& index, const Selector& s, const CommandSpec& spec,
                      std::span<const std::string_view> argv, KeyCache* cache) {
  const int id = index.IdOf(&spec);
  if (!s.all_commands && !(spec.flags & cmd::kNoAuth) && (id < 0 || !s.allowed.test(static_cast<size_t>(id)))) {
    auto it = id < 0 ? s.first_args.end() : s.first_args.find(static_cast<uint32_t>(id));
    const size_t idx = spec.name.find('|') != std::string::npos ? 2 : 1;
    if (argv.size() < 2 || it == s.first_args.end() || idx >= argv.size() ||
        std::none_of(it->second.begin(), it->second.end(),
                     [&](const std::string& a) { return EqualsIgnoreCase(a, argv[idx]); })) {
      return {Denied::kCommand, 0};
    }
  }
  if (!s.all_keys && (spec.first_key > 0 || spec.find_keys != nullptr) && !spec.not_keys) {
    if (!cache->init) {
      cache->keys = KeysWithFlags(spec, argv);
      cache->init = true;
    }
    for (const KeyWithFlags& k : cache->keys) {
      if (!KeyAllowed(s, k.key, k.perms)) return {Denied::kKey, k.pos};
    }
  }
  size_t first, last;
  bool is_pattern;
  if (!s.all_channels && ChannelArgs(spec, &first, &last, argv.size(), &is_pattern)) {
    for (size_t i = first; i <= last; ++i) {
      if (!ChannelInList(s.channels, argv[i], is_pattern)) return {Denied::kChannel, i};
    }
  }
  return {};
}

}  // namespace

Verdict Acl::Check(const User& u, const CommandSpec& spec, std::span<const std::string_view> argv) const {
  Verdict relevant{Denied::kCommand, 0};
  KeyCache cache;
  for (const Selector& s : u.selectors) {
    Verdict v = CheckSelector(index_, s, spec, argv, &cache);
    if (v.ok()) return v;
    if (v.denied > relevant.denied || (v.denied == relevant.denied && v.pos > relevant.pos)) relevant = v;
  }
  return relevant;
}

bool Acl::CheckWithFullKeyRead(const User& u, const CommandSpec& spec, std::span<const std::string_view> argv) const {
  KeyCache cache;
  for (const Selector& s : u.selectors) {
    if (!CheckSelector(index_, s, spec, argv, &cache).ok()) continue;
    if (s.all_keys) return true;
    for (const KeyPattern& k : s.keys) {
      if ((k.perms & kRead) && k.pattern == "*") return true;
    }
  }
  return false;
}

bool Acl::ChannelAllowed(const User& u, std::string_view channel, bool is_pattern) {
  for (const Selector& s : u.selectors) {
    if (s.all_channels || ChannelInList(s.channels, channel, is_pattern)) return true;
  }
  return false;
}

bool Acl::KeepsChannelsOf(const User& before, const User& after) {
  for (const Selector& s : after.selectors) {
    if (s.all_channels) return true;
  }
  std::vector<std::string> upcoming;
  for (const Selector& s : after.selectors) upcoming.insert(upcoming.end(), s.channels.begin(), s.channels.end());
  for (const Selector& s : before.selectors) {
    if (s.all_channels) return false;
    for (const std::string& c : s.channels) {
      if (std::find(upcoming.begin(), upcoming.end(), c) == upcoming.end()) return false;
    }
  }
  return true;
}

// ---- ACL LOG -----------------------------------------------------------------------

void Acl::Log(Denied reason, LogContext context, std::string object, std::string username, std::string client_info,
              int64_t now_ms) {
  // An entry like one of the last ten within a minute is counted there.
  size_t scanned = 0;
  for (auto it = log_.begin(); it != log_.end() && scanned < 10; ++it, ++scanned) {
    const int64_t delta = it->ctime_ms > now_ms ? it->ctime_ms - now_ms : now_ms - it->ctime_ms;
    if (it->reason == reason && it->context == context && delta <= 60000 && it->object == object &&
        it->username == username) {
      LogEntry e = std::move(*it);
      log_.erase(it);
      ++e.count;
      e.ctime_ms = now_ms;
      e.client_info = std::move(client_info);
      log_.push_front(std::move(e));
      return;
    }
  }
  log_.push_front({1, reason, context, std::move(object), std::move(username), now_ms, std::move(client_info)});
  while (log_.size() > log_max_len_) log_.pop_back();
}

void Acl::set_log_max_len(size_t n) {
  // The log is trimmed to it when an entry is next added, not now (as
  // Redis: a lowered acllog-max-len leaves the entries until then).
  log_max_len_ = n;
}

std::string Acl::NoPermError(Denied d, const CommandSpec& spec) {
  switch (d) {
    case Denied::kCommand:
      return StrCat("NOPERM this user has no permissions to run the '", spec.name, "' command");
    case Denied::kKey:
      return "NOPERM this user has no permissions to access one of the keys used as arguments";
    default:
      return "NOPERM this user has no permissions to access one of the channels used as arguments";
  }
}

std::string Acl::DryRunError(Denied d, const CommandSpec& spec, std::string_view object) {
  switch (d) {
    case Denied::kCommand:
      return StrCat("This user has no permissions to run the '", spec.name, "' command");
    case Denied::kKey:
      return StrCat("This user has no permissions to access the '", object, "' key");
    default:
      return StrCat("This user has no permissions to access the '", object, "' channel");
  }
}

}  // namespace ringkv::server::acl

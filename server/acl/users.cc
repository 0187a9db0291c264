#include "server/acl/users.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>

#include "absl/strings/ascii.h"
#include "core/strings.h"
#include "io/resp_parser.h"
#include "server/command_table.h"

namespace ringkv::server::acl {

// ---- CommandIndex ----------------------------------------------------------------

CommandIndex::CommandIndex(const CommandTable& table) : table_(table) {
  for (const auto& spec : table.all()) {
    Add(spec.get());
    for (const CommandSpec& sub : spec->subcommands) Add(&sub);
  }
}

void CommandIndex::Add(const CommandSpec* spec) {
  uint32_t id = static_cast<uint32_t>(by_id_.size());
  if (id >= kFutureBit) return;  // never the reserved bit
  ids_[spec] = id;
  by_id_.push_back(spec);
  uint32_t cats = 0;
  for (std::string_view cat : Split(spec->acl, ' ', true)) {
    if (cat.starts_with('@')) cats |= CategoryBit(cat.substr(1));
  }
  categories_.push_back(cats);
}

uint32_t CommandIndex::CategoryBit(std::string_view name) {
  for (size_t i = 0; i < std::size(kCategories); ++i) {
    if (EqualsIgnoreCase(kCategories[i], name)) return 1u << i;
  }
  return 0;
}

const CommandSpec* CommandIndex::Lookup(std::string_view name) const {
  const size_t bar = name.find('|');
  if (bar == std::string_view::npos) return table_.Find(name);
  if (name.find('|', bar + 1) != std::string_view::npos) return nullptr;
  const CommandSpec* parent = table_.Find(name.substr(0, bar));
  if (parent == nullptr || parent->subcommands.empty()) return nullptr;
  return CommandTable::FindSub(*parent, name.substr(bar + 1));
}

// ---- users -------------------------------------------------------------------------

namespace {

Selector NewSelector(bool root, bool pubsub_all) {
  Selector s;
  s.root = root;
  s.all_channels = pubsub_all;
  return s;
}

void SetBit(Selector* s, size_t id, bool allow) {
  s->allowed.set(id, allow);
  if (!allow) s->all_commands = false;
}

// Allowing or denying a command also applies to its subcommands.
void ChangePerm(const CommandIndex& index, Selector* s, const CommandSpec* spec, bool allow) {
  const int id = index.IdOf(spec);
  if (id < 0) return;
  SetBit(s, static_cast<size_t>(id), allow);
  s->first_args.erase(static_cast<uint32_t>(id));
  for (const CommandSpec& sub : spec->subcommands) {
    if (int sid = index.IdOf(&sub); sid >= 0) SetBit(s, static_cast<size_t>(sid), allow);
  }
}

// A selector's rules inside its parentheses, split as Redis's sdssplitargs.
bool SplitArgs(std::string_view text, std::vector<std::string>* out) {
  std::string storage;
  absl::InlinedVector<std::string_view, 8> argv;
  if (!io::SplitInlineArgs(text, &storage, &argv)) return false;
  out->assign(argv.begin(), argv.end());
  return true;
}

bool ValidHash(std::string_view h) {
  if (h.size() != 64) return false;
  return std::all_of(h.begin(), h.end(), [](char c) { return (c >= 'a' && c <= 'f') || (c >= '0' && c <= '9'); });
}

constexpr std::string_view kErrUnknown = "Unknown command or category name in ACL";
constexpr std::string_view kErrSyntax = "Syntax error";

// One selector rule (ACLSetSelector).
bool ApplySelectorRule(const CommandIndex& index, std::string_view op, Selector* s, std::string* reason) {
  auto fail = [&](std::string_view why) {
    *reason = std::string(why);
    return false;
  };
  if (EqualsIgnoreCase(op, "allkeys") || op == "~*") {
    s->all_keys = true;
    s->keys.clear();
  } else if (EqualsIgnoreCase(op, "resetkeys")) {
    s->all_keys = false;
    s->keys.clear();
  } else if (EqualsIgnoreCase(op, "allchannels") || op == "&*") {
    s->all_channels = true;
    s->channels.clear();
  } else if (EqualsIgnoreCase(op, "resetchannels")) {
    s->all_channels = false;
    s->channels.clear();
  } else if (EqualsIgnoreCase(op, "allcommands") || EqualsIgnoreCase(op, "+@all")) {
    s->allowed.set();
    s->all_commands = true;
    s->first_args.clear();
  } else if (EqualsIgnoreCase(op, "nocommands") || EqualsIgnoreCase(op, "-@all")) {
    s->allowed.reset();
    s->all_commands = false;
    s->first_args.clear();
  } else if (op[0] == '~' || op[0] == '%') {
    if (s->all_keys) {
      return fail(
          "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. "
          "Try 'resetkeys' to start with an empty list of patterns");
    }
    uint8_t perms = 0;
    size_t offset = 1;
    if (op[0] == '%') {
      for (; offset < op.size(); ++offset) {
        const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(op[offset])));
        if (c == 'R' && !(perms & kRead)) {
          perms |= kRead;
        } else if (c == 'W' && !(perms & kWrite)) {
          perms |= kWrite;
        } else if (op[offset] == '~' && perms != 0) {
          ++offset;
          break;
        } else {
          return fail(kErrSyntax);
        }
      }
    } else {
      perms = kReadWrite;
    }
    std::string_view pattern = op.substr(std::min(offset, op.size()));
    if (HasSpaces(pattern)) return fail(kErrSyntax);
    auto it = std::find_if(s->keys.begin(), s->keys.end(), [&](const KeyPattern& k) { return k.pattern == pattern; });
    if (it == s->keys.end()) {
      s->keys.push_back({std::string(pattern), perms});
    } else {
      it->perms |= perms;
    }
    s->all_keys = false;
  } else if (op[0] == '&') {
    if (s->all_channels) {
      return fail(
          "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any "
          "effect. Try 'resetchannels' to start with an empty list of channels");
    }
    std::string_view pattern = op.substr(1);
    if (HasSpaces(pattern)) return fail(kErrSyntax);
    if (std::find(s->channels.begin(), s->channels.end(), pattern) == s->channels.end()) {
      s->channels.emplace_back(pattern);
    }
    s->all_channels = false;
  } else if (op.size() >= 2 && (op[0] == '+' || op[0] == '-') && op[1] == '@') {
    const bool allow = op[0] == '+';
    const uint32_t bit = CommandIndex::CategoryBit(op.substr(2));
    if (bit == 0) return fail(kErrUnknown);
    for (size_t id = 0; id < index.commands().size(); ++id) {
      if (index.categories(id) & bit) ChangePerm(index, s, index.commands()[id], allow);
    }
  } else if (op[0] == '+') {
    std::string_view name = op.substr(1);
    const size_t bar = name.rfind('|');
    if (bar == std::string_view::npos) {
      const CommandSpec* spec = index.Lookup(name);
      if (spec == nullptr) return fail(kErrUnknown);
      ChangePerm(index, s, spec, true);
    } else {
      const CommandSpec* cmd = index.Lookup(name.substr(0, bar));
      if (cmd == nullptr) return fail(kErrUnknown);
      if (cmd->name.find('|') != std::string::npos) return fail("Allowing first-arg of a subcommand is not supported");
      std::string_view sub = name.substr(bar + 1);
      if (sub.empty()) return fail(kErrSyntax);
      if (!cmd->subcommands.empty()) {
        const CommandSpec* subspec = index.Lookup(name);
        if (subspec == nullptr) return fail(kErrUnknown);
        ChangePerm(index, s, subspec, true);
      } else {
        // +select|0: a first argument allowed of an otherwise denied command.
        std::vector<std::string>& args = s->first_args[static_cast<uint32_t>(index.IdOf(cmd))];
        if (std::none_of(args.begin(), args.end(), [&](const std::string& a) { return EqualsIgnoreCase(a, sub); })) {
          args.emplace_back(sub);
        }
      }
    }
  } else if (op[0] == '-') {
    const CommandSpec* spec = index.Lookup(op.substr(1));
    if (spec == nullptr) return fail(kErrUnknown);
    ChangePerm(index, s, spec, false);
  } else {
    return fail(kErrSyntax);
  }
  return true;
}

}  // namespace

User::User(std::string n, bool pubsub_all) : name(std::move(n)) {
  selectors.push_back(NewSelector(true, pubsub_all));
}

void User::Refresh() {
  unrestricted = std::any_of(selectors.begin(), selectors.end(), [](const Selector& s) {
    return s.all_commands && s.all_keys && s.all_channels;
  });
}

std::string HashPassword(std::string_view text) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), md, &len, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 0xf]);
  }
  return out;
}

bool User::CheckPassword(std::string_view pass) const {
  if (!enabled) return false;
  if (nopass) return true;
  const std::string hashed = HashPassword(pass);
  bool match = false;
  for (const std::string& p : passwords) {
    // Time-independent comparison, as Redis.
    int diff = 0;
    for (size_t i = 0; i < 64; ++i) diff |= p[i] ^ hashed[i];
    match |= diff == 0;
  }
  return match;
}

bool HasSpaces(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)) || c == 0; });
}

bool ApplyRule(const CommandIndex& index, bool pubsub_all, std::string_view op, User* u, std::string* reason) {
  if (op.empty()) return true;
  if (EqualsIgnoreCase(op, "on")) {
    u->enabled = true;
  } else if (EqualsIgnoreCase(op, "off")) {
    u->enabled = false;
  } else if (EqualsIgnoreCase(op, "skip-sanitize-payload")) {
    u->sanitize = -1;
  } else if (EqualsIgnoreCase(op, "sanitize-payload")) {
    u->sanitize = 1;
  } else if (EqualsIgnoreCase(op, "nopass")) {
    u->nopass = true;
    u->passwords.clear();
  } else if (EqualsIgnoreCase(op, "resetpass")) {
    u->nopass = false;
    u->passwords.clear();
  } else if (op[0] == '>' || op[0] == '#') {
    std::string hash;
    if (op[0] == '>') {
      hash = HashPassword(op.substr(1));
    } else {
      if (!ValidHash(op.substr(1))) {
        *reason = "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters";
        return false;
      }
      hash = std::string(op.substr(1));
    }
    if (std::find(u->passwords.begin(), u->passwords.end(), hash) == u->passwords.end()) {
      u->passwords.push_back(std::move(hash));
    }
    u->nopass = false;
  } else if (op[0] == '<' || op[0] == '!') {
    std::string hash;
    if (op[0] == '<') {
      hash = HashPassword(op.substr(1));
    } else {
      if (!ValidHash(op.substr(1))) {
        *reason = "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters";
        return false;
      }
      hash = std::string(op.substr(1));
    }
    auto it = std::find(u->passwords.begin(), u->passwords.end(), hash);
    if (it == u->passwords.end()) {
      *reason = "The password you are trying to remove from the user does not exist";
      return false;
    }
    u->passwords.erase(it);
  } else if (op[0] == '(' && op.back() == ')') {
    Selector s = NewSelector(false, pubsub_all);
    std::vector<std::string> parts;
    // Unbalanced quotes split into no rules at all: an empty selector, as
    // Redis's sdssplitargs gives aclCreateSelectorFromOpSet nothing.
    if (!SplitArgs(op.substr(1, op.size() - 2), &parts)) parts.clear();
    for (const std::string& part : parts) {
      if (!ApplySelectorRule(index, part, &s, reason)) return false;
    }
    u->selectors.push_back(std::move(s));
  } else if (EqualsIgnoreCase(op, "clearselectors")) {
    u->selectors.resize(1);
  } else if (EqualsIgnoreCase(op, "reset")) {
    u->nopass = false;
    u->passwords.clear();
    Selector& root = u->selectors[0];
    root.all_keys = false;
    root.keys.clear();
    root.all_channels = pubsub_all;
    root.channels.clear();
    u->enabled = false;
    u->sanitize = 1;
    u->selectors.resize(1);
    root.allowed.reset();
    root.all_commands = false;
    root.first_args.clear();
  } else {
    if (!ApplySelectorRule(index, op, &u->selectors[0], reason)) return false;
  }
  return true;
}

bool ApplyRules(const CommandIndex& index, bool pubsub_all, std::span<const std::string> ops, User* u,
                std::string* err, size_t* failed_at) {
  User staged = *u;
  for (size_t i = 0; i < ops.size(); ++i) {
    std::string reason;
    if (!ApplyRule(index, pubsub_all, ops[i], &staged, &reason)) {
      *err = StrCat("Error in ACL SETUSER modifier '", ops[i], "': ", reason);
      if (failed_at != nullptr) *failed_at = i;
      return false;
    }
  }
  staged.Refresh();
  *u = std::move(staged);
  return true;
}

bool MergeSelectorArgs(std::span<const std::string_view> args, std::vector<std::string>* out, size_t* invalid_idx) {
  out->clear();
  std::string selector;
  bool open = false;
  size_t open_at = 0;
  for (size_t j = 0; j < args.size(); ++j) {
    std::string_view op = args[j];
    // An opening word starts a selector even inside one (the one open is
    // dropped), as Redis's ACLMergeSelectorArguments.
    if (!op.empty() && op[0] == '(' && op.back() != ')') {
      selector = std::string(op);
      open = true;
      open_at = j;
      continue;
    }
    if (open) {
      StrAppend(&selector, " ", op);
      if (!op.empty() && op.back() == ')') {
        open = false;
        out->push_back(std::move(selector));
      }
      continue;
    }
    out->emplace_back(op);
  }
  if (open) {
    if (invalid_idx != nullptr) *invalid_idx = open_at;
    return false;
  }
  return true;
}

// ---- descriptions ------------------------------------------------------------------

// Redis 7.0's ACLDescribeSelectorCommandRules: +@all or -@all, then the
// categories that fit best (each has more commands in common with the
// selector than different, fewest differences first), then the single
// commands (and allowed first arguments) that still differ.
std::string DescribeCommandRules(const CommandIndex& index, const Selector& s) {
  const bool additive = !s.allowed.test(kFutureBit);
  std::string out = additive ? "-@all " : "+@all ";
  Selector fake;
  if (!additive) fake.allowed.set();
  std::bitset<kCommandBits> temp = s.allowed;
  const size_t n = index.commands().size();
  while (true) {
    int best = -1;
    size_t mindiff = SIZE_MAX, maxsame = 0;
    for (size_t j = 0; j < std::size(kCategories); ++j) {
      size_t on = 0, off = 0;
      for (size_t id = 0; id < n; ++id) {
        if (!(index.categories(id) & (1u << j))) continue;
        if (temp.test(id)) {
          ++on;
        } else {
          ++off;
        }
      }
      const size_t diff = additive ? off : on;
      const size_t same = additive ? on : off;
      if (same > diff && (diff < mindiff || (diff == mindiff && same > maxsame))) {
        best = static_cast<int>(j);
        mindiff = diff;
        maxsame = same;
      }
    }
    if (best < 0) break;
    std::string reason;
    const std::string cat(kCategories[best]);
    ApplySelectorRule(index, StrCat(additive ? "+@" : "-@", cat), &fake, &reason);
    // The category is taken as applied: the temp bitmap gets its inverse.
    for (size_t id = 0; id < n; ++id) {
      if (!(index.categories(id) & (1u << best))) continue;
      const CommandSpec* spec = index.commands()[id];
      temp.set(id, !additive);
      for (const CommandSpec& sub : spec->subcommands) {
        if (int sid = index.IdOf(&sub); sid >= 0) temp.set(static_cast<size_t>(sid), !additive);
      }
    }
    StrAppend(&out, additive ? "+@" : "-@", cat, " ");
  }
  for (size_t id = 0; id < n; ++id) {
    const CommandSpec* spec = index.commands()[id];
    const bool userbit = s.allowed.test(id);
    if (userbit != fake.allowed.test(id)) {
      StrAppend(&out, userbit ? "+" : "-", spec->name, " ");
      ChangePerm(index, &fake, spec, userbit);
    }
    if (!userbit) {
      if (auto it = s.first_args.find(static_cast<uint32_t>(id)); it != s.first_args.end()) {
        for (const std::string& arg : it->second) StrAppend(&out, "+", spec->name, "|", arg, " ");
      }
    }
  }
  out.pop_back();
  return out;
}

namespace {
std::string PatternText(const KeyPattern& k) {
  const char* prefix = k.perms == kReadWrite ? "~" : k.perms == kRead ? "%R~" : "%W~";
  return StrCat(prefix, k.pattern);
}
}  // namespace

std::string DescribeKeys(const Selector& s) {
  if (s.all_keys) return "~*";
  std::string out;
  for (const KeyPattern& k : s.keys) StrAppend(&out, out.empty() ? "" : " ", PatternText(k));
  return out;
}

std::string DescribeChannels(const Selector& s) {
  if (s.all_channels) return "&*";
  std::string out;
  for (const std::string& c : s.channels) StrAppend(&out, out.empty() ? "" : " ", "&", c);
  return out;
}

namespace {
std::string DescribeSelector(const CommandIndex& index, const Selector& s) {
  std::string out;
  if (s.all_keys) {
    out = "~* ";
  } else {
    for (const KeyPattern& k : s.keys) StrAppend(&out, PatternText(k), " ");
  }
  if (s.all_channels) {
    out += "&* ";
  } else {
    out += "resetchannels ";
    for (const std::string& c : s.channels) StrAppend(&out, "&", c, " ");
  }
  out += DescribeCommandRules(index, s);
  return out;
}
}  // namespace

std::vector<std::string_view> UserFlags(const User& u) {
  std::vector<std::string_view> flags;
  flags.push_back(u.enabled ? "on" : "off");
  if (u.nopass) flags.push_back("nopass");
  if (u.sanitize < 0) flags.push_back("skip-sanitize-payload");
  if (u.sanitize > 0) flags.push_back("sanitize-payload");
  return flags;
}

std::string DescribeUser(const CommandIndex& index, const User& u) {
  std::string out;
  for (std::string_view f : UserFlags(u)) StrAppend(&out, f, " ");
  for (const std::string& p : u.passwords) StrAppend(&out, "#", p, " ");
  for (const Selector& s : u.selectors) {
    if (s.root) {
      out += DescribeSelector(index, s);
    } else {
      StrAppend(&out, " (", DescribeSelector(index, s), ")");
    }
  }
  return out;
}

}  // namespace ringkv::server::acl

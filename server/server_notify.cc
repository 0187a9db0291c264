// Server: what follows a change to the keyspace beyond the change itself --
// keyspace notifications, WATCH invalidation on FLUSH / SWAPDB -- and
// MONITOR's feed of every command.
#include <algorithm>
#include <cctype>
#include <cstdio>

#include "core/strings.h"
#include "server/server.h"

namespace ringkv::server {

void Server::BindNotifyConfig() {
  config_->Bind("notify-keyspace-events", [this] {
    const int64_t flags = notify::ParseFlags(config_->Str("notify-keyspace-events"));
    notify_flags_ = static_cast<uint32_t>(std::max<int64_t>(0, flags));
    wants_created_keys = (notify_flags_ & notify::kNew) != 0;
    wants_key_misses = (notify_flags_ & notify::kKeyMiss) != 0;
  });
}

void Server::PublishKeyspaceEvent(uint32_t /*type*/, std::string_view event, int db, std::string_view key) {
  // __keyspace@<db>__:<key> <event>, then __keyevent@<db>__:<event> <key>,
  // as Redis's notifyKeyspaceEvent.
  if (notify_flags_ & notify::kKeyspace) {
    Publish(PubSub::Kind::kChannel, StrCat("__keyspace@", db, "__:", key), event);
  }
  if (notify_flags_ & notify::kKeyevent) {
    Publish(PubSub::Kind::kChannel, StrCat("__keyevent@", db, "__:", event), key);
  }
}

void Server::SignalFlushingDb(int db) {
  // Clients blocked on its keys are looked at once it is empty (a consumer
  // group's reader is told its stream is gone).
  if (!key_waiters_.empty()) {
    for (const std::string& key : key_waiters_.KeysOf(db)) key_waiters_.MarkReady(db, key);
  }
  if (watched_.empty()) return;
  core::Database& d = keyspace_.db(db);
  auto none = [](std::string_view) { return false; };
  watched_.TouchDb(db, [&](std::string_view key) { return d.Peek(key) != nullptr; }, none, none);
}

void Server::SignalSwappedDbs(int a, int b) {
  // After the swap: the watchers of database x saw what y holds now, and
  // see what x holds now.
  if (!watched_.empty()) {
    const int64_t now_ms = clock_.WallMs();
    for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
      core::Database& dx = keyspace_.db(x);
      core::Database& dy = keyspace_.db(y);
      watched_.TouchDb(
          x, [&](std::string_view key) { return dy.Peek(key) != nullptr; },
          [&](std::string_view key) { return dx.Peek(key) != nullptr; },
          [&](std::string_view key) { return dx.IsLogicallyExpired(key, now_ms); });
    }
  }
  // Clients blocked on a key that the swap brought in get served.
  if (!key_waiters_.empty()) {
    for (int db : {a, b}) {
      for (const std::string& key : key_waiters_.KeysOf(db)) {
        key_waiters_.MarkReady(db, key);  // brought in, or gone (a stream's group reader is told)
      }
    }
  }
}

void Server::AddMonitor(Client& c) {
  if (c.monitor) return;
  c.monitor = true;
  monitors_.push_back(c.id());
}

namespace {

// Redis's sdscatrepr: a double-quoted string with C escapes.
void AppendRepr(std::string* out, std::string_view s) {
  out->push_back('"');
  for (unsigned char ch : s) {
    switch (ch) {
      case '\\': out->append("\\\\"); break;
      case '"': out->append("\\\""); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      case '\a': out->append("\\a"); break;
      case '\b': out->append("\\b"); break;
      default:
        if (std::isprint(ch)) {
          out->push_back(static_cast<char>(ch));
        } else {
          char hex[5];
          std::snprintf(hex, sizeof(hex), "\\x%02x", ch);
          out->append(hex);
        }
    }
  }
  out->push_back('"');
}

}  // namespace

void Server::FeedMonitors(const Client& c, Argv argv, int64_t now_us) {
  std::string line;
  char stamp[48];
  std::snprintf(stamp, sizeof(stamp), "+%lld.%06lld ", static_cast<long long>(now_us / 1000000),
                static_cast<long long>(now_us % 1000000));
  line = stamp;
  StrAppend(&line, "[", c.db, " ", c.conn != nullptr ? c.conn->peer.ToString() : std::string("lua"), "]");
  // Passwords never reach a monitor: AUTH's arguments, HELLO's after AUTH.
  const bool is_auth = EqualsIgnoreCase(argv[0], "auth");
  const bool is_hello = EqualsIgnoreCase(argv[0], "hello");
  size_t redact_from = is_auth ? 1 : argv.size(), redact_to = argv.size();
  for (size_t i = 2; is_hello && i < argv.size(); ++i) {
    if (EqualsIgnoreCase(argv[i], "auth")) {
      redact_from = i + 1;
      redact_to = std::min(argv.size(), i + 3);
      break;
    }
  }
  for (size_t i = 0; i < argv.size(); ++i) {
    line.push_back(' ');
    if (i >= redact_from && i < redact_to) {
      AppendRepr(&line, "(redacted)");
    } else {
      AppendRepr(&line, argv[i]);
    }
  }
  line.append("\r\n");
  for (uint64_t id : monitors_) {
    Client* m = FindClient(id);
    if (m == nullptr || m->closing) continue;
    ReplyTarget(*m).Append(line);
  }
}

std::vector<std::string> Server::ClientComponents(const Client& c) const {
  std::vector<std::string> names;
  if (c.meta) names.emplace_back("meta");
  if (c.deferred) names.emplace_back("deferred");
  if (blocked_.contains(c.id())) names.emplace_back("blocking");
  if (multi_.contains(c.id())) names.emplace_back("multi");
  if (watched_.Watching(c.id())) names.emplace_back("watch");
  if (pubsub_.Subscribed(c.id())) names.emplace_back("pubsub");
  if (c.monitor) names.emplace_back("monitor");
  if (c.tracking) names.emplace_back("tracking");
  if (c.held_replies) names.emplace_back("durable-replies");
  if (c.over_soft_limit) names.emplace_back("output-soft-limit");
  return names;
}

}  // namespace ringkv::server

#include "server/effects.h"

#include "core/keyspace.h"
#include "server/server.h"

namespace ringkv::server {

void Effects::Changed(int db, uint32_t type, std::string_view event, std::string_view key, uint64_t dirty) {
  if (server_ == nullptr) {
    Signaled(db, key);
    Notified(db, type, event, key, dirty);
    return;
  }
  server_->stats().dirty += dirty;
  server_->KeyEvent(type, event, db, key);
}

void Effects::Notified(int db, uint32_t type, std::string_view event, std::string_view key, uint64_t dirty) {
  if (server_ == nullptr) {
    recorded_->changes.push_back(KeyChange{db, type, event, key, dirty});
    recorded_->sequence.push_back(std::string(event) + " " + std::string(key));
    recorded_->dirty += dirty;
    return;
  }
  server_->stats().dirty += dirty;
  server_->NotifyKeyspaceEvent(type, event, db, key);
}

void Effects::Signaled(int db, std::string_view key) {
  if (server_ == nullptr) {
    recorded_->sequence.push_back("signal " + std::string(key));
    return;
  }
  server_->SignalModifiedKey(db, key);
}

void Effects::KeyReady(int db, std::string_view key) {
  if (server_ == nullptr) {
    recorded_->sequence.push_back("ready " + std::string(key));
    return;
  }
  server_->blocking().SignalReady(db, key);
}

void Effects::ReplyPoint() {
  if (server_ == nullptr) {
    recorded_->sequence.push_back("reply");
    return;
  }
  if (client_ != nullptr) server_->HoldPushes(*client_);
}

void Effects::ReleasePushes() {
  if (server_ != nullptr && client_ != nullptr) server_->ReleasePushes(*client_);
}

void Effects::Dirty(uint64_t n) {
  if (server_ == nullptr) {
    recorded_->dirty += n;
    return;
  }
  server_->stats().dirty += n;
}

void Effects::PropagateAs(std::vector<std::string> argv) {
  if (server_ == nullptr) {
    recorded_->propagate_as = std::move(argv);
    return;
  }
  server_->propagation().ReplaceWith(std::move(argv));
}

void Effects::AlsoPropagate(std::vector<std::string> argv) {
  if (server_ == nullptr) {
    recorded_->also.push_back(std::move(argv));
    return;
  }
  server_->propagation().Add(std::move(argv));
}

bool Effects::DeleteKey(core::Database& db, std::string_view key, int64_t now_ms, bool lazy) {
  if (server_ == nullptr) return db.Find(key, now_ms) != nullptr && db.Erase(key);
  return server_->DeleteKey(db, key, now_ms, lazy);
}

void Effects::ReplaceValue(core::Entry& e, core::Value value, bool lazy) {
  if (server_ != nullptr) server_->FreeLaterIfBig(e.value, lazy);
  e.value = std::move(value);
}

bool Effects::BlockOnKeys(Client& client, BlockKind kind, std::span<const std::string_view> argv,
                          std::vector<std::string> keys, int64_t deadline_us,
                          std::vector<std::pair<std::string, core::StreamId>> read_after) {
  if (server_ == nullptr || !server_->MayBlock(client)) return false;
  server_->blocking().BlockOnKeys(client, kind, argv, std::move(keys), deadline_us, std::move(read_after));
  return true;
}

bool Effects::lazy_server_del() const { return server_ != nullptr && server_->lazy_server_del(); }

bool Effects::lazy_user_del() const { return server_ != nullptr && server_->lazy_user_del(); }

bool Effects::cluster_enabled() const { return server_ != nullptr && server_->cluster() != nullptr; }

bool Effects::lazy_expire() const {
  return server_ != nullptr && server_->config().Bool("lazyfree-lazy-expire");
}

}  // namespace ringkv::server

#include "core/keyspace.h"

#include <chrono>

#include "core/access_policy.h"

namespace ringkv::core {

inline Entry* Database::LookUp(std::string_view key, int64_t now_ms) {
  Entry* e = KnownEntryOf(key);
  if (e != nullptr) {
    dict_.StepRehash();  // as FindHashed would
  } else {
    e = dict_.FindHashed(key, HashOf(key));
    if (e == nullptr) return nullptr;
  }
  if (IsExpired(*e, now_ms)) {
    switch (*expiry_mode_) {
      case ExpiryMode::kKeep:
        return e;
      case ExpiryMode::kHide:
        return nullptr;
      case ExpiryMode::kDelete:
        DeleteExpired(key);
        return nullptr;
    }
  }
  return e;
}

inline void Database::Touch(Entry& e, int64_t now_ms) {
  const uint32_t access = RecordAccess(*access_, e.lru(), now_ms, *rng_);
  if (access != e.lru()) e.set_lru(access);  // no store when unchanged: keeps the line (and page) clean
}

Entry* Database::Find(std::string_view key, int64_t now_ms) {
  Entry* e = LookUp(key, now_ms);
  if (e != nullptr) {
    // A write lookup: a running snapshot gets the entry before the change.
    BeforeChange(key, *e);
    Touch(*e, now_ms);
  }
  return e;
}

Entry* Database::FindNoTouch(std::string_view key, int64_t now_ms) {
  Entry* e = LookUp(key, now_ms);
  if (e != nullptr && capture_ != nullptr && *in_write_command_) BeforeChange(key, *e);
  return e;
}

Entry* Database::FindForReadLookUp(std::string_view key, int64_t now_ms, bool touch) {
  Entry* e = LookUp(key, now_ms);
  if (e == nullptr) return nullptr;
  if (capture_ != nullptr && *in_write_command_) BeforeChange(key, *e);
  if (touch) Touch(*e, now_ms);
  return e;
}

Entry* Database::FindOrInsert(std::string_view key, int64_t now_ms, bool* created, size_t slot_bytes) {
  bool inserted = false;
  Entry* found = KnownEntryOf(key);
  if (found != nullptr) {
    dict_.StepRehash();  // as InsertNodeHashed would
  } else {
    // maxmemory: a doubling that would take memory past it waits (Redis's
    // dictExpandAllowed). Asked only when this insert would double the table.
    if (dict_.WouldGrowOnInsert()) [[unlikely]] {
      dict_.set_grow_held(access_->grow_allowed != nullptr &&
                          !access_->grow_allowed(access_->grow_ctx, dict_.GrowthBytes()));
    }
    auto [node, added] = dict_.InsertNodeHashed(key, HashOf(key), slot_bytes);
    found = &node->value;
    inserted = added;
    if (inserted && slot_index_ != nullptr) slot_index_->Add(node->key().view());
  }
  Entry& e = *found;
  if (!inserted) BeforeChange(key, e);
  if (!inserted && *expiry_mode_ != ExpiryMode::kKeep && IsExpired(e, now_ms)) {
    if (*observer_ != nullptr) (*observer_)->OnKeyExpired(index_, key);
    expires_.Remove(e);
    e.value = Value();
    ++stats_->expired_keys;
    inserted = true;
  }
  *created = inserted;
  if (inserted) {
    e.set_lru(InitialAccess(*access_, now_ms));
    e.set_snap(epoch_);  // not in a running snapshot: it began after
    if (*observer_ != nullptr && (*observer_)->created_key_watchers != 0) (*observer_)->OnKeyCreated(index_, key);
  } else {
    Touch(e, now_ms);
  }
  return &e;
}

void Database::DeleteExpired(std::string_view key) {
  if (*observer_ != nullptr) (*observer_)->OnKeyExpired(index_, key);
  Erase(key);
  ++stats_->expired_keys;
}

void Database::Evict(std::string_view key) {
  if (*observer_ != nullptr) (*observer_)->OnKeyEvicted(index_, key);
  Erase(key);
}

bool Database::Erase(std::string_view key) {
  Entry* e = dict_.Find(key);
  if (e == nullptr) return false;
  BeforeChange(key, *e);
  if (e->has_expire()) expires_.Remove(*e);
  if (slot_index_ != nullptr) slot_index_->Remove(key);  // before the node (and the bytes it views) goes
  return dict_.Erase(key);
}

void Database::ChangeExpire(std::string_view key, Entry* e, int64_t when_ms) {
  BeforeChange(key, *e);
  if (when_ms < 0) {
    if (e->has_expire()) expires_.Remove(*e);
    return;
  }
  expires_.Set(*e, when_ms);
}

int64_t Database::AverageTtl(int64_t now_ms) const {
  if (expires_.empty()) return 0;
  // A bounded sample keeps INFO cheap on big databases.
  size_t n = std::min<size_t>(expires_.size(), 1000);
  int64_t sum = 0;
  for (size_t i = 0; i < n; ++i) sum += std::max<int64_t>(0, expires_[i].when_ms - now_ms);
  return sum / static_cast<int64_t>(n);
}

void Database::Clear() {
  if (capture_ != nullptr) [[unlikely]] {
    GiveTableToSnapshot();
    return;
  }
  if (slot_index_ != nullptr) slot_index_->Clear();
  dict_.Clear();
  expires_.clear();
}

void Database::GiveTableToSnapshot() {
  if (slot_index_ != nullptr) slot_index_->Clear();
  auto table = std::make_unique<DetachedData>();
  table->dict.Swap(dict_);
  table->expires.swap(expires_);
  SnapshotCapture* capture = capture_;
  capture->TakeRest(*this, std::move(table), epoch_);  // detaches itself (the table is empty now)
}

std::unique_ptr<DetachedData> Database::Detach() {
  if (capture_ != nullptr) [[unlikely]] {
    GiveTableToSnapshot();
    return std::make_unique<DetachedData>();
  }
  if (slot_index_ != nullptr) slot_index_->Clear();
  auto out = std::make_unique<DetachedData>();
  out->dict.Swap(dict_);
  out->expires.swap(expires_);
  return out;
}

void Database::Swap(Database& other) {
  BeforeTableChange();
  other.BeforeTableChange();
  dict_.Swap(other.dict_);
  expires_.swap(other.expires_);
  // The entries' marks are relative to their own database's epochs.
  std::swap(epoch_, other.epoch_);
  std::swap(epochs_since_full_walk_, other.epochs_since_full_walk_);
  // An index describes its own database's keys: swapped along when both
  // keep one, rebuilt when only one does (a staging keyspace swapped in).
  if (slot_index_ != nullptr && other.slot_index_ != nullptr) {
    slot_index_->Swap(*other.slot_index_);
  } else if (slot_index_ != nullptr) {
    slot_index_.reset();
    EnableSlotIndex();
  } else if (other.slot_index_ != nullptr) {
    other.slot_index_.reset();
    other.EnableSlotIndex();
  }
}

void Database::EnableSlotIndex() {
  if (slot_index_ != nullptr) return;
  slot_index_ = std::make_unique<SlotIndex>();
  dict_.ForEach([&](NodeKey key, Entry&) { slot_index_->Add(key.view()); });
}

void Database::CaptureForSnapshot(std::string_view key, Entry& e) {
  capture_->Capture(*this, key, e);
  e.set_snap(epoch_);
}

void Database::AttachSnapshot(SnapshotCapture* capture) {
  if (epochs_since_full_walk_ >= 254) {
    // Marks of 254 abandoned snapshots: the next epoch could be one an
    // entry still carries. Renumber every entry to the current one.
    dict_.ForEach([&](NodeKey, Entry& e) { e.set_snap(epoch_); });
    epochs_since_full_walk_ = 0;
  }
  ++epoch_;
  ++epochs_since_full_walk_;
  capture_ = capture;
}

void Database::DetachSnapshot(bool walked_all) {
  capture_ = nullptr;
  if (walked_all) epochs_since_full_walk_ = 0;
}

void Database::ForEach(int64_t now_ms, const std::function<void(std::string_view, const Entry&)>& fn) {
  dict_.ForEach([&](NodeKey key, Entry& entry) {
    if (!IsExpired(entry, now_ms)) fn(key.view(), entry);
  });
}

uint64_t Database::Scan(uint64_t cursor, int64_t now_ms,
                        const std::function<void(std::string_view, const Entry&)>& fn,
                        const std::function<void(std::string_view)>& expired) {
  return dict_.Scan(cursor, [&](NodeKey key, Entry& entry) {
    if (!IsExpired(entry, now_ms)) {
      fn(key.view(), entry);
    } else if (expired) {
      expired(key.view());
    }
  });
}

bool Database::RandomKey(int64_t now_ms, absl::BitGen& rng, std::string* key) {
  // Bounded retries: a database full of expired keys must not spin forever.
  for (int attempt = 0; attempt < 100 && dict_.size() > 0; ++attempt) {
    auto* node = dict_.FairRandomNode(rng);
    if (node == nullptr) return false;
    if (!IsExpired(node->value, now_ms)) {
      key->assign(node->key().view());
      return true;
    }
    if (*expiry_mode_ != ExpiryMode::kDelete) continue;
    std::string stale(node->key().view());
    DeleteExpired(stale);
  }
  return false;
}

void Database::RehashFor(int64_t budget_us) {
  dict_.ResizeIfNeeded();
  if (!dict_.rehashing()) return;
  auto start = std::chrono::steady_clock::now();
  while (dict_.Rehash(100)) {
    auto spent = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
    if (spent.count() >= budget_us) return;
  }
}

int Database::ExpireSample(int64_t now_ms, int samples, absl::BitGen& rng) {
  int expired = 0;
  for (int i = 0; i < samples && !expires_.empty(); ++i) {
    size_t idx = absl::Uniform<size_t>(rng, 0, expires_.size());
    const ExpireRecord r = expires_[idx];
    if (r.when_ms <= now_ms) {
      std::string key(r.key());  // the node goes with the key
      DeleteExpired(key);
      ++expired;
    }
  }
  return expired;
}

Keyspace::Keyspace(int databases) : access_(std::make_unique<AccessPolicy>()) {
  for (int i = 0; i < databases; ++i) {
    dbs_.push_back(
        std::make_unique<Database>(i, &stats_, access_.get(), &rng_, &observer_, &expiry_mode_, &in_write_command_,
                                   &known_hash_));
  }
}

Keyspace::~Keyspace() = default;

void Keyspace::ActiveExpireCycle(int64_t now_ms, int64_t budget_us, int effort) {
  const size_t sample = 20 + 20 / 4 * static_cast<size_t>(effort);
  const int acceptable_stale_perc = 10 - effort;
  auto start = std::chrono::steady_clock::now();
  uint64_t sampled = 0, stale = 0;
  for (auto& db : dbs_) {
    while (db->expires() > 0) {
      int n = static_cast<int>(std::min<size_t>(sample, db->expires()));
      int expired = db->ExpireSample(now_ms, n, rng_);
      sampled += n;
      stale += expired;
      if (expired * 100 <= n * acceptable_stale_perc) break;  // stale few enough: this database is clean
      auto spent = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
      if (spent.count() > budget_us) return;
    }
  }
  stats_.expired_stale_perc_x100 = sampled ? stale * 10000 / sampled : 0;
}

void Keyspace::RehashCron(int64_t budget_us) {
  if (fork_child_active_) return;
  for (auto& db : dbs_) db->RehashFor(budget_us);
}

void Keyspace::SetForkChildActive(bool active) {
  fork_child_active_ = active;
  access_->frozen = active;
  for (auto& db : dbs_) db->set_resize_allowed(!active);
}

}  // namespace ringkv::core

// ClientRegistry: the server's connected clients, by CLIENT ID, owning them.
//
// One pointer per client: an open-addressing set of Client* whose hash and
// equality read the id from the client itself (Client::id(), its
// connection's id, immutable while it is registered), so a slot is 8 bytes
// where a map from id to pointer takes 16 -- per idle connection about 14
// bytes instead of 28 at 10,000 clients (docs/performance.md 19.1). A lookup
// reads the candidate's connection for its id: a registry lookup is not on
// any per-command path (a command reaches its client through its
// connection's `owner`).
//
// Iterating yields {id, Client*} pairs, so `for (const auto& [id, c] :
// registry)` reads as it did over a map. Order is unspecified.
//
// Thread-safety: main thread only.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "server/client.h"

namespace ringkv::server {

class ClientRegistry {
  struct Hash {
    using is_transparent = void;
    size_t operator()(uint64_t id) const { return absl::Hash<uint64_t>{}(id); }
    size_t operator()(const Client* c) const { return absl::Hash<uint64_t>{}(c->id()); }
  };
  struct Eq {
    using is_transparent = void;
    static uint64_t Id(uint64_t id) { return id; }
    static uint64_t Id(const Client* c) { return c->id(); }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return Id(a) == Id(b);
    }
  };
  using Set = absl::flat_hash_set<Client*, Hash, Eq>;

 public:
  struct Entry {
    uint64_t first;  // the id
    Client* second;
  };
  class const_iterator {
   public:
    explicit const_iterator(Set::const_iterator it) : it_(it) {}
    Entry operator*() const { return Entry{(*it_)->id(), *it_}; }
    const_iterator& operator++() {
      ++it_;
      return *this;
    }
    bool operator==(const const_iterator& o) const { return it_ == o.it_; }

   private:
    Set::const_iterator it_;
  };

  ClientRegistry() = default;
  ClientRegistry(const ClientRegistry&) = delete;
  ClientRegistry& operator=(const ClientRegistry&) = delete;
  ~ClientRegistry() {
    for (Client* c : set_) delete c;
  }

  // Takes `c`, listed under c->id(). REQUIRES: c->conn set, id not listed.
  void Add(std::unique_ptr<Client> c) { set_.insert(c.release()); }
  // Deletes the client listed under `id` (none: nothing).
  void Erase(uint64_t id) {
    auto it = set_.find(id);
    if (it == set_.end()) return;
    Client* c = *it;
    set_.erase(it);
    delete c;
  }
  Client* Find(uint64_t id) const {
    auto it = set_.find(id);
    return it == set_.end() ? nullptr : *it;
  }
  size_t size() const { return set_.size(); }
  bool empty() const { return set_.empty(); }
  const_iterator begin() const { return const_iterator(set_.begin()); }
  const_iterator end() const { return const_iterator(set_.end()); }

 private:
  Set set_;
};

}  // namespace ringkv::server

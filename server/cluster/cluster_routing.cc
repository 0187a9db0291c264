// Routing a command in cluster mode: Redis 7.0's getNodeByQuery, step by
// step, and clusterRedirectClient's error texts.
#include "core/key_slot.h"
#include "core/strings.h"
#include "server/cluster/cluster_mode.h"

namespace ringkv::server {

void ClusterMode::AddKeys(std::span<const std::string_view> keys, const RouteQuery& q,
                          const std::function<bool(std::string_view)>& exists, RouteBuilder* b) const {
  if (q.shard_pubsub) b->shard_pubsub = true;
  for (std::string_view key : keys) {
    if (b->cross_slot || b->unbound) return;
    const int slot = core::KeyHashSlot(key);
    if (!b->any) {
      b->any = true;
      b->first_key = key;
      b->slot = slot;
      b->node = state_->owner(slot);
      if (b->node == nullptr) {
        b->unbound = true;
        return;
      }
      // Migrating: only when we own the slot; importing: whoever owns it.
      if (b->node == &state_->myself() && state_->migrating_to(slot) != nullptr) {
        b->migrating = true;
      } else if (state_->importing_from(slot) != nullptr) {
        b->importing = true;
      }
    } else if (key != b->first_key) {
      if (slot != b->slot) {
        b->cross_slot = true;
        return;
      }
      b->multiple_keys = true;
    }
    // An open slot: count the keys we do not have (a shard channel is
    // served by the source until the slot moves: not counted).
    if ((b->migrating || b->importing) && !q.shard_pubsub) {
      if (exists(key)) {
        ++b->existing;
      } else {
        ++b->missing;
      }
    }
  }
}

Route ClusterMode::Finish(const RouteBuilder& b, const RouteQuery& q) const {
  Route r;
  if (b.cross_slot) {
    r.redirect = Redirect::kCrossSlot;
    return r;
  }
  if (b.unbound) {
    r.redirect = Redirect::kDownUnbound;
    return r;
  }
  if (!b.any) return r;  // no key: served here whatever the state
  if (!state_->ok()) {
    if (b.shard_pubsub) {
      if (!allow_pubsubshard_when_down_) {
        r.redirect = Redirect::kDownState;
        return r;
      }
    } else if (!allow_reads_when_down_) {
      r.redirect = Redirect::kDownState;
      return r;
    } else if (q.write) {
      r.redirect = Redirect::kDownReadOnly;
      return r;
    }
  }
  r.slot = b.slot;
  if ((b.migrating || b.importing) && q.migrate) return r;
  if (b.migrating && b.missing > 0) {
    if (b.existing > 0) {
      r.redirect = Redirect::kUnstable;
    } else {
      r.redirect = Redirect::kAsk;
      r.node = state_->migrating_to(b.slot);
    }
    return r;
  }
  if (b.importing && q.asking) {
    if (b.multiple_keys && b.missing > 0) r.redirect = Redirect::kUnstable;
    return r;
  }
  const cluster::Node& me = state_->myself();
  // A replica serves reads of its master's slots to READONLY connections
  // (and shard channels to anyone).
  if ((q.readonly || b.shard_pubsub) && !q.write && me.is_replica() && !me.master.empty() &&
      b.node->name == me.master) {
    return r;
  }
  if (b.node != &me) {
    r.redirect = Redirect::kMoved;
    r.node = b.node;
  }
  return r;
}

std::string ClusterMode::ScriptCallError(std::span<const std::string_view> keys, const RouteQuery& q,
                                         const std::function<bool(std::string_view)>& exists, int* slot) const {
  RouteBuilder b;
  AddKeys(keys, q, exists, &b);
  const Route r = Finish(b, q);
  *slot = r.slot;
  switch (r.redirect) {
    case Redirect::kNone:
      return "";
    case Redirect::kDownReadOnly:
      return "ERR Script attempted to execute a write command while the cluster is down and readonly";
    case Redirect::kDownState:
      return "ERR Script attempted to execute a command while the cluster is down";
    default:
      return "ERR Script attempted to access a non local key in a cluster node";
  }
}

std::string ClusterMode::BlockedKeyError(std::string_view key, bool readonly_read, bool plain_connection) const {
  Route r;
  if (!state_->ok()) {
    r.redirect = Redirect::kDownState;
    return RedirectError(r, plain_connection);
  }
  r.slot = core::KeyHashSlot(key);
  r.node = state_->owner(r.slot);
  const cluster::Node& me = state_->myself();
  if (readonly_read && r.node != nullptr && me.is_replica() && r.node->name == me.master) r.node = &me;
  if (r.node == &me || state_->importing_from(r.slot) != nullptr) return "";
  r.redirect = r.node == nullptr ? Redirect::kDownUnbound : Redirect::kMoved;
  return RedirectError(r, plain_connection);
}

std::string ClusterMode::RedirectError(const Route& r, bool plain_connection) const {
  switch (r.redirect) {
    case Redirect::kCrossSlot:
      return "CROSSSLOT Keys in request don't hash to the same slot";
    case Redirect::kUnstable:
      return "TRYAGAIN Multiple keys request during rehashing of slot";
    case Redirect::kDownState:
      return "CLUSTERDOWN The cluster is down";
    case Redirect::kDownReadOnly:
      return "CLUSTERDOWN The cluster is down and only accepts read commands";
    case Redirect::kDownUnbound:
      return "CLUSTERDOWN Hash slot not served";
    case Redirect::kMoved:
    case Redirect::kAsk:
      return StrCat(r.redirect == Redirect::kAsk ? "ASK " : "MOVED ", r.slot, " ", Endpoint(*r.node), ":",
                    PortFor(*r.node, plain_connection));
    case Redirect::kNone:
      break;
  }
  return "";
}

}  // namespace ringkv::server

#include "server/memory_overhead.h"

#include "replication/primary.h"
#include "server/scripting/scripting.h"
#include "server/server.h"

namespace ringkv::server {

// Where used memory goes (Redis's getMemoryOverheadData). Replicas share
// the backlog's blocks: the backlog counts the stream it holds, a replica
// what its link holds beyond that.
MemoryOverhead GatherMemoryOverhead(Server& s) {
  MemoryOverhead mh;
  const MemoryStats m = ReadMemoryStats();
  mh.total_allocated = m.used;
  mh.peak_allocated = m.peak;
  mh.startup_allocated = s.startup_allocated();
  mh.process_rss = m.rss;
  mh.allocator = ReadAllocatorStats(m);
  if (const repl::Primary* p = s.primary_side().primary()) mh.repl_backlog = p->backlog().histlen();
  for (const auto& [id, c] : s.clients()) {
    if (c->conn == nullptr) continue;
    ++mh.clients;
    if (c->is_replica) {
      ++mh.replicas;
      mh.clients_slaves += s.MemoryOf(*c).total;
    } else {
      mh.clients_normal += s.MemoryOf(*c).total;
    }
  }
  if (s.persistence().aof().enabled()) mh.aof_buffer = s.persistence().aof().buffer_allocated();
  if (const scripting::Scripting* sc = s.scripting().get()) {
    mh.lua_caches = sc->eval_scripts_memory();
    mh.cached_scripts = sc->cached_scripts();
    for (const auto& [name, lib] : sc->functions().libraries()) mh.functions_caches += name.size() + lib.code.size();
  }
  for (int i = 0; i < s.keyspace().count(); ++i) {
    const core::Database& db = s.keyspace().db(i);
    if (db.size() == 0) continue;
    mh.total_keys += db.size();
    mh.dbs.push_back({i, db.size() * sizeof(core::KeyspaceNode) + db.bucket_bytes(),
                      db.expires() * core::ExpireIndex::kBytesPerRecord});
  }
  mh.Finish();
  return mh;
}

}  // namespace ringkv::server

// INFO: one function per section, each appending "field:value\r\n" lines
// with Redis 7.0's field names.
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <functional>

#include "core/strings.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "replication/replication_info.h"
#include "server/command_table.h"
#include "server/commands/util.h"
#include "server/eviction_memory.h"
#include "server/memory_overhead.h"
#include "server/memory_stats.h"
#include "server/scripting/scripting.h"
#include "server/server.h"
#include "server/version.h"

namespace ringkv::server {
namespace {

std::string Human(uint64_t n) {
  double d = static_cast<double>(n);
  if (n < 1024) return StrCat(n, "B");
  if (n < 1024ULL * 1024) return absl::StrFormat("%.2fK", d / 1024);
  if (n < 1024ULL * 1024 * 1024) return absl::StrFormat("%.2fM", d / (1024 * 1024));
  if (n < 1024ULL * 1024 * 1024 * 1024) return absl::StrFormat("%.2fG", d / (1024.0 * 1024 * 1024));
  return absl::StrFormat("%.2fT", d / (1024.0 * 1024 * 1024 * 1024));
}

void Field(std::string* out, std::string_view name, const auto& value) { StrAppend(out, name, ":", value, "\r\n"); }

// The Lua interpreters and what they hold (Redis 7.0's names; the "lua"
// ones are the older names of the EVAL interpreter's). A server that never
// ran a script has no interpreter: zeros.
void AppendScriptingMemory(Server& s, std::string* out) {
  const scripting::Scripting* sc = s.scripting().get();
  const uint64_t vm_eval = sc ? sc->eval_memory() : 0;
  const uint64_t vm_functions = sc ? sc->functions_memory() : 0;
  const uint64_t scripts_eval = sc ? sc->eval_scripts_memory() : 0;
  uint64_t functions_bytes = 0;
  if (sc != nullptr) {
    for (const auto& [name, lib] : sc->functions().libraries()) {
      functions_bytes += name.size() + lib.code.size();
    }
  }
  Field(out, "used_memory_lua", vm_eval);
  Field(out, "used_memory_vm_eval", vm_eval);
  Field(out, "used_memory_lua_human", Human(vm_eval));
  Field(out, "used_memory_scripts_eval", scripts_eval);
  Field(out, "number_of_cached_scripts", sc ? sc->cached_scripts() : 0);
  Field(out, "number_of_functions", sc ? sc->functions().function_count() : 0);
  Field(out, "number_of_libraries",
        sc ? sc->functions().libraries().size() : 0);
  Field(out, "used_memory_vm_functions", vm_functions);
  Field(out, "used_memory_vm_total", vm_eval + vm_functions);
  Field(out, "used_memory_vm_total_human", Human(vm_eval + vm_functions));
  Field(out, "used_memory_functions", functions_bytes);
  Field(out, "used_memory_scripts", scripts_eval + functions_bytes);
  Field(out, "used_memory_scripts_human", Human(scripts_eval + functions_bytes));
}


void InfoServer(Server& s, std::string* out) {
  utsname u;
  uname(&u);
  int64_t now = UnixMs();
  int64_t uptime = (now - s.start_time_ms()) / 1000;
  Field(out, "redis_version", kRedisVersion);
  Field(out, "ringkv_version", kRingkvVersion);
  Field(out, "redis_git_sha1", "00000000");
  Field(out, "redis_git_dirty", 0);
  Field(out, "redis_build_id", "0");
  Field(out, "redis_mode", s.cluster() != nullptr ? "cluster" : "standalone");
  Field(out, "os", StrCat(u.sysname, " ", u.release, " ", u.machine));
  Field(out, "arch_bits", 64);
  Field(out, "monotonic_clock", "POSIX clock_gettime");
  Field(out, "multiplexing_api", s.io().backend_name());
  Field(out, "atomicvar_api", "c11-builtin");
  Field(out, "gcc_version", StrCat(__GNUC__, ".", __GNUC_MINOR__, ".", __GNUC_PATCHLEVEL__));
  Field(out, "process_id", getpid());
  Field(out, "process_supervised", "no");
  Field(out, "run_id", s.run_id());
  Field(out, "tcp_port", s.config().Int("port"));
  Field(out, "server_time_usec", UnixUs());
  Field(out, "uptime_in_seconds", uptime);
  Field(out, "uptime_in_days", uptime / 86400);
  Field(out, "hz", s.hz());
  Field(out, "configured_hz", s.config().Int("hz"));
  Field(out, "lru_clock", s.lru_clock() & ((1 << 24) - 1));
  Field(out, "executable", s.executable());
  Field(out, "config_file", s.config().file());
  Field(out, "io_threads_active", s.io().threads() > 1 ? 1 : 0);
  if (const int64_t ms = s.shutdown().in_ms(now); ms >= 0) Field(out, "shutdown_in_milliseconds", ms);
}

void InfoClients(Server& s, std::string* out) {
  uint64_t max_in = 0, max_out = 0, replicas = 0, gone = 0;
  for (const auto& [id, c] : s.clients()) {
    if (c->closed_at_once()) {  // gone, as CLIENT LIST says (its connection ends in a moment)
      ++gone;
      continue;
    }
    replicas += c->is_replica;
    const io::Connection& conn = *c->conn;
    max_in = std::max<uint64_t>(max_in, io::QueryBufferSize(conn));
    max_out = std::max<uint64_t>(max_out, conn.thread == 0 ? conn.out.size() : conn.stat_obuf());
  }
  // As Redis: replicas are counted in connected_slaves, not here.
  Field(out, "connected_clients", s.clients().size() - replicas - gone);
  Field(out, "cluster_connections", 0);
  Field(out, "maxclients", s.config().Int("maxclients"));
  Field(out, "client_recent_max_input_buffer", max_in);
  Field(out, "client_recent_max_output_buffer", max_out);
  Field(out, "blocked_clients", s.blocked_clients());
  Field(out, "tracking_clients", s.tracking().clients());
  Field(out, "clients_in_timeout_table", s.blocking().with_deadline());
}

void InfoMemory(Server& s, std::string* out) {
  MemoryStats m = ReadMemoryStats();
  uint64_t total = TotalSystemMemory();
  uint64_t clients_mem = 0, replicas_mem = 0;
  // Each client as CLIENT LIST's tot-mem weighs it: its buffers (a main
  // thread connection's output included) and components.
  // A client closed at once is gone already (its buffers go with its
  // connection, a moment later).
  for (const auto& [id, c] : s.clients()) {
    if (!c->closed_at_once()) (c->is_replica ? replicas_mem : clients_mem) += s.MemoryOf(*c).total;
  }
  // The stream's blocks are shared by the backlog and the replicas (Redis
  // 7.0's replication buffer): what exceeds repl-backlog-size is counted as
  // the replicas', as Redis counts it.
  const repl::Primary* p = s.primary_side().primary();
  const uint64_t repl_buffers = p ? p->backlog().memory() : 0;
  uint64_t repl_backlog = repl_buffers;
  const uint64_t backlog_size = static_cast<uint64_t>(s.config().Int("repl-backlog-size"));
  if (p != nullptr && !p->replicas().empty() && repl_buffers > backlog_size) {
    replicas_mem += repl_buffers - backlog_size;
    repl_backlog = backlog_size;
  }
  Field(out, "used_memory", m.used);
  Field(out, "used_memory_human", Human(m.used));
  Field(out, "used_memory_rss", m.rss);
  Field(out, "used_memory_rss_human", Human(m.rss));
  Field(out, "used_memory_peak", m.peak);
  Field(out, "used_memory_peak_human", Human(m.peak));
  Field(out, "used_memory_peak_perc", absl::StrFormat("%.2f%%", m.peak ? 100.0 * m.used / m.peak : 100.0));
  const MemoryOverhead mh = GatherMemoryOverhead(s);
  Field(out, "used_memory_overhead", mh.overhead_total);
  Field(out, "used_memory_startup", mh.startup_allocated);
  Field(out, "used_memory_dataset", mh.dataset);
  Field(out, "used_memory_dataset_perc", absl::StrFormat("%.2f%%", mh.dataset_perc));
  Field(out, "allocator_allocated", mh.allocator.allocated);
  Field(out, "allocator_active", mh.allocator.active);
  Field(out, "allocator_resident", mh.allocator.resident);
  Field(out, "total_system_memory", total);
  Field(out, "total_system_memory_human", Human(total));
  AppendScriptingMemory(s, out);
  Field(out, "maxmemory", s.config().Int("maxmemory"));
  Field(out, "maxmemory_human", Human(static_cast<uint64_t>(s.config().Int("maxmemory"))));
  Field(out, "maxmemory_policy", s.config().Str("maxmemory-policy"));
  Field(out, "allocator_frag_ratio", absl::StrFormat("%.2f", mh.allocator_frag));
  Field(out, "allocator_frag_bytes", mh.allocator_frag_bytes);
  Field(out, "allocator_rss_ratio", absl::StrFormat("%.2f", mh.allocator_rss));
  Field(out, "allocator_rss_bytes", mh.allocator_rss_bytes);
  Field(out, "rss_overhead_ratio", absl::StrFormat("%.2f", mh.rss_extra));
  Field(out, "rss_overhead_bytes", mh.rss_extra_bytes);
  Field(out, "mem_fragmentation_ratio", absl::StrFormat("%.2f", m.used ? static_cast<double>(m.rss) / m.used : 0.0));
  Field(out, "mem_fragmentation_bytes", static_cast<int64_t>(m.rss) - static_cast<int64_t>(m.used));
  Field(out, "mem_not_counted_for_evict", MemoryNotCountedForEvict(s));
  Field(out, "mem_replication_backlog", repl_backlog);
  Field(out, "mem_total_replication_buffers", repl_buffers);
  Field(out, "mem_clients_slaves", replicas_mem);
  Field(out, "mem_clients_normal", clients_mem);
  Field(out, "mem_cluster_links", 0);  // no cluster bus yet
  Field(out, "mem_aof_buffer", mh.aof_buffer);
  Field(out, "mem_allocator", m.allocator);
  Field(out, "active_defrag_running", 0);  // no active defragmentation
  Field(out, "lazyfree_pending_objects", s.lazy_freer().pending_objects());
  Field(out, "lazyfreed_objects", s.lazy_freer().freed_objects());
}

void InfoPersistence(Server& s, std::string* out) {
  const int64_t now_ms = UnixMs();
  const ChildProcess& child = s.persistence().child();
  const Aof& aof = s.persistence().aof();
  const ReplicaSide& replica = s.replica_side();
  Field(out, "loading", s.loading().active() || replica.sync_loading() ? 1 : 0);
  Field(out, "async_loading", replica.async_loading() ? 1 : 0);
  child.AppendCurrentInfo(out, now_ms);
  s.persistence().rdb().AppendInfo(out, now_ms, s.stats().dirty);
  const AofStats& as = aof.stats();
  const bool aof_child = child.type() == ChildType::kAof;
  Field(out, "aof_enabled", aof.enabled() ? 1 : 0);
  Field(out, "aof_rewrite_in_progress", aof_child ? 1 : 0);
  Field(out, "aof_rewrite_scheduled", aof.rewrite_scheduled() ? 1 : 0);
  Field(out, "aof_last_rewrite_time_sec", as.last_rewrite_ms < 0 ? -1 : as.last_rewrite_ms / 1000);
  Field(out, "aof_current_rewrite_time_sec", aof_child ? (now_ms - child.start_ms()) / 1000 : -1);
  Field(out, "aof_last_bgrewrite_status", as.last_rewrite_ok ? "ok" : "err");
  Field(out, "aof_rewrites", as.rewrites);
  Field(out, "aof_rewrites_consecutive_failures", as.consecutive_failures);
  Field(out, "aof_last_write_status", as.last_write_ok ? "ok" : "err");
  Field(out, "aof_last_cow_size", as.last_cow_bytes);
  Field(out, "module_fork_in_progress", 0);
  Field(out, "module_fork_last_cow_size", 0);
  if (aof.enabled()) aof.AppendInfo(out);
  if (s.loading().active() && !replica.sync_loading() && !replica.async_loading()) {
    s.loading().progress().AppendInfo(out, now_ms);
  }
}

void InfoStats(Server& s, std::string* out) {
  const ServerStats& st = s.stats();
  const core::KeyspaceStats& ks = s.keyspace().stats();
  Field(out, "total_connections_received", st.total_connections);
  Field(out, "total_commands_processed", st.total_commands);
  Field(out, "instantaneous_ops_per_sec", s.instantaneous_ops());
  const io::NetTotals net = s.io().net_totals();
  const io::NetTotals& base = st.net_base;
  Field(out, "total_net_input_bytes", net.input_bytes - base.input_bytes);
  Field(out, "total_net_output_bytes", net.output_bytes - base.output_bytes);
  Field(out, "total_net_repl_input_bytes", net.repl_input_bytes - base.repl_input_bytes);
  Field(out, "total_net_repl_output_bytes", net.repl_output_bytes - base.repl_output_bytes);
  auto kbps = [](const InstantaneousMetric& m) { return absl::StrFormat("%.2f", static_cast<double>(m.rate()) / 1024); };
  Field(out, "instantaneous_input_kbps", kbps(st.net_input));
  Field(out, "instantaneous_output_kbps", kbps(st.net_output));
  Field(out, "instantaneous_input_repl_kbps", kbps(st.net_repl_input));
  Field(out, "instantaneous_output_repl_kbps", kbps(st.net_repl_output));
  Field(out, "rejected_connections", st.rejected_connections);
  Field(out, "sync_full", st.sync_full);
  Field(out, "sync_partial_ok", st.sync_partial_ok);
  Field(out, "sync_partial_err", st.sync_partial_err);
  Field(out, "expired_keys", ks.expired_keys);
  Field(out, "expired_stale_perc", absl::StrFormat("%.2f", ks.expired_stale_perc_x100 / 100.0));
  Field(out, "expired_time_cap_reached_count", 0);
  Field(out, "expire_cycle_cpu_milliseconds", st.expire_cycle_us / 1000);
  Field(out, "evicted_keys", st.evicted_keys);
  Field(out, "evicted_clients", st.evicted_clients);
  const uint64_t now_us = static_cast<uint64_t>(s.clock().TicksToMicros(Clock::Ticks()));
  const uint64_t exceeded_us = st.current_eviction_exceeded_us(now_us);
  Field(out, "total_eviction_exceeded_time", (st.eviction_exceeded_total_us + exceeded_us) / 1000);
  Field(out, "current_eviction_exceeded_time", exceeded_us / 1000);
  Field(out, "keyspace_hits", ks.keyspace_hits);
  Field(out, "keyspace_misses", ks.keyspace_misses);
  Field(out, "pubsub_channels", s.pubsub().NumChannels(PubSub::Kind::kChannel));
  Field(out, "pubsub_patterns", s.pubsub().NumPatterns());
  Field(out, "pubsubshard_channels", s.pubsub().NumChannels(PubSub::Kind::kShard));
  Field(out, "latest_fork_usec", s.persistence().child().last_fork_us());
  Field(out, "total_forks", s.persistence().child().total_forks());
  Field(out, "migrate_cached_sockets", s.migrate_cached_sockets());
  Field(out, "slave_expires_tracked_keys", s.replica_side().tracked_expires());
  // No active defragmentation (mimalloc has none to drive): Redis's zeros.
  for (const char* f : {"active_defrag_hits", "active_defrag_misses", "active_defrag_key_hits",
                        "active_defrag_key_misses", "total_active_defrag_time", "current_active_defrag_time"}) {
    Field(out, f, 0);
  }
  Field(out, "tracking_total_keys", s.tracking().keys());
  Field(out, "tracking_total_items", s.tracking().items());
  Field(out, "tracking_total_prefixes", s.tracking().prefixes());
  Field(out, "unexpected_error_replies", st.unexpected_error_replies);
  Field(out, "total_error_replies", st.total_error_replies);
  Field(out, "dump_payload_sanitizations", st.dump_payload_sanitizations);
  Field(out, "total_reads_processed", net.reads - base.reads);
  Field(out, "total_writes_processed", net.writes - base.writes);
  Field(out, "io_threaded_reads_processed", net.threaded_reads - base.threaded_reads);
  Field(out, "io_threaded_writes_processed", net.threaded_writes - base.threaded_writes);
  // ringkv keeps no static per-client reply buffer to resize (an idle
  // client holds none): Redis's counters of its resizing stay 0.
  Field(out, "reply_buffer_shrinks", 0);
  Field(out, "reply_buffer_expands", 0);
}

void InfoReplication(Server& s, std::string* out) {
  const repl::Primary* p = s.primary_side().primary();
  const int64_t now_s = UnixMs() / 1000;
  if (const repl::MasterLink* m = s.replica_side().master_link()) {
    using St = repl::MasterLink::State;
    Field(out, "role", "slave");
    Field(out, "master_host", m->host);
    Field(out, "master_port", m->port);
    Field(out, "master_link_status", m->state == St::kConnected ? "up" : "down");
    Field(out, "master_last_io_seconds_ago", m->state == St::kConnected ? now_s - m->last_io_ms / 1000 : -1);
    Field(out, "master_sync_in_progress", m->state == St::kSyncing ? 1 : 0);
    Field(out, "slave_read_repl_offset", s.master_repl_offset());
    Field(out, "slave_repl_offset", s.master_repl_offset());
    Field(out, "slave_priority", s.config().Int("replica-priority"));
    Field(out, "slave_read_only", s.config().Bool("replica-read-only") ? 1 : 0);
    Field(out, "replica_announced", s.config().Bool("replica-announced") ? 1 : 0);
  }
  if (p == nullptr && s.replica_side().master_link() != nullptr) {
    const repl::ReplicationIds& ids = s.repl_ids();
    Field(out, "connected_slaves", 0);
    Field(out, "master_failover_state", "no-failover");
    Field(out, "master_replid", ids.replid);
    Field(out, "master_replid2", ids.replid2);
    Field(out, "master_repl_offset", s.master_repl_offset());
    Field(out, "second_repl_offset", ids.second_offset);
    Field(out, "repl_backlog_active", 0);
    Field(out, "repl_backlog_size", s.config().Int("repl-backlog-size"));
    Field(out, "repl_backlog_first_byte_offset", 0);
    Field(out, "repl_backlog_histlen", 0);
    return;
  }
  if (p == nullptr) {
    repl::AppendStandaloneInfo(s.repl_ids(), s.config().Int("repl-backlog-size"), out);
    return;
  }
  const int64_t now_ms = UnixMs();
  int64_t n = 0;
  std::string lines;
  for (const auto& r : p->replicas()) {
    if (r->state == repl::ReplicaState::kHandshake) continue;
    const std::string ip = r->ip();
    StrAppend(&lines, "slave", n++, ":ip=", ip, ",port=", r->listening_port, ",state=", repl::ReplicaStateName(r->state),
              ",offset=", r->ack_offset, ",lag=", std::max<int64_t>(0, (now_ms - r->last_ack_ms) / 1000), "\r\n");
  }
  const repl::ReplicationIds& ids = s.repl_ids();
  if (s.replica_side().master_link() == nullptr) Field(out, "role", "master");
  Field(out, "connected_slaves", n);
  out->append(lines);
  Field(out, "master_failover_state", s.replica_side().failover_state());
  Field(out, "master_replid", ids.replid);
  Field(out, "master_replid2", ids.replid2);
  Field(out, "master_repl_offset", p->offset());
  Field(out, "second_repl_offset", ids.second_offset);
  Field(out, "repl_backlog_active", 1);
  Field(out, "repl_backlog_size", s.config().Int("repl-backlog-size"));
  Field(out, "repl_backlog_first_byte_offset", p->backlog().first_offset());
  Field(out, "repl_backlog_histlen", p->backlog().histlen());
}

void InfoCpu(Server&, std::string* out) {
  rusage self, children, thread;
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  getrusage(RUSAGE_THREAD, &thread);
  auto secs = [](const timeval& tv) { return absl::StrFormat("%.6f", tv.tv_sec + tv.tv_usec / 1e6); };
  Field(out, "used_cpu_sys", secs(self.ru_stime));
  Field(out, "used_cpu_user", secs(self.ru_utime));
  Field(out, "used_cpu_sys_children", secs(children.ru_stime));
  Field(out, "used_cpu_user_children", secs(children.ru_utime));
  Field(out, "used_cpu_sys_main_thread", secs(thread.ru_stime));
  Field(out, "used_cpu_user_main_thread", secs(thread.ru_utime));
}

void InfoCommandstats(Server& s, std::string* out) {
  auto one = [&](const CommandSpec& c) {
    if (c.calls == 0 && c.rejected_calls == 0 && c.failed_calls == 0) return;
    StrAppend(out, "cmdstat_", c.name, ":calls=", c.calls, ",usec=", c.usec, ",usec_per_call=",
                    absl::StrFormat("%.2f", c.calls ? static_cast<double>(c.usec) / c.calls : 0.0),
                    ",rejected_calls=", c.rejected_calls, ",failed_calls=", c.failed_calls, "\r\n");
  };
  for (const auto& c : s.commands().all()) {
    one(*c);
    for (const CommandSpec& sub : c->subcommands) one(sub);
  }
}

void InfoErrorstats(Server& s, std::string* out) { s.error_stats().AppendInfo(out); }
// latency_percentiles_usec_<command>:p50=...,p99=...: each command with a
// latency histogram, at latency-tracking-info-percentiles (nothing while
// latency-tracking is off).
void InfoLatencystats(Server& s, std::string* out) {
  if (!s.latency_stats().tracking()) return;
  const std::vector<double>& percentiles = s.latency_stats().percentiles();
  auto one = [&](const CommandSpec& c) {
    if (!c.latency_histogram) return;
    StrAppend(out, "latency_percentiles_usec_", c.name, ":");
    for (size_t j = 0; j < percentiles.size(); ++j) {
      if (j != 0) out->push_back(',');
      absl::StrAppendFormat(out, "p%s=%.3f", FormatPercentile(percentiles[j]),
                            static_cast<double>(c.latency_histogram->ValueAtPercentile(percentiles[j])) / 1000.0);
    }
    out->append("\r\n");
  };
  for (const auto& c : s.commands().all()) {
    one(*c);
    for (const CommandSpec& sub : c->subcommands) one(sub);
  }
}

void InfoKeyspace(Server& s, std::string* out) {
  int64_t now = UnixMs();
  for (int i = 0; i < s.keyspace().count(); ++i) {
    core::Database& db = s.keyspace().db(i);
    if (db.size() == 0) continue;
    StrAppend(out, "db", i, ":keys=", db.size(), ",expires=", db.expires(), ",avg_ttl=", db.AverageTtl(now),
                    "\r\n");
  }
}

void InfoCluster(Server& s, std::string* out) { Field(out, "cluster_enabled", s.cluster() != nullptr ? 1 : 0); }

// No modules load (docs/compatibility.md, MODULE): the section is its title
// alone, as redis-server's without modules.
void InfoModules(Server&, std::string*) {}

struct Section {
  const char* name;
  const char* title;
  void (*fn)(Server&, std::string*);
  bool in_default;
};
constexpr Section kSections[] = {
    {"server", "Server", InfoServer, true},
    {"clients", "Clients", InfoClients, true},
    {"memory", "Memory", InfoMemory, true},
    {"persistence", "Persistence", InfoPersistence, true},
    {"stats", "Stats", InfoStats, true},
    {"replication", "Replication", InfoReplication, true},
    {"cpu", "CPU", InfoCpu, true},
    {"modules", "Modules", InfoModules, true},
    {"commandstats", "Commandstats", InfoCommandstats, false},
    {"errorstats", "Errorstats", InfoErrorstats, true},
    {"latencystats", "Latencystats", InfoLatencystats, false},
    {"cluster", "Cluster", InfoCluster, true},
    {"keyspace", "Keyspace", InfoKeyspace, true},
};

void CmdInfo(ServerCommandContext& ctx) {
  bool all = false, everything = false, defaults = ctx.argv.size() == 1;
  std::vector<std::string> wanted;
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    std::string a = AsciiLower(ctx.argv[i]);
    if (a == "all") all = true;
    else if (a == "everything") everything = true;
    else if (a == "default") defaults = true;
    else if (a == "module_list") wanted.push_back("modules");  // Redis's other name for it
    else wanted.push_back(a);
  }
  std::string out;
  for (const Section& sec : kSections) {
    bool take = everything || all || (defaults && sec.in_default) ||
                std::find(wanted.begin(), wanted.end(), sec.name) != wanted.end();
    if (!take) continue;
    if (!out.empty()) out += "\r\n";
    StrAppend(&out, "# ", sec.title, "\r\n");
    sec.fn(ctx.server, &out);
  }
  ctx.reply.Verbatim(out);
}

}  // namespace

void RegisterInfoCommand(CommandTable& t) {
  t.Add(Cmd("info", -1, cmd::kLoading | cmd::kStale | cmd::kSentinel, 0, 0, 0, "@slow @dangerous", "server",
            "Returns information and statistics about the server.", "1.0.0", CmdInfo));
}

}  // namespace ringkv::server

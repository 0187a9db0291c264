// Server: the main command thread's state and the dispatch gate.
//
// Implements io::CommandSink: every command parsed by any I/O thread arrives
// here, on the main thread, and passes one validation gate (Dispatch: lookup,
// arity, authentication, client pause) before its handler runs. Owns the
// keyspace, the clients, the command table and the statistics INFO reports.
//
// Thread-safety: main thread only, except RequestShutdown() (signal-safe).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/eviction.h"
#include "core/keyspace.h"
#include "io/io_system.h"
#include "server/client.h"
#include "server/clock.h"
#include "server/command_table.h"
#include "server/config.h"
#include "server/lazy_free.h"

namespace ringkv::server {

struct SlowlogEntry {
  uint64_t id;
  int64_t time_s;
  int64_t duration_us;
  std::vector<std::string> argv;  // trimmed as Redis trims it
  std::string peer;
  std::string name;
};

struct ServerStats {
  uint64_t total_connections = 0;
  uint64_t rejected_connections = 0;
  uint64_t total_commands = 0;
  uint64_t total_error_replies = 0;
  uint64_t unexpected_error_replies = 0;
  uint64_t evicted_keys = 0;
  uint64_t dirty = 0;  // writes since start (rdb_changes_since_last_save until persistence lands)
  // instantaneous_ops_per_sec: a ring of samples taken by the cron, as Redis does.
  static constexpr int kSamples = 16;
  uint64_t ops_samples[kSamples] = {};
  int sample_index = 0;
  int64_t last_sample_ms = 0;
  uint64_t last_sample_commands = 0;
};

class Server : public io::CommandSink {
 public:
  explicit Server(std::unique_ptr<Config> config);
  ~Server() override;

  // Opens listeners and rings. Errors name the cause.
  absl::Status Start();
  // Serves until SHUTDOWN or a signal; returns the process exit code.
  int Run();
  // Async-signal-safe.
  void RequestShutdown(int signal);

  // ---- io::CommandSink ---------------------------------------------------------
  std::string OnAccept(const io::SocketAddress& peer) override;
  void OnOpen(io::Connection* conn) override;
  void OnCommand(io::Connection* conn, std::span<const std::string_view> argv) override;
  void Prefetch(io::Connection* conn, std::span<const std::string_view> argv, int stage) override;
  void OnProtocolError(io::Connection* conn, std::string_view message) override;
  void OnClose(io::Connection* conn) override;
  int OnTimer() override;
  void BeforeFlush() override;

  // ---- for command handlers ----------------------------------------------------
  Config& config() { return *config_; }
  const CommandTable& commands() const { return commands_; }
  CommandTable& mutable_commands() { return commands_; }
  core::Keyspace& keyspace() { return keyspace_; }
  core::Database& db(const Client& c) { return keyspace_.db(c.db); }
  io::IoSystem& io() { return *io_; }
  ServerStats& stats() { return stats_; }
  const absl::flat_hash_map<uint64_t, std::unique_ptr<Client>>& clients() const { return clients_; }
  Client* FindClient(uint64_t id);
  // Closes a client after the replies already queued for it are sent.
  void CloseClient(Client& c);
  std::deque<SlowlogEntry>& slowlog() { return slowlog_; }
  uint64_t& slowlog_next_id() { return slowlog_next_id_; }
  int64_t start_time_ms() const { return start_time_ms_; }
  uint32_t lru_clock() const { return lru_clock_; }
  int hz() const { return hz_; }
  LazyFreer& lazy_freer() { return lazy_freer_; }
  // DEBUG SET-ACTIVE-EXPIRE.
  void set_active_expire(bool on) { active_expire_ = on; }
  uint64_t instantaneous_ops() const;
  // CLIENT PAUSE / UNPAUSE.
  void PauseClients(int64_t until_ms, bool all);
  void UnpauseClients();
  bool paused_all() const { return pause_until_ms_ > 0 && pause_all_; }
  // SHUTDOWN from a client: stops after this loop turn.
  void ScheduleShutdown() { shutdown_requested_ = true; }
  std::string run_id() const { return run_id_; }
  const char* executable() const { return executable_.c_str(); }
  void set_executable(std::string path) { executable_ = std::move(path); }
  // Command line of the process for INFO (config_file).
  std::string ClientInfoLine(const Client& c, int64_t now_ms) const;

 private:
  void Execute(Client& c, Argv argv);
  bool ShouldPause(const CommandSpec& spec) const;
  void Defer(Client& c, Argv argv);
  void ReplayDeferred();
  void Slowlog(const Client& c, Argv argv, int64_t duration_us, int64_t now_ms);
  void ClientsCron(int64_t now_ms);
  void ApplyConfigHooks();

  std::unique_ptr<Config> config_;
  CommandTable commands_;
  core::Keyspace keyspace_;
  std::unique_ptr<io::IoSystem> io_;
  absl::flat_hash_map<uint64_t, std::unique_ptr<Client>> clients_;
  ServerStats stats_;
  Clock clock_;
  core::Evictor evictor_;
  LazyFreer lazy_freer_;
  int64_t maxmemory_ = 0;
  std::deque<SlowlogEntry> slowlog_;
  uint64_t slowlog_next_id_ = 0;
  int64_t start_time_ms_ = 0;
  uint32_t lru_clock_ = 0;
  int hz_ = 10;
  bool active_expire_ = true;
  int64_t pause_until_ms_ = 0;
  bool pause_all_ = false;
  std::vector<uint64_t> paused_clients_;
  volatile int shutdown_signal_ = 0;
  bool shutdown_requested_ = false;
  std::string run_id_;
  std::string executable_;
  bool requirepass_set_ = false;
  int64_t maxclients_ = 10000;
  int64_t timeout_s_ = 0;
  int64_t slowlog_threshold_us_ = 10000;
  size_t slowlog_max_len_ = 128;
};

// Current wall-clock time in milliseconds / microseconds.
int64_t UnixMs();
int64_t UnixUs();

}  // namespace ringkv::server

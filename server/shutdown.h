// Shutdown: SHUTDOWN and SIGTERM / SIGINT, as Redis 7.0 shuts down.
//
// A shutdown first waits -- unless NOW, with replicas behind our offset and
// shutdown-timeout > 0 -- up to shutdown-timeout seconds (writes paused,
// INFO shutdown_in_milliseconds) for the replicas to catch up, so the writes
// they miss are not lost with us; then it does the persistence work (the
// final save unless NOSAVE, or without save points unless SAVE; FORCE exits
// even when that fails) and the server stops after the loop turn. A failure
// of the persistence work, or SHUTDOWN ABORT, cancels it: the clients
// blocked in SHUTDOWN get an error and a pause it replaced comes back.
//
// This component owns the decision and its state; what it needs from the
// server comes through its Hooks (the Server implements them), so it is
// tested with a fake (tests/server/shutdown_test.cc).
//
//   Shutdown shutdown(hooks, config);
//   shutdown.Initiate({.save = ShutdownSave::kNoSave});  // kDone: stop after this turn
//   if (shutdown.waiting()) shutdown.Cron(now_ms);       // each cron tick
//
// Thread-safety: main thread only, except Signal(), which is
// async-signal-safe.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "server/client_pause.h"

namespace ringkv::server {

class Config;

// SHUTDOWN's persistence choice.
enum class ShutdownSave : uint8_t { kDefault, kSave, kNoSave };

// SHUTDOWN's options (a signal's are the defaults).
struct ShutdownFlags {
  ShutdownSave save = ShutdownSave::kDefault;
  bool now = false;    // NOW: do not wait for lagging replicas
  bool force = false;  // FORCE: exit even when saving fails
};

// shutdown-on-sigterm / shutdown-on-sigint: "default" or words among
// save|nosave, now, force (the config parser checked them).
ShutdownFlags SignalShutdownFlags(std::string_view configured);

class Shutdown {
 public:
  // What a shutdown asks of the server; called only while one is starting,
  // waiting, finishing or being cancelled.
  class Hooks {
   public:
    // A start-up load is under way (a half-loaded dataset is never saved).
    virtual bool LoadingDataset() = 0;
    // Every replica acknowledged our offset (or there is none).
    virtual bool ReplicasCaughtUp() = 0;
    // Writes stop while waiting for the replicas (and they are asked for an
    // acknowledgement); returns the client pause this replaces.
    virtual ClientPause::Window PauseWritesForShutdown() = 0;
    // A cancelled wait: the pause from before (until_ms 0: none) comes back.
    virtual void RestorePause(const ClientPause::Window& before) = 0;
    // Logs how far behind each replica is, before the persistence work.
    virtual void LogReplicasAtShutdown() = 0;
    // The persistence work: the AOF synced, the final save as `save` and the
    // save points say. An error cancels the shutdown unless `force`.
    virtual absl::Status PrepareForShutdown(ShutdownSave save, bool force) = 0;
    // The shutdown is decided: new connections are refused from now on.
    virtual void StopAccepting() = 0;
    // The clients blocked in SHUTDOWN get -ERR Errors trying to SHUTDOWN.
    virtual void FailShutdownWaiters() = 0;

   protected:
    ~Hooks() = default;
  };

  enum class Result : uint8_t {
    kDone,     // stopping after this loop turn
    kWaiting,  // waiting for replicas (also while an earlier shutdown waits)
    kFailed,   // keeps running: logged, and clients blocked on SHUTDOWN got an error
  };

  // Reads shutdown-timeout and shutdown-on-sig* from `config` when used.
  Shutdown(Hooks& hooks, const Config& config) : hooks_(hooks), config_(config) {}
  Shutdown(const Shutdown&) = delete;
  Shutdown& operator=(const Shutdown&) = delete;

  // SHUTDOWN (or a signal, through HandleSignal). While an earlier shutdown
  // waits for replicas, its options hold and this one joins it.
  Result Initiate(ShutdownFlags flags);
  // SHUTDOWN ABORT: false when no shutdown is in progress (waiting, or a
  // signal not acted on yet).
  bool Abort();

  // SIGTERM / SIGINT arrived: recorded for the main loop. Async-signal-safe.
  void Signal(int signal) { signal_ = signal; }
  bool signal_pending() const { return signal_ != 0; }
  // The main loop acts on the recorded signal: a shutdown with the
  // configured shutdown-on-sig* options.
  void HandleSignal();

  // Waiting for replicas: the cron checks whether they caught up or the
  // timeout passed, then finishes.
  bool waiting() const { return deadline_ms_ != 0; }
  void Cron(int64_t now_ms);
  // Milliseconds left of the wait for replicas; -1 when none is waiting.
  int64_t in_ms(int64_t now_ms) const;

  // The server stops after this loop turn.
  bool requested() const { return requested_; }
  // A signal or a shutdown is pending (a start-up load stops).
  bool stopping() const { return signal_ != 0 || requested_; }

 private:
  // The second half: the replicas logged, then the persistence work;
  // kFailed cancels the shutdown.
  Result Finish();
  void Cancel();

  Hooks& hooks_;
  const Config& config_;
  volatile int signal_ = 0;
  bool requested_ = false;
  // A shutdown waiting for lagging replicas: until when (0: none), with what
  // options, and the client pause it replaced (restored if it is cancelled).
  int64_t deadline_ms_ = 0;
  ShutdownFlags flags_;
  ClientPause::Window pause_before_;
};

}  // namespace ringkv::server

// MainLoopHooks: the main-loop duties that I/O thread 0 runs for the layer
// that owns the main thread (IoSystem), at fixed points of its loop.
//
// An IoThread is one io_uring loop and knows nothing of the others. Thread 0
// differs from the rest only in what is installed on it
// (IoThread::InstallMainLoop): these hooks, and the CommandSink that executes
// its connections' commands as they are parsed. The other threads have
// neither; they batch their commands to the main inbox. The direction is one
// way: IoSystem owns the IoThreads and implements this interface; an IoThread
// sees only the interface.
//
//   normal turn (IoThread::Loop)           turn while busy (IoThread::TurnWhileBusy)
//   ----------------------------           -----------------------------------------
//   BeforeFlush()                          BeforeBusyTurn(busy)
//   send (*), re-arm receives, recycle     send, reap and handle what is ready,
//   AfterFlush()                           send, re-arm receives
//   wait at most WaitUs() for completions  AfterBusyTurn(busy)
//   handle them: OnAccepted / OnClosed,    (never blocks)
//     OnTimerFired
//
// (*) When a timer falls due before the turn's sends are likely done, they
// go out in chunks, and BeforeFlush runs again between two chunks once the
// timer is due (IoThread::FlushTurn): a deadline is not held for a whole
// turn's sends.
//
// Cost: a virtual call at those points of a loop turn, and per accepted or
// closed connection -- never per command. Commands go from the parser to
// CommandSink::OnCommand directly, the one virtual call per command there
// always was.
//
// Thread-safety: every hook is called on the main thread, from its loop.
#pragma once

#include "io/connection.h"

namespace ringkv::io {

class MainLoopHooks {
 public:
  // The start of a turn, before its replies are sent: due timers, the
  // batches other threads posted, the sink's end-of-turn work, and the
  // replies of other threads' connections posted to them.
  virtual void BeforeFlush() = 0;
  // After the turn's sends were queued: connections closed this turn are freed.
  virtual void AfterFlush() = 0;
  // How long the loop may sleep waiting for a completion (µs; 0: do not
  // sleep; -1: until one comes). -1 where the hooks keep a standing timer
  // for their next deadline (IoThread::ArmTimer): its firing is a completion.
  virtual int64_t WaitUs() = 0;
  // The standing timer fired (`res`: its completion's, -ETIME when it did).
  virtual void OnTimerFired(int res) = 0;
  // µs until the next deadline (0: due), read from the clock: for a turn
  // deciding whether to split its sends.
  virtual int64_t TimerDueInUs() = 0;
  // A turn while a command of `busy` runs long: the batches other threads
  // posted are delivered (except `busy`'s, kept for later) before the
  // thread's own completions...
  virtual void BeforeBusyTurn(Connection* busy) = 0;
  // ... and the replies of other threads' connections are posted after them
  // (except `busy`'s, which stay pending).
  virtual void AfterBusyTurn(Connection* busy) = 0;
  // `listener` accepted `fd`; the hook takes it (or refuses and closes it).
  virtual void OnAccepted(int fd, int listener) = 0;
  // A connection of thread 0 finished closing; the hook owns it from now on.
  virtual void OnClosed(Connection* conn) = 0;
  // A connection of thread 0 was released (IoThread::Release) and has
  // nothing in flight: the hook hands it to another thread.
  virtual void OnDetached(Connection* conn) = 0;

 protected:
  ~MainLoopHooks() = default;
};

}  // namespace ringkv::io

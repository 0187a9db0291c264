// IoThread: one event loop.
//
// Each IoThread owns its IoBackend (io_uring, or epoll where io_uring is
// refused: io/io_backend.h), whose receives land in a shared pool buffer
// (idle connections hold no read buffer: data is parsed and the buffer handed
// straight back), and the connections assigned to it. The per-connection
// logic here is the same for both backends. Thread 0 is the main thread: IoSystem installs its
// main-loop duties on it (InstallMainLoop: MainLoopHooks and the
// CommandSink), so it also owns the listeners, the timers and the execution
// of every command. The other threads post what they parse to the main
// inbox. An IoThread knows neither IoSystem nor the other threads.
//
// Completion tags (`user_data`), the one place their layout is defined:
//   bits 56..63  Op
//   bits 32..55  generation of the connection (24 bits, Connection::gen: a
//                count of the thread's adoptions, so a reused slot's new
//                connection never matches its predecessor's tags)
//   bits  0..31  slot index (connections) or listener index (accepts)
// A slot is reused only after every operation on it has completed, and the
// generation check turns any violation of that into a logged no-op instead
// of a use-after-free.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "io/command_sink.h"
#include "io/io_backend.h"
#include "io/connection.h"
#include "io/mailbox.h"
#include "io/net_stats.h"
#include "io/link_sink.h"
#include "io/main_loop_hooks.h"
#include "io/messages.h"
#include "io/slot_table.h"

namespace ringkv::io {

class IoThread {
 public:
  // `limits` and `main_inbox` (where a thread other than 0 posts its
  // batches and closes) outlive the thread.
  IoThread(int index, BackendKind backend, const SharedLimits& limits, Mailbox<ToMain>& main_inbox);
  ~IoThread();
  IoThread(const IoThread&) = delete;
  IoThread& operator=(const IoThread&) = delete;

  // Creates the backend (ring or epoll set) and its buffer pool. REQUIRES:
  // called on the thread that will run Loop() (a ring is single-issuer).
  absl::Status Init();
  // Threads 1..N-1: start the OS thread; returns Init()'s result.
  absl::Status Spawn();
  void Join();
  bool joinable() const { return thread_.joinable(); }
  // Runs until stop is requested.
  void Loop();

  int index() const { return index_; }
  Mailbox<ToIo>& mailbox() { return mailbox_; }
  // Any thread: what this thread received and sent.
  const NetStats& net_stats() const { return net_stats_; }

  // ---- owning thread only ----
  // Arms a multishot accept on a new listener (a fresh index: completions of
  // retired listeners are recognised and never re-armed).
  void ArmAccept(int fd);
  // Forgets the listeners on `fds`: their pending accepts end and are not
  // re-armed.
  void RetireListeners(const std::vector<int>& fds) {
    for (int& fd : listeners_) {
      if (std::find(fds.begin(), fds.end(), fd) != fds.end()) fd = -1;
    }
  }
  // Takes `conn` (a new connection, or one handed over from another thread
  // with its unsent output in conn->out and its flags: close_after_flush,
  // input_done, a TLS session, partial input).
  void Adopt(Connection* conn);

  // ---- moving connections to other threads (io-threads changed at runtime) ----
  // Starts giving `conn` up: its receive is cancelled (what it still
  // delivers is processed), no new send starts, a send in flight completes.
  // Once nothing is in flight, at the start of a turn, it is detached: out
  // of this thread's tables, its unsent output left in conn->out, and
  // reported (thread 0: MainLoopHooks::OnDetached; others: ToMain kDetached).
  // A connection that closes meanwhile is reported closed instead.
  void Release(Connection* conn);
  // Thread 0: releases up to `count` of its connections that may move (not
  // a replication link, nor a replica sent by offset, nor one closing),
  // appended to *released.
  void ReleaseSome(size_t count, std::vector<Connection*>* released);
  // Connections being released (not detached yet).
  size_t releasing() const { return detaching_.size(); }
  // How long the loop may sleep while connections are being released (their
  // stalled sends are cancelled after kDetachSendWait): -1 when none is.
  int64_t DetachWaitUs() const { return detaching_.empty() ? -1 : 100'000; }
  [[gnu::always_inline]] inline void MarkPending(Connection* conn) {
    if (!conn->send_pending) {
      conn->send_pending = true;
      pending_.push_back(conn);
    }
  }
  // Main thread: `conn` got fan-out bytes (IoSystem::PrepareFanoutWrite).
  // Unless a reply already has it queued, it joins the held list, which is
  // sent when no more input is waiting, or kFanoutMaxDelay after the oldest
  // held byte; a connection holding kFanoutBatchBytes is sent at once.
  void HoldFanout(Connection* conn) {
    if (conn->send_pending || conn->fanout_held) return;
    conn->fanout_held = true;
    if (fanout_.empty()) fanout_since_ = std::chrono::steady_clock::now();
    fanout_.push_back(conn);
  }
  static constexpr std::chrono::microseconds kFanoutMaxDelay{500};
  static constexpr size_t kFanoutBatchBytes = 16 * 1024;
  void CloseAfterFlush(Connection* conn);
  void StartClose(Connection* conn);
  void RequestStop() { stop_.store(true, std::memory_order_relaxed); }
  // Queues an fdatasync of fd; the completion calls the sink's OnFsyncDone.
  void SubmitFsync(int fd, uint32_t token);
  // Queues a one-shot poll for fd becoming readable; the completion calls
  // the sink's OnReadable.
  void SubmitPollIn(int fd, uint32_t token);
  // Thread 0's one standing timer (IoBackend::ArmTimer): its firing calls
  // MainLoopHooks::OnTimerFired. ArmTimer is false where the backend has no
  // such timer; MoveTimer requires one armed.
  bool ArmTimer(int64_t deadline_us) { return backend_->ArmTimer(deadline_us, Tag(Op::kTimer, 0, 0)); }
  void MoveTimer(int64_t deadline_us) { backend_->MoveTimer(deadline_us, Tag(Op::kTimer, 0, 0), Tag(Op::kTimerMove, 0, 0)); }
  // ---- framed links (io/link_sink.h); thread 0 only ----
  // Where framed links' frames and ups go (null: their input is dropped).
  void SetLinkSink(LinkSink* sink) { link_sink_ = sink; }
  LinkSink* link_sink() const { return link_sink_; }
  // Takes `conn`, a framed link whose socket's non-blocking connect is
  // under way (conn->link()->connecting): its receive is armed, and what
  // was written to it sent, once the connect completes (then the TLS
  // handshake, when it has a client session); OnLinkUp follows, or the close.
  void AdoptConnecting(Connection* conn);
  // Closes every framed link as IoSystem::CloseNow does (main_closed: no
  // OnLinkClosed follows).
  void CloseLinks();
  // A framed link is up: connected, or accepted, and its handshake done.
  // OnLinkUp (once), then what was written to it is sent.
  void LinkUp(Connection* conn);
  // Closes every connection still registered and hands each to `release`.
  // REQUIRES: the loop has stopped (thread 0: Loop returned; others: joined).
  template <typename Fn>
  void ReleaseAll(Fn release) {
    for (uint32_t slot = 0; slot < slots_.size(); ++slot) {
      Connection*& conn = slots_[slot];
      if (conn == nullptr) continue;
      close(conn->fd);
      conn->out.Clear();
      release(conn);
      conn = nullptr;
    }
    pending_.clear();
    rearm_.clear();
    live_.clear();
  }
  // The main loop, from inside a command that runs long (a script past
  // busy-reply-threshold): one non-blocking turn -- the hooks' part
  // (BeforeBusyTurn, AfterBusyTurn), completions reaped and handled, replies
  // sent -- so other clients are answered meanwhile. The input and the
  // closing of `busy` (the connection whose command runs) are held until
  // that command returns; its unsent replies stay queued. A call from inside
  // such a turn does nothing.
  // REQUIRES: InstallMainLoop was called.
  void TurnWhileBusy(Connection* busy);

  // Makes this thread the main loop: `hooks` run at the points of each turn
  // MainLoopHooks describes, `sink` executes its connections' commands as
  // they are parsed (and hears of its fsyncs and polls), and the thread
  // sleeps on `wake_fd` (the main inbox's eventfd) instead of its mailbox.
  // REQUIRES: called before Init(); both outlive the thread.
  void InstallMainLoop(MainLoopHooks* hooks, CommandSink* sink, int wake_fd) {
    main_ = hooks;
    sink_ = sink;
    wake_fd_ = wake_fd;
  }

 private:
  // A replica's stream, sent by offset straight from the backlog's blocks
  // (io::ReplicaSend): up to kMaxIov pieces in one vectored send, each block
  // referenced until the send completes. The replica counterpart of the
  // normal flush, chosen in Flush by one branch on a connection with nothing
  // queued in its OutBuffer. REQUIRES: conn->replica, conn->out empty, no
  // send in flight.
  [[gnu::always_inline]] inline void FlushReplica(Connection* conn) {
    ReplicaSend& rs = *conn->replica();
    if (rs.behind() == 0) return;
    int n = 0;
    const uint64_t stop = rs.stream->ForEachPiece(rs.next, rs.stream->end(), ReplicaSend::kMaxIov,
                                                  [&](SharedBlock* block, const char* data, size_t len) {
                                                    block->Ref();
                                                    rs.held[n] = block;
                                                    rs.iov[n] = iovec{const_cast<char*>(data), len};
                                                    ++n;
                                                  });
    rs.held_count = n;
    rs.inflight = static_cast<uint32_t>(stop - rs.next);
    conn->send_inflight = true;
    ++conn->inflight;
    const uint64_t tag = Tag(Op::kSend, conn->gen, conn->slot);
    if (n == 1) {
      backend_->Send(conn->fd, static_cast<const char*>(rs.iov[0].iov_base), rs.iov[0].iov_len, tag);
    } else {
      rs.msg = msghdr{};
      rs.msg.msg_iov = rs.iov;
      rs.msg.msg_iovlen = static_cast<size_t>(n);
      backend_->SendMsg(conn->fd, &rs.msg, tag);
    }
  }
  void OnReplicaSend(Connection* conn, int res);
  enum class Op : uint8_t { kAccept = 1, kRecv, kSend, kWake, kFsync, kPollIn, kCancel, kConnect, kTimer, kTimerMove };
  static uint64_t Tag(Op op, uint32_t gen, uint32_t slot) {
    return (static_cast<uint64_t>(op) << 56) | (static_cast<uint64_t>(gen & 0xFFFFFF) << 32) | slot;
  }

  // Prefetches the connection a receive or send completion will touch and
  // returns it (null for other completions or an empty slot).
  const Connection* PrefetchConnection(const Completion& c) const;
  void ArmRecv(Connection* conn);
  void ArmWake();
  void ArmAcceptAt(uint32_t index);
  // Sends what pending connections hold (except `keep`, left pending).
  void Flush(Connection* keep = nullptr);
  // Sends what one pending connection holds (it is no longer pending);
  // false when nothing was submitted (closing, a send in flight, nothing to send).
  bool SendPending(Connection* conn);
  // The loop turn's Flush. On thread 0, when a timer falls due before the
  // turn's sends are likely done, they are submitted in chunks of about
  // kSendChunkBudget of kernel time each (sized by send_ns_, the time a send
  // took in the chunks before), and a due timer runs between two chunks
  // (with MainLoopHooks::BeforeFlush).
  void FlushTurn();
  static constexpr std::chrono::nanoseconds kSendChunkBudget{300'000};
  static constexpr size_t kMinSendChunk = 16;
  // Reaps every ready completion and handles it. Each batch is copied and
  // the ring advanced before handling, so a handler may reap again (a turn
  // while busy) without seeing a completion twice or skipping one.
  void ReapCompletions();
  // The start of a turn: what TurnWhileBusy held for its connection.
  void ResumeHeldInput();
  // After completions: re-arms stopped receives, returns recycled buffers.
  void RearmAndRecycle();
  // Sends the held fan-out connections that are due (see HoldFanout).
  void ReleaseFanout();
  // Whether a completion other than a send's is ready: input to process.
  bool InputWaiting();
  void HandleCompletion(const Completion& c);
  void OnRecv(Connection* conn, const Completion& c);
  void OnSend(Connection* conn, int res);
  // Received bytes: decrypted first on a TLS connection, then parsed.
  void Receive(Connection* conn, std::string_view data) {
    if (conn->tls() == nullptr) {
      Process(conn, data);
    } else {
      ReceiveTls(conn, data);
    }
  }
  void Process(Connection* conn, std::string_view data);
  // The main thread ran the AUTH, HELLO or RESET `conn` waited on
  // (Connection::awaiting_auth): parses what it holds.
  void Resume(Connection* conn);
  // A framed link's input: whole frames to the LinkSink, the rest kept in
  // conn->pending's buffer; a bad header closes the link.
  void ProcessFrames(Connection* conn, std::string_view data);
  // A framed link's connect completed (`res`: the poll's mask or -errno).
  void OnConnected(Connection* conn, int res);
  // Gives `conn` a slot (a fresh generation) in this thread's table.
  void TakeSlot(Connection* conn);
  // TLS: feeds ciphertext to the session (the handshake, non-blocking, runs
  // here) and parses the plaintext it yields; a failed handshake closes the
  // connection after the alert.
  void ReceiveTls(Connection* conn, std::string_view cipher);
  // TLS: encrypts what `out` holds (once the handshake is done) and returns
  // the ciphertext to send.
  OutBuffer& EncryptForSend(Connection* conn);
  // Whether the connection still has bytes to send (for TLS: ciphertext, or
  // plaintext that a completed handshake will encrypt).
  static bool Unsent(Connection* conn);
  // Decrypts what adopted TLS sessions had buffered (see Adopt).
  void KickTls();
  size_t ParseAndDispatch(Connection* conn, RespParser& parser, std::string_view data, bool* stop);
  void FinishClose(Connection* conn);
  // Whether `conn` may be moved to another thread now (`all`: a retiring
  // thread gives up even its replication links).
  bool Movable(const Connection* conn, bool all) const;
  // Threads > 0: offers (ToMain kOffer) up to `count` movable connections;
  // `all`: every connection not closing (retiring).
  void Offer(size_t count, bool all);
  // Detaches the released connections that have nothing in flight any more.
  void SweepDetaching();
  void Detach(Connection* conn);
  void DrainMailbox();
  Connection* Lookup(uint32_t slot, uint32_t gen);

  // Whether this thread runs the main loop (InstallMainLoop): it executes
  // commands itself instead of posting them.
  bool runs_main_loop() const { return main_ != nullptr; }

  const int index_;
  const SharedLimits& limits_;
  Mailbox<ToMain>& main_inbox_;
  MainLoopHooks* main_ = nullptr;  // thread 0 only
  CommandSink* sink_ = nullptr;    // thread 0 only
  LinkSink* link_sink_ = nullptr;  // thread 0 only: framed links (SetLinkSink)
  const BackendKind backend_kind_;
  std::unique_ptr<IoBackend> backend_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  NetStats net_stats_;
  Mailbox<ToIo> mailbox_;
  int wake_fd_ = -1;

  SlotTable slots_;
  // The next connection's generation: a slot's new connection never
  // matches the tags of the one before it (unless 2^24 connections were
  // adopted in between, while a completion of the old one was still due).
  uint32_t next_gen_ = 0;
  std::vector<uint32_t> free_slots_;
  std::vector<Connection*> pending_;   // connections with bytes to send
  // What one send took, kernel included, in FlushTurn's chunks (a moving
  // average; the first guess is this machine's loopback, 37.1).
  int64_t send_ns_ = 5000;
  std::vector<Connection*> fanout_;    // main thread: held fan-out (HoldFanout)
  std::chrono::steady_clock::time_point fanout_since_{};
  // A vectored send in flight for a connection whose reply spans several
  // chunks (a large LRANGE / HGETALL): the msghdr and iovecs must outlive
  // the submission, so they are allocated only for such sends, by slot.
  struct MultiSend {
    static constexpr int kMaxIov = 16;  // up to 256 KiB per send
    msghdr msg{};
    iovec iov[kMaxIov];
  };
  absl::flat_hash_map<uint32_t, std::unique_ptr<MultiSend>> multi_sends_;
  std::vector<Connection*> rearm_;     // multishot recv to re-arm (ENOBUFS)
  std::vector<Connection*> tls_kick_;  // adopted TLS links with input already buffered
  std::vector<Connection*> detaching_;  // released, not detached yet (Release)
  // A send in flight on a released connection is left to complete for this
  // long (since the last release or cancel), then cancelled: a peer that
  // stopped reading must not hold a hand-over (or a retirement) forever.
  static constexpr std::chrono::milliseconds kDetachSendWait{1000};
  std::chrono::steady_clock::time_point detach_since_{};
  bool retiring_ = false;               // threads > 0: leave once no connection is left
  // Decrypted input, parsed in place as a pool buffer is; one per scratch
  // level (a turn while busy parses inside a command of the outer level).
  // Allocated by the first TLS connection.
  static constexpr size_t kTlsReadSize = 16 * 1024;
  std::unique_ptr<char[]> tls_plain_[2];
  std::vector<int> listeners_;
  absl::flat_hash_map<uint64_t, Connection*> live_;  // threads > 0: by client id

  // Threads > 0: batches being built in this turn, posted together.
  std::vector<ToMain> to_main_;
  std::vector<ToIo> mailbox_scratch_;
  // What parsing borrows, twice: [0] for the normal turn, [1] for a turn
  // while busy, which runs inside a command of [0]'s batch.
  struct ParseScratch {
    // Parses input that starts at a command boundary; its state moves into
    // the connection's PendingInput only when a command is left incomplete.
    RespParser parser;
    // Commands parsed ahead of execution (see ParseAndDispatch). Never
    // moved: inline commands' argv views point into their own storage.
    std::array<ParsedCommand, 16> ahead;
    std::array<PrefetchSlot, 16> prefetch;  // one per command of `ahead`
    std::array<std::span<const std::string_view>, 16> prefetch_argvs;  // their arguments
  };
  ParseScratch scratch_[2];
  // Completions reaped and not handled yet (see ReapCompletions).
  static constexpr unsigned kReapBatch = 64;
  // Batches at least this long prefetch their connections (ReapCompletions).
  static constexpr unsigned kPrefetchBatch = 8;
  Completion reaped_[kReapBatch];
  const Connection* reaped_conn_[kReapBatch];  // their connections, when prefetched
  unsigned reaped_pos_ = 0, reaped_count_ = 0;
  bool prefetch_batch_ = false;  // this batch is long enough to prefetch for
  int scratch_level_ = 0;  // 1 inside TurnWhileBusy
  bool in_busy_turn_ = false;  // inside TurnWhileBusy, hooks included
  Connection* busy_ = nullptr;      // TurnWhileBusy's connection, while in it
  // Input of that connection that arrived during such turns, and whether its
  // peer closed: processed at the start of the next normal turn, after the
  // rest of the batch its long command came in.
  Connection* held_conn_ = nullptr;
  std::string held_input_;
  bool held_eof_ = false;
};

}  // namespace ringkv::io

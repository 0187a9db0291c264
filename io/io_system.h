// IoSystem: the listeners, the I/O threads and the hand-off between them and
// the main command thread. Knows nothing of commands or keys: it delivers
// parsed commands to a CommandSink and sends back what the sink wrote.
//
// Threads: the main thread runs IoThread 0 (listeners, its share of the
// connections, timers, and the inbox of commands parsed by the other I/O
// threads). `io-threads N` adds N-1 IoThreads, each with its own backend
// (io_uring, or epoll where io_uring is refused: io/io_backend.h);
// accepted connections are spread round-robin over all N. With N = 1 there
// are no queues on the request path: a command is parsed, executed and its
// reply queued for sending inside one completion handler.
//
// N changes at runtime (SetThreads), between loop turns, without dropping a
// connection or reordering a reply. A connection moves from one thread to
// another in four steps: its thread offers it (ToMain kOffer; thread 0's
// are released directly); the main thread from then on holds the replies it
// writes for it (main_out, Connection::main_moving) and asks for it
// (ToIo kRelease, after every reply already posted); the thread cancels its
// receive, lets a send in flight complete, and detaches it with its unsent
// output in conn->out (kDetached); the main thread appends the replies it
// held and hands it to the new thread (Handover), which sends the rest and
// arms a new receive (bytes the kernel holds are read there). Growing starts
// the new threads and moves the surplus of the others to them; shrinking
// retires the highest threads: each gives up every connection, then leaves
// its loop and is joined.
//
// Every CommandSink method and every public IoSystem method below Run() is
// main-thread only (checked in debug builds: io/thread_check.h), except
// those marked thread-safe or async-signal-safe.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "io/command_sink.h"
#include "io/connection.h"
#include "io/net_stats.h"
#include "io/io_backend.h"
#include "io/link_sink.h"
#include "io/mailbox.h"
#include "io/main_loop_hooks.h"
#include "io/thread_check.h"
#include "io/tls_context.h"

namespace ringkv::io {

class IoThread;
struct ToMain;
struct ToIo;

struct IoOptions {
  int threads = 1;
  int port = 6379;
  int tls_port = 0;  // 0: no TLS listener (IoSystem::tls() must be configured otherwise)
  int tcp_backlog = 511;
  int tcp_keepalive = 300;
  std::vector<std::string> bind = {"*", "-::*"};
  // A Unix domain socket to listen on as well (empty: none), and its mode
  // (0: as the umask leaves it).
  std::string unixsocket;
  int unixsocketperm = 0;
  BackendChoice backend = BackendChoice::kAuto;
};

// The main-loop duties of I/O thread 0 are this class's MainLoopHooks,
// installed on that thread at Start (a private base: only the IoThread it
// installs them on calls them).
class IoSystem final : private MainLoopHooks {
 public:
  explicit IoSystem(CommandSink* sink);
  ~IoSystem();
  IoSystem(const IoSystem&) = delete;
  IoSystem& operator=(const IoSystem&) = delete;

  // Opens the listening sockets only (a server binds before it loads its
  // data, as Redis: a busy port fails at once), and chooses the backend
  // (ChooseBackend). Connections queue in the kernel until Start serves them.
  absl::Status Listen(const IoOptions& options);
  // Picks the backend once, before any data is loaded: kAuto probes
  // io_uring (ProbeIoUring) and falls back to epoll, logging the reason
  // once; kIoUring fails with that reason instead.
  absl::Status ChooseBackend(BackendChoice choice);
  BackendKind backend() const { return backend_; }
  const char* backend_name() const { return BackendName(backend_); }
  // Opens the listeners (unless Listen did) and the rings; the error names
  // the cause and the fix.
  absl::Status Start(const IoOptions& options);
  // Runs the main loop until Stop(); returns when every thread has exited.
  void Run();
  // Async-signal-safe: asks Run() to return at the end of the current turn.
  void RequestStop();
  bool stop_requested() const;
  // Runs CommandSink::OnTimer within `us` microseconds (sooner than it asked
  // for last time; a WAIT deadline, for example). Main thread. Moves the
  // loop's next wake-up only when it is earlier; no system call (the
  // standing timer is moved with the turn's submission).
  void WakeTimerInUs(int64_t us);
  void WakeTimerIn(int ms) { WakeTimerInUs(int64_t{ms} * 1000); }
  // Thread-safe: the main thread calls CommandSink::OnNotify() in its next turn.
  void Notify();
  // Main thread, from inside a command that runs long (a script past
  // busy-reply-threshold): serves other clients once, without blocking --
  // their commands are delivered (the sink answers them as it sees fit),
  // replies sent. What concerns `busy` (the connection whose command runs:
  // more input, its closing) and background notifications wait until the
  // next normal turn. `busy` is null during a start-up load (no command of a
  // client runs: every connection is served).
  void ProcessEventsWhileBusy(Connection* busy);
  // Takes a connected socket (a replica's link to its primary) as a
  // connection of the main thread: CommandSink::OnOpen is called for it, then
  // its input is parsed like any client's. Main thread, after Start().
  // `tls`: the session a TLS link completed its handshake with (the socket's
  // bytes are then decrypted and encrypted through it).
  Connection* AdoptSocket(int fd, TlsSessionPtr tls = nullptr);
  // Async-signal-safe: wakes the main thread for one more loop turn.
  void WakeMain();

  // ---- framed links (io/link_sink.h): the cluster bus's sockets ----------------
  // Main thread. Links live on I/O thread 0 (the main thread's loop), are
  // written with PrepareWrite and closed with CloseNow like any connection,
  // and are not clients: the CommandSink never hears of them.
  // Where links' events go; set before ListenLinks / ConnectLink, and to
  // null before the sink goes: every link is then closed, as by CloseNow
  // (the sink hears nothing more), those still in their handshake too.
  void SetLinkSink(LinkSink* sink);
  // Listens for links on `port` at each address of `bind` (the syntax of
  // IoOptions::bind). REQUIRES: after Start(), no link listener yet.
  absl::Status ListenLinks(const std::vector<std::string>& bind, int port);
  // Starts connecting a link to ip:port (an IPv4 or IPv6 address), over TLS
  // with `tls` (a client session: TlsSession::Connect) or plain when null.
  // OnLinkUp or OnLinkClosed follows, never from inside this call. Null,
  // with *why, when no connect could even start (a bad address, no socket).
  Connection* ConnectLink(const std::string& ip, int port, TlsSessionPtr tls, std::string* why);

  // ---- main thread ------------------------------------------------------------
  // As PrepareWrite, for bytes the client did not ask for in this turn (a
  // published message, a keyspace notification). The main thread's own
  // connections hold such bytes while more input is already waiting to be
  // processed -- at most IoThread::kFanoutMaxDelay, and only until one holds
  // IoThread::kFanoutBatchBytes -- so a busy fan-out sends fewer, larger
  // writes instead of one small write per subscriber per turn. A reply
  // written to the same connection sends the held bytes with it, in order.
  // Connections of other I/O threads are posted every turn, as PrepareWrite.
  OutBuffer& PrepareFanoutWrite(Connection* conn);
  // The buffer a reply for `conn` is written into. Marks the connection so the
  // bytes are sent at the end of this loop turn. Always inlined: it is on the
  // path of every reply.
  [[gnu::always_inline]] inline OutBuffer& PrepareWrite(Connection* conn) {
    RINGKV_DCHECK_MAIN_THREAD();  // empty in release builds
    if (conn->thread == 0) return PrepareLocalWrite(conn);
    if (!conn->main_pending) {
      conn->main_pending = true;
      remote_pending_.push_back(conn);
    }
    return conn->extras()->main_out;  // another thread's connection has its extras from accept
  }
  // ---- a replica's stream, sent by offset (io::ReplicaSend) ----
  // Main thread. REQUIRES: conn->thread == 0 (the stream's blocks are main-
  // thread state); a replica of another I/O thread is handed its range in
  // its OutBuffer instead (repl::Backlog::RefTo).
  // Starts sending `stream` from offset `from`, after what conn's OutBuffer
  // holds. False when a send of an earlier stream is still in flight (try
  // again next turn).
  bool StartStream(Connection* conn, const BlockStream* stream, uint64_t from);
  // New bytes may be in the stream: conn is flushed this turn if behind.
  void StreamMore(Connection* conn);
  // No more stream bytes are sent to conn (a send in flight completes).
  static void StopStream(Connection* conn) {
    if (ReplicaSend* rs = conn->replica(); rs != nullptr) rs->stream = nullptr;
  }
  // Starts an fdatasync of fd through the main thread's ring. The kernel runs
  // it on its own worker threads (a blocking operation is never run inline),
  // so the main thread does not wait; OnFsyncDone(token, result) reports the
  // end. Submitted with the rest of this loop turn's operations.
  void SubmitFsync(int fd, uint32_t token);
  // Calls OnReadable(token, ..) once, when fd is readable (a pipe from a fork
  // child, say). One-shot: call again to keep watching. The caller keeps fd
  // open until the call back arrives.
  void WatchReadable(int fd, uint32_t token);
  // Closes the connection once what was written to it so far has been sent.
  void CloseAfterReply(Connection* conn);
  // Closes the connection now, dropping unsent replies.
  void CloseNow(Connection* conn);
  // Reply bytes still held by connections CloseNow closed whose close is not
  // complete: a send in flight, which the kernel may still be reading (its
  // chunks are freed when it completes, which the close's shutdown()
  // hastens), or a close posted to another I/O thread. They go with nothing
  // more to do -- as Redis frees an evicted client's buffers at once -- so
  // maxmemory's eviction leaves them out of the memory it counts.
  uint64_t closing_output_bytes() const { return closing_output_bytes_; }
  void SetAuthenticated(Connection* conn, bool authenticated) {
    conn->authenticated.store(authenticated, std::memory_order_relaxed);
  }
  SharedLimits& limits() { return limits_; }
  // The I/O threads serving connections (thread 0 included); retiring ones
  // are not counted. Main thread.
  int threads() const { return active_; }
  // Asks for `n` I/O threads (at least 1): applied between loop turns, at
  // once or once a shrink still under way is done; threads() reports each
  // step. Main thread, after Start().
  void SetThreads(int n);
  // Hands `conn` over to I/O thread 0 (a replica's link: the main thread
  // then sends it the stream by offset, io::ReplicaSend), by the same steps
  // as a change of io-threads: replies written meanwhile are held and
  // follow what its thread had not sent. Nothing to do for a connection of
  // thread 0. Main thread.
  void MoveToMainThread(Connection* conn);
  // Threads still winding down after a shrink, connections still moving.
  int retiring_threads() const { return static_cast<int>(threads_.size()) - active_; }
  size_t moving_connections() const { return moving_; }
  // Any thread: every I/O thread's NetStats summed.
  NetTotals net_totals() const;
  // Main thread: `conn` carries replication one way (Connection::kReplInput
  // or kReplOutput), for the counts above.
  void MarkReplication(Connection* conn, uint8_t direction) {
    conn->replication.store(direction, std::memory_order_relaxed);
  }
  const std::vector<std::string>& listening_addresses() const { return listen_names_; }
  // Closes the listening sockets (shutdown in progress), the Unix one too.
  void CloseListeners();
  // A shutdown is decided: every listening socket (TCP, TLS, Unix, links)
  // leaves LISTEN now, so a client connecting from here on is refused, as
  // by Redis's closeListeningSockets, rather than accepted by the kernel
  // and dropped when the process ends. The Unix socket's file stays until
  // the server removes it.
  void StopAccepting();
  // The Unix socket's path, while one is listened on ("" otherwise).
  const std::string& unix_socket() const { return unix_path_; }
  // Replaces the listeners (CONFIG SET port / bind). The old ones stop first,
  // so the same port can be bound again; if the new ones cannot all be
  // opened, the old configuration is restored and the error returned.
  absl::Status Rebind(const std::vector<std::string>& bind, int port, int tls_port);
  // Whether Start ran (listeners are served).
  bool started() const { return !threads_.empty(); }
  int tls_port() const { return tls_port_; }
  // The certificates and settings TLS connections are made with: configured
  // by the server before a TLS listener opens and on CONFIG SET tls-*; a
  // connection keeps the context it was accepted with.
  TlsContext& tls() { return tls_; }
  void set_tcp_keepalive(int seconds) { tcp_keepalive_ = seconds; }
  // After Run() returned: stops the other I/O threads and closes every
  // connection, telling the sink (OnClose) about each.
  void Shutdown();

 private:
  // ---- MainLoopHooks (I/O thread 0, once per loop turn or per connection) ----
  void BeforeFlush() override;
  void AfterFlush() override { ReapGraveyard(); }
  int64_t WaitUs() override;
  void OnTimerFired(int res) override;
  int64_t TimerDueInUs() override;
  void BeforeBusyTurn(Connection* busy) override;
  void AfterBusyTurn(Connection* busy) override { PostRemoteReplies(busy); }
  void OnAccepted(int fd, int listener) override { Accept(fd, listener); }
  void OnClosed(Connection* conn) override { HandleClosed(conn); }
  void OnDetached(Connection* conn) override { Handover(conn); }

  OutBuffer& PrepareLocalWrite(Connection* conn);
  void Accept(int fd, int listener);
  void AcceptLink(int fd);
  // A framed link's connection (thread 0, its LinkState), not adopted yet.
  Connection* NewLink(int fd, const SocketAddress& peer, bool inbound, TlsSessionPtr tls);
  // The socket's peer, as getpeername says.
  SocketAddress PeerAddress(int fd) const;
  void DrainInbox();
  // Posts replies of other threads' connections (`keep` stays pending).
  void PostRemoteReplies(Connection* keep = nullptr);
  void HandleClosed(Connection* conn);  // from any thread's close path, on main
  // Counts `bytes` of conn's output in closing_output_bytes() until HandleClosed.
  void HoldClosingOutput(const Connection* conn, uint64_t bytes);
  // The sink's close of conn: OnClose for a client, OnLinkClosed for a link.
  void TellClosed(Connection* conn);
  // ---- io-threads at runtime ----
  // Starts a step towards target_ (grow, or shrink) unless one is under way.
  void ApplyThreads();
  void Grow(int n);
  void Shrink(int n);
  // A thread offered conn: held back here, then asked for (kRelease).
  void OnOffer(Connection* conn);
  // conn was detached by its thread: to the least loaded serving thread.
  void Handover(Connection* conn);
  void OnRetired(int thread);
  void DeliverBatch(ToMain& msg, std::vector<std::string_view>& args);
  void Dispatch(ToMain& msg);
  void RunTimers();  // runs the timer if it is due
  void ReapGraveyard();
  // `in_use` (optional): the failure was a port already in use.
  absl::Status OpenListeners(const std::vector<std::string>& bind, int port, int tls_port, bool* in_use = nullptr);
  // One port on every bind address: the sockets and their names appended.
  absl::Status OpenPort(const std::vector<std::string>& bind, int port, std::vector<int>* fds,
                        std::vector<std::string>* names, bool* in_use);
  absl::Status OpenUnixListener(const std::string& path, int perm);
  void StopListeners();

  CommandSink* sink_;
  SharedLimits limits_;
  std::vector<std::unique_ptr<IoThread>> threads_;
  std::vector<int> listen_fds_;
  std::vector<int> tls_listen_fds_;  // accepted connections get a TlsSession
  std::vector<int> link_listen_fds_;  // accepted connections are framed links (ListenLinks)
  LinkSink* link_sink_ = nullptr;
  // Links take ids of their own, far above any client's: CLIENT ID's
  // sequence has no gaps for them.
  uint64_t next_link_id_ = uint64_t{1} << 62;
  int tls_port_ = 0;
  TlsContext tls_;
  std::vector<std::string> listen_names_;
  int unix_fd_ = -1;
  // Immutable while the system lives: a Unix peer's SocketAddress points here.
  std::string unix_path_;
  BackendKind backend_ = BackendKind::kIoUring;
  bool backend_chosen_ = false;
  uint64_t next_client_id_ = 1;
  uint32_t next_thread_ = 0;
  int active_ = 0;   // serving threads: [0, active_); those above are retiring
  int target_ = 0;   // what SetThreads asked for
  size_t moving_ = 0;  // connections offered or released and not handed over yet
  std::vector<Connection*> to_main_thread_;  // moving, and bound for thread 0 (MoveToMainThread)
  std::vector<uint32_t> conn_count_;  // connections per thread (by Connection::thread)
  NetTotals retired_net_;              // what retired threads moved
  int tcp_keepalive_ = 300;
  int tcp_backlog_ = 511;
  std::vector<std::string> bind_;
  int port_ = 6379;
  int64_t next_timer_us_ = 0;  // steady clock, µs
  // The standing timer (thread 0's IoThread::ArmTimer), so that a wait that
  // sleeps arms no kernel timer of its own (docs/performance.md 41): the
  // loop sleeps until a completion, the timer's among them. Armed at the
  // deadline, moved only when one comes nearer. Without one (epoll), every
  // wait carries its timeout.
  bool standing_timer_ = true;
  bool timer_armed_ = false;     // its completion has not been handled yet
  int64_t timer_armed_us_ = 0;   // where it was last armed or moved to
  bool timer_due_now_ = false;   // WakeTimerInUs(0) since the last RunTimers
  std::atomic<bool> stop_{false};
  std::vector<Connection*> remote_pending_;
  std::vector<Connection*> graveyard_;
  // CloseNow's connections holding output until their close completes
  // (HandleClosed), with the bytes each was counted for.
  absl::flat_hash_map<const Connection*, uint64_t> closing_output_;
  uint64_t closing_output_bytes_ = 0;
  std::unique_ptr<Mailbox<ToMain>> inbox_;
  std::vector<ToMain> inbox_scratch_;
  size_t inbox_pos_ = 0;  // the next of inbox_scratch_ to dispatch
  std::vector<std::string_view> batch_args_;  // DeliverBatch scratch
  // DeliverBatch's prefetch rounds: each command's arguments and slot.
  std::vector<std::span<const std::string_view>> prefetch_cmds_;
  std::vector<PrefetchSlot> prefetch_slots_;
  // Messages a turn while busy kept for the next normal turn (in order).
  std::vector<ToMain> held_;
  std::vector<std::vector<ToIo>> outbox_;  // per thread, posted once per turn
};

}  // namespace ringkv::io

"""Server processes for the fault harness: each Node is one redis-server or
ringkv-server on a free loopback port with its own directory; a Cluster is
the nodes of one scenario and the proxied replication links between them.

Every process started here is killed when the harness exits, however it
exits: kill_all() runs at interpreter exit (and on SIGTERM via SystemExit),
and each child asks the kernel to SIGKILL it should the harness die first
(PR_SET_PDEATHSIG). Children run in their own session, so that a Ctrl-C
reaches the harness only, which then reports and kills them.
"""
import atexit
import ctypes
import fcntl
import os
import random
import signal
import socket
import subprocess
import tempfile
import time

from resp_client import Client, ReplyError

_children = set()
_ports = random.Random()
_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    """Runs in the child before exec: SIGKILL when the harness dies."""
    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def kill_all():
    """SIGKILLs every server process still running."""
    for p in list(_children):
        if p.poll() is None:
            p.kill()
            p.wait()
        _children.discard(p)


atexit.register(kill_all)


_RESERVATIONS = os.path.join(tempfile.gettempdir(), "ringkv-faults-ports")
_reserved = []  # open lock files: held for the life of this process


def _reserve(port):
    """Claims `port` for this process across concurrent harness runs (ctest
    runs several at once): a port whose lock file another live process
    holds is skipped, so a node killed and restarted gets its port back."""
    os.makedirs(_RESERVATIONS, exist_ok=True)
    f = open(os.path.join(_RESERVATIONS, str(port)), "w")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        return False
    _reserved.append(f)
    return True


def free_port():
    """A free loopback port below the ephemeral range, reserved for this
    process: a server restarted on it cannot find it taken by some client's
    outgoing connection or by another harness's server."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        ephemeral_low = int(f.read().split()[0])
    while True:
        port = _ports.randrange(10000, ephemeral_low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        if _reserve(port):
            return port


class Node:
    """One server: `kind` is "ringkv" or "redis", `options` its command-line
    options beyond port, directory and logging. start() may be called again
    after kill9() (same port, same directory, same options)."""

    def __init__(self, name, kind, binary, workdir, options):
        self.name = name
        self.kind = kind
        self.binary = binary
        self.options = list(options)
        self.dir = os.path.join(workdir, name)
        self.log_path = os.path.join(self.dir, "server.log")
        self.port = free_port()
        self.proc = None
        self.sync_base = (0, 0)  # sync_full, sync_partial_ok of earlier incarnations
        self._admin = None
        os.makedirs(self.dir)

    def start(self, replicaof_port=None, timeout=30.0):
        """Starts the process (as a replica of 127.0.0.1:replicaof_port when
        given) and returns once it answers PING: its own dataset loaded (a
        server answers -LOADING while it loads, as redis-server does)."""
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
                "--daemonize", "no", "--logfile", ""] + self.options
        # RINGKV_TEST_IO_BACKEND: the io-backend of ringkv servers (the runs on epoll).
        backend = os.environ.get("RINGKV_TEST_IO_BACKEND")
        if backend and "redis-server" not in os.path.basename(self.binary):
            args += ["--io-backend", backend]
        if replicaof_port is not None:
            args += ["--replicaof", "127.0.0.1", str(replicaof_port)]
        with open(self.log_path, "a") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True, preexec_fn=_die_with_parent)
        _children.add(self.proc)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited at start-up (status %s); log: %s\n%s"
                                   % (self.name, self.proc.returncode, self.log_path, self.log_tail()))
            try:
                self.call("PING")
                return
            except ReplyError as e:
                if not str(e).startswith("LOADING"):
                    return  # answering (-NOAUTH, ...)
                time.sleep(0.05)
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("%s did not answer within %.0f s; log: %s" % (self.name, timeout, self.log_path))

    def kill9(self):
        """SIGKILL, as a crash; the process is reaped."""
        self._drop_admin()
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            _children.discard(self.proc)

    def exited(self):
        """The exit status if the process ended on its own, else None."""
        return None if self.proc is None else self.proc.poll()

    def call(self, *args):
        """One command on this node's admin connection; raises ReplyError
        on an error reply, OSError when the node is unreachable."""
        reply = self.pipeline([args])[0]
        if isinstance(reply, ReplyError):
            raise reply
        return reply

    def pipeline(self, commands):
        """Several commands in one write on the admin connection (reopened
        when it broke); replies in order, errors as ReplyError values."""
        if self._admin is None:
            self._admin = Client(self.port)
        try:
            return self._admin.pipeline(commands)
        except OSError:
            self._drop_admin()
            raise

    def info(self, section):
        """INFO <section> as a dict of strings."""
        text = self.call("INFO", section).decode()
        return dict(line.split(":", 1) for line in text.splitlines() if ":" in line and not line.startswith("#"))

    def sync_counts(self):
        """(sync_full, sync_partial_ok) served by this node, across restarts."""
        stats = self.info("stats")
        return (self.sync_base[0] + int(stats["sync_full"]), self.sync_base[1] + int(stats["sync_partial_ok"]))

    def log_tail(self, lines=15):
        with open(self.log_path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])

    def _drop_admin(self):
        if self._admin is not None:
            self._admin.close()
            self._admin = None


class Cluster:
    """The nodes of one scenario. `primary` is the node writers write to
    (replaced on promotion; read by writer threads). `links` maps a replica's
    name to the LinkProxy it replicates its upstream through.
    `acks_needed` is the WAIT count that makes a write acknowledged: every
    node that replicates straight from the primary in the intended topology."""

    def __init__(self, workdir, proxy_loop):
        self.workdir = workdir
        self.proxy_loop = proxy_loop
        self.nodes = []
        self.primary = None
        self.links = {}
        self.acks_needed = 0

    def add(self, name, kind, binary, options):
        """Starts a node (standalone at first) and makes it part of the cluster."""
        node = Node(name, kind, binary, self.workdir, options)
        self.nodes.append(node)
        node.start()
        return node

    def replicas(self):
        """Every node but the primary."""
        return [n for n in self.nodes if n is not self.primary]

    def attach(self, replica, upstream, rcvbuf=None, throttle=None):
        """Makes `replica` replicate `upstream` through a new proxy (the old
        proxy of that replica, if any, is closed), with LinkProxy's `rcvbuf`
        and, from its first byte, `throttle` (bytes per second)."""
        proxy = self.proxy_loop.proxy(upstream.port, rcvbuf)
        if throttle is not None:
            proxy.throttle(throttle)
        replica.call("REPLICAOF", "127.0.0.1", proxy.port)
        self._close_link(replica)
        self.links[replica.name] = proxy

    def promote(self, node):
        """REPLICAOF NO ONE on `node`, which becomes the writers' primary."""
        node.call("REPLICAOF", "NO", "ONE")
        self.took_over(node)

    def took_over(self, node):
        """Records that `node` is the primary now (after FAILOVER)."""
        self._close_link(node)
        self.primary = node

    def proxy_of(self, replica):
        return self.links[replica.name]

    def restart(self, node):
        """kill -9 and start again, through its proxy when it is a replica."""
        node.sync_base = node.sync_counts()
        node.kill9()
        proxy = self.links.get(node.name)
        node.start(replicaof_port=proxy.port if proxy else None)

    def heal(self):
        """Clears every proxy's faults."""
        for proxy in self.links.values():
            proxy.heal()

    def close(self):
        """Kills every node and closes every proxy."""
        for node in self.nodes:
            node.kill9()
        for name in list(self.links):
            self.links.pop(name).close()

    def _close_link(self, node):
        proxy = self.links.pop(node.name, None)
        if proxy is not None:
            proxy.close()

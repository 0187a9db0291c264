"""Write load for the fault harness.

Writer threads send random writes of every type to the cluster's current
primary, in pipelined batches and MULTI/EXEC blocks, across databases
DBS; error replies (WRONGTYPE, READONLY during a failover...) are ignored.
The Acker thread increments ACK_KEY in ACK_DB, which writers never touch,
and records the highest value a replica-acknowledged (or fsynced) reply
vouched for: that value must never be lost.

Both are bounded: they stop at stop(), at their deadline, or after
max_ops commands, whichever comes first.
"""
import threading
import time

from resp_client import Client, ReplyError

DBS = (0, 3, 9, 11, 12)
ACK_DB = 5
ACK_KEY = b"acked:counter"
KEY_KINDS = ("str", "num", "list", "hash", "set", "zset")
KEYS_PER_KIND = 6
MEMBERS = [b"m%d" % i for i in range(12)]
RECONNECT_PAUSE_S = 0.05


def key_name(kind, i):
    return b"%s:%d" % (kind.encode(), i)


def key_names():
    """Every key name a writer may use (in any of DBS)."""
    return [key_name(kind, i) for kind in KEY_KINDS for i in range(KEYS_PER_KIND)]


class CommandGen:
    """Random commands over a small key space, so that keys collide, change
    type (RENAME, COPY, MOVE) and expire (TTLs of 10 ms to 1 s) while
    written; with big_values, three values in ten are 1-16 KB."""

    def __init__(self, rng, big_values):
        self.rng = rng
        self.big_values = big_values
        self.weights, self.forms = zip(*self._forms())

    def key(self, kind=None):
        """Mostly a key of `kind`; one in ten picks any key, so types collide."""
        if kind is None or self.rng.random() < 0.1:
            kind = self.rng.choice(KEY_KINDS)
        return key_name(kind, self.rng.randrange(KEYS_PER_KIND))

    def value(self):
        if self.big_values and self.rng.random() < 0.3:
            return b"v" * self.rng.randint(1024, 16384)
        return b"%x" % self.rng.getrandbits(self.rng.choice((4, 16, 48)))

    def member(self):
        return self.rng.choice(MEMBERS)

    def ttl_ms(self):
        return self.rng.randint(10, 500)

    def _forms(self):
        """(weight, function returning one command) for each write form."""
        r, k, v, m = self.rng, self.key, self.value, self.member
        return [
            (6, lambda: [b"SET", k("str"), v()]),
            (2, lambda: [b"SET", k("str"), v(), b"PX", self.ttl_ms()]),
            (2, lambda: [b"APPEND", k("str"), v()]),
            (2, lambda: [b"SETRANGE", k("str"), r.randint(0, 40), v()]),
            (2, lambda: [b"GETSET", k("str"), v()]),
            (3, lambda: [b"INCR", k("num")]),
            (2, lambda: [b"INCRBYFLOAT", k("num"), r.choice((b"1.5", b"-0.25", b"3e2"))]),
            (4, lambda: [r.choice((b"LPUSH", b"RPUSH")), k("list")] + [m() for _ in range(r.randint(1, 4))]),
            (2, lambda: [b"LPOP", k("list")]),
            (2, lambda: [b"LINSERT", k("list"), r.choice((b"BEFORE", b"AFTER")), m(), m()]),
            (2, lambda: [b"LREM", k("list"), r.randint(-2, 2), m()]),
            (2, lambda: [b"LSET", k("list"), r.randint(-3, 3), m()]),
            (4, lambda: [b"HSET", k("hash")] + [x for _ in range(r.randint(1, 3)) for x in (m(), v())]),
            (2, lambda: [b"HDEL", k("hash"), m()]),
            (2, lambda: [b"HINCRBY", k("hash"), m(), r.randint(-5, 5)]),
            (4, lambda: [b"SADD", k("set")] + [m() for _ in range(r.randint(1, 4))]),
            (2, lambda: [b"SREM", k("set"), m()]),
            (2, lambda: [b"SMOVE", k("set"), k("set"), m()]),
            (2, lambda: [b"SPOP", k("set")] + r.choice(([], [r.randint(1, 3)]))),
            (4, lambda: [b"ZADD", k("zset")] + [x for _ in range(r.randint(1, 3)) for x in (r.randint(-9, 9), m())]),
            (2, lambda: [b"ZINCRBY", k("zset"), r.choice((b"1", b"-2.5")), m()]),
            (2, lambda: [b"ZREM", k("zset"), m()]),
            (2, lambda: [b"ZPOPMIN", k("zset")] + r.choice(([], [2]))),
            (2, lambda: [b"DEL", k()]),
            (2, lambda: [b"PEXPIRE", k(), self.ttl_ms()]),
            (1, lambda: [b"EXPIRE", k(), 1]),
            (1, lambda: [b"PERSIST", k()]),
            (1, lambda: [b"MOVE", k(), r.choice(DBS)]),
            (1, lambda: [b"RENAME", k(), k()]),
            (1, lambda: [b"COPY", k(), k(), b"DB", r.choice(DBS)] + r.choice(([], [b"REPLACE"]))),
            (0.05, lambda: [b"SWAPDB", r.choice(DBS), r.choice(DBS)]),
            (3, lambda: [b"SELECT", r.choice(DBS)]),
        ]

    def command(self):
        return self.rng.choices(self.forms, self.weights)[0]()

    def batch(self):
        """Commands to send in one write: a few loose ones, or (one time in
        eight) a MULTI/EXEC block, which may SELECT inside."""
        if self.rng.random() < 0.125:
            return [[b"MULTI"]] + [self.command() for _ in range(self.rng.randint(1, 6))] + [[b"EXEC"]]
        return [self.command() for _ in range(self.rng.randint(1, 8))]


class _Bounded(threading.Thread):
    """A daemon thread that runs step() on a connection to the cluster's
    primary until stopped, past its deadline or after max_ops commands;
    connection loss and READONLY (or LOADING) replies make it reconnect,
    after a short pause, to whatever node is the primary by then."""

    def __init__(self, cluster, deadline, max_ops, name):
        super().__init__(name=name, daemon=True)
        self.cluster = cluster
        self.deadline = deadline
        self.max_ops = max_ops
        self.ops = 0
        self.conn = None
        self._halt = threading.Event()

    def stop(self):
        self._halt.set()

    def running(self):
        return not self._halt.is_set() and time.monotonic() < self.deadline and self.ops < self.max_ops

    def run(self):
        while self.running():
            try:
                if self.conn is None:
                    self.conn = Client(self.cluster.primary.port, timeout=15)
                    self.connected()
                if self.step():
                    self._reconnect()
            except (OSError, ReplyError):
                self._reconnect()

    def _reconnect(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        self._halt.wait(RECONNECT_PAUSE_S)

    def connected(self):
        """Called on each new connection."""

    def step(self):
        """One round trip; True asks for a reconnection."""
        raise NotImplementedError


def _unavailable(reply):
    """An error saying this node takes no writes now (a replica, loading)."""
    return isinstance(reply, ReplyError) and str(reply).startswith(("READONLY", "MASTERDOWN", "LOADING"))


class Writer(_Bounded):
    """Random writes (CommandGen) in pipelined batches."""

    def __init__(self, cluster, rng, deadline, max_ops, big_values, name):
        super().__init__(cluster, deadline, max_ops, name)
        self.gen = CommandGen(rng, big_values)

    def step(self):
        batch = self.gen.batch()
        replies = self.conn.pipeline(batch)
        self.ops += len(batch)
        return any(_unavailable(r) or (isinstance(r, list) and any(_unavailable(x) for x in r)) for r in replies)


class Acker(_Bounded):
    """INCR ACK_KEY, then WAIT for cluster.acks_needed replicas (unless
    `durable`: the primary fsyncs before replying, appendfsync always, so
    its reply alone acknowledges). `max_acked` is the highest acknowledged
    value; `lost` lists (value, max_acked) whenever INCR returned a value not
    above max_acked, i.e. an acknowledged increment had disappeared."""

    def __init__(self, cluster, deadline, max_ops, durable, wait_ms=300):
        super().__init__(cluster, deadline, max_ops, "acker")
        self.durable = durable
        self.wait_ms = wait_ms
        self.max_acked = 0
        self.lost = []

    def connected(self):
        self.conn.call("SELECT", ACK_DB)

    def step(self):
        value = self.conn.pipeline([[b"INCR", ACK_KEY]])[0]
        self.ops += 1
        if not isinstance(value, int):
            return True  # READONLY, LOADING...: try the primary of the moment
        if value <= self.max_acked:
            self.lost.append((value, self.max_acked))
        if self.durable:
            self.max_acked = max(self.max_acked, value)
            return False
        needed = self.cluster.acks_needed
        acks = self.conn.pipeline([[b"WAIT", needed, self.wait_ms]])[0]
        if isinstance(acks, int) and acks >= needed:
            self.max_acked = max(self.max_acked, value)
        return False

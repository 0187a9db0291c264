#!/usr/bin/env python3
"""Fault injection for replication: a primary and its replicas (redis-server
or ringkv-server), each replica linked to its upstream through a LinkProxy,
three writers and an acknowledged-counter client writing to the primary,
and one fault per scenario applied while they write. Afterwards the writers
stop, the links heal, the primary expires its last keys with a TTL (every
TTL written is at most 1 s), and every node must reach the primary's offset
with the same DEBUG DIGEST and key counts per database (retried for
--converge-timeout seconds); no increment of the counter that was
acknowledged (WAIT, or appendfsync always) may be lost.

Usage: fault_harness.py [--ringkv PATH] [--redis PATH]
                        [--pairing ringkv-ringkv|redis-ringkv|ringkv-redis|redis-redis]
                        [--scenario NAME[,NAME...]] [--seed S] [--iterations N]
                        [--duration SECONDS] [--evictions] [--list]

One line per scenario run; on a failure, the problems, every node's last
state and, per database, the keys that differ, with the work directory
(server logs) kept. Exit status 1 when any scenario failed.
"""
import argparse
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback

from checks import converge, diagnose, keyspace
from link_proxy import ProxyLoop
from resp_client import Client, ReplyError
from servers import Cluster, kill_all
from workload import ACK_DB, ACK_KEY, DBS, Acker, Writer, key_names

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAIRINGS = ("ringkv-ringkv", "redis-ringkv", "ringkv-redis", "redis-redis")
WRITERS = 3
MAX_OPS_PER_WRITER = 500000
EVICTION_HEADROOM = 4 << 20
SMALL_BACKLOG = 16384
# The initial sync may be two full syncs in a row (a replica asking just after
# the first fork waits for the next), each slowed by key-load-delay in some
# scenarios: 27 s once under ASan on a busy 2-core machine.
READY_TIMEOUT_S = 60.0
JOIN_TIMEOUT_S = 20.0


class Scenario:
    """A named fault, applied by fault(run) during the write phase, on a
    topology ("flat": primary p with replicas r1 and r2; "chain": a -> b -> c)
    with extra server options; expect(run, full, partial_ok) returns
    problems given the resyncs (summed over nodes) the run caused.
    `populate` keys (DEBUG POPULATE, 100-byte values) are made on the
    primary before its replicas attach; the write phase lasts at least
    `min_duration` seconds; `sample_memory` samples the primary's
    used_memory during it (reported as used_memory=first..peak);
    `proxy_rcvbuf` is the links' LinkProxy rcvbuf; `evictions` False skips
    the scenario under --evictions, where its premise cannot hold."""

    def __init__(self, name, fault, topology, options, primary_options, durable, expect, populate, min_duration,
                 sample_memory, proxy_rcvbuf, evictions):
        self.name = name
        self.fault = fault
        self.topology = topology
        self.options = list(options)
        self.primary_options = list(primary_options)
        self.durable = durable
        self.expect = expect
        self.populate = populate
        self.min_duration = min_duration
        self.sample_memory = sample_memory
        self.proxy_rcvbuf = proxy_rcvbuf
        self.evictions = evictions
        self.doc = " ".join(fault.__doc__.split())


SCENARIOS = {}


def no_expectation(run, full, partial_ok):
    return []


def scenario(name, topology="flat", options=(), primary_options=(), durable=False, expect=no_expectation,
             populate=0, min_duration=0.0, sample_memory=False, proxy_rcvbuf=None, evictions=True):
    """Registers the decorated fault function as scenario `name`."""
    def register(fault):
        SCENARIOS[name] = Scenario(name, fault, topology, options, primary_options, durable, expect, populate,
                                   min_duration, sample_memory, proxy_rcvbuf, evictions)
        return fault
    return register


class MemorySampler(threading.Thread):
    """Polls a node's INFO memory used_memory every 0.1 s on a connection of
    its own; `first` and `peak` in bytes."""

    def __init__(self, node):
        super().__init__(name="memory-sampler", daemon=True)
        self.port = node.port
        self.first = None
        self.peak = 0
        self._halt = threading.Event()

    def run(self):
        conn = None
        while not self._halt.is_set():
            try:
                conn = conn or Client(self.port)
                text = conn.call("INFO", "memory").decode()
                used = int(next(line.split(":")[1] for line in text.splitlines() if line.startswith("used_memory:")))
                self.first = used if self.first is None else self.first
                self.peak = max(self.peak, used)
            except (OSError, ReplyError, StopIteration):
                if conn is not None:
                    conn.close()
                conn = None
            self._halt.wait(0.1)
        if conn is not None:
            conn.close()

    def stop(self):
        self._halt.set()
        self.join(5)


class Run:
    """One scenario with one pairing and seed: its cluster, its seeded random
    choices, the end of its write phase, and the problems found."""

    def __init__(self, spec, pairing, seed, opts, proxy_loop):
        self.spec = spec
        self.pairing = pairing
        self.seed = seed
        self.opts = opts
        self.rng = random.Random("%s/%d" % (spec.name, seed))
        self.workdir = tempfile.mkdtemp(prefix="ringkv-faults-%s-" % spec.name)
        self.cluster = Cluster(self.workdir, proxy_loop)
        self.problems = []
        self.events = 0
        self.end = 0.0
        self.acker = None
        self.writers = []
        self.repl_mode = ""
        self.evicted = None
        self.memory = None  # MemorySampler of the primary (sample_memory scenarios)

    # Helpers for fault functions.

    def time_left(self):
        return self.end - time.monotonic()

    def sleep(self, seconds):
        """Sleeps, but not past the end of the write phase."""
        time.sleep(max(0.0, min(seconds, self.time_left())))

    def every(self, lo, hi, action):
        """Pauses lo-hi s (random) then runs action(), until the write phase ends."""
        while True:
            self.sleep(self.rng.uniform(lo, hi))
            if self.time_left() <= 0:
                return
            action()
            self.events += 1

    def some_replica(self):
        return self.rng.choice(self.cluster.replicas())

    def some_link(self):
        """The proxy of a random replica's link to its upstream."""
        return self.cluster.proxy_of(self.some_replica())

    def check_acked(self, node, when):
        """Every acknowledged increment of the counter must be on `node`
        (unchecked with --evictions: the counter may be evicted)."""
        if self.opts.evictions:
            return
        acked = self.acker.max_acked
        value = read_counter(node)
        if value < acked:
            self.problems.append("%s: %s has %s=%d but %d was acknowledged"
                                 % (when, node.name, ACK_KEY.decode(), value, acked))

    def wait_links_up(self, timeout=READY_TIMEOUT_S):
        """Waits until every replica reports its link up; a problem if not."""
        if not wait_until(lambda: all(link_up(n) for n in self.cluster.replicas()), timeout):
            self.problems.append("replica links not up within %.0f s" % timeout)

    def prepare_primary(self):
        """With --evictions: maxmemory a little above what the primary uses, allkeys-lru."""
        if self.opts.evictions:
            node = self.cluster.primary
            used = int(retrying(lambda: node.info("memory"))["used_memory"])
            node.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
            node.call("CONFIG", "SET", "maxmemory", used + EVICTION_HEADROOM)

    # Phases.

    def build(self):
        """Starts the topology's servers and waits for the initial sync;
        returns converge()'s result."""
        primary_kind, replica_kind = self.pairing.split("-")
        diskless = self.rng.choice(("yes", "no"))
        load = self.rng.choice(("disabled", "swapdb"))
        # A scenario's own options win (the last occurrence of a directive).
        diskless = option_value(self.spec.options, "--repl-diskless-sync", diskless)
        load = option_value(self.spec.options, "--repl-diskless-load", load)
        self.repl_mode = "%s/%s" % ("diskless" if diskless == "yes" else "disk", load)
        options = ["--save", "", "--appendonly", "no", "--enable-debug-command", "yes",
                   "--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0",
                   "--repl-diskless-load", load, "--repl-backlog-size", "64mb"] + self.spec.options
        names = ("p", "r1", "r2") if self.spec.topology == "flat" else ("a", "b", "c")
        c = self.cluster
        c.primary = c.add(names[0], primary_kind, self.binary(primary_kind), options + self.spec.primary_options)
        if self.spec.populate:
            c.primary.call("DEBUG", "POPULATE", self.spec.populate, "pop", 100)
        nodes = [c.add(name, replica_kind, self.binary(replica_kind), options) for name in names[1:]]
        upstreams = [c.primary] * len(nodes) if self.spec.topology == "flat" else [c.primary] + nodes[:-1]
        for node, upstream in zip(nodes, upstreams):
            c.attach(node, upstream, rcvbuf=self.spec.proxy_rcvbuf)
        c.acks_needed = len(nodes) if self.spec.topology == "flat" else 1
        self.prepare_primary()
        converged, states = converge(c, READY_TIMEOUT_S)
        if not converged:
            self.problems.append("the initial sync (no writes yet) did not converge within %.0f s" % READY_TIMEOUT_S)
        return converged, states

    def binary(self, kind):
        return self.opts.ringkv if kind == "ringkv" else self.opts.redis

    def write_phase(self):
        """Writers and the acker write while the scenario's fault runs."""
        self.end = time.monotonic() + max(self.opts.duration, self.spec.min_duration)
        bound = self.end + 30.0
        if self.spec.sample_memory:
            self.memory = MemorySampler(self.cluster.primary)
            self.memory.start()
        self.writers = [Writer(self.cluster, random.Random("%s/%d/writer%d" % (self.spec.name, self.seed, i)),
                               bound, MAX_OPS_PER_WRITER, self.opts.evictions, "writer%d" % i)
                        for i in range(WRITERS)]
        self.acker = Acker(self.cluster, bound, MAX_OPS_PER_WRITER, self.spec.durable)
        for t in self.writers + [self.acker]:
            t.start()
        try:
            self.spec.fault(self)
        finally:
            if self.memory is not None:
                self.memory.stop()
            for t in self.writers + [self.acker]:
                t.stop()
            for t in self.writers + [self.acker]:
                t.join(JOIN_TIMEOUT_S)
                if t.is_alive():
                    self.problems.append("%s did not stop within %.0f s" % (t.name, JOIN_TIMEOUT_S))

    def settle(self):
        """Heals the links, waits until the primary has expired every key
        that had a TTL, then for convergence; returns (converged, the last
        round's node states)."""
        self.cluster.heal()
        self.wait_volatile_keys_gone()
        converged, states = converge(self.cluster, self.opts.converge_timeout)
        if not converged:
            self.problems.append("no convergence within %.0f s" % self.opts.converge_timeout)
        if self.opts.evictions:
            self.evicted = int(self.cluster.primary.info("stats")["evicted_keys"])
        if not self.opts.evictions:
            for lost, acked in self.acker.lost[:5]:
                self.problems.append("INCR %s answered %d after %d had been acknowledged"
                                     % (ACK_KEY.decode(), lost, acked))
        for node in self.cluster.nodes:
            self.check_acked(node, "at the end")
        return converged, states

    def wait_volatile_keys_gone(self, timeout=10.0):
        """Every TTL the writers set is at most 1 s, so soon after they stop
        the primary's active expiry must have deleted every volatile key
        (its DELs replicated). Comparing before that would race expiry, and
        freezing it instead (DEBUG SET-ACTIVE-EXPIRE 0) would leave logically
        expired keys, which ringkv's DEBUG DIGEST leaves out and Redis's
        counts."""
        def volatile():
            return sum(e for _, e in retrying(lambda: keyspace(self.cluster.primary)).values())
        if not wait_until(lambda: volatile() == 0, timeout):
            self.problems.append("the primary still has %d keys with a TTL %.0f s after the writes "
                                 "(all TTLs were at most 1 s)" % (volatile(), timeout))

    def crashed_nodes(self):
        """A problem line for every node whose process ended on its own."""
        return ["%s (%s) exited with status %s; log tail:\n%s" % (n.name, n.kind, n.exited(), n.log_tail())
                for n in self.cluster.nodes if n.exited() is not None]


def option_value(options, name, default):
    """The value of the last `name value` pair in a server option list."""
    value = default
    for i, word in enumerate(options[:-1]):
        if word == name:
            value = options[i + 1]
    return value


def wait_until(predicate, timeout):
    """Polls predicate() every 50 ms; whether it held within timeout seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def retrying(fn, timeout=READY_TIMEOUT_S):
    """fn() retried while the node is unreachable or -LOADING."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return fn()
        except (OSError, ReplyError) as e:
            if time.monotonic() > deadline or (isinstance(e, ReplyError) and not str(e).startswith("LOADING")):
                raise
            time.sleep(0.05)


def read_counter(node):
    """The acknowledged counter's value on `node` (0 when absent)."""
    replies = retrying(lambda: node.pipeline([["SELECT", ACK_DB], ["GET", ACK_KEY], ["SELECT", 0]]))
    if isinstance(replies[1], ReplyError):
        raise replies[1]
    return int(replies[1] or 0)


def link_up(node):
    try:
        return node.info("replication").get("master_link_status") == "up"
    except OSError:
        return False


def role(node):
    try:
        return node.call("ROLE")[0].decode()
    except (OSError, ReplyError):
        return "?"


def sync_counts(cluster):
    """(sync_full, sync_partial_ok) summed over the nodes."""
    counts = [retrying(node.sync_counts) for node in cluster.nodes]
    return sum(c[0] for c in counts), sum(c[1] for c in counts)


# Expectations on resyncs.

def expect_partial_only(run, full, partial_ok):
    """Dropped links whose gap is still in the 64 MB backlog: partial resyncs only."""
    problems = []
    if full:
        problems.append("%d full resync(s) where the backlog held the gap" % full)
    if run.events and not partial_ok:
        problems.append("no partial resync after %d dropped links" % run.events)
    return problems


def expect_no_resync(run, full, partial_ok):
    """Nothing dropped a link: no resync at all."""
    return ["%d full and %d partial resync(s) with no link dropped" % (full, partial_ok)] if full or partial_ok else []


def expect_full_per_event(run, full, partial_ok):
    """Each gap outgrew the backlog: exactly one full resync per event."""
    if full != run.events:
        return ["%d full resync(s) for %d gap(s) larger than the backlog" % (full, run.events)]
    return []


# Scenarios.

@scenario("cut")
def cut(run):
    """A replica's link is cut at a random byte of the stream (a random
    prefix of the next chunk is forwarded, then both sides closed) every
    0.2-1.2 s."""
    run.every(0.2, 1.2, lambda: run.some_link().cut(run.rng.random()))


@scenario("stall", options=("--repl-timeout", "2", "--repl-ping-replica-period", "1"))
def stall(run):
    """A replica's link stops forwarding for 0.2-1 s or, one time in two,
    3.5-5 s (past repl-timeout 2 s: both sides drop it), every 0.2-0.6 s
    after the previous stall."""
    def once():
        seconds = run.rng.choice((run.rng.uniform(0.2, 1.0), run.rng.uniform(3.5, 5.0)))
        run.some_link().stall(seconds)
        time.sleep(seconds)  # the whole stall, even past the write phase's end
    run.every(0.2, 0.6, once)


@scenario("throttle")
def throttle(run):
    """A replica's link is throttled to 20 KB/s, 100 KB/s or 1 MB/s for
    0.3-1.5 s at a time."""
    def once():
        link = run.some_link()
        link.throttle(run.rng.choice((20e3, 100e3, 1e6)))
        run.sleep(run.rng.uniform(0.3, 1.5))
        link.throttle(None)
    run.every(0.1, 0.5, once)


@scenario("delay")
def delay(run):
    """A replica's link delays every chunk, both ways, by 0, 1, 20 or 150 ms,
    changed every 0.3-1 s."""
    run.every(0.3, 1.0, lambda: run.some_link().delay(run.rng.choice((0.0, 0.001, 0.02, 0.15))))


@scenario("kill-master-link", expect=expect_partial_only)
def kill_master_link(run):
    """CLIENT KILL TYPE master on a replica every 0.2-1 s; one time in two
    inside MULTI with DEBUG SLEEP 0, as Redis's replication-psync test."""
    def once():
        replica, kill = run.some_replica(), ["CLIENT", "KILL", "TYPE", "master"]
        if run.rng.random() < 0.5:
            replica.pipeline([["MULTI"], kill, ["DEBUG", "SLEEP", 0], ["EXEC"]])
        else:
            replica.pipeline([kill])
    run.every(0.2, 1.0, once)


@scenario("kill-replica-link", expect=expect_partial_only)
def kill_replica_link(run):
    """CLIENT KILL TYPE replica on the primary every 0.2-1 s."""
    run.every(0.2, 1.0, lambda: run.cluster.primary.pipeline([["CLIENT", "KILL", "TYPE", "replica"]]))


@scenario("debug-sleep", expect=expect_no_resync)
def debug_sleep(run):
    """DEBUG SLEEP 0.1-1 s on the primary or a replica, every 0.2-0.8 s."""
    def once():
        node = run.rng.choice(run.cluster.nodes)
        node.pipeline([["DEBUG", "SLEEP", "%.2f" % run.rng.uniform(0.1, 1.0)]])
    run.every(0.2, 0.8, once)


@scenario("restart-replica")
def restart_replica(run):
    """kill -9 of a replica, started again at once (from its own RDB where
    it wrote one), every 0.5-1.5 s."""
    run.every(0.5, 1.5, lambda: run.cluster.restart(run.some_replica()))


@scenario("restart-primary", primary_options=("--appendonly", "yes", "--appendfsync", "always"), durable=True)
def restart_primary(run):
    """kill -9 of the primary (appendonly yes, appendfsync always), started
    again at once, every 0.8-1.6 s: every increment it answered must be
    there after the restart."""
    def once():
        run.cluster.restart(run.cluster.primary)
        run.prepare_primary()
        run.check_acked(run.cluster.primary, "after the primary's restart")
    run.every(0.8, 1.6, once)


@scenario("crash-in-child", primary_options=("--appendonly", "yes", "--appendfsync", "always",
                                            "--rdb-key-save-delay", "200"), durable=True)
def crash_in_child(run):
    """kill -9 of the primary (appendonly yes, appendfsync always) while its
    fork child writes -- a BGREWRITEAOF (its manifest switch included) or a
    BGSAVE, slowed by rdb-key-save-delay so that the kill lands inside it --
    every 0.8-1.6 s: the restarted primary must load cleanly and hold every
    increment it answered."""
    def once():
        primary = run.cluster.primary
        try:
            primary.call(run.rng.choice(["BGREWRITEAOF", "BGSAVE"]))
        except ReplyError:
            pass  # one already running: the kill lands in that one
        time.sleep(run.rng.uniform(0.0, 0.3))
        run.cluster.restart(primary)
        run.prepare_primary()
        run.check_acked(run.cluster.primary, "after a kill inside a fork child")
    run.every(0.8, 1.6, once)


def loading_payload(node):
    """Whether a replica is parsing a full sync's payload (INFO loading or
    async_loading; a redis-server may be slow to answer meanwhile)."""
    try:
        info = node.info("persistence")
    except (OSError, ReplyError):
        return False
    return info.get("loading") == "1" or info.get("async_loading") == "1"


@scenario("kill-replica-in-load", options=("--repl-diskless-sync", "yes", "--repl-diskless-load", "swapdb",
                                           "--key-load-delay", "50",
                                           # a redis-server replica answers INFO while it loads
                                           "--loading-process-events-interval-bytes", "1024"), populate=20000,
          # The 20,000 keys that make the payload slow to load are the least
          # recently used: with --evictions both servers evict them in the first
          # seconds of writes, and a payload of a few keys loads before it can be
          # caught loading (redis-redis fails the same way).
          evictions=False)
def kill_replica_in_load(run):
    """repl-diskless-load swapdb, the payload (20,000 keys and the writers')
    slowed by key-load-delay: a replica -- half the time after a SAVE of its
    own, so that the restart may load its RDB and PSYNC -- is made to
    full-sync again (REPLICAOF NO ONE, then back through a new proxy),
    killed -9 while it parses the payload off the socket into its staging
    keyspace, and started again at once, every 0.5-1.5 s: the restarted
    replica must load cleanly, resync, and end identical to the primary,
    every acknowledged increment included."""
    def once():
        replica = run.some_replica()
        if run.rng.random() < 0.5:
            replica.call("SAVE")
        replica.call("REPLICAOF", "NO", "ONE")
        run.cluster.attach(replica, run.cluster.primary)
        if not wait_until(lambda: loading_payload(replica), 15):
            run.problems.append("%s did not start loading a payload within 15 s" % replica.name)
            return
        time.sleep(run.rng.uniform(0.0, 0.5))
        run.cluster.restart(replica)
        run.wait_links_up()
    run.every(0.5, 1.5, once)


@scenario("small-backlog", options=("--repl-backlog-size", "16kb"), expect=expect_full_per_event)
def small_backlog(run):
    """With repl-backlog-size 16kb, a replica's link is stalled for 0.2-1 s,
    then dropped and reconnections refused until the primary has written 8
    times the backlog; the replica must come back with exactly one full
    resync each time."""
    def once():
        replica = run.some_replica()
        link = run.cluster.proxy_of(replica)
        start = primary_offset(run.cluster)
        link.stall(60)
        time.sleep(run.rng.uniform(0.2, 1.0))
        link.refuse(60)
        link.drop()
        wait_until(lambda: not link_up(replica), 10)
        wait_until(lambda: primary_offset(run.cluster) - start >= 8 * SMALL_BACKLOG, 20)
        link.heal()
        run.wait_links_up()
    run.every(0.2, 0.5, once)


def primary_offset(cluster):
    return int(cluster.primary.info("replication")["master_repl_offset"])


# Slow and lost replicas (issue 16): client-output-buffer-limit replica.

SLOW_BACKLOG = 32 << 20
SLOW_OPTIONS = ("--repl-backlog-size", "32mb", "--client-output-buffer-limit", "replica", "1mb", "256kb", "2")
SLOW_RCVBUF = 64 << 10
BULK_DB = 14
BULK_RATE = 1.5e6   # bytes per second of 16 KB values, on top of the writers
MEMORY_SLACK = 48 << 20


class BulkWriter(threading.Thread):
    """SET bulk:<0..63> <16 KB> in database 14 at about `rate` bytes per
    second until stop(): a steady stream that fills a stalled link's buffers
    in seconds, over a bounded set of keys."""

    def __init__(self, node, rate):
        super().__init__(name="bulk-writer", daemon=True)
        self.port = node.port
        self.rate = rate
        self.bytes = 0
        self._halt = threading.Event()

    def run(self):
        value = b"b" * 16384
        conn, i, start = None, 0, time.monotonic()
        while not self._halt.is_set():
            try:
                conn = conn or Client(self.port)
                conn.pipeline([["SELECT", BULK_DB], ["SET", "bulk:%d" % (i % 64), value]])
                i += 1
                self.bytes += len(value)
            except (OSError, ReplyError):
                if conn is not None:
                    conn.close()
                conn = None
            ahead = self.bytes / self.rate - (time.monotonic() - start)
            if ahead > 0:
                self._halt.wait(ahead)
        if conn is not None:
            conn.close()

    def stop(self):
        self._halt.set()
        self.join(5)


def replica_entry(primary, replica):
    """`primary`'s INFO replication entry for `replica` (by its listening
    port) as a dict, or None when it lists no such replica."""
    try:
        info = primary.info("replication")
    except OSError:
        return None
    for k, v in info.items():
        if k.startswith("slave") and ("port=%d," % replica.port) in v:
            return dict(field.split("=", 1) for field in v.split(","))
    return None


def attached(primary, replica):
    return replica_entry(primary, replica) is not None


def acked_offset(primary, replica):
    """The offset `replica` acknowledged to `primary` (-1: not attached)."""
    entry = replica_entry(primary, replica)
    return -1 if entry is None else int(entry.get("offset", -1))


def output_limit_cuts(node):
    """Clients `node` closed for their output buffer limits (its log line,
    the same in Redis and ringkv)."""
    with open(node.log_path, errors="replace") as f:
        return sum("overcoming of output buffer limits" in line for line in f)


def memory_problems(run):
    """The primary's used_memory must stay within where it started, plus
    the backlog and some slack."""
    m = run.memory
    if m is None or m.first is None:
        return ["no used_memory sample of the primary"]
    if m.peak > m.first + SLOW_BACKLOG + MEMORY_SLACK:
        return ["the primary's used_memory reached %.1f MB from %.1f MB (bound: + %d MB backlog + %d MB)"
                % (m.peak / 1e6, m.first / 1e6, SLOW_BACKLOG >> 20, MEMORY_SLACK >> 20)]
    return []


def expect_cut_then_partial(run, full, partial_ok):
    """Each stalled replica was cut at the output buffer limit and came back
    with a partial resync (the 32 MB backlog held its gap): no full resync,
    and the primary's memory bounded."""
    problems = memory_problems(run)
    if full:
        problems.append("%d full resync(s) after replicas cut at the output limit (backlog 32 MB)" % full)
    if run.events == 0:
        problems.append("no stall ended in a cut")
    if partial_ok < run.events:
        problems.append("%d partial resync(s) for %d replicas cut" % (partial_ok, run.events))
    return problems


@scenario("slow-replica", options=SLOW_OPTIONS, min_duration=20.0, sample_memory=True, proxy_rcvbuf=SLOW_RCVBUF,
          # The stalled replica's stream stays within the 32 MB backlog, which
          # counts against maxmemory (Redis's freeMemoryGetNotCountedMemory
          # leaves out only what exceeds it): with --evictions's 4 MB both
          # servers evict everything and then refuse the bulk writes (OOM), so
          # the stream never reaches the output limit (redis-redis the same).
          evictions=False)
def slow_replica(run):
    """client-output-buffer-limit replica 1mb 256kb 2, repl-backlog-size
    32mb, a bulk writer adding 1.5 MB/s: a replica's link stops reading
    until the primary cuts the replica at the output limit (its log line),
    then resumes; every cut must end in a partial resync, never a full one,
    with the primary's used_memory bounded."""
    bulk = BulkWriter(run.cluster.primary, BULK_RATE)
    bulk.start()
    try:
        def once():
            replica = run.some_replica()
            link = run.cluster.proxy_of(replica)
            primary = run.cluster.primary
            # Streaming first: caught up and acknowledged (a replica still
            # catching up after its last resync may be cut for that on its
            # own; one that has not acknowledged yet is still being synced).
            target = primary_offset(run.cluster)  # acknowledged past it: an ACK came after now
            if not wait_until(lambda: acked_offset(primary, replica) > target, 30):
                run.problems.append("%s did not catch up within 30 s" % replica.name)
                return
            cuts = output_limit_cuts(primary)
            link.stall(120)
            dropped = wait_until(lambda: not attached(primary, replica), 60)
            link.heal()
            if not dropped:
                run.problems.append("%s stalled 60 s and the primary did not cut it" % replica.name)
            elif output_limit_cuts(primary) == cuts:
                run.problems.append("%s stalled was dropped, but not for its output buffer limit" % replica.name)
            else:
                run.events += 1
            run.wait_links_up()
        while run.time_left() > 0:
            once()
            run.sleep(run.rng.uniform(0.5, 1.5))
    finally:
        bulk.stop()


def expect_one_full_sync_each(run, full, partial_ok):
    """Each full sync, slowed past the soft limit's seconds while writes
    went on, completed once: no loop, memory bounded. (Not asked of a
    redis-server primary: it cuts the replica at the soft limit during the
    transfer and loops, redis#11534; the line shows how often.)"""
    if run.cluster.primary.kind == "redis":
        return []
    problems = memory_problems(run)
    if run.events == 0:
        problems.append("no full sync completed")
    if full != run.events:
        problems.append("%d full syncs for %d replicas resynced (a full-sync loop)" % (full, run.events))
    return problems


@scenario("slow-full-sync", options=SLOW_OPTIONS + ("--rdbcompression", "no"), populate=30000, min_duration=10.0,
          sample_memory=True, proxy_rcvbuf=SLOW_RCVBUF, expect=expect_one_full_sync_each)
def slow_full_sync(run):
    """client-output-buffer-limit replica 1mb 256kb 2, repl-backlog-size
    32mb, 30,000 keys of 100 bytes, a bulk writer adding 1.5 MB/s: a
    replica is made to full-sync again (REPLICAOF NO ONE, then back through
    a new proxy throttled to 1 MB/s), so the transfer lasts seconds past the
    soft limit's 2 while the stream it misses grows past 256 KB; it must
    complete in one full sync (redis#11534, valkey#3044: the loop)."""
    bulk = BulkWriter(run.cluster.primary, BULK_RATE)
    bulk.start()
    try:
        loops = run.cluster.primary.kind == "redis"  # redis#11534: it does not complete while throttled

        def once():
            replica = run.some_replica()
            replica.call("REPLICAOF", "NO", "ONE")
            run.cluster.attach(replica, run.cluster.primary, rcvbuf=SLOW_RCVBUF, throttle=1e6)
            if wait_until(lambda: link_up(replica), 15 if loops else 60):
                run.events += 1
            elif not loops:
                run.problems.append("%s's full sync did not complete within 60 s" % replica.name)
            run.cluster.proxy_of(replica).throttle(None)
            if loops:
                run.wait_links_up()
        while run.time_left() > 0:
            once()
            run.sleep(run.rng.uniform(0.5, 1.5))
    finally:
        bulk.stop()


@scenario("chain", topology="chain")
def chain(run):
    """A -> B -> C; B's link to A is cut at a random byte every 0.2-1.2 s."""
    b = run.cluster.nodes[1]
    run.every(0.2, 1.2, lambda: run.cluster.proxy_of(b).cut(run.rng.random()))


def repoint_all(run, target):
    """Makes every node but `target` (the new primary) replicate it, through
    new proxies, and waits for the links to come up."""
    for node in run.cluster.replicas():
        run.cluster.attach(node, target)
    run.wait_links_up()


@scenario("failover")
def failover(run):
    """FAILOVER TO a random replica while writes flow, every 0.5-1.5 s after
    the previous one settled: no increment WAIT-acknowledged by both
    replicas may be missing on the new primary; the others are repointed
    to it through new proxies."""
    def once():
        old, target = run.cluster.primary, run.some_replica()
        old.call("FAILOVER", "TO", "127.0.0.1", target.port, "TIMEOUT", 5000)
        if not wait_until(lambda: (role(target), role(old)) == ("master", "slave"), 10):
            run.problems.append("FAILOVER from %s to %s did not complete in 10 s (roles %s, %s)"
                                % (old.name, target.name, role(old), role(target)))
            return
        run.cluster.took_over(target)
        run.check_acked(target, "after FAILOVER to %s" % target.name)
        repoint_all(run, target)
    run.every(0.5, 1.5, once)


@scenario("promote")
def promote(run):
    """REPLICAOF NO ONE on a random replica while writes flow, every 0.5-1.5 s
    after the previous one settled; then the old primary and the other
    replica replicate it: no increment WAIT-acknowledged by both replicas
    may be missing on the promoted node."""
    def once():
        target = run.some_replica()
        run.cluster.promote(target)
        run.check_acked(target, "after REPLICAOF NO ONE on %s" % target.name)
        repoint_all(run, target)
    run.every(0.5, 1.5, once)


# Running and reporting.

def run_scenario(spec, pairing, seed, opts, proxy_loop):
    """Runs one scenario, prints its line (and a diagnosis when it failed);
    True when it passed."""
    run = Run(spec, pairing, seed, opts, proxy_loop)
    started = time.monotonic()
    converged, states, counts = False, [], (0, 0)
    try:
        converged, states = run.build()
        if converged:
            before = sync_counts(run.cluster)
            run.write_phase()
            converged, states = run.settle()
            after = sync_counts(run.cluster)
            counts = (after[0] - before[0], after[1] - before[1])
            run.problems += spec.expect(run, *counts)
    except Exception:
        run.problems.append("harness error:\n" + traceback.format_exc())
    except BaseException:
        run.problems.append("interrupted")
        raise
    finally:
        run.problems += run.crashed_nodes()
        ok = not run.problems
        print(summary_line(run, ok, states, counts, time.monotonic() - started), flush=True)
        if not ok:
            print_failure(run, converged, states)
        run.cluster.close()
        if ok and not opts.keep:
            shutil.rmtree(run.workdir, ignore_errors=True)
    return ok


def summary_line(run, ok, states, counts, seconds):
    offsets = {s.offset for s in states}
    if not offsets:
        offset_text = "offsets=?"
    elif len(offsets) == 1:
        offset_text = "offsets=%s(all)" % offsets.pop()
    else:
        offset_text = "offsets=" + ",".join("%s:%s" % (s.node.name, s.offset) for s in states)
    ops = sum(w.ops for w in run.writers)
    acked = run.acker.max_acked if run.acker else 0
    evicted = "" if run.evicted is None else " evicted=%d" % run.evicted
    memory = ""
    if run.memory is not None and run.memory.first is not None:
        memory = " used_memory=%.1fMB..%.1fMB" % (run.memory.first / 1e6, run.memory.peak / 1e6)
    return ("%-17s %-13s seed=%-5d %s %s sync_full=%d sync_partial_ok=%d events=%d ops=%d acked=%d%s%s repl=%s %.1fs"
            % (run.spec.name, run.pairing, run.seed, "PASS" if ok else "FAIL", offset_text, counts[0], counts[1],
               run.events, ops, acked, evicted, memory, run.repl_mode, seconds))


def print_failure(run, converged, states):
    for p in run.problems:
        print("  problem: " + p.rstrip().replace("\n", "\n    "))
    for s in states:
        print("  " + s.describe())
    if states and not converged:
        primary = states[0]
        dbs = sorted(set(DBS) | {ACK_DB} | {db for s in states for db in s.keyspace})
        names = key_names() + [ACK_KEY]
        for s in states[1:]:
            if s.error is None and (s.digest != primary.digest or s.keyspace != primary.keyspace):
                try:
                    print("\n".join("  " + line for line in diagnose(primary.node, s.node, dbs, names)))
                except (OSError, ReplyError) as e:
                    print("  diagnosis of %s failed: %s" % (s.node.name, e))
    print("  reproduce: %s; logs kept in %s" % (reproduce_command(run), run.workdir), flush=True)


def reproduce_command(run):
    """The command line that replays this run."""
    opts, kinds = run.opts, run.pairing.split("-")
    binaries = (["--ringkv", opts.ringkv] if "ringkv" in kinds else []) + \
               (["--redis", opts.redis] if "redis" in kinds else [])
    return " ".join([sys.argv[0]] + binaries + ["--pairing", run.pairing, "--scenario", run.spec.name,
                                                "--seed", str(run.seed), "--duration", "%g" % opts.duration]
                    + (["--evictions"] if opts.evictions else []))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ringkv", default=os.path.join(REPO, "build", "ringkv-server"))
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--pairing", choices=PAIRINGS, default="ringkv-ringkv",
                    help="primary kind - replica kind")
    ap.add_argument("--scenario", default="all", help="comma-separated names (--list), or all")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=1, help="soak: seeds S, S+1, ... S+N-1")
    ap.add_argument("--duration", type=float, default=3.0, help="seconds of writes per scenario")
    ap.add_argument("--converge-timeout", type=float, default=20.0)
    ap.add_argument("--evictions", action="store_true",
                    help="primary with maxmemory (4 MB above its use) and allkeys-lru, bigger values")
    ap.add_argument("--keep", action="store_true", help="keep work directories of passing runs too")
    ap.add_argument("--list", action="store_true", help="print the scenarios and exit")
    opts = ap.parse_args()
    opts.ringkv = os.path.abspath(opts.ringkv)
    names = list(SCENARIOS) if opts.scenario == "all" else opts.scenario.split(",")
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        ap.error("unknown scenario(s) %s; known: %s" % (", ".join(unknown), ", ".join(SCENARIOS)))
    if opts.evictions:
        skipped = [n for n in names if not SCENARIOS[n].evictions]
        if skipped:
            print("not run with --evictions: %s (the premise cannot hold: see the scenario)" % ", ".join(skipped))
        names = [n for n in names if SCENARIOS[n].evictions]
    opts.names = names
    return opts


def main():
    opts = parse_args()
    if opts.list:
        for spec in SCENARIOS.values():
            print("%-17s %s" % (spec.name, spec.doc))
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    proxy_loop = ProxyLoop()
    failed = 0
    try:
        for i in range(opts.iterations):
            for name in opts.names:
                failed += not run_scenario(SCENARIOS[name], opts.pairing, opts.seed + i, opts, proxy_loop)
    finally:
        kill_all()
        proxy_loop.close()
    total = opts.iterations * len(opts.names)
    print("%s: %d of %d scenario runs failed" % (opts.pairing, failed, total) if failed
          else "%s: all %d scenario runs passed" % (opts.pairing, total))
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)

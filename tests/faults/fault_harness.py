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
import time
import traceback

from checks import converge, diagnose, keyspace
from link_proxy import ProxyLoop
from resp_client import ReplyError
from servers import Cluster, kill_all
from workload import ACK_DB, ACK_KEY, DBS, Acker, Writer, key_names

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAIRINGS = ("ringkv-ringkv", "redis-ringkv", "ringkv-redis", "redis-redis")
WRITERS = 3
MAX_OPS_PER_WRITER = 500000
EVICTION_HEADROOM = 4 << 20
SMALL_BACKLOG = 16384
READY_TIMEOUT_S = 30.0
JOIN_TIMEOUT_S = 20.0


class Scenario:
    """A named fault, applied by fault(run) during the write phase, on a
    topology ("flat": primary p with replicas r1 and r2; "chain": a -> b -> c)
    with extra server options; expect(run, full, partial_ok) returns
    problems given the resyncs (summed over nodes) the run caused."""

    def __init__(self, name, fault, topology, options, primary_options, durable, expect):
        self.name = name
        self.fault = fault
        self.topology = topology
        self.options = list(options)
        self.primary_options = list(primary_options)
        self.durable = durable
        self.expect = expect
        self.doc = " ".join(fault.__doc__.split())


SCENARIOS = {}


def no_expectation(run, full, partial_ok):
    return []


def scenario(name, topology="flat", options=(), primary_options=(), durable=False, expect=no_expectation):
    """Registers the decorated fault function as scenario `name`."""
    def register(fault):
        SCENARIOS[name] = Scenario(name, fault, topology, options, primary_options, durable, expect)
        return fault
    return register


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
        self.repl_mode = "%s/%s" % ("diskless" if diskless == "yes" else "disk", load)
        options = ["--save", "", "--appendonly", "no", "--enable-debug-command", "yes",
                   "--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0",
                   "--repl-diskless-load", load, "--repl-backlog-size", "64mb"] + self.spec.options
        names = ("p", "r1", "r2") if self.spec.topology == "flat" else ("a", "b", "c")
        c = self.cluster
        c.primary = c.add(names[0], primary_kind, self.binary(primary_kind), options + self.spec.primary_options)
        nodes = [c.add(name, replica_kind, self.binary(replica_kind), options) for name in names[1:]]
        upstreams = [c.primary] * len(nodes) if self.spec.topology == "flat" else [c.primary] + nodes[:-1]
        for node, upstream in zip(nodes, upstreams):
            c.attach(node, upstream)
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
        self.end = time.monotonic() + self.opts.duration
        bound = self.end + 30.0
        self.writers = [Writer(self.cluster, random.Random("%s/%d/writer%d" % (self.spec.name, self.seed, i)),
                               bound, MAX_OPS_PER_WRITER, self.opts.evictions, "writer%d" % i)
                        for i in range(WRITERS)]
        self.acker = Acker(self.cluster, bound, MAX_OPS_PER_WRITER, self.spec.durable)
        for t in self.writers + [self.acker]:
            t.start()
        try:
            self.spec.fault(self)
        finally:
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
    return ("%-17s %-13s seed=%-5d %s %s sync_full=%d sync_partial_ok=%d events=%d ops=%d acked=%d%s repl=%s %.1fs"
            % (run.spec.name, run.pairing, run.seed, "PASS" if ok else "FAIL", offset_text, counts[0], counts[1],
               run.events, ops, acked, evicted, run.repl_mode, seconds))


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

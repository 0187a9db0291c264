"""The command line and the run around the seeds that the differential
fuzzers share (fuzz_acl, fuzz_bitmaps, fuzz_blocking, fuzz_collections,
fuzz_keyspace, fuzz_protocol, fuzz_pubsub, fuzz_scripting); each keeps its
generator, its comparisons and its own options. A fuzzer with a KNOWN table of mismatches
has AVOID, avoiding = fd.switches(KNOWN) beside it; its main():

    ap = fd.parser(commands=2000, known=KNOWN, keep_going="...", show="...")
    ap.add_argument(...)                       # the fuzzer's own options
    opts = fd.parse(ap, KNOWN, AVOID)
    if opts.show: ...                          # (seed, n): print, start nothing
    with fd.servers("ringkv-fuzz-x-", [opts.redis], [opts.ringkv]) as run:
        redis_port, ringkv_port = run.ports
        run.seeds(opts.seeds, lambda seed: run_seed(seed, ...))
        run.summary("fuzz_x", opts.commands)
    sys.exit(run.status)

The contract:
- parser(): --ringkv PATH (required, but for a fuzzer with --show: then
  parse() asks for it only when --show is absent), --redis (redis-server),
  --seeds (parse_seeds: "1,2,3", ranges "1-30", or both: a list of ints;
  default 1,2,3), --commands N when given a default; --avoid NAME,...|all
  with a KNOWN table, --keep-going and --show SEED:N when given their help;
  --resp3 and --notifications on request.
- switches(KNOWN) -> (AVOID, avoiding): parse() puts --avoid's names into
  AVOID; a name not in KNOWN is a usage error (exit 2): "--avoid: no such
  known mismatch: NAME". avoiding(NAME): NAME is to be left out.
  parse() also checks --ringkv and makes it an absolute path.
- servers(prefix, *command_lines): a temporary work directory (the
  fuzzer's prefix) and one server per command line, each on a free port (Run.ports,
  in that order) in a directory of its own (run_diff.start); they are
  stopped however the block is left (run_diff.stop_servers): the directory
  goes when run.ok is still true, stays and is named otherwise.
- Run.seeds(): one_seed(seed) -> bool for each seed in order; a failing seed
  makes run.ok false; stops after a seed that left a server exited (saying
  so), after one a server did not answer in (rd.NoReply: whether the reply
  came later, or the server's stacks), and after the first failing seed when
  stop_on_mismatch. An exception out of the block keeps the directory too.
- Run.summary(): "NAME: P of N seeds x C UNIT[NOTE]: all matched" (or
  MISMATCH); run.status: the exit status, 0 when all matched, 1 otherwise.
- run_check(): --check replies|replicas|aof of fuzz_collections and
  fuzz_keyspace (add_check() adds the option).
- start_in(cmd, directory, extra): a server of the command line with
  --dir directory and the extra options (an AOF's loading), on a free port,
  answering PING; (process, port). The caller stops it.
- write_aof(ports): those servers write an AOF with appendfsync always
  (CONFIG SET), its first rewrite finished; rewrite_finished(conn) waits
  for a rewrite to end; aof_folder(work, port) is a servers() server's AOF
  folder; load_aof(binary, folder, directory, calls): the replies to calls
  of a new server that loaded a copy of that folder; aofs_load_alike():
  both servers' AOFs loaded by both kinds of server, compared.
- link_replicas(pairs): REPLICAOF, and wait for the links; caught_up(primary,
  replica): the replica at the primary's offset of now.
"""
import argparse
import contextlib
import os
import random
import re
import shutil
import subprocess
import tempfile
import time

import run_diff as rd


def parse_seeds(text):
    """The seeds of "1,2,3", "1-30" (both ends in) or a mix ("1-5,9"), in order."""
    seeds = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*(-?\d+)\s*(?:-\s*(-?\d+)\s*)?", part)
        if m is None:
            raise ValueError("not a seed or a range of seeds: %r" % part)
        first = int(m.group(1))
        last = first if m.group(2) is None else int(m.group(2))
        if last < first:
            raise ValueError("an empty range of seeds: %r" % part)
        seeds.extend(range(first, last + 1))
    return seeds


def _seeds_option(text):
    try:
        return parse_seeds(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _show_option(text):
    """--show SEED:N -> (seed, n)."""
    try:
        seed, last = (int(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError("SEED:N expected, not %r" % text) from None
    return seed, last


class Seeded:
    """A generator's random choices, from its seed alone."""

    def __init__(self, seed):
        self.rnd = random.Random(seed)

    def pick(self, seq):
        return self.rnd.choice(seq)

    def chance(self, p):
        return self.rnd.random() < p

    def some(self, seq, lo, hi):
        """lo to hi picks of seq (repeats allowed)."""
        return [self.pick(seq) for _ in range(self.rnd.randint(lo, hi))]


def parser(commands=None, known=None, keep_going=None, show=None, resp3=False, notifications=False):
    """The options every fuzzer has (see the module's contract); the fuzzer
    adds its own to what this returns. commands: --commands's default (None:
    no --commands); known: the KNOWN table --avoid names from; keep_going,
    show: those options' help (None: no such option)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--ringkv", required=show is None, help="the ringkv-server binary")
    ap.add_argument("--redis", default="redis-server")
    ap.add_argument("--seeds", type=_seeds_option, default="1,2,3", help="1,2,3 or ranges such as 1-30")
    if commands is not None:
        ap.add_argument("--commands", type=int, default=commands)
    if resp3:
        ap.add_argument("--resp3", action="store_true", help="the connections switch to RESP3 first")
    if notifications:
        ap.add_argument("--notifications", action="store_true",
                        help="also every keyspace and keyevent notification each command makes, in order")
    if known is not None:
        ap.add_argument("--avoid", default="", help="leave known mismatches out of the stream: " +
                        ", ".join("%s (%s)" % kv for kv in known.items()).replace("%", "%%") +
                        "; 'all' for every one")
    if keep_going is not None:
        ap.add_argument("--keep-going", action="store_true", help=keep_going)
    if show is not None:
        ap.add_argument("--show", type=_show_option, help=show)
    return ap


def switches(known):
    """A fuzzer's switches for its KNOWN table: (avoid, avoiding), the set
    that --avoid fills (parse()) and avoiding(name), true when that known
    mismatch is to be left out of the stream; name must be in known."""
    avoid = set()

    def avoiding(name):
        assert name in known, name
        return name in avoid
    return avoid, avoiding


def apply_avoid(ap, text, known, avoid):
    """--avoid NAME,...|all: the names into the set `avoid`; a name that
    `known` lacks is a usage error."""
    names = list(known) if text == "all" else [a for a in text.split(",") if a]
    for name in names:
        if name not in known:
            ap.error("--avoid: no such known mismatch: %s" % name)
    avoid.update(names)


def parse(ap, known=None, avoid=None):
    """ap.parse_args(), then --avoid applied (with known and avoid given) and
    --ringkv checked and made absolute."""
    opts = ap.parse_args()
    if known is not None:
        apply_avoid(ap, opts.avoid, known, avoid)
    if opts.ringkv is not None:
        opts.ringkv = os.path.abspath(opts.ringkv)
    elif not opts.show:  # not required by argparse only where there is --show
        ap.error("--ringkv is required")
    return opts


class Run:
    """The servers of one run, their work directory and how the seeds went."""

    def __init__(self, work):
        self.work = work
        self.servers = []
        self.ports = []
        self.ok = True
        self.passed = 0
        self.tried = 0

    def start(self, command):
        """One more server (a command line), on a free port; its port."""
        port = rd.free_port()
        self.servers.append(rd.start(command, port, self.work))
        self.ports.append(port)
        return port

    def seeds(self, seeds, one_seed, stop_on_mismatch=False):
        """one_seed(seed) for each seed (see the module's contract); run.ok."""
        self.tried = len(seeds)
        for seed in seeds:
            try:
                good = bool(one_seed(seed))
            except rd.NoReply as e:
                self.ok = False
                self.report_no_reply(seed, e)
                break
            self.passed += good
            self.ok = self.ok and good
            exited = [p for p in self.servers if p.poll() is not None]
            for p in exited:
                print("seed %d: a server exited during the run (status %s)" % (seed, p.returncode))
            if exited:
                self.ok = False
                break
            if not good and stop_on_mismatch:
                break
        return self.ok

    def report_no_reply(self, seed, e):
        """A server that did not answer in time (rd.NoReply says whether the
        reply came later). One that stopped: its threads' stacks, where gdb
        is installed, go beside its log (the work directory is kept)."""
        print("seed %d: %s" % (seed, e))
        if e.waited is not None:
            return
        for p, port in zip(self.servers, self.ports):
            if port != e.port or p.poll() is not None or shutil.which("gdb") is None:
                continue
            path = os.path.join(self.work, str(port), "stacks.txt")
            with open(path, "w") as out:
                subprocess.run(["gdb", "-batch", "-p", str(p.pid), "-ex", "thread apply all bt"],
                               stdout=out, stderr=subprocess.STDOUT, timeout=120, check=False)
            print("  its threads' stacks: %s" % path)

    def summary(self, name, count, unit="commands", note=""):
        print("%s: %d of %d seeds x %d %s%s: %s" % (name, self.passed, self.tried, count, unit, note,
                                                    "all matched" if self.ok else "MISMATCH"))

    @property
    def status(self):
        return 0 if self.ok else 1


@contextlib.contextmanager
def servers(prefix, *commands):
    """A Run: a new work directory, the servers of the command lines started
    (none: a work directory alone); always stopped on leaving."""
    run = Run(tempfile.mkdtemp(prefix=prefix))
    try:
        for command in commands:
            run.start(command)
        yield run
    except BaseException:
        run.ok = False  # the logs stay
        raise
    finally:
        rd.stop_servers(run.servers, run.work, run.ok)


def start_in(cmd, directory, extra):
    """A server in `directory` with `extra` options; (process, port)."""
    port = rd.free_port()
    log = open(os.path.join(directory, "server-%d.log" % port), "w")
    p = subprocess.Popen(cmd + ["--port", str(port), "--bind", "127.0.0.1", "--dir", directory, "--save", "",
                                "--enable-debug-command", "yes"] + extra, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(400):  # (a server loading its AOF answers -LOADING meanwhile)
        try:
            if rd.Conn(port).call([b"PING"]) == b"+PONG\r\n":
                return p, port
        except OSError:
            pass
        time.sleep(0.05)
    p.kill()
    raise RuntimeError("server did not start: %s" % cmd)


def rewrite_finished(conn, timeout=60.0):
    """Waits until the server writes its AOF and has no rewrite running or
    scheduled (INFO persistence, as often as it takes: only where the
    servers' command counts are not compared next)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        info = conn.call([b"INFO", b"persistence"])
        if b"aof_rewrite_in_progress:0" in info and b"aof_rewrite_scheduled:0" in info and \
                b"aof_enabled:1" in info:
            return
        time.sleep(0.02)
    raise TimeoutError("the AOF rewrite did not finish in %d s" % timeout)


def write_aof(ports):
    """The servers write an AOF, every write fsynced, from now on."""
    for port in ports:
        conn = rd.Conn(port)
        conn.call([b"CONFIG", b"SET", b"appendfsync", b"always"])
        conn.call([b"CONFIG", b"SET", b"appendonly", b"yes"])
        rewrite_finished(conn)
        conn.sock.close()


def aof_folder(work, port):
    """The AOF folder of a server of servers() (run_diff.start's directory)."""
    return os.path.join(work, str(port), "appendonlydir")


def load_aof(binary, folder, directory, calls):
    """A copy of an AOF folder in `directory` (new), loaded by a new server of
    `binary`; the replies to `calls` once it is loaded. The server is stopped;
    the copy stays (the caller removes it)."""
    shutil.copytree(folder, os.path.join(directory, "appendonlydir"))
    p, port = start_in([binary], directory, ["--appendonly", "yes"])
    try:
        conn = rd.Conn(port)
        return [conn.call(c) for c in calls]
    finally:
        p.kill()
        p.wait()


def link_replicas(pairs, timeout=30.0):
    """REPLICAOF for each (primary port, replica port); returns once every
    link is up (so that a CONFIG RESETSTAT after it sees no handshake)."""
    for primary, replica in pairs:
        rd.Conn(replica).call([b"REPLICAOF", b"127.0.0.1", str(primary).encode()])
    for _, replica in pairs:
        end = time.time() + timeout
        while b"master_link_status:up" not in rd.Conn(replica).call([b"INFO", b"replication"]):
            if time.time() > end:
                raise RuntimeError("the replica on port %d did not link in %d s" % (replica, timeout))
            time.sleep(0.05)


def _offset(info, field):
    m = re.search(rb"%s:(-?\d+)" % field, info)
    return int(m.group(1)) if m else -1


def caught_up(primary, replica, timeout=30.0):
    """Whether the replica reaches, within timeout, the offset its primary
    has now (one INFO on the primary, as many as it takes on the replica)."""
    want = _offset(primary.call([b"INFO", b"replication"]), b"master_repl_offset")
    end = time.time() + timeout
    while _offset(replica.call([b"INFO", b"replication"]), b"slave_repl_offset") < want:
        if time.time() > end:
            return False
        time.sleep(0.01)
    return True


def set_aof_sentinel(conn, seed):
    """A key for every AOF, so that data the stream left empty cannot hide a
    server that loaded nothing (aofs_load_alike)."""
    conn.call([b"SET", b"fuzz:aof-sentinel", b"%d" % seed])


def aofs_load_alike(work, seed, binaries, ports, calls, want=None, canonical=lambda call, reply: reply,
                    sentinel=True):
    """At a seed's end: redis-server's AOF and ringkv's (ports: the two
    servers', which write one: write_aof), with a sentinel key set first
    unless sentinel is False (set_aof_sentinel), each loaded by a new redis-server
    and a new ringkv (binaries: redis-server's, ringkv's). Every load must
    answer calls as `want` does (replies, through canonical), or when want
    is None as redis-server's AOF in redis-server does. Prints the loads and
    keeps their copies when one differs; True when all are alike."""
    for port in ports:
        conn = rd.Conn(port)
        if sentinel:
            set_aof_sentinel(conn, seed)
        rewrite_finished(conn)
    names = ("redis-server", "ringkv")
    seen = []
    for k, (source, loader) in enumerate(((0, 0), (1, 1), (1, 0), (0, 1))):
        directory = os.path.join(work, "aof-%d-%d" % (seed, k))
        replies = load_aof(binaries[loader], aof_folder(work, ports[source]), directory, calls)
        seen.append(("%s's AOF in %s" % (names[source], names[loader]),
                     [canonical(c, r) for c, r in zip(calls, replies)], directory))
    reference = seen[0][1] if want is None else [canonical(c, r) for c, r in zip(calls, want)]
    if all(replies == reference for _, replies, _ in seen):
        for _, _, directory in seen:
            shutil.rmtree(directory)
        return True
    print("seed %d: the AOFs load differently (copies kept)%s:" % (
        seed, "" if want is None else "; the servers hold %r" % reference))
    for name, replies, directory in seen:
        print("  %s (%s): %r" % (name, directory, replies))
    return False


def add_check(ap):
    ap.add_argument("--check", choices=["replies", "replicas", "aof"], default="replies",
                    help="replies: against redis-server; replicas: a ringkv primary with a redis-server "
                         "and a ringkv replica; aof: ringkv's AOF loaded by both")


def run_check(name, opts, replicas, aof, replies):
    """The seeds under --check (add_check), through the fuzzer's functions:
    replies(seed, redis_port, ringkv_port); replicas(seed, commands,
    primary_port, replica_ports), a ringkv primary whose replicas are a
    redis-server and a ringkv; aof(seed, commands, ringkv, redis, work),
    which starts its own servers. Prints the summary; returns the exit
    status."""
    commands = {"replies": [[opts.redis], [opts.ringkv]],
                "replicas": [[opts.ringkv], [opts.redis], [opts.ringkv]],
                "aof": []}[opts.check]
    with servers("ringkv-fuzz-", *commands) as run:
        ports = run.ports
        if opts.check == "aof":
            run.seeds(opts.seeds, lambda seed: aof(seed, opts.commands, opts.ringkv, opts.redis, run.work))
        elif opts.check == "replicas":
            for port in ports[1:]:
                rd.Conn(port).call([b"REPLICAOF", b"127.0.0.1", str(ports[0]).encode()])
            run.seeds(opts.seeds, lambda seed: replicas(seed, opts.commands, ports[0], ports[1:]))
        else:
            run.seeds(opts.seeds, lambda seed: replies(seed, ports[0], ports[1]))
        run.summary("%s --check %s" % (name, opts.check), opts.commands)
    return run.status

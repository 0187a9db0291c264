#!/usr/bin/env python3
"""Randomized differential test of the blocking commands across several
connections. One redis-server 7.0 and one ringkv get the same five client
connections each (c0 .. c4) and the same seeded stream of commands, each
sent on a connection that is not blocked; after each command, every
connection's bytes must match between the two servers, and so must which
connections are blocked.

Usage: fuzz_blocking.py --ringkv PATH [--redis redis-server] [--seeds 1,2,3]
                        [--commands 1500] [--digest-every 25] [--notifications]
                        [--avoid NAME,...|all] [--replica] [--aof]

What the stream holds:
- blocking commands, most of them with no timeout: BLPOP, BRPOP, BLMOVE,
  BRPOPLPUSH, BLMPOP (COUNT), BZPOPMIN, BZPOPMAX, BZMPOP (COUNT), XREAD
  BLOCK ($, 0 or an ID; COUNT), XREADGROUP BLOCK (>, or an ID; COUNT,
  NOACK), WAIT on replicas there are none of; on one or several keys, the
  same key twice, a source that is its own destination; some with a short
  timeout (the run then waits for it to pass in both servers), some with
  bad arguments;
- what wakes them, or does not: pushes of one or several elements (LPUSH,
  RPUSH, LPUSHX, LINSERT, LMOVE, RPOPLPUSH), ZADD (INCR, NX / XX, GT / LT),
  ZINCRBY, XADD (explicit IDs, MAXLEN, NOMKSTREAM), XGROUP CREATE / SETID /
  DESTROY / DELCONSUMER, XDEL, XTRIM, XSETID, XACK, stores (ZUNIONSTORE,
  ZRANGESTORE, SORT ... STORE, LMPOP, SUNIONSTORE), COPY, RENAME, MOVE,
  SWAPDB, DEL, SET (a type change under a blocked client), EXPIRE 0,
  FLUSHDB, FLUSHALL; the same inside MULTI / EXEC and in EVAL (a push then
  a pop in one script; a blocking command inside one, which does not
  block); CLIENT UNBLOCK (TIMEOUT or ERROR) of blocked and free
  connections, and CLIENT KILL of them (the connection is then opened
  again); SELECT of database 1, where clients block too; CLIENT PAUSE WRITE
  on a connection of its own, which holds the writes, blocking commands,
  scripts and EXECs of writes sent meanwhile until its CLIENT UNPAUSE
  (never CLIENT UNBLOCK of a held client: Redis 7.0.15 crashes on it);
- reads between them (LRANGE, ZRANGE WITHSCORES, XRANGE, XINFO STREAM /
  GROUPS, XPENDING's summary, TYPE); about a third of the connections
  speak RESP3 (HELLO 3 before the stream starts).

How a command is read: it is sent on its connection to both servers, and
each is polled until the reply is there or CLIENT LIST (on a control
connection) shows the client blocked, so that nothing overtakes it. Then
CLIENT LIST tells which of the connections blocked before are not any
more; each of those has one reply to read (the wake-up, a timeout, an
error). Then every free connection not inside MULTI gets a PING with a
token of its own, read up to the token's reply. The blocked sets must be
the same in both servers after each command, and every connection's bytes
must match. Stream IDs are explicit (an ID made from the clock would
differ), and keys never expire on their own. Every --digest-every commands
DEBUG DIGEST and INFO's error and command counts (CLIENT LIST's left out)
must match; with --notifications, so must every keyspace and keyevent
notification each command made, the woken clients' included. SWAPDB is
sent only where its outcome does not hang on the order Redis finds the
awaited keys in (swap_is_reproducible).

With --replica, a ringkv replica follows the ringkv server (WAIT left out
of the stream, since it has a replica to count there): at every
--digest-every it must reach the primary's offset and DEBUG DIGEST, which
checks what the served blocking commands propagate (INFO's counts are not
compared then: the checks add calls on the ringkv side).

With --aof, both servers write an AOF (appendfsync always, BGREWRITEAOF
half way through each seed). At each seed's end, once everything else
matched, each server's AOF must load to the same DEBUG DIGEST in a new ringkv
and a new redis-server: what the served
blocking commands, the scripts and the transactions write there is what
Redis writes, and loads.

Mismatches already reported are listed in KNOWN; --avoid NAME,... (or all)
leaves them out of the stream. Exit status 1 on a mismatch, printing the seed, the command number, the
commands just before it and both servers' bytes per connection (server
logs kept). The stream depends on redis-server's answers (which
connections are blocked, in MULTI): replay a seed against the same
redis-server.
"""
import os
import re
import select
import shutil
import sys
import time

import fuzz_driver as fd
import run_diff as rd
from fuzz_pubsub import barrier, idarg, shown  # the PING barrier, connection ids, commands as script lines

NCONNS = 5
ADMIN = NCONNS  # one more connection, for CLIENT PAUSE / UNPAUSE alone: never held by a pause
LISTS = [b"l1", b"l2", b"l3"]
ZSETS = [b"z1", b"z2"]
STREAMS = [b"s1", b"s2"]
OTHER = [b"x"]  # a string or a set, now and then: a type change under a blocked client
KEYS = LISTS + ZSETS + STREAMS + OTHER
VALUES = [b"a", b"b", b"c", b"1", b"2", b"", b"x" * 70]
GROUPS = [b"g1", b"g2"]
CONSUMERS = [b"alice", b"bob"]
SETTLE_LIMIT = 5.0  # seconds a server may take to answer or block a command
TIMEOUT_LIMIT = 3.0  # seconds a short timeout may take to fire (Redis checks at its next cron tick, 100 ms)

# Mismatches already reported, which --avoid NAME,... leaves out of the
# stream (docs/compatibility.md).
KNOWN = {
    "store-overwrite-wakes": "kept in ringkv: a store that overwrites a key of another type with a list or a sorted "
                             "set (SORT ... STORE, ZUNIONSTORE, ZRANGESTORE) while clients of that kind wait on "
                             "it: Redis 7.0 readies only a key it adds, so they stay blocked there (and through "
                             "later pushes to that list); ringkv serves them. c1: BLPOP l 0; c0: XADD l 1-1 f v; "
                             "c0: RPUSH src a; c0: SORT src ALPHA STORE l -- c1 gets nothing from Redis, l a from "
                             "ringkv",
}
AVOID, avoiding = fd.switches(KNOWN)  # --avoid fills AVOID; avoiding(NAME): that mismatch is left out


class Generator(fd.Seeded):
    """The seeded stream; the connections that are blocked and inside MULTI
    come from the run (redis-server's answers), so that commands go only
    where they are read."""

    def __init__(self, seed, waits=True):
        super().__init__(seed)
        self.waits = waits  # WAIT in the stream (not with a replica on one side)
        self.resp3 = [self.chance(0.3) for _ in range(NCONNS)]  # the connections that speak RESP3
        self.n = 0
        self.ms = 1  # the stream IDs' time part, increasing
        self.queued = {}  # connection -> commands queued in its MULTI
        self.blocked_by = {}  # connection -> the command it is blocked in (the run's)
        # The run's: CLIENT PAUSE WRITE in force, and the connections whose
        # commands it holds (Redis 7.0.15 crashes on CLIENT UNBLOCK of one:
        # "Unknown btype in replyToBlockedClientTimedOut()", so none is sent).
        self.paused = False
        self.postponed = set()
        self.queued_unblock = set()  # connections with a CLIENT UNBLOCK in their MULTI

    def key(self, family):
        return self.pick(family) if self.chance(0.85) else self.pick(KEYS)

    def next(self, free, blocked, in_multi):
        """(connection, args): free are the connections that may take a
        command, blocked the others, in_multi those inside MULTI."""
        self.n += 1
        # CLIENT PAUSE WRITE holds every write, on the admin connection; it
        # is lifted before the last connection outside MULTI is held too
        # (an EXEC of writes is held as well).
        if self.paused:
            if len([i for i in free if i not in in_multi]) <= 1 or self.chance(0.12):
                return ADMIN, [b"CLIENT", b"UNPAUSE"]
        elif not self.queued_unblock and self.chance(0.015):
            return ADMIN, [b"CLIENT", b"PAUSE", b"100000", b"WRITE"]
        open_multi = [i for i in free if i in in_multi]
        ci = self.pick(open_multi) if open_multi and self.chance(0.6) else self.pick(free)
        if ci in in_multi:
            q = self.queued.get(ci, 0)
            if q >= self.rnd.randint(1, 5) or self.chance(0.05):
                self.queued.pop(ci, None)
                self.queued_unblock.discard(ci)
                return ci, [self.pick([b"EXEC", b"EXEC", b"EXEC", b"DISCARD"])]
            self.queued[ci] = q + 1
            args = self.queued_command(blocked)
            if args[1:2] == [b"UNBLOCK"]:
                self.queued_unblock.add(ci)
            return ci, args
        self.queued.pop(ci, None)
        return ci, self.command(ci, free, blocked)

    # -- timeouts -------------------------------------------------------------
    def seconds(self):
        r = self.rnd.random()
        if r < 0.85:
            return b"0"
        if r < 0.95:
            return self.pick([b"0.02", b"0.01"])
        return self.pick([b"-1", b"abc", b"1e400", b"inf", b"-0"])

    def millis(self):
        r = self.rnd.random()
        if r < 0.85:
            return b"0"
        if r < 0.95:
            return b"20"
        return self.pick([b"-1", b"abc", b"0.5"])

    # -- the blocking commands ------------------------------------------------
    def blocking(self):
        p = self.pick
        r = self.rnd.random()
        if r < 0.18:
            keys = [self.key(LISTS) for _ in range(self.rnd.randint(1, 3))]
            return [p([b"BLPOP", b"BRPOP"])] + keys + [self.seconds()]
        if r < 0.32:
            src, dst = self.key(LISTS), self.key(LISTS)
            if self.chance(0.3):
                return [b"BRPOPLPUSH", src, dst, self.seconds()]
            return [b"BLMOVE", src, dst, p([b"LEFT", b"RIGHT"]), p([b"LEFT", b"RIGHT"]), self.seconds()]
        if r < 0.42:
            keys = [self.key(LISTS) for _ in range(self.rnd.randint(1, 3))]
            args = [b"BLMPOP", self.seconds(), b"%d" % len(keys)] + keys + [p([b"LEFT", b"RIGHT"])]
            if self.chance(0.4):
                args += [b"COUNT", p([b"1", b"2", b"5", b"0"])]
            return args
        if r < 0.55:
            keys = [self.key(ZSETS) for _ in range(self.rnd.randint(1, 2))]
            return [p([b"BZPOPMIN", b"BZPOPMAX"])] + keys + [self.seconds()]
        if r < 0.63:
            keys = [self.key(ZSETS) for _ in range(self.rnd.randint(1, 2))]
            args = [b"BZMPOP", self.seconds(), b"%d" % len(keys)] + keys + [p([b"MIN", b"MAX"])]
            if self.chance(0.4):
                args += [b"COUNT", p([b"1", b"3"])]
            return args
        if r < 0.78:
            keys = list(dict.fromkeys(self.key(STREAMS) for _ in range(self.rnd.randint(1, 2))))
            args = [b"XREAD"] + ([b"COUNT", p([b"1", b"2"])] if self.chance(0.3) else [])
            args += [b"BLOCK", self.millis(), b"STREAMS"] + keys
            return args + [self.stream_id(start=True) for _ in keys]
        if r < 0.95:
            key = self.key(STREAMS)
            args = [b"XREADGROUP", b"GROUP", p(GROUPS), p(CONSUMERS)]
            if self.chance(0.3):
                args += [b"COUNT", p([b"1", b"2"])]
            if self.chance(0.2):
                args += [b"NOACK"]
            return args + [b"BLOCK", self.millis(), b"STREAMS", key, b">" if self.chance(0.85) else b"0"]
        if not self.waits:
            return [b"BLPOP", self.key(LISTS), self.seconds()]
        return [b"WAIT", p([b"1", b"1", b"0"]), p([b"0", b"0", b"10"])]

    def stream_id(self, start=False):
        r = self.rnd.random()
        if start and r < 0.6:
            return b"$"
        if r < 0.75:
            return self.pick([b"0", b"0-0"])
        return b"%d-%d" % (self.rnd.randint(0, self.ms), self.rnd.randint(0, 2))

    # -- what wakes them ------------------------------------------------------
    def push(self):
        p, v = self.pick, self.pick
        r = self.rnd.random()
        k = self.key(LISTS)
        if r < 0.3:
            return [p([b"LPUSH", b"RPUSH"]), k] + self.some(VALUES, 1, 3)
        if r < 0.37:
            return [p([b"LPUSHX", b"RPUSHX"]), k, v(VALUES)]
        if r < 0.42:
            return [b"LINSERT", k, p([b"BEFORE", b"AFTER"]), v(VALUES), v(VALUES)]
        if r < 0.52:
            return [b"LMOVE", k, self.key(LISTS), p([b"LEFT", b"RIGHT"]), p([b"LEFT", b"RIGHT"])]
        if r < 0.56:
            return [b"RPOPLPUSH", k, self.key(LISTS)]
        if r < 0.6:
            return [b"LMPOP", b"2", k, self.key(LISTS), p([b"LEFT", b"RIGHT"])]
        z = self.key(ZSETS)
        if r < 0.72:
            opts = self.some([b"NX", b"XX", b"GT", b"LT", b"CH"], 0, 1)
            if self.chance(0.15):
                return [b"ZADD", z] + opts + [b"INCR", p([b"1", b"-2"]), p([b"m1", b"m2", b"m3"])]
            args = [b"ZADD", z] + opts
            for _ in range(self.rnd.randint(1, 3)):
                args += [p([b"1", b"2", b"-1", b"3.5"]), p([b"m1", b"m2", b"m3", b"m4"])]
            return args
        if r < 0.75:
            return [b"ZINCRBY", z, b"1", p([b"m1", b"m2"])]
        s = self.key(STREAMS)
        if r < 0.9:
            self.ms += self.rnd.randint(0, 1)
            args = [b"XADD", s]
            if self.chance(0.1):
                args.append(b"NOMKSTREAM")
            if self.chance(0.15):
                args += [b"MAXLEN", p([b"2", b"0"])]
            sid = b"%d-*" % self.ms if self.chance(0.3) else b"%d-%d" % (self.ms, self.rnd.randint(0, 3))
            return args + [sid, b"f", v(VALUES)] + ([b"g", v(VALUES)] if self.chance(0.3) else [])
        return self.stream_admin()

    def stream_admin(self):
        p, s = self.pick, self.key(STREAMS)
        r = self.rnd.random()
        if r < 0.35:
            args = [b"XGROUP", b"CREATE", s, p(GROUPS), p([b"$", b"0", b"$"])]
            return args + ([b"MKSTREAM"] if self.chance(0.6) else [])
        if r < 0.45:
            return [b"XGROUP", b"SETID", s, p(GROUPS), p([b"$", b"0"])]
        if r < 0.55:
            return [b"XGROUP", b"DESTROY", s, p(GROUPS)]
        if r < 0.62:
            return [b"XGROUP", p([b"CREATECONSUMER", b"DELCONSUMER"]), s, p(GROUPS), p(CONSUMERS)]
        if r < 0.75:
            return [b"XDEL", s, self.stream_id()]
        if r < 0.82:
            return [b"XTRIM", s, b"MAXLEN", p([b"0", b"1", b"3"])]
        if r < 0.9:
            # The last ID moved on, no entry added: not a readying (a refusal
            # where it is below the top entry's)
            return [b"XSETID", s, b"%d-%d" % (self.ms + self.rnd.randint(0, 2), self.rnd.randint(0, 5))]
        return [b"XACK", s, p(GROUPS), self.stream_id()]

    def keyspace(self):
        """The generic commands that move, change or remove keys."""
        p, k, k2 = self.pick, self.pick(KEYS), self.pick(KEYS)
        forms = [
            lambda: [b"DEL", k] + self.some(KEYS, 0, 1),
            lambda: [b"SET", p(OTHER + KEYS), b"str"],
            lambda: [b"SADD", p(OTHER + LISTS), b"m"],
            lambda: [b"RENAME", k, k2],
            lambda: [b"RENAMENX", k, k2],
            lambda: [b"COPY", k, k2] + p([[], [b"REPLACE"], [b"DB", b"1"]]),
            lambda: [b"MOVE", k, p([b"0", b"1"])],
            lambda: [b"SWAPDB", b"0", b"1"] if self.swap_is_reproducible() else [b"SELECT", b"0"],
            lambda: [b"EXPIRE", k, b"0"],
            lambda: self.store([b"ZUNIONSTORE", self.key(ZSETS), b"2", self.key(ZSETS), self.key(ZSETS)], 1),
            lambda: self.store([b"ZRANGESTORE", self.key(ZSETS), self.key(ZSETS), b"0", b"-1"], 1),
            lambda: self.store([b"SORT", self.key(LISTS), b"ALPHA", b"STORE", self.key(LISTS)], 4),
            lambda: [b"SUNIONSTORE", self.key(LISTS), b"x"],
            lambda: [b"LTRIM", self.key(LISTS), b"1", b"0"],
            lambda: [b"SELECT", p([b"0", b"1", b"0"])],
        ]
        if self.chance(0.03):
            return [p([b"FLUSHDB", b"FLUSHALL"])]
        return p(forms)()

    def store(self, args, dst):
        """A store into args[dst]; a read instead where a blocked client
        waits on that key and store-overwrite-wakes is avoided."""
        awaited = {k for a in self.blocked_by.values() for k in blocked_keys(a)}
        if avoiding("store-overwrite-wakes") and args[dst] in awaited:
            return [b"TYPE", args[dst]]
        return args

    def swap_is_reproducible(self):
        """SWAPDB readies every awaited key of both databases at once, in the
        order of Redis's hash table of them (a random seed): which key serves
        a client waiting on two, where a popped element is moved to, and the
        order of the woken clients' events follow it. So only where the
        blocked clients wait on one key in all, and none moves what it pops,
        is the outcome the same in both servers."""
        if self.paused or any(a[0].upper() in (b"BLMOVE", b"BRPOPLPUSH") for a in self.blocked_by.values()):
            return False  # (held by a pause, it runs when more may wait)
        return len({k for a in self.blocked_by.values() for k in blocked_keys(a)}) <= 1

    def script(self):
        p, k, k2 = self.pick, self.key(LISTS), self.key(LISTS)
        bodies = [
            (b"redis.call('rpush', KEYS[1], ARGV[1]); return redis.call('lpop', KEYS[1])", [k], [b"v"]),
            (b"redis.call('rpush', KEYS[1], ARGV[1], ARGV[1]); return redis.call('llen', KEYS[1])", [k], [b"w"]),
            (b"return redis.call('blpop', KEYS[1], 0)", [k], []),
            (b"return redis.call('blmove', KEYS[1], KEYS[2], 'LEFT', 'RIGHT', 0)", [k, k2], []),
            (b"redis.call('zadd', KEYS[1], 1, 'm9'); return redis.call('zpopmin', KEYS[1])", [self.key(ZSETS)], []),
            (b"return redis.call('xadd', KEYS[1], ARGV[1], 'f', 'v')", [self.key(STREAMS)],
             [b"%d-%d" % (self.ms, self.rnd.randint(5, 9))]),
        ]
        body, keys, argv = p(bodies)
        return [b"EVAL", body, b"%d" % len(keys)] + keys + argv

    def read(self):
        p = self.pick
        forms = [
            lambda: [b"LRANGE", self.key(LISTS), b"0", b"-1"],
            lambda: [b"ZRANGE", self.key(ZSETS), b"0", b"-1", b"WITHSCORES"],
            lambda: [b"XRANGE", self.key(STREAMS), b"-", b"+"],
            lambda: [b"XINFO", b"STREAM", self.key(STREAMS)],
            lambda: [b"XINFO", b"GROUPS", self.key(STREAMS)],
            lambda: [b"XPENDING", self.key(STREAMS), p(GROUPS)],
            lambda: [b"TYPE", p(KEYS)],
            lambda: [b"DBSIZE"],
        ]
        return p(forms)()

    def unblock(self, blocked, killer=None):
        """CLIENT UNBLOCK, mostly of a blocked connection; sent by `killer`
        (not inside MULTI), now and then CLIENT KILL of another connection
        instead, which the run then opens again."""
        target = self.pick(sorted(blocked)) if blocked and self.chance(0.85) else self.rnd.randrange(NCONNS)
        if killer is not None and target != killer and self.chance(0.2):
            return [b"CLIENT", b"KILL", b"ID", idarg(target)]
        if target in self.postponed:
            return [b"CLIENT", b"UNBLOCK", b"999999999"]  # not that one (self.postponed): an id nobody has
        return [b"CLIENT", b"UNBLOCK", idarg(target)] + self.pick([[], [b"TIMEOUT"], [b"ERROR"]])

    def command(self, ci, free, blocked):
        r = self.rnd.random()
        if r < 0.3 and len(free) > 1:  # (the last free connection must stay free)
            return self.blocking()
        if r < 0.6:
            return self.push()
        if r < 0.7:
            return self.keyspace()
        if r < 0.77:
            return self.read()
        if r < 0.82 and blocked:
            return self.unblock(blocked, killer=ci)
        if r < 0.86:
            return self.script()
        if r < 0.9:
            return [b"MULTI"]
        return self.stream_admin()

    def queued_command(self, blocked):
        r = self.rnd.random()
        if r < 0.3:
            return self.blocking()  # inside EXEC: answered at once, never blocks
        if r < 0.65:
            return self.push()
        if r < 0.75:
            return self.keyspace()
        if r < 0.85:
            return self.read()
        if r < 0.9:
            return self.script()
        if r < 0.95 and blocked and not self.paused:
            return self.unblock(blocked)
        return [b"NOSUCHCOMMAND"]  # EXEC then answers EXECABORT


# -- talking to the servers ----------------------------------------------------

class Side:
    """One server's client connections (with their CLIENT IDs) and a control
    connection for CLIENT LIST and the checks."""

    def __init__(self, name, port, resp3):
        self.name, self.port = name, port
        self.conns = [rd.Conn(port) for _ in range(NCONNS + 1)]  # (+ ADMIN)
        self.ids = [c.call([b"CLIENT", b"ID"])[1:-2] for c in self.conns]
        for c, three in zip(self.conns, resp3):
            c.sock.settimeout(SETTLE_LIMIT)
            if three:
                c.call([b"HELLO", b"3"])
        self.ctl = rd.Conn(port)

    def args(self, args):
        return [self.ids[int(a[4:])] if a.startswith(b"\x00id:") else a for a in args]

    def settle(self, i):
        """After a command was sent on connection i: True when the server
        blocked the client, False when its reply is here (or coming)."""
        conn = self.conns[i]
        deadline = time.time() + SETTLE_LIMIT
        while time.time() < deadline:
            if conn.buf or select.select([conn.sock], [], [], 0)[0]:
                return False
            if i in self.blocked([i]):
                return True
            time.sleep(0.001)
        raise TimeoutError("%s neither answered nor blocked c%d" % (self.name, i))

    def blocked(self, conns):
        """Those of the connections that CLIENT LIST shows blocked."""
        if not conns:
            return set()
        info = self.ctl.call([b"CLIENT", b"LIST", b"ID"] + [self.ids[i] for i in conns])
        flags = dict(re.findall(rb"id=(\d+) .*? flags=(\S*)", info))
        return {i for i in conns if b"b" in flags.get(self.ids[i], b"")}

    def reopen(self, i, resp3):
        """Connection i closed by the server (CLIENT KILL): a new one in its place."""
        self.conns[i].sock.close()
        self.conns[i] = rd.Conn(self.port)
        self.ids[i] = self.conns[i].call([b"CLIENT", b"ID"])[1:-2]
        self.conns[i].sock.settimeout(SETTLE_LIMIT)
        if resp3:
            self.conns[i].call([b"HELLO", b"3"])

    def close(self):
        for c in self.conns + [self.ctl]:
            c.sock.close()


def wait_released(sides, i):
    """Connection i blocked with a short timeout: until it passed in both."""
    deadline = time.time() + TIMEOUT_LIMIT
    while time.time() < deadline and any(side.blocked([i]) for side in sides):
        time.sleep(0.01)


def killed(args, reply):
    """The connection a CLIENT KILL ID that succeeded closed, or None."""
    if [a.upper() for a in args[:3]] == [b"CLIENT", b"KILL", b"ID"] and reply == b":1\r\n":
        return int(args[3][4:])
    return None


def step(sides, state, ci, args, n, short_timeout, resp3):
    """Runs one command on both servers; returns ({connection: [redis-server's
    replies, ringkv's]}, None), or what was read and a note saying what went
    wrong. state: the connections blocked and in MULTI, updated."""
    streams = {ci: [[], []]}
    for side in sides:
        side.conns[ci].send(side.args(args))
    held = []
    for s, side in enumerate(sides):
        try:
            held.append(side.settle(ci))
        except (OSError, ConnectionError, TimeoutError) as e:
            return streams, str(e)
    if held[0] != held[1]:
        for s, side in enumerate(sides):
            streams[ci][s] = [b"(blocked)"] if held[s] else [side.conns[ci].reply()]
        return streams, "blocked in one server only"
    if held[0]:
        state.blocked.add(ci)
        state.blocked_by[ci] = args
        if state.paused:
            state.postponed.add(ci)
        elif short_timeout:  # its timeout passes in both, before anything can wake it
            wait_released(sides, ci)
    else:
        for s, side in enumerate(sides):
            streams[ci][s].append(side.conns[ci].reply())
        for i in state.update(ci, args, streams[ci][0][-1]):
            # Let go by CLIENT UNPAUSE, a command with a short timeout that
            # blocked then: as above
            if i in state.blocked and short_timeout_of(state.blocked_by[i]):
                wait_released(sides, i)
        gone = killed(args, streams[ci][0][-1])
        if gone is not None:  # (its blocked command goes with it, unanswered)
            if streams[ci][1] != streams[ci][0]:
                return streams, "CLIENT KILL answered differently"
            for side in sides:
                side.reopen(gone, resp3[gone])
            state.forget(gone)
    # Which blocked connections this command (or a timeout) released.
    waiting = sorted(state.blocked)
    still = [side.blocked(waiting) for side in sides]
    if still[0] != still[1]:
        named = [" ".join("c%d" % i for i in sorted(x)) or "none" for x in still]
        return streams, "still blocked: %s in redis-server, %s in ringkv" % tuple(named)
    for i in waiting:
        if i in still[0]:
            continue
        state.blocked.discard(i)
        for s, side in enumerate(sides):
            try:
                streams.setdefault(i, [[], []])[s].append(side.conns[i].reply())
            except (OSError, ConnectionError) as e:
                return streams, "%s: no reply on c%d, woken: %s" % (side.name, i, e)
        state.update(i, state.blocked_by[i], streams[i][0][-1])  # (an EXEC a pause held ends MULTI)
    targets = [i for i in range(NCONNS) if i not in state.blocked and i not in state.multi]
    return streams, barrier(sides, targets, n, streams)


class State:
    """What the run knows of each connection from redis-server's answers."""

    def __init__(self):
        self.blocked = set()
        self.blocked_by = {}  # connection -> the command it blocked on (last)
        self.multi = set()
        self.paused = False  # CLIENT PAUSE WRITE in force
        self.postponed = set()  # the connections whose commands it holds (in blocked too)

    def forget(self, i):
        """Connection i was closed and opened again: free, not in MULTI."""
        self.blocked.discard(i)
        self.blocked_by.pop(i, None)
        self.multi.discard(i)
        self.postponed.discard(i)

    def update(self, ci, args, reply):
        """After redis-server's `reply` to `args` on ci. Returns the
        connections a CLIENT UNPAUSE let go (their commands ran)."""
        name = args[0].upper()
        if name in (b"EXEC", b"DISCARD", b"RESET"):
            self.multi.discard(ci)
        elif name == b"MULTI" and reply == b"+OK\r\n" and ci not in self.multi:
            self.multi.add(ci)
        elif ci == ADMIN and reply == b"+OK\r\n":
            self.paused = args[1].upper() == b"PAUSE"
            if not self.paused:
                released, self.postponed = self.postponed, set()
                return released
        return set()


def blocked_keys(args):
    """The keys a blocking command waits on."""
    name = args[0].upper()
    if name in (b"BLMPOP", b"BZMPOP"):
        return args[3:3 + int(args[2])]
    if name in (b"XREAD", b"XREADGROUP"):
        at = [a.upper() for a in args].index(b"STREAMS") + 1
        return args[at:at + (len(args) - at) // 2]
    if name in (b"BLMOVE", b"BRPOPLPUSH"):
        return args[1:2]
    if name == b"WAIT":
        return []
    return args[1:-1]


def short_timeout_of(args):
    """The command blocks for a bounded time (not forever), where it blocks."""
    name = args[0].upper()
    if name in (b"XREAD", b"XREADGROUP"):
        return args[args.index(b"BLOCK") + 1] != b"0"
    if name == b"WAIT":
        return args[2] != b"0"
    if name in (b"BLMPOP", b"BZMPOP"):
        return args[1] != b"0"
    if name.startswith(b"B"):
        return args[-1] != b"0"
    return False


def digest_differs(sides, seed, n):
    digests = [side.ctl.call([b"DEBUG", b"DIGEST"]) for side in sides]
    if digests[0] != digests[1]:
        print("seed %d: DEBUG DIGEST differs after command %d" % (seed, n))
        for db in (b"0", b"1"):
            for side in sides:
                side.ctl.call([b"SELECT", db])
                print("  db %s %s: %r" % (db.decode(), side.name, [(k, side.ctl.call([b"DEBUG", b"DIGEST-VALUE", k]))
                                                                    for k in KEYS]))
            for side in sides:
                side.ctl.call([b"SELECT", b"0"])
        return True
    return False


def replication_offset(conn, field):
    info = conn.call([b"INFO", b"replication"])
    m = re.search(rb"%s:(\d+)" % field, info)
    return int(m.group(1)) if m else -1


def replica_differs(primary, replica, seed, n, timeout=10.0):
    """The replica must reach the primary's offset, then its DEBUG DIGEST."""
    end = time.time() + timeout
    while time.time() < end:
        want = replication_offset(primary, b"master_repl_offset")
        if replication_offset(replica, b"slave_repl_offset") == want:
            break
        time.sleep(0.02)
    else:
        print("seed %d: the replica did not reach the primary's offset after command %d" % (seed, n))
        return True
    if primary.call([b"DEBUG", b"DIGEST"]) != replica.call([b"DEBUG", b"DIGEST"]):
        print("seed %d: the replica's DEBUG DIGEST differs after command %d" % (seed, n))
        for db in (b"0", b"1"):
            for c in (primary, replica):
                c.call([b"SELECT", db])
            for k in KEYS:
                x, y = (c.call([b"DEBUG", b"DIGEST-VALUE", k]) for c in (primary, replica))
                if x != y:
                    print("  db %s %s: primary %r, replica %r" % (db.decode(), k.decode(), x, y))
        for c in (primary, replica):
            c.call([b"SELECT", b"0"])
        return True
    return False


def stats_match(sides, replica, where):
    """INFO's counts alike (rd.stats_match); not compared with a replica,
    whose checks (INFO, DEBUG DIGEST) and link (REPLCONF) add calls to the
    ringkv side only."""
    return replica is not None or rd.stats_match(sides[0].ctl, sides[1].ctl, where)


def aof_differs(sides, seed, aof, paused):
    """--aof, at a seed's end: both servers' AOFs, loaded by either kind of
    server, must give the DEBUG DIGEST both have now (fd.aofs_load_alike),
    with its sentinel key unless a CLIENT PAUSE WRITE (paused) would hold
    the SET. aof is (work directory, ringkv, redis-server)."""
    work, ringkv, redis = aof
    calls = [[b"DEBUG", b"DIGEST"]]
    if not paused:
        for side in sides:
            fd.set_aof_sentinel(side.ctl, seed)
    return not fd.aofs_load_alike(work, seed, (redis, ringkv), (sides[0].port, sides[1].port), calls,
                                  want=[sides[0].ctl.call(calls[0])], sentinel=False)


def run_seed(seed, commands, ports, digest_every, notifications, aof=None):
    for port in ports:
        admin = rd.Conn(port)
        for cmd in ([b"CLIENT", b"UNPAUSE"], [b"FLUSHALL"], [b"DEBUG", b"SET-ACTIVE-EXPIRE", b"0"],
                    [b"CONFIG", b"RESETSTAT"]):
            admin.call(cmd)
        admin.sock.close()
    listeners = rd.listeners_for(ports[0], ports[1], notifications)
    replica = rd.Conn(ports[2]) if len(ports) > 2 else None
    gen = Generator(seed, waits=replica is None)
    sides = [Side("redis-server", ports[0], gen.resp3), Side("ringkv", ports[1], gen.resp3)]
    state = State()
    history = []
    ok = True
    try:
        for n in range(commands):
            free = [i for i in range(NCONNS) if i not in state.blocked]
            gen.blocked_by = {i: state.blocked_by[i] for i in state.blocked}
            gen.paused, gen.postponed = state.paused, state.postponed
            ci, args = gen.next(free, state.blocked, state.multi)
            history = (history + ["%d c%d %s" % (n, ci, shown(args))])[-15:]
            streams, note = step(sides, state, ci, args, n, ci not in state.multi and short_timeout_of(args), gen.resp3)
            bad = [(i, x, y) for i, (x, y) in sorted(streams.items()) if x != y or note is not None]
            where = "seed %d, command %d, on c%d: %s" % (seed, n, ci, shown(args))
            if bad:
                print(where + (" (%s)" % note if note else ""))
                print("  the commands up to it:\n    " + "\n    ".join(history))
                print("  the connections' last blocking commands:\n    " + "\n    ".join(
                    "c%d %s" % (i, shown(a)) for i, a in sorted(state.blocked_by.items())))
                for i, x, y in bad:
                    print("  c%d redis : %r\n  c%d ringkv: %r" % (i, b"".join(x)[:2000], i, b"".join(y)[:2000]))
                ok = False
                break
            # (The events' marker is a PUBLISH, which a pause holds: they are
            # compared once it is lifted, all of them since the last look.)
            if not state.paused and not rd.events_match(listeners, sides[0].ctl, sides[1].ctl, where):
                print("  the commands up to it:\n    " + "\n    ".join(history))
                ok = False
                break
            if aof is not None and n == commands // 2:
                for side in sides:  # (the last seed's rewrite finished at its end)
                    side.ctl.call([b"BGREWRITEAOF"])
            if n % digest_every == digest_every - 1 and (
                    digest_differs(sides, seed, n) or not stats_match(sides, replica, where) or
                    replica is not None and replica_differs(sides[1].ctl, replica, seed, n)):
                print("  the commands up to it:\n    " + "\n    ".join(history))
                ok = False
                break
        if ok:
            ok = not digest_differs(sides, seed, commands) and \
                stats_match(sides, replica, "seed %d, at the end" % seed) and \
                not (replica is not None and replica_differs(sides[1].ctl, replica, seed, commands)) and \
                not (aof is not None and aof_differs(sides, seed, aof, state.paused))
    finally:
        if replica is not None:
            replica.sock.close()
        for side in sides:
            side.close()  # (the blocked clients go with their connections)
        for listener in listeners or []:
            listener.conn.sock.close()
    return ok


def main():
    ap = fd.parser(commands=1500, known=KNOWN, notifications=True)
    ap.add_argument("--digest-every", type=int, default=25)
    ap.add_argument("--replica", action="store_true", help="a ringkv replica follows the ringkv server (no WAIT)")
    ap.add_argument("--aof", action="store_true",
                    help="both servers write an AOF; at each seed's end ringkv's loads into ringkv and "
                         "redis-server, redis-server's into ringkv, to the same DEBUG DIGEST")
    opts = fd.parse(ap, KNOWN, AVOID)
    servers = [[opts.redis], [opts.ringkv]] + ([[opts.ringkv]] if opts.replica else [])
    with fd.servers("ringkv-fuzz-blocking-", *servers) as run:
        if opts.replica:
            rd.Conn(run.ports[2]).call([b"REPLICAOF", b"127.0.0.1", str(run.ports[1]).encode()])
        if opts.aof:
            fd.write_aof(run.ports[:2])
        aof = (run.work, opts.ringkv, opts.redis) if opts.aof else None
        run.seeds(opts.seeds, lambda seed: run_seed(seed, opts.commands, run.ports, opts.digest_every,
                                                    opts.notifications, aof),
                  stop_on_mismatch=True)
        run.summary("fuzz_blocking", opts.commands, note="".join(
            [" (notifications)" if opts.notifications else "", " (replica)" if opts.replica else "",
             " (AOF)" if opts.aof else ""]))
    sys.exit(run.status)


if __name__ == "__main__":
    main()

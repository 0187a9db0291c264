#!/usr/bin/env python3
"""Randomized differential test of the string and generic key commands: the
same seeded stream of SET (every option), GETEX, INCRBYFLOAT, SETRANGE, LCS,
EXPIRE and its flags, RENAME, COPY, MOVE, SWAPDB, DUMP / RESTORE, OBJECT
ENCODING and the rest, well-formed and with arbitrary arguments, over four
keys in two databases (so that types collide), some of it in transactions
(WATCH, MULTI, commands refused while queueing, EXEC, DISCARD), goes to
redis-server 7.0 and to ringkv; every reply must match byte for byte, and
every 25 commands (and after each transaction) each
key's type, value digest and expiry must too, with INFO's keyspace_hits,
keyspace_misses and expired_keys. With --notifications, every keyspace and
keyevent notification each command makes (new and keymiss included) must
match as well, in order.

Usage: fuzz_keyspace.py --ringkv PATH [--redis redis-server]
                        [--seeds 1,2,3] [--commands 3000] [--resp3]
                        [--notifications] [--check-every 25]
                        [--check replies|replicas|aof]

Expiry times: a relative one (EX 100000) lands a few milliseconds apart on
the two servers, so the replies that read it (TTL, PTTL, EXPIRETIME,
PEXPIRETIME) and the content checks allow 2 s between them; absolute times
(EXAT, PXAT) are in the past or far in the future, and relative ones are
never a few seconds, so no key expires while the stream runs.

--check replicas sends the stream to a ringkv primary with a redis-server
and a ringkv replica attached; --check aof writes it to ringkv with
appendfsync always and an AOF rewrite half way, then loads that AOF into
ringkv and redis-server: in both, every server must reach the content the
primary or the writer had. Exit status 1 on a mismatch, with the seed and
command number to replay it.
"""
import os
import random
import re
import shutil
import sys
import time

import fuzz_collections as fc
import fuzz_driver as fd
import run_diff as rd

KEYS = [b"k1", b"k2", b"k3", b"k4"]
LONG = b"x" * 50  # past the 44 bytes of an embedded string
VALUES = [b"1", b"0", b"-1", b"10", b"123", b"9999", b"10000", b"a", b"abc", b"", b"1.5", b"-2.5", b"3.0", b"1e3",
          b"inf", b"nan", b"9223372036854775807", b"-9223372036854775808", b"9223372036854775808", b"0x10",
          b" 1", b"1 ", b"01", b"-0", b"+1", b"5.0e-1", LONG, b"hello world", b"\x00\xff"]
NUMBERS = [b"0", b"1", b"-1", b"2", b"5", b"-5", b"100", b"9223372036854775807", b"-9223372036854775808",
           b"1.5", b"abc", b"", b"3.0"]
FLOATS = [b"0", b"1.5", b"-0.5", b"1e10", b"-1e308", b"1e308", b"inf", b"nan", b"abc", b"0.1", b"5.0e3", b"3"]
OFFSETS = [b"0", b"1", b"3", b"10", b"-1", b"-3", b"100", b"9223372036854775807", b"-9223372036854775808",
           b"536870911", b"536870912", b"x"]
# SETRANGE's: the largest that fits in proto-max-bulk-len would make each
# DEBUG RELOAD write 512 MB, so only those past it (an error) and small ones.
WRITE_OFFSETS = [o for o in OFFSETS if o != b"536870911"]
# Relative times never a few seconds: nothing expires while the stream runs.
RELATIVE = [b"0", b"-1", b"100000", b"200000000", b"9223372036854775807", b"922337203685477580", b"x", b"1.5"]
ABSOLUTE = [b"1", b"100", b"4102444800", b"4102444800000", b"4102444801", b"9223372036854775807", b"-1", b"0"]
EXPIRE_FLAGS = [b"NX", b"XX", b"GT", b"LT"]
TIME_READERS = {"TTL": 2, "PTTL": 2000, "EXPIRETIME": 2, "PEXPIRETIME": 2000}
# Commands that may take a relative time: their arbitrary arguments leave out
# the small positive integers, which would expire a key while the stream runs.
TIMED = {"SET", "SETEX", "PSETEX", "GETEX", "EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT", "RESTORE"}

# name: (fewest, most arguments after the key, option words to mix in)
ARBITRARY = {
    "SET": (1, 5, ["NX", "XX", "GET", "EX", "PX", "EXAT", "PXAT", "KEEPTTL"]), "SETNX": (1, 1, []),
    "SETEX": (2, 2, []), "PSETEX": (2, 2, []), "GETSET": (1, 1, []), "GETDEL": (0, 0, []),
    "GETEX": (0, 3, ["EX", "PX", "EXAT", "PXAT", "PERSIST"]), "GET": (0, 0, []), "MGET": (0, 3, []),
    "MSET": (1, 5, []), "MSETNX": (1, 5, []), "APPEND": (1, 1, []), "SETRANGE": (2, 2, []),
    "GETRANGE": (2, 2, []), "SUBSTR": (2, 2, []), "STRLEN": (0, 0, []), "INCR": (0, 0, []),
    "DECR": (0, 0, []), "INCRBY": (1, 1, []), "DECRBY": (1, 1, []), "INCRBYFLOAT": (1, 1, []),
    "LCS": (1, 5, ["LEN", "IDX", "MINMATCHLEN", "WITHMATCHLEN"]),
    "EXPIRE": (1, 2, EXPIRE_FLAGS), "PEXPIRE": (1, 2, EXPIRE_FLAGS), "EXPIREAT": (1, 2, EXPIRE_FLAGS),
    "PEXPIREAT": (1, 2, EXPIRE_FLAGS), "PERSIST": (0, 0, []), "TTL": (0, 0, []), "PTTL": (0, 0, []),
    "EXPIRETIME": (0, 0, []), "PEXPIRETIME": (0, 0, []), "TYPE": (0, 0, []), "EXISTS": (0, 3, []),
    "DEL": (0, 3, []), "UNLINK": (0, 3, []), "TOUCH": (0, 3, []), "RENAME": (1, 1, []),
    "RENAMENX": (1, 1, []), "COPY": (1, 4, ["REPLACE", "DB"]), "MOVE": (1, 1, []),
    "OBJECT": (0, 1, ["ENCODING", "REFCOUNT", "HELP"]), "SADD": (1, 2, []), "RPUSH": (1, 2, []),
    "RESTORE": (2, 5, ["REPLACE", "ABSTTL", "IDLETIME", "FREQ"]),
}
DBS = [b"0", b"1", b"2", b"-1", b"16", b"x"]


class Generator:
    def __init__(self, seed):
        self.rnd = random.Random(seed)
        self.queued = None  # commands left to queue while a MULTI is open
        self.dumps = [b"\x00\x01a\n\x00\x00\x00\x00\x00\x00\x00\x00\x00", b"garbage"]  # DUMP replies seen

    def pick(self, seq):
        return self.rnd.choice(seq)

    def next(self, n, reload_every=0):
        """The stream's command number `n`: command()'s, with a SELECT now and
        then, a DEBUG RELOAD every `reload_every` (0: none), and transactions:
        MULTI (at times after a WATCH, which the client's own writes in
        between make fail) with up to 5 commands queued, some refused while
        queueing (EXEC then answers EXECABORT), then EXEC or DISCARD.
        `queued` is not None while a MULTI is open."""
        args = self.command()
        if self.queued is None and self.rnd.random() < 0.03:
            args = self.pick([[b"MULTI"], [b"WATCH", self.pick(KEYS)], [b"WATCH", self.pick(KEYS), self.pick(KEYS)]])
            self.queued = self.rnd.randint(0, 5) if args[0] == b"MULTI" else None
        elif self.queued == 0:
            args, self.queued = [self.pick([b"EXEC", b"EXEC", b"EXEC", b"DISCARD"])], None
        elif self.queued is not None:
            self.queued -= 1
            if args[0].decode().upper() in TIME_READERS or args[0] == b"DUMP":
                args = [b"GET", args[1]]  # (their replies are compared loosely or checked first)
            elif self.rnd.random() < 0.08:
                args = self.pick([[b"GET"], [b"NOSUCHCOMMAND", b"x"], [b"WATCH", b"k1"], [b"MULTI"]])
        elif reload_every and n % reload_every == reload_every - 1:
            args = [b"DEBUG", b"RELOAD"]  # everything through an RDB round trip
        elif n % 97 == 96:
            args = [b"SELECT", self.pick([b"0", b"1"])]
        return args

    def command(self):
        r = self.rnd.random()
        if r < 0.65:
            return self.well_formed()
        return self.arbitrary()

    def arbitrary(self):
        name = self.pick(sorted(ARBITRARY))
        fewest, most, words = ARBITRARY[name]
        args = [name.encode(), self.pick(KEYS)]
        if name == "OBJECT":
            args.insert(1, self.pick([b"ENCODING", b"REFCOUNT", b"FREQ", b"x"]))
        values = [v for v in VALUES if name not in TIMED or not (v.isdigit() and 0 < int(v) < 100000)]
        for _ in range(self.rnd.randint(fewest, most)):
            r = self.rnd.random()
            if words and r < 0.35:
                word = self.pick(words)
                args.append(word.encode() if isinstance(word, str) else word)
            elif r < 0.45:
                args.append(self.pick(KEYS))
            elif r < 0.6 and name in TIMED:  # elsewhere a time could be an offset of 200 MB
                args.append(self.pick(RELATIVE + ABSOLUTE[2:]))
            else:
                args.append(self.pick(values))
        return args

    def set_options(self):
        p = self.pick
        opts = []
        if self.rnd.random() < 0.4:
            opts.append(p([b"NX", b"XX"]))
        if self.rnd.random() < 0.3:
            opts.append(b"GET")
        r = self.rnd.random()
        if r < 0.2:
            opts += [p([b"EX", b"PX"]), p(RELATIVE)]
        elif r < 0.35:
            opts += [p([b"EXAT", b"PXAT"]), p(ABSOLUTE)]
        elif r < 0.45:
            opts.append(b"KEEPTTL")
        self.rnd.shuffle(opts)
        return opts

    def well_formed(self):
        k, v, p, n = self.pick(KEYS), lambda: self.pick(VALUES), self.pick, self.rnd.randint
        forms = [
            lambda: [b"SET", k, v()] + self.set_options(),
            lambda: [b"SET", k, v()],
            lambda: [p([b"GET", b"STRLEN", b"TYPE", b"GETDEL", b"INCR", b"DECR", b"PERSIST"]), k],
            lambda: [b"GETEX", k] + p([[], [b"PERSIST"], [p([b"EX", b"PX"]), p(RELATIVE)],
                                       [p([b"EXAT", b"PXAT"]), p(ABSOLUTE)]]),
            lambda: [p([b"SETEX", b"PSETEX"]), k, p(RELATIVE), v()],
            lambda: [p([b"SETNX", b"GETSET", b"APPEND"]), k, v()],
            lambda: [p([b"MSET", b"MSETNX"])] + [x for _ in range(n(1, 3)) for x in (p(KEYS), v())],
            lambda: [b"MGET"] + [p(KEYS) for _ in range(n(1, 4))],
            lambda: [b"SETRANGE", k, p(WRITE_OFFSETS), v()],
            lambda: [p([b"GETRANGE", b"SUBSTR"]), k, p(OFFSETS), p(OFFSETS)],
            lambda: [p([b"INCRBY", b"DECRBY"]), k, p(NUMBERS)],
            lambda: [b"INCRBYFLOAT", k, p(FLOATS)],
            lambda: [b"LCS", k, p(KEYS)] + p([[], [b"LEN"], [b"IDX"], [b"IDX", b"WITHMATCHLEN"],
                                             [b"IDX", b"MINMATCHLEN", p([b"0", b"1", b"2", b"-1"])],
                                             [b"LEN", b"IDX"]]),
            lambda: [p([b"EXPIRE", b"PEXPIRE"]), k, p(RELATIVE)] + p([[], [], [p(EXPIRE_FLAGS)]]),
            lambda: [p([b"EXPIREAT", b"PEXPIREAT"]), k, p(ABSOLUTE)] + p([[], [], [p(EXPIRE_FLAGS)]]),
            lambda: [p([b"TTL", b"PTTL", b"EXPIRETIME", b"PEXPIRETIME"]), k],
            lambda: [p([b"EXISTS", b"DEL", b"UNLINK", b"TOUCH"])] + [p(KEYS) for _ in range(n(1, 3))],
            lambda: [p([b"RENAME", b"RENAMENX"]), k, p(KEYS)],
            lambda: [b"COPY", k, p(KEYS)] + p([[], [b"REPLACE"], [b"DB", p(DBS)], [b"DB", b"1", b"REPLACE"]]),
            lambda: [b"MOVE", k, p(DBS)],
            lambda: [b"SWAPDB", p([b"0", b"1"]), p([b"0", b"1", b"16"])],
            lambda: [b"OBJECT", b"ENCODING", k],
            lambda: [b"DUMP", k],
            lambda: [b"RESTORE", k, p([b"0", b"0", b"100000", b"4102444800000", b"-1"]), p(self.dumps)]
            + p([[], [b"REPLACE"], [b"REPLACE", b"ABSTTL"], [b"REPLACE", b"IDLETIME", b"10"],
                 [b"REPLACE", b"FREQ", b"5"]]),
            lambda: [b"DBSIZE"],
            lambda: [p([b"SADD", b"RPUSH"]), k, v()],  # other types, so that WRONGTYPE comes up
            lambda: [b"SORT", k] + p([[], [b"ALPHA"], [b"LIMIT", b"0", b"1"]]),
        ]
        return p(forms)()


def integer(reply):
    m = re.fullmatch(rb":(-?\d+)\r\n", reply)
    return int(m.group(1)) if m else None


def alpha_ties_only(args, a, b):
    """SORT ... ALPHA (no BY, GET or STORE) compares with strcoll, which reads
    an element up to its first NUL byte: b"\\x00\\xff" ties with b"". A tie
    keeps the source's order, and a set's hash table order follows Redis's
    random hash seed. Equal when each run of tied elements holds the same
    members."""
    words = [x.upper() for x in args[2:]]
    if args[0].upper() not in (b"SORT", b"SORT_RO") or b"ALPHA" not in words or \
            any(w in words for w in (b"BY", b"GET", b"STORE")):
        return False
    try:
        (ta, xa), (tb, xb) = rd.parse(a)[0], rd.parse(b)[0]
    except (TypeError, ValueError):
        return False

    def runs(items):
        out = []
        for item in items:
            key = item.split(b"\x00")[0]
            if out and out[-1][0] == key:
                out[-1][1].append(item)
            else:
                out.append((key, [item]))
        return [(k, sorted(v)) for k, v in out]
    return ta == tb and runs(xa) == runs(xb)


def same(args, a, b):
    """Equal replies; for a reader of a relative expiry, equal within its
    tolerance; for SORT ALPHA, equal but for the order of strcoll's ties."""
    if a == b or alpha_ties_only(args, a, b):
        return True
    tolerance = TIME_READERS.get(args[0].decode().upper())
    ia, ib = integer(a), integer(b)
    return tolerance is not None and ia is not None and ib is not None and min(ia, ib) >= 0 and \
        abs(ia - ib) <= tolerance


def content(conn):
    """Every key of databases 0 to 2: type, value digest, expiry (ms). TYPE
    comes first: it deletes a key whose time has passed, which the active
    expiry cycle of either server may or may not have reached yet (DEBUG
    DIGEST-VALUE would see it)."""
    out = []
    for db in (b"2", b"1", b"0"):
        conn.call([b"SELECT", db])
        for key in KEYS:
            kind = conn.call([b"TYPE", key])
            digest = conn.call([b"DEBUG", b"DIGEST-VALUE", key])
            if digest.startswith(b"-"):
                raise RuntimeError("DEBUG DIGEST-VALUE refused: %r" % digest)
            out.append((db, key, kind, digest, integer(conn.call([b"PEXPIRETIME", key]))))
    return out


def equal_content(x, y):
    return len(x) == len(y) and all(a[:4] == b[:4] and (a[4] == b[4] or min(a[4], b[4]) >= 0 and
                                                         abs(a[4] - b[4]) <= 2000) for a, b in zip(x, y))


def run_seed(seed, commands, redis_port, ringkv_port, resp3, check_every, notifications):
    redis, ringkv = rd.Conn(redis_port), rd.Conn(ringkv_port)
    for conn in (redis, ringkv):
        conn.call([b"FLUSHALL"])
        if resp3:
            conn.call([b"HELLO", b"3"])
        # A key given a time already past (PXAT 1) is deleted on its next
        # access in both, never at a moment of the active cycle's choosing:
        # its "expired" event and the counts stay in step.
        conn.call([b"DEBUG", b"SET-ACTIVE-EXPIRE", b"0"])
    listeners = rd.listeners_for(redis_port, ringkv_port, notifications)
    gen = Generator(seed)
    for n in range(commands):
        args = gen.next(n, reload_every=500)
        if gen.queued is None and args[0] == b"DUMP" and [c.call([b"OBJECT", b"ENCODING", args[1]]) for c in (redis, ringkv)][0] == \
                b"$9\r\nhashtable\r\n":
            continue  # a hash table's order (so its RDB bytes) follows Redis's random hash seed (both asked:
            # the lookup counts in INFO)
        if gen.queued is None and args[0] == b"LCS" and lcs_cells(redis, ringkv, args[1], args[2]) > LCS_CELLS:
            continue  # strings grown by APPEND: a table of hundreds of MB, seconds on a loaded machine
        a = redis.call(args)
        try:
            b = ringkv.call(args)
        except ConnectionError:
            print("seed %d, command %d: %r: ringkv closed the connection" % (seed, n, b" ".join(args)))
            return False
        if not same(args, a, b):
            print("seed %d, command %d: %r\n  redis : %r\n  ringkv: %r" % (seed, n, b" ".join(args), a[:400], b[:400]))
            return False
        if args[0] == b"DUMP" and a.startswith(b"$") and not a.startswith(b"$-1"):
            gen.dumps.append(fc.parse(a)[0][1:])
        if gen.queued is not None:
            continue  # inside MULTI the checks' own commands would be queued: they come after EXEC
        if not rd.events_match(listeners, redis, ringkv, "seed %d, command %d: %r" % (seed, n, b" ".join(args))):
            return False
        if n % check_every == 0 or args[0] in (b"EXEC", b"DISCARD"):
            # (CLIENT INFO asked of both: INFO's command counts are compared.)
            db = [c.call([b"CLIENT", b"INFO"]) for c in (redis, ringkv)][0].split(b" db=")[1].split(b" ")[0]
            x, y = content(redis), content(ringkv)
            for conn in (redis, ringkv):
                conn.call([b"SELECT", db])
            if not equal_content(x, y):
                print("seed %d: the keyspace differs after command %d: %r" % (seed, n, b" ".join(args)))
                for i, j in zip(x, y):
                    if i != j:
                        print("  redis : %r\n  ringkv: %r" % (i, j))
                return False
            if not rd.stats_match(redis, ringkv, "seed %d, after command %d: %r" % (seed, n, b" ".join(args))):
                return False
    return True


# The largest LCS table the stream asks for (4 bytes a cell in both servers).
LCS_CELLS = 4_000_000


def lcs_cells(redis, ringkv, a, b):
    """The cells of LCS a b's table, from STRLEN (asked of both: the lookups
    count in INFO); 0 where one is not a string (the command's error then)."""
    lens = [[re.fullmatch(rb":(\d+)\r\n", c.call([b"STRLEN", k])) for k in (a, b)] for c in (redis, ringkv)][0]
    if not all(lens):
        return 0
    return (int(lens[0].group(1)) + 1) * (int(lens[1].group(1)) + 1)


def wait_equal(primary, replica, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        if equal_content(content(primary), content(replica)):
            return True
        time.sleep(0.05)
    return False


def run_replicas(seed, commands, primary_port, replica_ports):
    """The stream goes to a ringkv primary; every replica must follow it."""
    primary = rd.Conn(primary_port)
    replicas = [rd.Conn(p) for p in replica_ports]
    primary.call([b"FLUSHALL"])
    gen = Generator(seed)
    n = 0
    while n < commands or gen.queued is not None:  # a transaction open at the end is finished
        args = gen.next(n)
        n += 1
        reply = primary.call(args)
        if args[0] == b"DUMP" and reply.startswith(b"$") and not reply.startswith(b"$-1"):
            gen.dumps.append(fc.parse(reply)[0][1:])
        if gen.queued is not None or (n % 250 != 0 and n < commands):
            continue
        db = primary.call([b"CLIENT", b"INFO"]).split(b" db=")[1].split(b" ")[0]
        for port, replica in zip(replica_ports, replicas):
            if not wait_equal(primary, replica):
                print("seed %d: the replica on port %d differs after command %d: %r" % (seed, port, n, b" ".join(args)))
                for i, j in zip(content(primary), content(replica)):
                    if i != j:
                        print("  primary: %r\n  replica: %r" % (i, j))
                return False
        primary.call([b"SELECT", db])
    return True


def run_aof(seed, commands, ringkv, redis, work):
    """The stream goes to ringkv with appendfsync always (an AOF rewrite half
    way); ringkv and redis-server must both load its AOF to the same content."""
    directory = os.path.join(work, "aof-%d" % seed)
    os.makedirs(directory)
    p, port = fd.start_in([ringkv], directory, ["--appendonly", "yes", "--appendfsync", "always"])
    conn = rd.Conn(port)
    gen = Generator(seed)
    n = 0
    rewritten = False
    while n < commands or gen.queued is not None:  # a transaction open at the end is finished
        args = gen.next(n)
        n += 1
        reply = conn.call(args)
        if args[0] == b"DUMP" and reply.startswith(b"$") and not reply.startswith(b"$-1"):
            gen.dumps.append(fc.parse(reply)[0][1:])
        if n >= commands // 2 and not rewritten and gen.queued is None:
            conn.call([b"BGREWRITEAOF"])
            rewritten = True
    while b"aof_rewrite_in_progress:1" in conn.call([b"INFO", b"persistence"]):
        time.sleep(0.05)
    written = content(conn)
    p.kill()
    p.wait()
    copy = directory + "-for-redis"
    shutil.copytree(directory, copy)
    loaded = {}
    for name, cmd, where in (("ringkv", ringkv, directory), ("redis-server", redis, copy)):
        p, port = fd.start_in([cmd], where, ["--appendonly", "yes"])
        loaded[name] = content(rd.Conn(port))
        p.kill()
        p.wait()
    if all(equal_content(d, written) for d in loaded.values()):
        return True
    print("seed %d: content when written:\n  %r\nafter loading the AOF:\n  %r (files in %s)" % (seed, written, loaded,
                                                                                            directory))
    return False


def main():
    ap = fd.parser(commands=3000, resp3=True, notifications=True)
    ap.add_argument("--check-every", type=int, default=25, help="1 finds the command that diverged")
    fd.add_check(ap)
    opts = fd.parse(ap)
    sys.exit(fd.run_check("fuzz_keyspace", opts, run_replicas, run_aof,
                          lambda seed, redis_port, ringkv_port: run_seed(seed, opts.commands, redis_port, ringkv_port,
                                                                         opts.resp3, opts.check_every,
                                                                         opts.notifications)))


if __name__ == "__main__":
    main()

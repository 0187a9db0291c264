#!/usr/bin/env python3
"""Randomized differential test of the bitmap, HyperLogLog and geo commands:
the same seeded stream of SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD
and BITFIELD_RO (well-formed ones with random offsets, widths, ranges and
overflow modes, over four keys that also take plain SETs, APPENDs and a
hash so that encodings and types collide), and of PFADD, PFCOUNT, PFMERGE
and PFDEBUG over three HLL keys (sparse ones turning dense, with a small
hll-sparse-max-bytes now and then), goes to redis-server 7.0 and to
ringkv; every reply must match byte for byte, and every 20 commands DEBUG
DIGEST must too. Geo: GEOADD of random points (clustered and world-wide)
and GEOSEARCH / GEORADIUS / GEOSEARCHSTORE with random centres, radii,
boxes, units, COUNT [ANY] and orders, so that the neighbour cells Redis
picks are exercised.

--corrupt instead overwrites random bytes of HLLs (SETRANGE) between HLL
commands, sent to ringkv alone: it must answer each (an error or a value)
and never crash; Redis's own answers are not compared, as it reads past
the end of a corrupted sparse HLL.

What the commands propagate is checked too:
  * --replica: a redis-server replica follows redis-server and a ringkv
    replica ringkv; every 20 commands each reaches its primary's offset,
    then the two replicas' DEBUG DIGEST must match;
  * --aof: both servers write an AOF (appendfsync always, BGREWRITEAOF half
    way through each seed); at each seed's end each AOF, loaded by a new
    redis-server and a new ringkv, must give what redis-server's AOF gives
    redis-server.
(Replicas and loaded AOFs are compared with Redis's, not with the
primaries: an HLL is sparse or dense by the hll-sparse-max-bytes of the
server that applies the PFADD.)

Usage: fuzz_bitmaps.py --ringkv PATH [--redis redis-server] [--seeds 1,2,3]
                       [--commands 3000] [--corrupt] [--replica] [--aof]
Exit status 1 on a mismatch, with the seed and command number to replay it.
"""
import random
import sys

import fuzz_driver as fd
import run_diff as rd

KEYS = [b"b1", b"b2", b"b3", b"b4"]
HLLS = [b"h1", b"h2", b"h3"]
GEOS = [b"g1", b"g2"]


class Generator:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def pick(self, seq):
        return seq[self.r.randrange(len(seq))]

    def num(self, lo, hi):
        return str(self.r.randint(lo, hi)).encode()

    def offset(self):
        return self.num(0, self.pick([15, 70, 300, 2000]))

    def field(self):
        signed = self.r.random() < 0.5
        bits = self.r.randint(1, 64 if signed else 63)
        off = (b"#" + self.num(0, 20)) if self.r.random() < 0.2 else self.offset()
        return [(b"i" if signed else b"u") + str(bits).encode(), off]

    def value(self):
        return self.pick([self.num(-5, 5), self.num(-300, 300), self.num(-(1 << 63), (1 << 63) - 1),
                          b"9223372036854775807", b"-9223372036854775808", self.num(0, 1 << 40)])

    def bitfield(self, read_only):
        args = [b"BITFIELD_RO" if read_only else b"BITFIELD", self.pick(KEYS)]
        for _ in range(self.r.randint(1, 5)):
            kind = 0 if read_only else self.r.randint(0, 3)
            if kind == 0:
                args += [b"GET"] + self.field()
            elif kind == 1:
                args += [b"SET"] + self.field() + [self.value()]
            elif kind == 2:
                args += [b"INCRBY"] + self.field() + [self.value()]
            else:
                args += [b"OVERFLOW", self.pick([b"WRAP", b"SAT", b"FAIL"])]
        return args

    def range_args(self, n):
        out = []
        for _ in range(n):
            out.append(self.pick([self.num(-20, 20), self.num(-200, 200), b"0", b"-1"]))
        return out

    def hll_command(self):
        h = self.pick(HLLS)
        forms = [
            lambda: [b"PFADD", h] + [b"e%d" % self.r.randint(0, self.pick([50, 5000, 100000]))
                                     for _ in range(self.r.randint(0, 30))],
            lambda: [b"PFADD", h] + [b"e%d" % self.r.randint(0, 100000) for _ in range(self.r.randint(0, 300))],
            lambda: [b"PFCOUNT", h],
            lambda: [b"PFCOUNT"] + [self.pick(HLLS + [b"nokey"]) for _ in range(self.r.randint(1, 3))],
            lambda: [b"PFMERGE", h] + [self.pick(HLLS + [b"nokey"]) for _ in range(self.r.randint(0, 3))],
            lambda: [b"PFDEBUG", self.pick([b"ENCODING", b"DECODE", b"TODENSE", b"GETREG"]), h],
            lambda: [b"CONFIG", b"SET", b"hll-sparse-max-bytes", self.pick([b"3000", b"3000", b"100", b"20000"])],
            lambda: [b"GET", h],
        ]
        return self.pick(forms)()

    def lonlat(self):
        if self.r.random() < 0.6:  # a cluster, so that searches find something
            return [b"%.6f" % self.r.uniform(13, 16), b"%.6f" % self.r.uniform(36, 39)]
        return [b"%.6f" % self.r.uniform(-180, 180), b"%.6f" % self.r.uniform(-85, 85)]

    def geo_command(self):
        g = self.pick(GEOS)
        if self.r.random() < 0.4:
            args = [b"GEOADD", g]
            for _ in range(self.r.randint(1, 20)):
                args += self.lonlat() + [b"m%d" % self.r.randint(0, 300)]
            return args
        unit = self.pick([b"m", b"km", b"mi", b"ft"])
        size = {b"m": 400000, b"km": 400, b"mi": 250, b"ft": 1300000}[unit]
        opts = []
        if self.r.random() < 0.5:
            opts.append(self.pick([b"ASC", b"DESC"]))
        if self.r.random() < 0.3:
            opts += [b"COUNT", self.num(1, 5)] + ([b"ANY"] if self.r.random() < 0.3 else [])
        with_opts = [w for w in [b"WITHDIST", b"WITHCOORD", b"WITHHASH"] if self.r.random() < 0.4]
        radius = b"%.3f" % self.r.uniform(0, size * self.pick([0.01, 0.3, 1, 20]))
        shape = (self.pick([[b"BYRADIUS", radius, unit],
                            [b"BYBOX", b"%.3f" % self.r.uniform(0, size * 2), b"%.3f" % self.r.uniform(0, size * 2),
                             unit]]))
        centre = self.pick([[b"FROMLONLAT"] + self.lonlat(), [b"FROMMEMBER", b"m%d" % self.r.randint(0, 300)]])
        kind = self.r.randint(0, 3)
        if kind == 0:
            return [b"GEOSEARCH", g] + centre + shape + opts + with_opts
        if kind == 1:
            return [b"GEOSEARCHSTORE", b"gdst", g] + centre + shape + opts + ([b"STOREDIST"] if self.r.random() < 0.5
                                                                              else [])
        if kind == 2:
            return [b"GEORADIUS", g] + self.lonlat() + [radius, unit] + opts + with_opts
        return [b"GEOPOS", g, b"m%d" % self.r.randint(0, 300), b"m%d" % self.r.randint(0, 300)]

    def corruption(self):
        h = self.pick(HLLS)
        return [b"SETRANGE", h, self.num(0, self.pick([20, 40, 3000, 12303])),
                bytes(self.r.randrange(256) for _ in range(self.r.randint(1, 3)))]

    def command(self):
        if self.r.random() < 0.25:
            return self.geo_command()
        if self.r.random() < 0.3:
            return self.hll_command()
        k = self.pick(KEYS)
        forms = [
            lambda: [b"SETBIT", k, self.offset(), self.pick([b"0", b"1"])],
            lambda: [b"SETBIT", k, self.offset(), self.pick([b"0", b"1"])],
            lambda: [b"GETBIT", k, self.offset()],
            lambda: [b"BITCOUNT", k] + self.pick([[], self.range_args(2), self.range_args(2) + [b"BIT"],
                                                  self.range_args(2) + [b"BYTE"]]),
            lambda: [b"BITPOS", k, self.pick([b"0", b"1"])] + self.pick(
                [[], self.range_args(1), self.range_args(2), self.range_args(2) + [b"BIT"],
                 self.range_args(2) + [b"BYTE"]]),
            lambda: [b"BITOP", self.pick([b"AND", b"OR", b"XOR"]), k] + [self.pick(KEYS + [b"nokey"])
                                                                       for _ in range(self.r.randint(1, 4))],
            lambda: [b"BITOP", b"NOT", k, self.pick(KEYS)],
            lambda: self.bitfield(False),
            lambda: self.bitfield(False),
            lambda: self.bitfield(True),
            lambda: [b"SET", k, self.pick([b"foobar", b"123", b"", b"\xff\x00\xaa", b"x" * 50, self.num(0, 99999)])],
            lambda: [b"APPEND", k, self.pick([b"\x01", b"zz", b"\xff" * 9])],
            lambda: [b"GET", k],
            lambda: [b"DEL", k] if self.r.random() < 0.3 else [b"HSET", k, b"f", b"v"] if self.r.random() < 0.2
            else [b"STRLEN", k],
        ]
        return self.pick(forms)()


def replicas_differ(primaries, replicas, where):
    """--replica: each replica at its primary's offset, then the two
    replicas alike. (Not alike their primaries: a replica applies PFADD
    under its own hll-sparse-max-bytes, so an HLL the primary made dense
    after a CONFIG SET can stay sparse there, in Redis too.)"""
    for primary, replica in zip(primaries, replicas):
        if not fd.caught_up(primary, replica):
            print("%s: a replica did not reach its primary's offset" % where)
            return True
    got = [replica.call([b"DEBUG", b"DIGEST"]) for replica in replicas]
    if got[0] != got[1]:
        print("%s: the replicas' DEBUG DIGEST differ: redis-server's %r, ringkv's %r" % (where, got[0], got[1]))
        return True
    return False


def run_seed(seed, commands, redis_port, ringkv_port, notifications, replica_ports=(), aof=None):
    """replica_ports: --replica's (redis-server's replica, ringkv's); aof:
    --aof's (work directory, redis-server, ringkv)."""
    redis, ringkv = rd.Conn(redis_port), rd.Conn(ringkv_port)
    replicas = [rd.Conn(port) for port in replica_ports]
    for conn in (redis, ringkv):
        conn.call([b"FLUSHALL"])
        conn.call([b"CONFIG", b"RESETSTAT"])  # (the last seed's AOF checks polled INFO as often as each needed)
    listeners = rd.listeners_for(redis_port, ringkv_port, notifications)
    gen = Generator(seed)
    for n in range(commands):
        args = gen.command()
        a = redis.call(args)
        try:
            b = ringkv.call(args)
        except ConnectionError:
            print("seed %d, command %d: %r: ringkv closed the connection" % (seed, n, b" ".join(args)))
            return False
        if a != b:
            print("seed %d, command %d: %r\n  redis : %r\n  ringkv: %r" % (seed, n, b" ".join(args), a[:400], b[:400]))
            return False
        where = "seed %d, command %d: %r" % (seed, n, b" ".join(args))
        if not rd.events_match(listeners, redis, ringkv, where):
            return False
        if n % 20 == 0 and not rd.stats_match(redis, ringkv, where):
            return False
        if n % 20 == 0 and redis.call([b"DEBUG", b"DIGEST"]) != ringkv.call([b"DEBUG", b"DIGEST"]):
            print("seed %d: DEBUG DIGEST differs after command %d: %r" % (seed, n, b" ".join(args)))
            return False
        if n % 20 == 0 and replicas and replicas_differ((redis, ringkv), replicas, where):
            return False
        if aof is not None and n == commands // 2:
            for conn in (redis, ringkv):  # (the last seed's rewrite finished at its end)
                conn.call([b"BGREWRITEAOF"])
    where = "seed %d, at the end" % seed
    if redis.call([b"DEBUG", b"DIGEST"]) != ringkv.call([b"DEBUG", b"DIGEST"]):
        print("%s: DEBUG DIGEST differs" % where)
        return False
    if replicas and replicas_differ((redis, ringkv), replicas, where):
        return False
    if aof is not None:
        work, redis_bin, ringkv_bin = aof
        return fd.aofs_load_alike(work, seed, (redis_bin, ringkv_bin), (redis_port, ringkv_port),
                                  [[b"DEBUG", b"DIGEST"]])  # (loaded under the default hll-sparse-max-bytes)
    return True


def run_corrupt(seed, commands, ringkv_port):
    """Corrupted HLLs, ringkv alone: every command answered, no crash."""
    ringkv = rd.Conn(ringkv_port)
    ringkv.call([b"FLUSHALL"])
    gen = Generator(seed)
    for n in range(commands):
        args = gen.corruption() if gen.r.random() < 0.3 else gen.hll_command()
        try:
            ringkv.call(args)
        except ConnectionError:
            print("seed %d, command %d: %r: ringkv closed the connection" % (seed, n, b" ".join(args)))
            return False
    return ringkv.call([b"PING"]) == b"+PONG\r\n"


def main():
    ap = fd.parser(commands=3000, notifications=True)
    ap.add_argument("--corrupt", action="store_true", help="corrupted HLLs, ringkv alone: must never crash")
    ap.add_argument("--replica", action="store_true",
                    help="a redis-server replica of redis-server and a ringkv replica of ringkv must follow")
    ap.add_argument("--aof", action="store_true",
                    help="both servers write an AOF; each seed's AOFs must load, in either server, to its data")
    opts = fd.parse(ap)
    replicas = [[opts.redis], [opts.ringkv]] if opts.replica else []
    with fd.servers("ringkv-fuzz-bits-", [opts.redis], [opts.ringkv], *replicas) as run:
        redis_port, ringkv_port = run.ports[:2]
        fd.link_replicas(list(zip(run.ports[:2], run.ports[2:])))
        if opts.aof:
            fd.write_aof(run.ports[:2])
        aof = (run.work, opts.redis, opts.ringkv) if opts.aof else None
        if opts.corrupt:
            run.seeds(opts.seeds, lambda seed: run_corrupt(seed, opts.commands, ringkv_port))
        else:
            run.seeds(opts.seeds, lambda seed: run_seed(seed, opts.commands, redis_port, ringkv_port,
                                                        opts.notifications, run.ports[2:], aof))
        run.summary("fuzz_bitmaps", opts.commands, note="".join(
            [" (replicas)" if opts.replica else "", " (AOF)" if opts.aof else ""]))
    sys.exit(run.status)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Randomized differential test of the wire protocol. Each case opens a fresh
connection to redis-server 7.0 and to ringkv, sends both the same seeded byte
stream and reads until the server closes the connection or stays quiet
(--quiet-ms, or at once when the PING that ends most streams is answered).
The reply bytes and whether the connection was closed must match. After each
case both servers must still answer PING on a new connection (a crash or a
hang is the worst finding); every 50 cases DEBUG DIGEST must match.

Usage: fuzz_protocol.py --ringkv PATH [--redis redis-server]
                        [--seeds 1,2,3] [--cases 300] [--quiet-ms 150]
                        [--skip known|NAME,...] [--ringkv-args '--io-threads 4']
                        [--show N] [--keep-going]

A stream mixes, pipelined and cut into several writes at random points
(sometimes a byte or a few at a time) with small pauses, the same cuts for
both servers:
- well-formed commands as multibulk or inline requests: PING, ECHO,
  SET/GET/MSET/DEL, HELLO 2/3 (AUTH, SETNAME), AUTH, CLIENT SETNAME/REPLY/
  TRACKING, MULTI/EXEC/DISCARD/WATCH, (P|S)SUBSCRIBE and PING or other
  commands in the subscribed state (RESP2 and RESP3), PUBLISH to itself,
  QUIT, RESET, unknown commands, wrong arities; bursts of more than 16
  commands; commands of 10/11/1024/3000 arguments; arguments of 32-60 KB;
- short sequences around push messages: publishing to itself, tracking
  and invalidating its own keys, in MULTI or not, with CLIENT REPLY;
- malformed multibulk requests: counts (*-1, *0, *abc, *-0, *+1, 01,
  2^31, 20 digits, ...), bulk lengths (-1, too short / long, above
  proto-max-bulk-len, \n or \r only, garbage after the payload, a type
  byte other than '$'), fewer / more arguments than announced;
- inline lines: quotes and escapes (balanced or not), empty lines, spaces
  only, \r without \n, a lone \n, NUL bytes, lines near and past 64 KB;
- RESP3 type bytes and binary garbage as the first byte.
Some cases run under CONFIG SET requirepass x (then *N > 10 and $ > 16384
from an unauthenticated connection must get Redis's errors), a 1 MB
proto-max-bulk-len or a 1 MB client-query-buffer-limit, reset afterwards.

Masked, since it differs legitimately: HELLO's version and id fields. Left
out, because redis-server answers them according to how many bytes one
read() brought: a line longer than 64 KB with a newline after it (a long
line is always the end of its stream; lines near the limit stay at 65,536
bytes or under), the payload of a bulk past proto-max-bulk-len (only its
header is sent), UNSUBSCRIBE with no argument while two channels are
subscribed (Redis's dict order), SMEMBERS of a hash-table set, CLIENT
TRACKING BCAST (Redis broadcasts in beforeSleep). A server that closes a
connection with requests unread makes the kernel reset it, which can drop
replies the client had not read yet: a side that saw a reset must have a
prefix of the other side's replies. A slow server gets a second, longer
wait before a difference counts.

--skip leaves out the known differences of SKIPPABLE below ("known": all of
them), so that a run looks for new ones. Exit status 1 on a mismatch,
printing the seed, the case number, the bytes sent and both replies, and
writing them under the kept work directory (with the server logs);
--show N prints case N of each seed, --keep-going goes on with the next
seed. RINGKV_TEST_IO_BACKEND=epoll runs ringkv on its other I/O backend.
"""
import os
import random
import re
import select
import socket
import sys
import threading
import time

import fuzz_driver as fd
import run_diff as rd

KEYS = [b"pk1", b"pk2", b"pk3"]
PASSWORD = b"x"
VALUES = [b"v", b"", b"hello world", b"1", b"\x00\xff", b"a\r\nb", b"x" * 40, b"\"q\"", b"'", b"-1",
          b"y" * 130, b"z" * 300, b"a\x00b", b"\r", b"\n", b"%s", b"\xc3\xa9", b" "]
# CONFIG SET values a case may run under, and the defaults they go back to
CONFIGS = {
    b"requirepass": (PASSWORD, b""),
    b"proto-max-bulk-len": (b"1048576", b"536870912"),
    b"client-query-buffer-limit": (b"1048576", b"1073741824"),
}
SENTINEL = b"fuzz-end-0123456789"  # the argument of a PING some streams end with


def bulk(a):
    return b"$%d\r\n%s\r\n" % (len(a), a)


def multibulk(args):
    return b"*%d\r\n" % len(args) + b"".join(bulk(a) for a in args)


def quote_inline(a):
    """An argument as an inline command may carry it (sdssplitargs quoting)."""
    if a and not re.search(rb"[\s\"'\\\x00-\x1f\x7f-\xff]", a):
        return a
    out = b'"'
    for c in a:
        ch = bytes([c])
        if ch == b'"' or ch == b"\\":
            out += b"\\" + ch
        elif 32 <= c < 127:
            out += ch
        else:
            out += b"\\x%02x" % c
    return out + b'"'


# Known differences that --skip can leave out of the streams (so that a run
# looks for others): the name, then what it is.
SKIPPABLE = {
    "nul": "a NUL byte before the end of an inline line or a header line",
    "minus-zero": "-0 as a multibulk count or a bulk length",
    "execabort": "EXEC refused before it runs (arity, subscribed context, NOAUTH): EXECABORT's wording",
    "reply-off": "CLIENT REPLY OFF / SKIP: a protocol error while in force, OFF queued in MULTI, RESET while OFF",
    "auth-pipeline": "fixed in ringkv, kept to replay it: the limits of an unauthenticated connection on requests "
                     "after AUTH / RESET in the same read",
    "unauth-obuf": "more than 16 KB of replies pending for an unauthenticated connection (Debian's fix of "
                   "CVE-2025-21605 closes it): no bursts or wide commands while requirepass is set",
    "ssubscribe-multi": "SSUBSCRIBE queued in MULTI (Redis refuses it in EXEC: DENY BLOCKING client)",
    "hello-in-multi": "fixed in ringkv, kept to replay it: HELLO queued in MULTI: the replies after it in the same "
                      "EXEC",
    "tracking-flushdb": "FLUSHDB and the keys a tracking client read before it",
    "tracking-pending": "a flush in MULTI on a tracking connection: the order and number of the invalidations "
                        "after EXEC, and with CLIENT TRACKING OFF queued after it, the flush's invalidation "
                        "(it goes to the next tracking client instead)",
    "hello-noauth": "the wording of HELLO's NOAUTH error, and HELLO SETNAME's check of the name coming after it",
}
# What the replies of both servers go through when a difference is skipped.
NORMALIZE = {
    # Redis: "-EXECABORT Transaction discarded because of: NOAUTH ..." or
    # "... because of: wrong number of arguments ..." (no ERR)
    "execabort": [(re.compile(rb"-EXECABORT Transaction discarded because of: ([A-Z]+ )?"),
                   lambda m: b"-" + (m.group(1) or b"ERR "))],
    "hello-noauth": [(re.compile(rb"HELLO <proto> AUTH"), b"HELLO AUTH")],
}


class Generator:
    def __init__(self, seed, skip=()):
        self.rnd = random.Random(seed)
        self.skip = set(skip)
        self.values = VALUES
        self.fixed_auth = False  # no AUTH, HELLO AUTH or RESET in this case
        self.multi_seen = False  # a MULTI was sent in this case (for "hello-in-multi")

    def allowed(self, data, in_step=False):
        """False when the bytes hold something --skip leaves out."""
        if "nul" in self.skip and b"\x00" in data and not in_step:
            return False
        if "minus-zero" in self.skip and re.search(rb"[*$]-0(?![0-9])", data):
            return False
        return True

    def pick(self, seq):
        return self.rnd.choice(seq)

    def chance(self, p):
        return self.rnd.random() < p

    # -- well-formed commands -------------------------------------------------
    def command(self):
        p, k, v = self.pick, self.pick(KEYS), self.pick(self.values)
        forms = [
            lambda: [b"PING"],
            lambda: [b"PING", v],
            lambda: [b"ECHO", v],
            lambda: [b"ECHO"],
            lambda: [b"SET", k, v],
            lambda: [b"GET", k],
            lambda: [b"MSET", k, v, p(KEYS), p(self.values)],
            lambda: [b"MSET", k],
            lambda: [b"DEL", k, p(KEYS)],
            lambda: [b"INCR", k],
            lambda: [b"HELLO", p([b"2", b"3"])],
            lambda: [b"HELLO", p([b"3", b"2"]), b"SETNAME", p([b"n1"] if "hello-noauth" in self.skip else
                                                              [b"n1", b"bad name", b""])],
            lambda: [b"HELLO", p([b"1", b"4", b"x", b"-1"])],
            lambda: [b"HELLO"],
            lambda: [b"HELLO", b"3", b"AUTH", b"default", p([PASSWORD, b"wrong"])],
            lambda: [b"AUTH", p([PASSWORD, b"wrong"])],
            lambda: [b"CLIENT", b"SETNAME", p([b"n1", b"bad name", b"", b"a\nb"])],
            lambda: [b"CLIENT", b"GETNAME"],
            lambda: [b"CLIENT", b"REPLY", p([b"ON", b"x"] if "reply-off" in self.skip else
                                            [b"ON", b"OFF", b"SKIP", b"x"])],
            lambda: [b"MULTI"],
            lambda: [b"EXEC"],
            lambda: [b"DISCARD"],
            lambda: [b"WATCH", k],
            # one channel and one pattern at most: UNSUBSCRIBE without
            # arguments goes in the order of Redis's (seeded) hash table
            lambda: [b"SUBSCRIBE", b"c1"],
            lambda: [b"SUBSCRIBE", b"c1", b"c1"],
            lambda: [b"PSUBSCRIBE", b"c*"],
            lambda: [b"UNSUBSCRIBE"],
            lambda: [b"UNSUBSCRIBE", p([b"c1", b"c2"])],
            lambda: [b"PUNSUBSCRIBE"],
            lambda: [b"SSUBSCRIBE", b"s1"],
            lambda: [b"PUBLISH", p([b"c1", b"c2"]), v],
            lambda: [b"QUIT"],
            lambda: [b"RESET"],
            lambda: [b"SELECT", p([b"0", b"1", b"99"])],
            lambda: [b"NOSUCHCMD", v],
            lambda: [p([b"get", b"Get", b"pInG", b"echo"])] + [v] * self.rnd.randint(0, 2),
            lambda: [b"CLIENT", b"TRACKING", p([b"ON", b"OFF"])],
            lambda: [b"DEBUG", b"PROTOCOL", p([b"string", b"integer", b"double", b"bignum", b"null", b"array",
                                               b"set", b"map", b"attrib", b"push", b"verbatim", b"true",
                                               b"false", b"x"])],
            lambda: [b"EXISTS", k],
            lambda: [b"TYPE", k],
            lambda: [b"QUIT", v],
            lambda: [b"RESET", v],
            lambda: [b"MULTI", v],
            lambda: [b"EXEC", v],
            lambda: [p([b"N" * 200, b"GE\x00T", b"", b"\xff"])] + [v] * self.rnd.randint(0, 3),
            lambda: [b"NOSUCH"] + [p(self.values) for _ in range(self.rnd.randint(1, 6))],
            lambda: [b"GET"] + [k] * self.rnd.randint(2, 3),
            # (not HELP: ringkv adds 7.2's SETINFO lines, on purpose; nor
            # a name that cut short by a wrong length reads INFO or LIST)
            lambda: [b"CLIENT", p([b"NOSUCH", b"ZZZ"])],
            lambda: [b"CLIENT", b"NO-EVICT", p([b"on", b"off", b"x"])],
            lambda: [b"SPUBLISH", b"s1", v],
            lambda: [b"SUNSUBSCRIBE"],
            lambda: [b"PUBSUB", p([b"NUMSUB", b"NUMPAT", b"CHANNELS"])],
            lambda: [b"HSET", b"ph", b"f", v],
            lambda: [b"HGETALL", b"ph"],
            lambda: [b"RPUSH", b"pl", v, v],
            lambda: [b"LRANGE", b"pl", b"0", b"3"],
            lambda: [b"ZADD", b"pz", b"1.5", v],
            lambda: [b"ZRANGE", b"pz", b"0", b"-1", b"WITHSCORES"],
            lambda: [b"INCRBYFLOAT", b"pf", b"1.5"],
            lambda: [b"SADD", b"ps", v],  # (not SMEMBERS: a hash table's order follows Redis's random seed)
            lambda: [b"SCARD", b"ps"],
        ]
        while True:
            args = p(forms)()
            if self.fixed_auth and (args[0] in (b"AUTH", b"RESET") or b"AUTH" in args):
                continue
            if "ssubscribe-multi" in self.skip and args[0] == b"SSUBSCRIBE":
                continue  # (the one a case may start with comes before any MULTI)
            if "hello-in-multi" in self.skip and self.multi_seen and args[0] == b"HELLO":
                continue
            if "tracking-pending" in self.skip and args[:3] == [b"CLIENT", b"TRACKING", b"OFF"]:
                continue
            if args[0] == b"MULTI":
                self.multi_seen = True
            return args

    def encoded_command(self):
        args = self.command()
        r = self.rnd.random()
        if r < 0.03:  # a big argument (Redis reads those in a buffer of their own)
            return multibulk([b"ECHO", b"B" * self.rnd.randint(32 * 1024 - 5, 60 * 1024)])
        if r < 0.04:  # several
            return multibulk([b"MSET", b"pk1", b"C" * self.rnd.randint(32 * 1024, 50 * 1024), b"pk2",
                              b"D" * self.rnd.randint(30 * 1024, 50 * 1024)])
        if r < 0.75:
            return multibulk(args)
        # inline: quoted where needed, with \r\n or \n
        return b" ".join(quote_inline(a) for a in args) + self.pick([b"\r\n", b"\r\n", b"\n"])

    def burst(self):
        """More pipelined commands than one batch of ringkv's parse-ahead
        (16), in one piece; sometimes a QUIT or an error among them."""
        n = self.rnd.randint(15, 40)
        out = []
        for i in range(n):
            r = self.rnd.random()
            if r < 0.04:
                out.append(multibulk([b"QUIT"]))
            elif r < 0.08:
                out.append(self.pick([b"*abc\r\n", b"$1\r\n", b"ECHO \"x\r\n"]))
            elif r < 0.5:
                out.append(multibulk([b"INCR", self.pick(KEYS)]))
            else:
                out.append(self.encoded_command())
        return b"".join(out)

    def scenario(self):
        """A short well-formed sequence around push messages: a client
        publishing to itself, tracking and invalidating its own keys, inside
        MULTI or not, in RESP2 or RESP3."""
        p, k = self.pick, self.pick(KEYS)
        cmds = [] if "hello-in-multi" in self.skip and self.multi_seen else [[b"HELLO", p([b"3", b"3", b"2"])]]
        off_skipped = "tracking-pending" in self.skip  # (an arity error instead)
        if self.chance(0.5):
            cmds += [[b"SUBSCRIBE", b"c1"]] if self.chance(0.6) else [[b"PSUBSCRIBE", b"c*"]]
            body = [[b"PUBLISH", p([b"c1", b"c2"]), b"m"], [b"PING"], [b"PING", b"x"], [b"GET", k],
                    [b"UNSUBSCRIBE", b"c1"], [b"PUNSUBSCRIBE", b"c*"], [b"RESET"], [b"SPUBLISH", b"s1", b"m"]]
        else:
            # (not BCAST: Redis broadcasts in beforeSleep, so where the
            # invalidations land depends on how the server's reads fell)
            cmds += [[b"CLIENT", b"TRACKING", b"ON"] + p([[], [], [b"NOLOOP"], [b"OPTIN"], [b"OPTOUT"]])]
            body = [[b"GET", k], [b"SET", k, b"v"], [b"DEL", k], [b"MGET", k, p(KEYS)], [b"CLIENT", b"CACHING",
                    p([b"yes", b"no"])], [b"CLIENT", b"TRACKING", b"OFF"] + ([b"x"] if off_skipped else []),
                    [b"FLUSHALL" if "tracking-flushdb" in self.skip else p([b"FLUSHDB", b"FLUSHALL"])], [b"INCR", k],
                    [b"CLIENT", b"TRACKINGINFO"], [b"CLIENT", b"GETREDIR"]]
        if "reply-off" not in self.skip:
            body = body + [[b"CLIENT", b"REPLY", p([b"OFF", b"SKIP", b"ON"])]]  # (always ON again at the end)
        for _ in range(self.rnd.randint(2, 8)):
            r = self.rnd.random()
            if r < 0.15:
                queued = [c for c in body if not ("tracking-pending" in self.skip and c[0].startswith(b"FLUSH"))]
                cmds += [[b"MULTI"]] + [p(queued) for _ in range(self.rnd.randint(1, 3))] + [[b"EXEC"]]
                self.multi_seen = True
            else:
                cmds.append(p(body))
        if any(c[:2] == [b"CLIENT", b"REPLY"] for c in cmds):
            cmds += [[b"PING"], [b"CLIENT", b"REPLY", b"ON"]]  # (SKIP: the PING's reply is the one skipped)
        return b"".join(multibulk(c) for c in cmds)

    def wide(self):
        """A command of many arguments: more than 1024 (ringkv keeps argv's
        capacity up to that), or exactly at the 10 an unauthenticated
        connection may send."""
        n = self.pick([10, 11, 1023, 1024, 1025, 3000])
        name = self.pick([b"DEL", b"EXISTS", b"ECHO", b"MSET", b"NOSUCH"])
        return multibulk([name] + [self.pick(KEYS + [b"w%d" % i]) for i in range(n - 1)])

    # -- malformed multibulk --------------------------------------------------
    def bad_count(self):
        return b"*" + self.pick([
            b"-1", b"0", b"abc", b"1000000000", b"99999999999999999999", b"-5", b"2147483647", b"2147483648",
            b"9223372036854775807", b"9223372036854775808", b"-9223372036854775808", b"-9223372036854775809",
            b"-0", b"+1", b"01", b" 1", b"1 ", b"", b"1a", b"0x1", b"-", b"00", b"1.0", b"11", b"100",
            b"999999999999999999999",
        ]) + self.pick([b"\r\n", b"\r\n", b"\r\n", b"\n", b"\r", b"\rX", b""])

    def bad_bulk_header(self):
        r = self.rnd.random()
        if r < 0.2:
            t = self.pick([b":", b"+", b"-", b"*", b"%", b"~", b"#", b"!", b"=", b"(", b",", b"_", b">", b"|",
                           b"x", b" ", b"\x00", b"\xff", b"\n", b"\r", b"$$", b"\t"])
            return t + b"4\r\nPING\r\n"
        length = self.pick([b"-1", b"-2", b"-0", b"abc", b"", b"+4", b"04", b"4 ", b" 4", b"536870913",
                            b"536870912", b"99999999999999999999", b"9223372036854775807",
                            b"9223372036854775808", b"1.5", b"0x4", b"16385", b"16384"])
        end = self.pick([b"\r\n", b"\r\n", b"\n", b"\r", b"\rX"])
        payload = b""
        if length.isdigit() and int(length) <= 16385 and self.chance(0.7):
            payload = self.rnd.choice([b"x", b"y"]) * int(length) + b"\r\n"
        return b"$" + length + end + payload

    def wrong_length_bulk(self, arg):
        delta = self.pick([-3, -1, 1, 2, 5])
        n = max(0, len(arg) + delta)
        return b"$%d\r\n" % n + arg + self.pick([b"\r\n", b"", b"\n", b"XX", b"\r\nGARBAGE\r\n"])

    def malformed_multibulk(self):
        r = self.rnd.random()
        if r < 0.25:
            return self.bad_count() + self.pick([b"", multibulk([b"PING"])[4:], b"$4\r\nPING\r\n"])
        args = self.command()
        parts = [bulk(a) for a in args]
        i = self.rnd.randrange(len(parts))
        if r < 0.5:
            parts[i] = self.bad_bulk_header()
        elif r < 0.65:
            parts[i] = self.wrong_length_bulk(args[i])
        elif r < 0.75:  # a bulk without its CRLF, or with \n only, or garbage after it
            parts[i] = b"$%d\r\n%s" % (len(args[i]), args[i]) + self.pick([b"", b"\n", b"\r", b"ab", b"\r\r\n"])
        elif r < 0.85:  # fewer or more arguments than announced
            count = len(args) + self.pick([-1, 1, 2])
            return b"*%d\r\n" % count + b"".join(parts)
        else:  # header terminators: \n only, \r only, missing
            return b"*%d" % len(args) + self.pick([b"\n", b"\r", b"", b"\r\r\n", b"\n\r"]) + b"".join(parts)
        return b"*%d\r\n" % len(args) + b"".join(parts)

    # -- inline ---------------------------------------------------------------
    def inline(self):
        p = self.pick
        r = self.rnd.random()
        if r < 0.15:
            return p([b"\r\n", b"\n", b"   \r\n", b"\t \n", b" \r \r\n", b"\r\r\n", b"\r"])
        if r < 0.25:
            return p([b"PING\rPING\r\n", b"ECHO a\rb\r\n", b"PING\r", b"\r\nPING\r\n", b"PING\n\n",
                      b"ECHO\ta\r\n", b"ECHO \x0ba\x0c\r\n"])
        if r < 0.6:
            word = p([b"ECHO", b"PING", b"SET", b"GET", b"NOSUCH"])
            quoted = [
                b'"a\\x41b"', b'"\\n"', b'"\\""', b'"abc', b'"abc"def', b"'abc'", b"'a\\'b'", b"'abc",
                b"'ab'c", b'"\\x4"', b'"\\xZZ"', b'"\\x41\\x42"', b'"a b"', b'""', b"''", b'"\\\\"',
                b'"\\t\\r\\a\\b"', b'"tail\\', b'x"y"', b"x'y'", b'"\\x00"', b'"a"\t', b"'\\n'",
                b'"\xff\xfe"', b"a\\x41", b'"ab"\r', b'""""',
            ]
            args = [word] + [p(quoted + KEYS) for _ in range(self.rnd.randint(0, 3))]
            return b" ".join(args) + p([b"\r\n", b"\n", b" \r\n", b""])
        if r < 0.8:  # long, under the limit
            return b"ECHO " + b"b" * self.rnd.randint(1000, 60 * 1024) + b"\r\n"
        if r < 0.9:  # NUL bytes in a line
            return p([b"\x00PING\r\n", b"PI\x00NG\r\n", b"ECHO a\x00b\r\n", b"\x00\r\n", b"PING \x00\r\n",
                      b"ECHO \"a\x00b\"\r\n"])
        return self.encoded_command().rstrip(b"\r\n") + b"\r\n" if self.chance(0.5) else b"PING\r\n"

    # -- other first bytes ----------------------------------------------------
    def garbage(self):
        p = self.pick
        r = self.rnd.random()
        if r < 0.5:
            return p([b"%1\r\n+a\r\n+b\r\n", b"~1\r\n$4\r\nPING\r\n", b"#t\r\n", b":1\r\n", b"+PING\r\n",
                      b"-ERR x\r\n", b"$4\r\nPING\r\n", b",1.5\r\n", b"_\r\n", b"(123\r\n", b"!3\r\nerr\r\n",
                      b"=7\r\ntxt:abc\r\n", b">2\r\n$4\r\nPING\r\n", b"|1\r\n", b"\x00", b"\x00\x00\r\n",
                      b"\xff\xfe\xfd\r\n", b"*\x001\r\n", b"*1\x00\r\n$4\r\nPING\r\n", b"*1\r\n$4\x00\r\nPING\r\n",
                      b"*1\r\n$\r\n"])
        n = self.rnd.randint(1, 40)
        return bytes(self.rnd.randrange(256) for _ in range(n)) + p([b"", b"\r\n", b"\n"])

    # -- a whole case ---------------------------------------------------------
    def case(self):
        """The byte stream of one case, as (bytes, pause in seconds) writes,
        and the CONFIG SET parameters the case runs under ({name: value})."""
        if self.chance(0.03):
            return self.boundary_case(), {}
        config = {}
        r = self.rnd.random()
        if r < 0.12:
            config[b"requirepass"] = PASSWORD
        elif r < 0.15:
            config[b"proto-max-bulk-len"] = CONFIGS[b"proto-max-bulk-len"][0]
        elif r < 0.17:
            config[b"client-query-buffer-limit"] = CONFIGS[b"client-query-buffer-limit"][0]
        auth = b"requirepass" in config
        self.fixed_auth = auth and "auth-pipeline" in self.skip
        self.multi_seen = False
        pieces = []  # (bytes, clean: parsed as meant when the parser starts on it)
        if self.chance(0.3):  # a state first: RESP3, subscribed, tracking, in MULTI
            if self.chance(0.5):
                pieces.append((multibulk([b"HELLO", b"3"]), True))
            state = self.pick([[b"SUBSCRIBE", b"c1"], [b"PSUBSCRIBE", b"c*"], [b"SSUBSCRIBE", b"s1"],
                               [b"CLIENT", b"TRACKING", b"ON"], [b"MULTI"], [b"CLIENT", b"REPLY", b"ON"]])
            self.multi_seen = state == [b"MULTI"]
            pieces.append((multibulk(state), True))
        n = self.rnd.randint(1, 8)
        auth_at = self.rnd.randrange(n + 1) if auth else -1
        for i in range(n + 1):
            if i == auth_at:
                pieces.append((self.auth_piece(), False))
            if i == n:
                break
            while True:
                r = self.rnd.random()
                clean = False
                if r < 0.45:
                    piece, clean = self.encoded_command(), True
                elif r < 0.47 and not (auth and "unauth-obuf" in self.skip):
                    piece, clean = self.burst(), False
                elif r < 0.49 and not (auth and "unauth-obuf" in self.skip):
                    piece, clean = self.wide(), True
                elif r < 0.53:
                    piece, clean = self.scenario(), True
                elif r < 0.67:
                    piece = self.malformed_multibulk()
                elif r < 0.87:
                    piece = self.inline()
                else:
                    piece = self.garbage()
                # NUL in the argument of a well-formed request is left in
                # with "nul" skipped, unless something before may have put
                # the parser out of step (its payload would become a line)
                in_step = clean and all(c for _, c in pieces)
                if self.allowed(piece, in_step):
                    break
            pieces.append((piece, clean))
        r = self.rnd.random()
        last = b""
        if r < 0.08:
            # far past 64 KB without a newline: the last thing sent, since
            # redis-server accepts a longer line when its newline came in
            # the same read (it checks the length only between reads)
            last = self.pick([b"ECHO ", b"", b"*", b"*1\r\n$", b"*1\r\n$4\r\nPING\r\n$"]) + \
                self.pick([b"a", b" ", b"\r"]) * self.rnd.randint(65 * 1024, 130 * 1024)
            pieces.append((last, False))
        elif r < 0.12:
            # an argument past proto-max-bulk-len: the header only
            pieces.append((b"*2\r\n$4\r\nECHO\r\n$%d\r\n" % self.pick([536870913, 1 << 40, 1048577]), False))
        elif b"client-query-buffer-limit" in config and r < 0.3:
            # past the query buffer limit (Redis closes without a reply)
            pieces.append((self.big_echo(self.pick([2, 3]) * 1024 * 1024), False))
        elif b"proto-max-bulk-len" in config and r < 0.3:
            pieces.append((self.big_echo(self.pick([1048576, 1048577])), False))
        elif r < 0.7:
            pieces.append((multibulk([b"PING", SENTINEL]), True))
        stream = b"".join(p for p, _ in pieces)
        if max(len(line) for line in stream[:len(stream) - len(last)].split(b"\n")) > 60 * 1024:
            return self.case()  # a line past 64 KB with a newline after it: see the top
        return self.split(stream), config

    def split(self, stream):
        """The same writes for both servers: the stream cut at random
        points, now and then at many (a byte or a few at a time)."""
        if len(stream) < 2:
            return [(stream, 0)]
        many = self.chance(0.1)
        count = self.rnd.randint(10, 40) if many else self.rnd.randint(0, 4)
        cuts = sorted(set(self.rnd.randrange(1, len(stream)) for _ in range(count)))
        writes, last = [], 0
        for c in cuts + [len(stream)]:
            pause = self.pick([0, 0.001]) if many else self.pick([0, 0, 0.002, 0.01, 0.02])
            writes.append((stream[last:c], pause))
            last = c
        return writes

    def boundary_case(self):
        """A line of 65,535 or 65,536 bytes (Redis's limit is 65,536 without
        its newline), its end sent after a pause: an inline command, a
        multibulk count, a bulk length. Not one byte more: whether Redis
        refuses that depends on whether one read brings the newline too."""
        n = self.pick([65535, 65536])
        head = self.pick([multibulk([b"PING"]), b"PING\r\n", b""])
        line = self.pick([b"ECHO " + b"a" * (n - 5), b"*" + b"1" * (n - 1), b"*1\r\n$" + b"4" * (n - 1),
                          b"*2\r\n$4\r\nECHO\r\n$" + b"4" * (n - 1), b" " * n])
        if line.startswith(b"*1\r\n") or line.startswith(b"*2\r\n"):
            n_head = line.index(b"$")
            line = line[:n_head] + line[n_head:n_head + n]  # the bulk header line itself is n bytes
        tail = self.pick([b"\r\n", b"\n", b"x\r\n"]) + multibulk([b"PING", SENTINEL])
        return [(head + line, 0.05), (tail, 0)]

    @staticmethod
    def big_echo(n):
        """ECHO of n bytes, with a newline in every 60,000 (should the
        argument be taken for inline lines, none is too long)."""
        payload = (b"Q" * 59999 + b"\n") * (n // 60000) + b"Q" * (n % 60000)
        return b"*2\r\n$4\r\nECHO\r\n$%d\r\n" % n + payload + b"\r\n"

    def auth_piece(self):
        p = self.pick
        r = self.rnd.random()
        if r < 0.3:
            return multibulk([b"AUTH", p([b"wrong"] if self.fixed_auth else [PASSWORD, b"wrong"])])
        if r < 0.55:
            return b"*%d\r\n" % p([10, 11, 12, 1000]) + bulk(b"PING") * 3
        if r < 0.8:
            n = p([16384, 16385, 20000, 100000])
            return b"*2\r\n$4\r\nECHO\r\n$%d\r\n" % n + (b"z" * n + b"\r\n" if n <= 20000 and self.chance(0.6) else b"")
        return b"AUTH " + p([b"wrong"] if self.fixed_auth else [PASSWORD, b"wrong"]) + b"\r\n"


# -- talking to the servers -----------------------------------------------------

class Outcome:
    def __init__(self):
        self.data = bytearray()
        self.closed = False
        self.reset = False  # ECONNRESET / EPIPE: replies still unread may have been dropped
        self.note = ""
        self.sock = None  # the connection, while still open
        self.read_some = None


def exchange(port, writes, quiet, out):
    """Sends the writes (with their pauses) on a new connection while reading
    whatever comes back; then reads until closed or `quiet` seconds pass with
    nothing (or the sentinel's reply is in)."""
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError as e:
        out.closed, out.note = True, "connect failed: %s" % e
        return
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.setblocking(False)

    def read_some():
        try:
            chunk = s.recv(1 << 16)
        except BlockingIOError:
            return
        except ConnectionResetError:
            out.closed = out.reset = True
            return
        if not chunk:
            out.closed = True
        out.data += chunk

    try:
        for data, pause in writes:
            view = memoryview(data)
            deadline = time.time() + 10
            while view and not out.closed:
                r, w, _ = select.select([s], [s], [], 1)
                if r:
                    read_some()
                if w and not out.closed:
                    try:
                        n = s.send(view)
                    except BlockingIOError:
                        n = 0
                    except (BrokenPipeError, ConnectionResetError):
                        out.closed = out.reset = True
                        break
                    view = view[n:]
                if time.time() > deadline:
                    out.note = "send stalled"
                    return
            if out.closed:
                break
            end = time.time() + pause
            while pause and time.time() < end and not out.closed:
                r, _, _ = select.select([s], [], [], max(0, end - time.time()))
                if r:
                    read_some()
        last = time.time()
        hard = last + 10
        while not out.closed and time.time() < hard:
            if out.data.endswith(SENTINEL + b"\r\n"):
                break
            r, _, _ = select.select([s], [], [], quiet)
            if not r:
                if time.time() - last >= quiet:
                    break
                continue
            read_some()
            last = time.time()
    finally:
        if out.closed or out.note:
            s.close()
        else:
            out.sock, out.read_some = s, read_some  # kept open: see run_both


def read_more(out, quiet):
    """Goes on reading a connection left open until it closes or `quiet`."""
    end = time.time() + 10
    while not out.closed and time.time() < end:
        r, _, _ = select.select([out.sock], [], [], quiet)
        if not r:
            break
        out.read_some()


def run_both(ports, writes, quiet, skip):
    outs = [Outcome(), Outcome()]
    threads = [threading.Thread(target=exchange, args=(port, writes, quiet, o)) for port, o in zip(ports, outs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if not same(outs, skip):
        # A server that was slow (a busy machine) gets a second, longer
        # chance to finish its reply or close before this counts.
        for o in outs:
            if o.sock is not None:
                read_more(o, 1.0)
    for o in outs:
        if o.sock is not None:
            o.sock.close()
    return outs


def normalized(data, skip):
    data = masked(data)
    for name in skip:
        for pattern, repl in NORMALIZE.get(name, []):
            data = pattern.sub(repl, data)
    return data


MASKS = [
    (re.compile(rb"(\$7\r\nversion\r\n)\$\d+\r\n[^\r]*\r\n"), rb"\1$V\r\nVERSION\r\n"),
    (re.compile(rb"(\$2\r\nid\r\n):\d+\r\n"), rb"\1:ID\r\n"),
]


def masked(data):
    for pattern, repl in MASKS:
        data = pattern.sub(repl, bytes(data))
    return data


def same(outs, skip):
    """Equal replies and closing. A server that closes the connection with
    bytes of ours still unread makes the kernel send a reset, and that drops
    what the client had not read yet: a side that saw a reset must then have
    a prefix of the other side's replies."""
    a, b = outs
    if a.note or b.note or a.closed != b.closed:
        return False
    x, y = normalized(a.data, skip), normalized(b.data, skip)
    if x == y:
        return True
    return (a.reset and y.startswith(x)) or (b.reset and x.startswith(y))


def ping_ok(port):
    try:
        c = rd.Conn(port)
        c.sock.settimeout(5)
        ok = c.call([b"PING"]) == b"+PONG\r\n"
        c.sock.close()
        return ok
    except (OSError, ConnectionError):
        return False


def show(writes, outs, names=("redis ", "ringkv")):
    print("  sent (%d writes): %r" % (len(writes), [(d[:300] + (b"...(%d bytes)" % len(d) if len(d) > 300 else b""))
                                                   for d, _ in writes]))
    for name, o in zip(names, outs):
        d = bytes(o.data)
        print("  %s: %r%s closed=%s%s %s" % (name, d[:600], "...(%d bytes)" % len(d) if len(d) > 600 else "",
                                             o.closed, " (reset)" if o.reset else "", o.note))


def set_config(admins, config, default=False):
    for name, value in config.items():
        if default:
            value = CONFIGS[name][1]
        for a in admins:
            r = a.call([b"CONFIG", b"SET", name, value])
            if r != b"+OK\r\n":
                raise RuntimeError("CONFIG SET %r %r: %r" % (name, value, r))


def describe(config):
    return "".join(" (CONFIG SET %s %s)" % (k.decode(), v.decode()) for k, v in config.items())


def dump(work, seed, n, writes, outs):
    """The case's bytes and both replies, as files, to replay by hand."""
    base = os.path.join(work, "seed%d-case%d" % (seed, n))
    with open(base + ".sent", "wb") as f:
        f.write(b"".join(d for d, _ in writes))
    with open(base + ".writes", "w") as f:
        f.write(repr([(d, pause) for d, pause in writes]))
    for name, o in zip(("redis", "ringkv"), outs):
        with open(base + "." + name, "wb") as f:
            f.write(bytes(o.data))
    print("  bytes in %s.{sent,writes,redis,ringkv}" % base)


def run_seed(seed, cases, ports, admins, quiet, show_case, skip, work):
    for a in admins:  # each seed from the same start (one that differed may have left the keyspaces apart)
        a.call([b"FLUSHALL"])
    gen = Generator(seed, skip)
    for n in range(cases):
        writes, config = gen.case()
        set_config(admins, config)
        try:
            outs = run_both(ports, writes, quiet, skip)
        finally:
            set_config(admins, config, default=True)
        if n == show_case:
            print("seed %d, case %d%s:" % (seed, n, describe(config)))
            show(writes, outs)
        if not same(outs, skip):
            print("seed %d, case %d%s: the replies differ" % (seed, n, describe(config)))
            show(writes, outs)
            dump(work, seed, n, writes, outs)
            return False
        for name, port in zip(("redis-server", "ringkv"), ports):
            if not ping_ok(port):
                print("seed %d, case %d: %s no longer answers PING" % (seed, n, name))
                show(writes, outs)
                return False
        if n % 50 == 49 or n == cases - 1:
            d = [c.call([b"DEBUG", b"DIGEST"]) for c in admins]
            if d[0] != d[1]:
                print("seed %d, case %d: DEBUG DIGEST differs: %r / %r" % (seed, n, d[0], d[1]))
                return False
    return True


def main():
    ap = fd.parser(keep_going="go on with the next seed after a mismatch")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--quiet-ms", type=int, default=150, help="how long a silent server has nothing more to say")
    ap.add_argument("--show", type=int, default=-1, help="print this case of each seed")
    ap.add_argument("--ringkv-args", default="", help="more arguments for ringkv-server, e.g. '--io-threads 4' "
                    "(RINGKV_TEST_IO_BACKEND=epoll picks its other I/O backend)")
    ap.add_argument("--skip", default="", help="known differences to leave out, comma separated: " +
                    "; ".join("%s (%s)" % kv for kv in SKIPPABLE.items()))
    opts = fd.parse(ap)
    skip = list(SKIPPABLE) if opts.skip == "known" else [x for x in opts.skip.split(",") if x]
    for x in skip:
        if x not in SKIPPABLE:
            ap.error("--skip: unknown %r" % x)
    with fd.servers("ringkv-fuzz-protocol-", [opts.redis], [opts.ringkv] + opts.ringkv_args.split()) as run:
        admins = [rd.Conn(p) for p in run.ports]
        run.seeds(opts.seeds, lambda seed: run_seed(seed, opts.cases, run.ports, admins, opts.quiet_ms / 1000.0,
                                                    opts.show, skip, run.work),
                  stop_on_mismatch=not opts.keep_going)
        run.summary("fuzz_protocol", opts.cases, "cases")
    sys.exit(run.status)


if __name__ == "__main__":
    main()

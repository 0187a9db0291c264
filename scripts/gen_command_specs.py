#!/usr/bin/env python3
"""Regenerates server/command_specs.inc: the tips, key specs and movablekeys
flag COMMAND INFO shows for each command ringkv implements, copied from a
running redis-server 7.0 (the oracle), so that ringkv's COMMAND output
matches it. With --docs, server/command_docs.inc instead: each command's
COMMAND DOCS map as redis-server sends it in RESP3 (complexity, history,
arguments...), less its subcommands, which ringkv lists from its own table.

  scripts/gen_command_specs.py --ringkv-port P --redis-port Q > server/command_specs.inc
  scripts/gen_command_specs.py --docs --ringkv-port P --redis-port Q > server/command_docs.inc

Each row: {"name", movablekeys, "tip|tip", "spec;spec"} where a spec is
`notes~flags~begin~find` with flags comma-separated, begin `index:N`,
`keyword:WORD:START` or `unknown`, find `range:LAST:STEP:LIMIT`,
`keynum:IDX:FIRST:STEP` or `unknown`.
"""
import argparse
import socket


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.f = self.s.makefile("rb")

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        return self.read()

    def read(self):
        line = self.f.readline()[:-2]
        t, rest = line[:1], line[1:]
        if t in (b"+", b"-"):
            return rest.decode()
        if t == b":":
            return int(rest)
        if t in (b"$", b"="):
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)[:-2]
            return data.decode()[4:] if t == b"=" else data.decode()
        if t == b"_":
            return None
        if t in (b"*", b"~", b">"):
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        if t == b"%":
            n = int(rest)
            d = {}
            for _ in range(n):
                k = self.read()
                d[k] = self.read()
            return d
        raise ValueError(line)


class RawConn(Conn):
    """Replies as (type byte, payload) trees, so that simple strings, bulk
    strings, sets and arrays stay apart."""

    def read(self):
        line = self.f.readline()[:-2]
        t, rest = line[:1], line[1:]
        if t in (b"+", b"-", b":"):
            return (t, rest)
        if t == b"$":
            return (t, self.f.read(int(rest) + 2)[:-2])
        if t in (b"*", b"~", b"%"):
            n = int(rest) * (2 if t == b"%" else 1)
            return (t, [self.read() for _ in range(n)])
        raise ValueError(line)


def resp3(node):
    t, v = node
    if t in (b"*", b"~"):
        return t + b"%d\r\n" % len(v) + b"".join(resp3(x) for x in v)
    if t == b"%":
        return t + b"%d\r\n" % (len(v) // 2) + b"".join(resp3(x) for x in v)
    if t == b"$":
        return b"$%d\r\n%s\r\n" % (len(v), v)
    return t + v + b"\r\n"


def c_literal(data):
    out = []
    for b in data:
        c = chr(b)
        if c == "\\" or c == '"':
            out.append("\\" + c)
        elif c == "\r":
            out.append("\\r")
        elif c == "\n":
            out.append("\\n")
        elif 32 <= b < 127:
            out.append(c)
        else:
            out.append("\\%03o" % b)
    return "".join(out)


def print_docs(ringkv, redis, names):
    """One row per command redis-server documents: {"name", pairs, "the
    map's pairs in RESP3, without subcommands"}."""
    for name in sorted(names):
        t, entries = redis.call("COMMAND", "DOCS", name)
        if not entries:
            continue  # a command redis-server 7.0 does not have
        _, pairs = entries[1]
        kept = []
        for i in range(0, len(pairs), 2):
            if pairs[i][1] != b"subcommands":
                kept += pairs[i:i + 2]
        body = b"".join(resp3(x) for x in kept)
        print('{"%s", %d, "%s"},' % (name, len(kept) // 2, c_literal(body)))


def spec_text(ks):
    flags = ",".join(ks["flags"])
    b = ks["begin_search"]
    if b["type"] == "index":
        begin = "index:%d" % b["spec"]["index"]
    elif b["type"] == "keyword":
        begin = "keyword:%s:%d" % (b["spec"]["keyword"], b["spec"]["startfrom"])
    else:
        begin = "unknown"
    f = ks["find_keys"]
    if f["type"] == "range":
        find = "range:%d:%d:%d" % (f["spec"]["lastkey"], f["spec"]["keystep"], f["spec"]["limit"])
    elif f["type"] == "keynum":
        find = "keynum:%d:%d:%d" % (f["spec"]["keynumidx"], f["spec"]["firstkey"], f["spec"]["keystep"])
    else:
        find = "unknown"
    return "~".join([ks.get("notes", ""), flags, begin, find])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ringkv-port", type=int, required=True)
    ap.add_argument("--redis-port", type=int, required=True)
    ap.add_argument("--docs", action="store_true", help="server/command_docs.inc instead")
    a = ap.parse_args()
    ringkv, redis = Conn(a.ringkv_port), Conn(a.redis_port)
    redis.call("HELLO", "3")
    names = []
    for entry in ringkv.call("COMMAND"):
        names.append(entry[0])
        for sub in entry[9] or []:
            names.append(sub[0])
    print("// Generated by scripts/gen_command_specs.py%s from redis-server %s: do not edit."
          % (" --docs" if a.docs else "",
             redis.call("INFO", "server").split("redis_version:")[1].split("\r\n")[0]))
    if a.docs:
        raw = RawConn(a.redis_port)
        raw.call("HELLO", "3")
        print_docs(ringkv, raw, names)
        return
    for name in sorted(names):
        info = redis.call("COMMAND", "INFO", name)[0]
        if info is None:
            continue
        movable = "movablekeys" in info[2]
        tips = "|".join(info[7] or [])
        specs = ";".join(spec_text(ks) for ks in info[8] or [])
        esc = lambda s: s.replace("\\", "\\\\").replace('"', '\\"')
        print('{"%s", %s, "%s", "%s"},' % (name, "true" if movable else "false", esc(tips), esc(specs)))


if __name__ == "__main__":
    main()

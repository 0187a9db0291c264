#!/usr/bin/env python3
"""Checks (or rewrites) the expected results in tests/server/lua_cmsgpack_test.cc / lua_struct_test.cc
against a real redis-server 7.0.

Each case there is {"name", R"lua(snippet)lua", R"want(expected)want"}; this
script runs EVAL of kPrelude + snippet on a redis-server it starts itself and
compares the reply (a bulk string) with `expected`.

  tests/server/lua_libs_golden.py            # report differences, exit 1 if any
  tests/server/lua_libs_golden.py --update   # rewrite the expected texts
  --redis-server PATH (default redis-server), --test PATH (default: next to this)
"""
import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

CASE_RE = re.compile(r'\{"([^"]+)",\s*R"lua\((.*?)\)lua",\s*R"want\((.*?)\)want"\}', re.S)
PRELUDE_RE = re.compile(r'R"prelude\((.*?)\)prelude"', re.S)


class Redis:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.file = self.sock.makefile("rb")

    def command(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else a.encode("latin-1")
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)
        return self.read()

    def read(self):
        line = self.file.readline()[:-2]
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode("latin-1")
        if kind == b"-":
            return RuntimeError(rest.decode("latin-1"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self.file.read(n + 2)[:-2].decode("latin-1")
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RuntimeError("bad reply %r" % line)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check_file(redis, prelude, path, update):
    """Compares (or with `update` rewrites) one test file's cases; returns
    how many differ."""
    source = open(path, encoding="latin-1").read()
    differences = 0
    pieces, last = [], 0
    for m in CASE_RE.finditer(source):
        name, lua, want = m.group(1), m.group(2), m.group(3)
        got = redis.command("EVAL", prelude + lua, "0")
        if not isinstance(got, str):
            print("%s: redis did not return a string: %r" % (name, got))
            differences += 1
            continue
        if got != want:
            differences += 1
            print("%s:\n  test:  %s\n  redis: %s" % (name, want[:300], got[:300]))
        pieces.append(source[last:m.start(3)])
        pieces.append(got)
        last = m.end(3)
    pieces.append(source[last:])
    print("%s: %d cases, %d differences" % (os.path.basename(path), len(CASE_RE.findall(source)), differences))
    if update and differences:
        with open(path, "w", encoding="latin-1") as f:
            f.write("".join(pieces))
        print("updated", path)
    return differences


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--redis-server", default="redis-server")
    ap.add_argument("--prelude", default=os.path.join(here, "lua_libs_test_util.h"))
    ap.add_argument("--test", nargs="*",
                    default=[os.path.join(here, "lua_cmsgpack_test.cc"), os.path.join(here, "lua_struct_test.cc")])
    args = ap.parse_args()

    prelude = PRELUDE_RE.search(open(args.prelude, encoding="latin-1").read()).group(1)
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        server = subprocess.Popen(
            [args.redis_server, "--port", str(port), "--save", "", "--appendonly", "no",
             "--dir", tmp, "--daemonize", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    redis = Redis(port)
                    break
                except OSError:
                    time.sleep(0.05)
            else:
                sys.exit("redis-server did not start")
            print("checking against", redis.command("INFO", "server").split("\r\n")[1:3])
            total = 0
            for path in args.test:
                total += check_file(redis, prelude, path, args.update)
            sys.exit(1 if total and not args.update else 0)
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()

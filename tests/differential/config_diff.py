#!/usr/bin/env python3
"""Compares the configuration behaviour of two server binaries: a build from
before a change to the config system (A) and one from after it (B), or
ringkv against redis-server for the parameters ringkv implements.

Usage: config_diff.py --a BINARY --b BINARY [--conf FILE] [--only NAME,...] [--ignore NAME,...]

Both servers start on free ports, each in a directory of its own, with the
same config file (optional) and options. Compared:
  1. CONFIG GET * and each hidden parameter by its name (port and dir masked);
  2. CONFIG SET of every parameter with a list of probe values: the reply,
     then after an OK the value CONFIG GET shows (the old value is restored
     after each probe);
  3. a multi-parameter CONFIG SET that fails half-way, then CONFIG REWRITE of
     a copy of the config file after the same CONFIG SETs;
  4. start-up with bad directives: the error report on stderr, and the
     warnings for directives without effect.
Prints every difference; exit status 1 when there is one.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_diff import Conn, free_port  # noqa: E402

HIDDEN = ["key-load-delay", "loading-process-events-interval-bytes", "rdb-key-save-delay", "use-exit-on-panic",
          "watchdog-period"]
# Values every parameter is probed with.
PROBES = ["", "abc", "-1", "0", "1", "yes", "NO", "local", "1k", "2gb", "9223372036854775808", "50%", "a b"]
# Parameters whose own values need probing, and the ones where a generic
# probe would cut the test's own connection or listener.
SPECIAL = {
    "client-output-buffer-limit": ["pubsub 1k 2k 3", "REPLICA 1mb 1mb 0", "normal x 1 1", "foo 1 1 1",
                                   "normal 1 1", "pubsub 1 1 1 slave 2 2 2", "normal 0 0 0 pubsub -1 0 0"],
    "notify-keyspace-events": ["KEA", "Ex", "z$", "nope!", "AKE", "Kn", "EA m", ""],
    "maxmemory-clients": ["10%", "0%", "101%", "1mb", "-1", "x%", "%"],
    "save": ["60 1 30", "", "60 1", "x y", "60 1 300 10", "-1 1"],
    "maxmemory-policy": ["allkeys-lru", "ALLKEYS-LFU", "lru"],
    "appendfsync": ["always", "No", "sometimes"],
    "loglevel": ["warning", "VERBOSE", "loud"],
    "list-max-listpack-size": ["-5", "-6", "100", "-2147483649"],
    "port": ["-1", "65536", "x"],
    "bind": [""],
    "timeout": ["3600", "x"],
    "maxclients": ["20000", "0"],
    "shutdown-on-sigterm": ["nosave now", "NOW force default", "save nosave", "bogus", "default", "force"],
    "shutdown-on-sigint": ["save force", "", "now", "default"],
    "oom-score-adj": ["relative", "absolute", "bogus", "no"],
    "oom-score-adj-values": ["0 200", "2000 0 0", "10 x 800", "10 500 800", "0 200 2001", "0 200 800"],
}
MASK = {"port", "dir", "unixsocket"}
BAD_STARTS = [
    ["--maxclients", "lots"], ["--port", "70000"], ["--loglevel", "loud"], ["--protected-mode", "maybe"],
    ["--nosuch", "1"], ["--save", "1"], ["--client-output-buffer-limit", "normal 1 1"],
    ["--notify-keyspace-events", "Q"], ["--maxmemory-clients", "200%"], ["--dbfilename", "a/b"],
    ["--appenddirname", "a/b"], ["--rename-command", "FLUSHALL", ""], ["--tls-port", "6380"],
    ["--bind"] + ["127.0.0.%d" % i for i in range(1, 18)], ["--maxmemory", "50%"], ["--supervised", "systemd"],
    ["--enable-debug-command", "local"], ["--lua-time-limit", "-5"], ["--busy-reply-threshold", "x"],
    ["--sentinel", "monitor", "a"], ["--include", "/nonexistent/file.conf"], ["--port"],
    ["--appendonly", "yes", "no"], ["--activedefrag", "maybe"],
]


def start(binary, conf, workdir, extra=()):
    port = free_port()
    os.makedirs(workdir, exist_ok=True)
    cmd = [binary] + ([conf] if conf else []) + ["--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    cmd += list(extra)
    log = open(os.path.join(workdir, "server.log"), "w")
    p = subprocess.Popen(cmd, cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(200):
        try:
            c = Conn(port)
            if c.call([b"PING"]) == b"+PONG\r\n":
                return p, c
        except OSError:
            time.sleep(0.05)
    p.kill()
    raise RuntimeError("server did not start: %s" % cmd)


def pairs(reply):
    """CONFIG GET's reply (RESP2) as a list of (name, value)."""
    lines = reply.split(b"\r\n")
    items, i = [], 1
    while i + 1 < len(lines):
        if lines[i].startswith(b"$"):
            items.append(lines[i + 1])
            i += 2
        else:
            i += 1
    return [(items[k].decode(), items[k + 1].decode(errors="replace")) for k in range(0, len(items) - 1, 2)]


def get_all(c):
    out = pairs(c.call([b"CONFIG", b"GET", b"*"]))
    for h in HIDDEN:
        out += pairs(c.call([b"CONFIG", b"GET", h.encode()]))
    return sorted((n, "<masked>" if n in MASK else v) for n, v in out)


def probe(c, name, value, old):
    r = c.call([b"CONFIG", b"SET", name.encode(), value.encode()])
    shown = None
    if r == b"+OK\r\n":
        shown = pairs(c.call([b"CONFIG", b"GET", name.encode()]))
        c.call([b"CONFIG", b"SET", name.encode(), old.encode()])
    return r, shown


def compare(label, a, b, diffs):
    if a != b:
        diffs.append("%s\n    A: %r\n    B: %r" % (label, a, b))


def run_sets(ca, cb, names, values_a, diffs):
    for name in names:
        for value in SPECIAL.get(name, PROBES if name not in ("port", "bind") else []):
            ra = probe(ca, name, value, values_a[name])
            rb = probe(cb, name, value, values_a[name])
            compare("CONFIG SET %s %r" % (name, value), ra, rb, diffs)


def check_rollback(ca, cb, diffs):
    taken = free_port()
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", taken))
    s.listen(1)
    args = [b"CONFIG", b"SET", b"maxclients", b"77", b"timeout", b"5", b"port", str(taken).encode()]
    compare("CONFIG SET with a port in use", ca.call(args), cb.call(args), diffs)
    compare("after the failed CONFIG SET", get_all(ca), get_all(cb), diffs)
    s.close()


def check_rewrite(a, b, conf, tmp, diffs):
    texts = []
    for side, binary in (("a", a), ("b", b)):
        path = os.path.join(tmp, "rewrite-" + side, "server.conf")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        shutil.copy(conf, path) if conf else open(path, "w").close()
        p, c = start(binary, path, os.path.dirname(path))
        for args in (["maxclients", "300"], ["save", "60 1 30 2"], ["client-output-buffer-limit", "pubsub 1mb 2mb 3"],
                     ["notify-keyspace-events", "KEA"], ["requirepass", "a b\"c"], ["hash-max-ziplist-entries", "7"],
                     ["maxmemory-clients", "5%"], ["appendfsync", "always"]):
            c.call([b"CONFIG", b"SET"] + [x.encode() for x in args])
        texts.append((c.call([b"CONFIG", b"REWRITE"]), re.sub(r"(?m)^port \d+$", "port <masked>", open(path).read())))
        p.kill()
        p.wait()
    compare("CONFIG REWRITE", texts[0], texts[1], diffs)


def start_output(binary, args, workdir):
    os.makedirs(workdir, exist_ok=True)
    try:
        r = subprocess.run([binary, "--port", str(free_port())] + args, cwd=workdir, capture_output=True, timeout=3)
        out = r.stdout + r.stderr
    except subprocess.TimeoutExpired as e:  # it started: what it logged about the configuration
        out = (e.stdout or b"") + (e.stderr or b"")
    lines = [re.sub(r"^\d+:[A-Z] .{24} ", "", l) for l in out.decode(errors="replace").splitlines()]
    return [l for l in lines if "FATAL" in l or ">>>" in l or "at line" in l or "effect" in l or
            not re.match(r"^(\*|#|\.|\s|$|oO0|ringkv version|Running|Server init|Listening|Ready|Warning: no)", l)]


def check_starts(a, b, tmp, diffs):
    for args in BAD_STARTS:
        oa = start_output(a, args, os.path.join(tmp, "start-a"))
        ob = start_output(b, args, os.path.join(tmp, "start-b"))
        compare("start-up with %r" % args, oa, ob, diffs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--conf")
    ap.add_argument("--only", help="comma-separated parameters to probe (default: all)")
    ap.add_argument("--ignore", default="", help="comma-separated parameters expected to differ (masked)")
    opt = ap.parse_args()
    MASK.update(n for n in opt.ignore.split(",") if n)
    a, b = os.path.abspath(opt.a), os.path.abspath(opt.b)
    conf = os.path.abspath(opt.conf) if opt.conf else None
    tmp = tempfile.mkdtemp(prefix="ringkv-config-diff-")
    diffs = []
    pa, ca = start(a, conf, os.path.join(tmp, "a"))
    pb, cb = start(b, conf, os.path.join(tmp, "b"))
    try:
        all_a, all_b = get_all(ca), get_all(cb)
        compare("CONFIG GET *", all_a, all_b, diffs)
        for (na, va), (nb, vb) in zip(all_a, all_b):
            if (na, va) != (nb, vb):
                diffs.append("  first differing parameter: A %s=%r, B %s=%r" % (na, va, nb, vb))
                break
        values = dict(pairs(ca.call([b"CONFIG", b"GET", b"*"])))
        for h in HIDDEN:
            values.update(pairs(ca.call([b"CONFIG", b"GET", h.encode()])))
        names = [n for n in (opt.only.split(",") if opt.only else sorted(values)) if n not in MASK]
        run_sets(ca, cb, names, values, diffs)
        compare("CONFIG GET * after the probes", get_all(ca), get_all(cb), diffs)
        check_rollback(ca, cb, diffs)
    finally:
        for p in (pa, pb):
            p.kill()
            p.wait()
    check_rewrite(a, b, conf, tmp, diffs)
    check_starts(a, b, tmp, diffs)
    for d in diffs:
        print("DIFF " + d)
    print("config_diff: %d difference(s)" % len(diffs))
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())

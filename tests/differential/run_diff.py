#!/usr/bin/env python3
"""Differential test: runs command scripts against Debian's redis-server 7.0
and ringkv-server and compares the raw reply bytes.

Usage: run_diff.py --ringkv PATH [--redis redis-server] --scripts DIR [FILE...]

Script format (one command per line, redis-cli quoting: "..." with \\n \\r \\t
\\xHH escapes, or '...'):
    # comment
    SET k v
    !sleep 1.2        pause (for expiry)
    !resp3            switch the current connection to RESP3 (HELLO 3, not compared)
    !conn NAME        make connection NAME current (opened on first use; the
                      script starts on connection "1")
    !send CMD ...     send a command on the current connection without
                      reading its reply (a blocking command); the script goes
                      on once each server has the client blocked or its reply
                      sent, so the next line cannot overtake it
    !read             read one reply on the current connection and compare
    !drain            after a short pause, read every reply or push message
                      waiting on the current connection and compare them all
    !clock CMD ...    run CMD and compare, except that integer replies may
                      differ by one (OBJECT IDLETIME: a clock second may tick
                      between two commands on either server)
    !stats            compare the error statistics: INFO errorstats,
                      total_error_replies, unexpected_error_replies and
                      INFO commandstats without its timings (sorted)
    !lookups          compare INFO's keyspace_hits, keyspace_misses and
                      expired_keys
    {id:NAME}         in a command, the CLIENT ID of connection NAME on the
                      server the command goes to (CLIENT TRACKING REDIRECT)
Each script runs on fresh connections after FLUSHALL on both servers.
Exit status 0 when every reply matched; prints the first mismatches otherwise.
"""
import argparse
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def split_args(line):
    """redis-cli style splitting (sdssplitargs)."""
    args, i, n = [], 0, len(line)
    while True:
        while i < n and line[i].isspace():
            i += 1
        if i >= n:
            return args
        cur = bytearray()
        if line[i] == '"':
            i += 1
            while True:
                if i >= n:
                    raise ValueError("unbalanced quotes: " + line)
                c = line[i]
                if c == "\\" and i + 3 < n and line[i + 1] == "x":
                    cur.append(int(line[i + 2:i + 4], 16))
                    i += 4
                    continue
                if c == "\\" and i + 1 < n:
                    cur += {"n": b"\n", "r": b"\r", "t": b"\t", "b": b"\b", "a": b"\a"}.get(
                        line[i + 1], line[i + 1].encode())
                    i += 2
                    continue
                if c == '"':
                    i += 1
                    break
                cur += c.encode()
                i += 1
        elif line[i] == "'":
            i += 1
            while True:
                if i >= n:
                    raise ValueError("unbalanced quotes: " + line)
                if line[i] == "\\" and i + 1 < n and line[i + 1] == "'":
                    cur += b"'"
                    i += 2
                    continue
                if line[i] == "'":
                    i += 1
                    break
                cur += line[i].encode()
                i += 1
        else:
            while i < n and not line[i].isspace():
                cur += line[i].encode()
                i += 1
        args.append(bytes(cur))


def encode(args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


class NoReply(TimeoutError):
    """A call whose reply did not come within its connection's timeout (10 s).
    A TimeoutError still, for whoever catches those. Made where it happens,
    it waits a minute more to tell a slow server from one that stopped:
    `waited`, the seconds the reply took beyond the timeout, or None."""

    LATE_LIMIT = 60.0

    def __init__(self, conn, args):
        shown = b" ".join(a[:40] for a in args[:8]) + (b" ..." if len(args) > 8 else b"")
        timeout = conn.sock.gettimeout()
        self.port = conn.port
        self.waited = self._late(conn, timeout)
        then = "its reply came %.1f s after that" % self.waited if self.waited is not None else \
            "nor within %g s more" % self.LATE_LIMIT
        super().__init__("no reply within %g s from the server on port %d to %r; %s"
                         % (timeout, conn.port, shown, then))

    def _late(self, conn, timeout):
        start = time.time()
        conn.sock.settimeout(self.LATE_LIMIT)
        try:
            conn.reply()
            return time.time() - start
        except (OSError, ConnectionError, ValueError):
            return None
        finally:
            conn.sock.settimeout(timeout)


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.port = port
        self.buf = b""

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        i = self.buf.index(b"\r\n") + 2
        line, self.buf = self.buf[:i], self.buf[i:]
        return line

    def _exact(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def reply(self):
        """One whole reply, as its bytes; read without recursion (a script
        can return tables nested thousands deep)."""
        out = []
        pending = [1]  # values still to read, per open aggregate
        while pending:
            pending[-1] -= 1
            line = self._line()
            out.append(line)
            t, rest = line[:1], line[1:-2]
            n = 0
            if t in (b"$", b"=", b"!"):
                if int(rest) >= 0:
                    out.append(self._exact(int(rest) + 2))
            elif t in (b"*", b"~", b">"):
                n = max(int(rest), 0)
            elif t in (b"%", b"|"):
                n = 2 * max(int(rest), 0)
            if n:
                pending.append(n)
            while pending and pending[-1] == 0:
                pending.pop()
        return b"".join(out)

    def call(self, args):
        self.sock.sendall(encode(args))
        try:
            return self.reply()
        except TimeoutError:
            raise NoReply(self, args) from None

    def send(self, args):
        self.sock.sendall(encode(args))

    def settle(self, ctl, limit=2.0):
        """After send(): waits until the server has taken the command in --
        its reply is here, or CLIENT LIST shows this client blocked -- so a
        command on another connection cannot overtake it."""
        deadline = time.time() + limit
        while time.time() < deadline:
            if self.buf or select.select([self.sock], [], [], 0)[0]:
                return
            info = ctl.call([b"CLIENT", b"LIST", b"ID", self.id])
            flags = re.search(rb" flags=(\S*)", info)
            if flags and b"b" in flags.group(1):
                return
            time.sleep(0.002)

    def drain(self, wait=0.1):
        """Every complete reply that arrives within `wait` seconds."""
        time.sleep(wait)
        self.sock.setblocking(False)
        try:
            while True:
                try:
                    chunk = self.sock.recv(65536)
                except BlockingIOError:
                    break
                if not chunk:
                    break
                self.buf += chunk
        finally:
            self.sock.setblocking(True)
            self.sock.settimeout(10)
        out = []
        while self.buf:
            out.append(self.reply())
        return out


def parse(data, i=0):
    """One RESP value: bytes for scalars (type byte kept), (type, [items]) for aggregates."""
    end = data.index(b"\r\n", i)
    t, rest, i = data[i:i + 1], data[i + 1:end], end + 2
    if t in (b"$", b"=", b"!"):
        n = int(rest)
        return (None, i) if n < 0 else (t + data[i:i + n], i + n + 2)
    if t in (b"*", b"~", b">", b"%"):
        n = int(rest) * (2 if t == b"%" else 1)
        items = []
        for _ in range(max(n, 0)):
            v, i = parse(data, i)
            items.append(v)
        return ((t, items) if n >= 0 else None), i
    return t + rest, i


def lookup_stats(conn):
    """INFO's counts of lookups and expiries, which both servers must keep alike."""
    text = conn.call([b"INFO", b"stats"])
    return [line for line in text.split(b"\r\n")
            if line.split(b":")[0] in (b"keyspace_hits", b"keyspace_misses", b"expired_keys")]


class EventListener:
    """A connection subscribed to every keyspace and keyevent notification;
    events() returns those a command made, in order: the command is followed
    by a PUBLISH on a channel of its own, whose message ends the batch (a
    server delivers a client's messages in the order they were made)."""

    def __init__(self, port):
        self.conn = Conn(port)
        self.conn.send([b"SUBSCRIBE", b"fuzz:sync"])
        self.conn.send([b"PSUBSCRIBE", b"__key*__:*"])
        self.conn.reply()
        self.conn.reply()
        self.n = 0

    def events(self, publisher):
        self.n += 1
        mark = b"%d" % self.n
        publisher.call([b"PUBLISH", b"fuzz:sync", mark])
        out = []
        while True:
            kind, items = parse(self.conn.reply())[0]
            if items[0] == b"$message" and items[2] == b"$" + mark:
                return out
            out.append(tuple(items[2:]))


def listeners_for(redis_port, ringkv_port, notifications):
    """With `notifications`: every class on in both servers (n and m too)
    and an EventListener on each; None otherwise."""
    for port in (redis_port, ringkv_port):
        Conn(port).call([b"CONFIG", b"SET", b"notify-keyspace-events", b"KEAnm" if notifications else b""])
    return [EventListener(redis_port), EventListener(ringkv_port)] if notifications else None


def events_match(listeners, redis, ringkv, where):
    """The notifications the last command made, alike in both (or no
    listeners); prints them otherwise. `where` names the command."""
    if not listeners:
        return True
    x, y = listeners[0].events(redis), listeners[1].events(ringkv)
    if x != y:
        print("%s: notifications differ\n  redis : %r\n  ringkv: %r" % (where, x, y))
    return x == y


def stats_match(redis, ringkv, where):
    """INFO's lookup and expiry counts, and its error and command counts
    (error_stats), alike in both; printed otherwise."""
    x, y = lookup_stats(redis), lookup_stats(ringkv)
    if x == y:
        x, y = error_stats(redis).split(b"\n"), error_stats(ringkv).split(b"\n")
        x, y = [l for l in x if l not in y], [l for l in y if l not in x]
    if x != y:
        print("%s: INFO stats differ\n  redis : %r\n  ringkv: %r" % (where, x, y))
    return x == y


def servers_alive(servers):
    """False, saying so, when a server exited during the run."""
    alive = True
    for p in servers:
        if p.poll() is not None:
            print("a server exited during the run (status %s)" % p.returncode)
            alive = False
    return alive


def stop_servers(servers, work, ok):
    """Stops the servers; their folder goes when the run passed, stays (and
    is named) when it did not."""
    for p in servers:
        p.kill()
        p.wait()
    if ok:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print("server logs kept in %s" % work)


def within_a_tick(a, b):
    """Two integer replies one apart at most (a clock second between them)."""
    ma, mb = re.fullmatch(rb":(-?\d+)\r\n", a), re.fullmatch(rb":(-?\d+)\r\n", b)
    return ma is not None and mb is not None and abs(int(ma.group(1)) - int(mb.group(1))) <= 1


def error_stats(conn):
    """What !stats compares: the error counters as INFO shows them, with
    what differs by nature (timings, the order of commandstats) left out."""
    out = []
    for section in (b"errorstats", b"stats", b"commandstats"):
        reply = conn.call([b"INFO", section])
        text = reply.split(b"\r\n", 1)[1] if reply.startswith(b"$") else reply
        lines = []
        for line in text.split(b"\r\n"):
            if line.startswith(b"errorstat_") or line.startswith(b"total_error_replies:") or \
                    line.startswith(b"unexpected_error_replies:"):
                lines.append(line)
            elif line.startswith(b"cmdstat_client|list:"):
                continue  # !send's settling polls CLIENT LIST as often as each server needs
            elif line.startswith(b"cmdstat_replconf:"):
                continue  # an attached replica's ACKs, one a second
            elif line.startswith(b"cmdstat_"):
                lines.append(re.sub(rb"usec=\d+,usec_per_call=[\d.]+,", b"", line))
        out += sorted(lines) if section == b"commandstats" else lines
    return b"\n".join(out)


def start(cmd, port, workdir):
    # Each server in a directory of its own: SAVE / DEBUG RELOAD write dump.rdb there.
    workdir = os.path.join(workdir, str(port))
    os.makedirs(workdir)
    log = open(os.path.join(workdir, "server.log"), "w")
    # RINGKV_TEST_IO_BACKEND: the io-backend of ringkv servers (the runs on epoll).
    backend = os.environ.get("RINGKV_TEST_IO_BACKEND")
    if backend and "redis-server" not in os.path.basename(cmd[0]):
        cmd = cmd + ["--io-backend", backend]
    p = subprocess.Popen(cmd + ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                "--enable-debug-command", "yes"],
                         cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(200):
        try:
            c = Conn(port)
            if c.call([b"PING"]) == b"+PONG\r\n":
                return p
        except OSError:
            time.sleep(0.05)
    p.kill()
    raise RuntimeError("server did not start: %s" % cmd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ringkv", required=True)
    ap.add_argument("--redis", default="redis-server")
    ap.add_argument("--scripts", required=True)
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    if shutil.which(a.redis) is None and not os.path.exists(a.redis):
        print("differential: %s not found (install redis-server)" % a.redis)
        return 1
    files = a.files or sorted(os.path.join(a.scripts, f) for f in os.listdir(a.scripts) if f.endswith(".txt"))
    workdir = tempfile.mkdtemp(prefix="ringkv-diff-")
    rport, kport = free_port(), free_port()
    redis = start([a.redis], rport, workdir)
    ringkv = start([os.path.abspath(a.ringkv)], kport, workdir)
    total = failed = 0
    try:
        for path in files:
            conns = {"1": (Conn(rport), Conn(kport))}
            r, k = conns["1"]
            for c in (r, k):
                c.id = c.call([b"CLIENT", b"ID"])[1:-2]
            r.call([b"FLUSHALL"])
            k.call([b"FLUSHALL"])
            with open(path, encoding="utf-8") as f:
                for lineno, raw in enumerate(f, 1):
                    line = raw.strip()
                    if not line or line.startswith("#"):
                        continue
                    if line.startswith("!sleep"):
                        time.sleep(float(line.split()[1]))
                        continue
                    if line == "!resp3":
                        r.call([b"HELLO", b"3"])
                        k.call([b"HELLO", b"3"])
                        continue
                    if line.startswith("!conn "):
                        name = line.split()[1]
                        if name not in conns:
                            conns[name] = (Conn(rport), Conn(kport))
                            for c in conns[name]:
                                c.id = c.call([b"CLIENT", b"ID"])[1:-2]
                        r, k = conns[name]
                        continue
                    if line.startswith("!send "):
                        args = split_args(line[len("!send "):])
                        r.send(args)
                        k.send(args)
                        if "__ctl" not in conns:
                            conns["__ctl"] = (Conn(rport), Conn(kport))
                        r.settle(conns["__ctl"][0])
                        k.settle(conns["__ctl"][1])
                        continue
                    total += 1
                    clock = line.startswith("!clock ")
                    if clock:
                        line = line[len("!clock "):]
                    if line in ("!read", "!drain", "!stats", "!lookups"):
                        args = [line.encode()]
                        if line == "!read":
                            want, got_call = r.reply(), k.reply
                        elif line == "!stats":
                            want, got_call = error_stats(r), (lambda: error_stats(k))
                        elif line == "!lookups":
                            want, got_call = lookup_stats(r), (lambda: lookup_stats(k))
                        else:
                            want, got_call = r.drain(), k.drain
                    else:
                        args = split_args(line)
                        if b"{id:" in line.encode():
                            def subst(a, side):
                                for n, pair in conns.items():
                                    a = [x.replace(b"{id:%s}" % n.encode(), getattr(pair[side], "id", b"?")) for x in a]
                                return a
                            want = r.call(subst(args, 0))
                            got_call = (lambda a=subst(args, 1): k.call(a))
                        else:
                            want, got_call = r.call(args), (lambda a=args: k.call(a))
                    try:
                        got = got_call()
                    except (ConnectionError, OSError) as e:
                        print("ringkv connection lost at %s:%d  %s (%s)" % (os.path.basename(path), lineno, line, e))
                        failed += 1
                        raise
                    if want != got and clock and within_a_tick(want, got):
                        got = want
                    if want != got:
                        failed += 1
                        if failed <= 30:
                            print("MISMATCH %s:%d  %s\n  redis : %r\n  ringkv: %r" %
                                  (os.path.basename(path), lineno, line, want, got))
            for rc, kc in conns.values():  # no subscriber or blocked client outlives its script
                rc.sock.close()
                kc.sock.close()
    finally:
        for p in (redis, ringkv):
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        if failed or os.environ.get("KEEP"):
            print("server logs kept in", workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print("differential: %d commands in %d scripts" % (total, len(files)))
    print("%d passed, %d failed" % (total - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

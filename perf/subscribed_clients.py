#!/usr/bin/env python3
"""Memory per client after one SUBSCRIBE, side by side.

For each server command: start it on a free port (CPU 1), open N
connections that each SUBSCRIBE to their own channel (sub:<i>) and stay
idle, then report the server's VmRSS growth per connection after a few
seconds (baseline: after start plus one control connection), and
used_memory growth per connection from INFO memory.

  perf/subscribed_clients.py [-n N] SERVER_CMD...
"""
import argparse
import os
import resource
import shlex
import socket
import subprocess
import tempfile
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def call(sock, *args):
    sock.sendall(("*%d\r\n" % len(args) + "".join("$%d\r\n%s\r\n" % (len(a), a) for a in args)).encode())
    data = b""
    while not data.endswith(b"\r\n") or data.count(b"\r\n") < expected_lines(data):
        chunk = sock.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    return data


def expected_lines(data):
    # Good enough for the replies used here: a bulk ($n) needs two lines, an
    # array of 3 (subscribe confirmation) needs six.
    if data.startswith(b"*3"):
        return 6
    if data.startswith(b"$"):
        return 2
    return 1


def used_memory(sock):
    info = call(sock, "INFO", "memory").decode(errors="replace")
    for line in info.split("\r\n"):
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    return 0


def run(cmd, n):
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="subclients-")
    argv = ["taskset", "-c", "1"] + shlex.split(cmd) + [
        "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
        "--dir", workdir, "--maxclients", str(n + 64)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ctl = None
    for _ in range(500):
        try:
            ctl = socket.create_connection(("127.0.0.1", port))
            break
        except OSError:
            time.sleep(0.01)
    server_pid = proc.pid  # taskset execs the server: same pid
    call(ctl, "PING")
    time.sleep(0.5)
    rss0, mem0 = rss_kb(server_pid), used_memory(ctl)
    conns = []
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        reply = call(s, "SUBSCRIBE", "sub:%d" % i)
        assert reply.startswith(b"*3\r\n$9\r\nsubscribe"), reply
        conns.append(s)
    time.sleep(3)
    rss1, mem1 = rss_kb(server_pid), used_memory(ctl)
    for s in conns:
        s.close()
    ctl.close()
    proc.terminate()
    proc.wait()
    return (rss1 - rss0) * 1024 / n, (mem1 - mem0) / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=10000)
    ap.add_argument("servers", nargs="+")
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, a.n + 1024), hard))
    print("# subscribed_clients.py %s  N=%d (each client: one SUBSCRIBE to its own channel)" %
          (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), a.n))
    print("%-28s %18s %24s" % ("server", "RSS bytes/client", "used_memory bytes/client"))
    for cmd in a.servers:
        rss, mem = run(cmd, a.n)
        print("%-28s %18.0f %24.0f" % (cmd, rss, mem))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Forks while a helper thread allocates: every fork child must finish.

One server (ringkv-server or redis-server). Each round fills database 0 with
DEBUG POPULATE, drops it with FLUSHDB ASYNC (the lazy-free thread frees the
keys) and, in the same pipeline, starts a BGSAVE (or BGREWRITEAOF), so that
the fork happens while the other thread is inside the allocator. Database 1
holds hashes for the child to write. A child that has not ended after
--timeout seconds is reported, its stack taken with gdb when gdb is there,
and killed.

A fork that catches another thread holding an allocator lock leaves the
child waiting on it forever (io/fork_gate.h). GCC 12's AddressSanitizer
does not guard its allocator across fork(), so the ASan build shows it:
with the defaults below, before the fork gate, one BGSAVE child in about
twenty hung (docs/performance.md 43.1).

With --fresh, each round starts a new server instead, writes a few hundred
hashes with appendonly on and asks for the fork at once, as the e2e test
whose rewrite child hung four times in CI does (docs/performance.md 49.2;
the cause is not known): a young server starts its helper threads then
(the epoll backend's fsync worker at its first fsync).

Usage: fork_stress.py [--server PATH] [--rounds N] [--keys N] [--fresh]
                      [--kind bgsave|bgrewriteaof] [--io-backend io_uring|epoll]
                      [--timeout S] [--keep]
Exit status 1 when any child hung.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

from resp_client import Client
from servers import free_port

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def child_stacks(server_pid, workdir, label):
    """gdb backtraces of the server's children into workdir; kills them."""
    kids = subprocess.run(["pgrep", "-P", str(server_pid)], capture_output=True, text=True).stdout.split()
    for kid in kids:
        if shutil.which("gdb"):
            with open(os.path.join(workdir, "child-%s-%s.txt" % (label, kid)), "w") as out:
                subprocess.run(["gdb", "-p", kid, "-batch", "-ex", "thread apply all bt"], stdout=out,
                               stderr=subprocess.STDOUT, timeout=120)
        try:
            os.kill(int(kid), 9)
        except ProcessLookupError:
            pass
    return kids


def start(args, workdir, port, name):
    cmd = [args.server, "--port", str(port), "--dir", workdir, "--save", "", "--enable-debug-command", "yes",
           "--appendonly", "yes", "--logfile", os.path.join(workdir, name)]
    if "redis-server" not in os.path.basename(args.server):
        cmd += ["--io-backend", args.io_backend]
    server = subprocess.Popen(cmd)
    for _ in range(200):
        try:
            return server, Client(port, timeout=60)
        except OSError:
            time.sleep(0.02)
    return server, None


def stop(server):
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()


def wait_child(c, server, workdir, args, label):
    """True when the child ended in time; else takes its stacks, kills it."""
    in_progress = "rdb_bgsave_in_progress:" if args.kind == "bgsave" else "aof_rewrite_in_progress:"
    deadline = time.time() + args.timeout
    while in_progress + "1" in c.call("INFO", "persistence").decode():
        if time.time() > deadline:
            kids = child_stacks(server.pid, workdir, label)
            print("round %s: the child (%s) had not ended after %.0f s" % (label, ",".join(kids), args.timeout),
                  flush=True)
            return False
        time.sleep(0.01)
    return True


def fresh_rounds(args, workdir):
    """--fresh: a new server per round, forked at once."""
    hung = forks = 0
    for r in range(args.rounds):
        rdir = os.path.join(workdir, "r%d" % r)
        os.mkdir(rdir)
        server, c = start(args, rdir, free_port(), "server.log")
        try:
            if c is None:
                print("round %d: the server did not start; its log is in %s" % (r, rdir))
                hung += 1
                continue
            writes = [["HSET", "h%d" % i, "f", "v" * 20, "g", i] for i in range(300)]
            started = c.pipeline(writes + [[args.kind.upper()]])[-1]
            if not str(started).startswith("Background"):
                continue
            forks += 1
            if not wait_child(c, server, rdir, args, r):
                hung += 1
                continue
        finally:
            stop(server)
        shutil.rmtree(rdir, ignore_errors=True)
    print("%s: %d fresh servers forked, %d hung (%s, %s)" % (args.server, forks, hung, args.kind, args.io_backend))
    return hung


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", default=os.path.join(REPO, "build", "ringkv-server"))
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--keys", type=int, default=30000, help="keys populated and freed per round")
    ap.add_argument("--kind", choices=("bgsave", "bgrewriteaof"), default="bgsave")
    ap.add_argument("--io-backend", choices=("io_uring", "epoll"), default="epoll")
    ap.add_argument("--timeout", type=float, default=15.0, help="seconds a child may take")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--fresh", action="store_true", help="a new server per round, forked at once")
    args = ap.parse_args()

    workdir = tempfile.mkdtemp(prefix="fork-stress-")
    if args.fresh:
        hung = fresh_rounds(args, workdir)
        if hung or args.keep:
            print("work directory kept:", workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
        return 1 if hung else 0
    port = free_port()
    cmd = [args.server, "--port", str(port), "--dir", workdir, "--save", "", "--enable-debug-command", "yes",
           "--appendonly", "yes", "--logfile", os.path.join(workdir, "server.log")]
    if "redis-server" not in os.path.basename(args.server):
        cmd += ["--io-backend", args.io_backend]
    server = subprocess.Popen(cmd)
    hung = forks = 0
    try:
        c = None
        for _ in range(100):
            try:
                c = Client(port, timeout=60)
                break
            except OSError:
                time.sleep(0.05)
        if c is None:
            print("the server did not start; its log is in", workdir)
            return 1
        c.call("SELECT", 1)
        for i in range(200):
            fields = []
            for j in range(100):
                fields += ["f%d" % j, "v" * 20]
            c.call("HSET", "h%d" % i, *fields)
        c.call("SELECT", 0)
        in_progress = "rdb_bgsave_in_progress:" if args.kind == "bgsave" else "aof_rewrite_in_progress:"
        for r in range(args.rounds):
            started = c.pipeline([["DEBUG", "POPULATE", args.keys, "x", 8], ["FLUSHDB", "ASYNC"],
                                  [args.kind.upper()]])[2]
            if not str(started).startswith("Background"):
                time.sleep(0.2)  # the previous child's end not yet reaped, or an AOF rewrite being scheduled
                continue
            forks += 1
            deadline = time.time() + args.timeout
            while in_progress + "1" in c.call("INFO", "persistence").decode():
                if time.time() > deadline:
                    hung += 1
                    kids = child_stacks(server.pid, workdir, r)
                    print("round %d: the child (%s) had not ended after %.0f s" % (r, ",".join(kids), args.timeout),
                          flush=True)
                    time.sleep(1)
                    break
                time.sleep(0.01)
        print("%s: %d forks, %d hung (%s, %d keys per round, %s)" %
              (args.server, forks, hung, args.kind, args.keys, args.io_backend))
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    if hung or args.keep:
        print("work directory kept:", workdir)
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if hung else 0


if __name__ == "__main__":
    sys.exit(main())

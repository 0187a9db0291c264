#!/usr/bin/env python3
"""Fails when a source file includes against the layering.

    server -> replication -> io, core      (core and io include only themselves)

The build already refuses most wrong-way includes (each library's include
root shows only its own folder: CMakeLists.txt, ringkv_layer). This scan
covers what include paths cannot:

  - a header compiled only from a layer above (core/x.h included only by
    server/ would be compiled with server's include roots);
  - an include inside a preprocessor branch this configuration skips;
  - a relative "../" include, which bypasses include roots;
  - rules inside a layer: I/O threads know nothing of IoSystem (the main
    loop reaches them through io/main_loop_hooks.h), and perf/ok_server.cc
    sees only io/;
  - the data families' command files (generic key commands, strings,
    bitmaps, hashes, lists, sets, sorted sets, streams, HyperLogLog, geo,
    blocking pops) do not include server/server.h (neither does
    server/commands/util.h, which they all include) nor name `ctx.server`:
    their handlers take a CommandContext, which has no server in it
    (server/command.h; the server-level families take a
    ServerCommandContext), so the compiler refuses `ctx.server` there; this
    check also catches a data family that takes a ServerCommandContext.

Usage: check_layering.py [--root DIR]    (exit 1 and one line per violation)
       check_layering.py --self-test     (only: the checker catches planted violations)
"""
import argparse
import os
import re
import sys
import tempfile

# Folder -> the project folders its files may include.
ALLOWED = {
    "core": {"core"},
    "io": {"io"},
    "replication": {"replication", "io", "core"},
    "server": {"server", "replication", "io", "core"},
}
PROJECT_FOLDERS = {"core", "io", "replication", "server", "perf", "tests"}
# Single files with a narrower rule: path -> (allowed folders, forbidden headers).
FILE_RULES = {
    "io/io_thread.h": ({"io"}, {"io/io_system.h"}),
    "io/io_thread.cc": ({"io"}, {"io/io_system.h"}),
    "io/io_thread_links.cc": ({"io"}, {"io/io_system.h"}),
    "io/io_thread_send.cc": ({"io"}, {"io/io_system.h"}),
    "io/io_thread_tls.cc": ({"io"}, {"io/io_system.h"}),
    "io/main_loop_hooks.h": ({"io"}, {"io/io_system.h", "io/io_thread.h"}),
    "perf/ok_server.cc": ({"io"}, set()),
    "server/commands/util.h": ({"server", "replication", "io", "core"}, {"server/server.h"}),
    "server/commands/util.cc": ({"server", "replication", "io", "core"}, {"server/server.h"}),
}
# Data family files: they use ctx.keyspace / ctx.db, never ctx.server.
DATA_FAMILY = re.compile(
    r"^server/commands/(string|bitmap|hash|list|set|zset|stream|hyperloglog|geo|blocking|key)_[a-z_]+\.(h|cc)$")
SERVER_ACCESS = re.compile(r"\bctx\.server\b|\bServerCommandContext\b")
SOURCE_EXTENSIONS = (".h", ".cc", ".c", ".inc", ".hpp", ".cpp")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')


def scan(root):
    """Yields 'path:line: message' for every include against the rules."""
    for folder in sorted(set(ALLOWED) | {"perf"}):
        top = os.path.join(root, folder)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(SOURCE_EXTENSIONS):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                allowed, forbidden = FILE_RULES.get(rel, (ALLOWED.get(folder), set()))
                data_family = DATA_FAMILY.match(rel) is not None
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        if data_family and SERVER_ACCESS.search(line.split("//", 1)[0]):
                            yield (f"{rel}:{number}: a data family reaches the server (ctx.server, ServerCommandContext): "
                                   "use ctx.keyspace / ctx.db / ctx.effects")
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        where = f"{rel}:{number}"
                        if ".." in target.split("/"):
                            yield f"{where}: relative include \"{target}\": write it from the source root"
                            continue
                        if data_family and target == "server/server.h":
                            yield f"{where}: a data family includes server/server.h: it sees only its context"
                            continue
                        if target in forbidden:
                            yield f"{where}: {rel} must not include {target}"
                            continue
                        first = target.split("/", 1)[0]
                        if "/" in target and first in PROJECT_FOLDERS and allowed is not None and first not in allowed:
                            yield (f"{where}: {folder}/ includes {target}: {folder}/ may include only "
                                   f"{', '.join(sorted(allowed))}/")


def self_test():
    """Plants one violation of each kind in a scratch tree and expects each reported."""
    planted = {
        "core/a.h": '#include "core/b.h"\n#include "io/connection.h"\n',
        "io/b.cc": '#include "io/b.h"\n  #  include <server/server.h>\n',
        "io/io_thread.cc": '#include "io/io_system.h"\n',
        "replication/c.cc": '#include "core/keyspace.h"\n#include "server/client.h"\n',
        "server/d.cc": '#include "replication/primary.h"\n#include "../core/x.h"\n',
        "perf/ok_server.cc": '#include "io/io_system.h"\n#include "core/keyspace.h"\n',
        "server/ok.cc": '// #include "tests/x.h"\n#include "core/keyspace.h"\n',
        "server/commands/hash_cmds.cc": '// ctx.server in a comment\n  ctx.server.db(ctx.client);\n',
        "server/commands/client_cmds.cc": '  ctx.server.FindClient(1);\n#include "server/server.h"\n',
        "server/commands/set_cmds.cc": '#include "server/command.h"\n#include "server/server.h"\n',
        "server/commands/util.h": '#include "server/server.h"\n',
        "server/commands/util.cc": '#include "server/commands/util.h"\n#include "server/server.h"\n',
        "server/commands/key_cmds.cc": '#include "server/command.h"\n  ctx.server.cluster();\n',
        "server/commands/zset_cmds.cc": 'void CmdZadd(ServerCommandContext& ctx);\n',
    }
    expected = {"core/a.h:2", "io/b.cc:2", "io/io_thread.cc:1", "replication/c.cc:2", "server/d.cc:2",
                "perf/ok_server.cc:2", "server/commands/hash_cmds.cc:2", "server/commands/set_cmds.cc:2",
                "server/commands/util.h:1", "server/commands/util.cc:2", "server/commands/key_cmds.cc:2",
                "server/commands/zset_cmds.cc:1"}
    with tempfile.TemporaryDirectory() as root:
        for rel, text in planted.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        found = {v.split(": ", 1)[0] for v in scan(root)}
    if found != expected:
        print(f"check_layering self-test failed: reported {sorted(found)}, expected {sorted(expected)}")
        return False
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    # The self-test always runs first: a checker that stopped catching
    # anything would otherwise pass silently.
    if not self_test():
        return 1
    if args.self_test:
        return 0
    violations = list(scan(os.path.abspath(args.root)))
    for v in violations:
        print(v)
    if violations:
        print(f"{len(violations)} violation(s) of the layering (docs/architecture.md)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

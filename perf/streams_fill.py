#!/usr/bin/env python3
"""The fill of perf/streams_memory.sh and perf/streams_memory_breakdown.sh:
ENTRIES (argv[1]) `XADD s * sensor <i % 1000> temperature <2 digits>
humidity <2 digits>` as RESP on stdout, for `redis-cli --pipe`. Seeded, so
every server gets the same bytes."""
import random
import sys

out = sys.stdout.buffer
rnd = random.Random(21)
for i in range(int(sys.argv[1])):
    args = [b"XADD", b"s", b"*", b"sensor", b"%d" % (i % 1000), b"temperature", b"%d" % rnd.randrange(10, 40),
            b"humidity", b"%d" % rnd.randrange(10, 99)]
    out.write(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in args))

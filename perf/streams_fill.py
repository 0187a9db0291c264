#!/usr/bin/env python3
"""The fill of perf/streams_memory.sh and perf/streams_memory_breakdown.sh:
ENTRIES (argv[1]) `XADD s * sensor <i % 1000> temperature <2 digits>
humidity <2 digits>` as RESP on stdout, for `redis-cli --pipe`. Seeded, so
every server gets the same bytes. With STREAMS (argv[2], default 1) above
1, entry i goes to the key s:<i % STREAMS> instead (perf/streams_memory_many.sh)."""
import random
import sys

out = sys.stdout.buffer
rnd = random.Random(21)
streams = int(sys.argv[2]) if len(sys.argv) > 2 else 1
for i in range(int(sys.argv[1])):
    key = b"s" if streams == 1 else b"s:%d" % (i % streams)
    args = [b"XADD", key, b"*", b"sensor", b"%d" % (i % 1000), b"temperature", b"%d" % rnd.randrange(10, 40),
            b"humidity", b"%d" % rnd.randrange(10, 99)]
    out.write(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in args))

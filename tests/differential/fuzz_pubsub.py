#!/usr/bin/env python3
"""Randomized differential test of pub/sub, keyspace notifications and client
tracking across several connections. One redis-server 7.0 and one ringkv get
the same four connections each (c0 .. c3) and the same seeded stream of
commands, each sent on a chosen connection; after each command every
connection's bytes -- the command's replies, the messages it pushed to any
connection, in the order they came -- must match between the two servers.

Usage: fuzz_pubsub.py --ringkv PATH [--redis redis-server] [--seeds 1,2,3]
                      [--commands 2000] [--avoid NAME,...|all] [--keep-going]
                      [--show SEED:N]

What the stream holds (RESP2 and RESP3 connections mixed, switched with
HELLO 2 / HELLO 3 and RESET; QUIT left out):
- SUBSCRIBE / UNSUBSCRIBE, PSUBSCRIBE / PUNSUBSCRIBE (glob patterns with
  ?, *, [a-c], [^1], escapes, unclosed brackets), SSUBSCRIBE / SUNSUBSCRIBE
  (standalone), with and without arguments and with repeated names;
  PUBLISH / SPUBLISH to channels that zero, one or several subscriptions
  match (exact and pattern ones on the same connection); PUBSUB CHANNELS
  [pattern], NUMSUB, NUMPAT, SHARDCHANNELS, SHARDNUMSUB; PING and commands
  refused in a RESP2 connection's subscribed context;
- keyspace notifications: CONFIG SET notify-keyspace-events with random
  classes, then writes (strings, lists, hashes, sets, sorted sets, expiry,
  RENAME, COPY, lazily expired keys) whose __keyspace@0__ / __keyevent@0__
  messages reach channel and pattern subscribers;
- client tracking: CLIENT TRACKING on / off with REDIRECT to another (or
  the same) connection -- sent with each server's own CLIENT ID of that
  connection --, BCAST, PREFIX, OPTIN / OPTOUT with CLIENT CACHING, NOLOOP;
  CLIENT GETREDIR / TRACKINGINFO; reads, writes, FLUSHDB / FLUSHALL and
  the invalidations they send (RESP3 pushes, or __redis__:invalidate
  messages to a RESP2 target that has a subscription);
- MULTI / EXEC / DISCARD holding PUBLISH, (P|S)SUBSCRIBE, writes, tracking
  commands (Redis queues them; EXEC's reply then carries the pushes too).

How a command is read: on its connection, replies until the first one that
is not a RESP3 push (a subscribe-family command outside MULTI: its first
reply); then every connection that is not inside MULTI, and has no CLIENT
CACHING waiting for its next command, gets a PING with a token of its own,
and is read up to the token's reply. That PING reaches the server after
the command's first reply left it, so after everything the command made
(Redis writes a command's replies, pushes and BCAST invalidations in the
same beforeSleep), and on each connection its reply comes after whatever
was sent there before: the bytes before it are complete, and no timing is
involved. A connection left out (in MULTI, or with CLIENT CACHING pending)
keeps its bytes, which are read and compared with its next command's
replies. The barrier PINGs are part of the compared stream (so PING in
subscribed RESP2 mode is checked after every command).

Compared sorted, because Redis produces them in the order of a hash table
with a random seed (each narrowed as far as it goes, see normalized()):
PUBSUB CHANNELS / SHARDCHANNELS; UNSUBSCRIBE / SUNSUBSCRIBE without
arguments (their confirmations' channel names; counts stay in place;
PUNSUBSCRIBE keeps a list in 7.0, so it is compared as it is); the
pmessages of one PUBLISH that several patterns of one connection match.
Client ids (HELLO's id, CLIENT GETREDIR, TRACKINGINFO's redirect) are
compared as the connection they name. Keys never expire on their own
(DEBUG SET-ACTIVE-EXPIRE 0; a past time is reached lazily).

Mismatches already reported are listed in KNOWN; --avoid NAME,... (or all)
leaves them out of the stream. Exit status 1 on a mismatch, printing the
seed, the command number, the connection, the command, the commands just
before it and both servers' bytes per connection (server logs kept);
--keep-going reopens the connections, empties both servers and goes on.
--show SEED:N prints that seed's commands up to N without running them.
"""
import sys

import fuzz_protocol as fp
import fuzz_driver as fd
import run_diff as rd

NCONNS = 4
CHANNELS = [b"ch1", b"ch2", b"chx", b"news.a", b"news.b", b"a", b"b1", b"c2", b"hello", b"hallo", b"h*llo",
            b"__redis__:invalidate", b"__keyevent@0__:set", b"__keyspace@0__:k1", b"__keyevent@0__:del",
            b"", b"sp ace", b"[x]"]
PATTERNS = [b"ch*", b"ch?", b"ch[12]", b"ch[a-c]*", b"news.*", b"[a-c]*", b"[a-c]?", b"h[ae]llo", b"h\\*llo",
            b"h*llo", b"*", b"?", b"ch[^1]", b"__key*__:*", b"__keyspace@0__:*", b"__keyevent@0__:*",
            b"__keyevent@?__:set", b"__redis__:*", b"\\*", b"[", b"ch\\", b"[a-", b"*[x]", b"[z-a]*", b"ch[1-]",
            b"\\[x\\]", b"news.[^a]", b"*1", b"__keyspace@0__:a*", b"", b"**"]
SHARDS = [b"s1", b"s2", b"{x}s", b"ch1", b"sh*", b""]
KEYS = [b"k1", b"k2", b"a:1", b"a:2", b"ab", b"b"]
PREFIXES = [b"a", b"a:", b"ab", b"k", b"k1", b"", b"b", b"z"]
MESSAGES = [b"m", b"hello", b"", b"x" * 40, b"1", b"a\r\nb", b"\x00\xff"]
NOTIFY_CLASSES = "KEAg$lshzxetmnd"
SUBFAMILY = {b"SUBSCRIBE", b"UNSUBSCRIBE", b"PSUBSCRIBE", b"PUNSUBSCRIBE", b"SSUBSCRIBE", b"SUNSUBSCRIBE"}
UNSUB_ALL = {b"UNSUBSCRIBE", b"SUNSUBSCRIBE"}  # without arguments: in the order of the client's dict
# Writes whose keyspace notifications Redis sends before their invalidations (or,
# RENAME's, after both of them): see "notify-invalidate-order"
NOTIFY_FIRST = {b"LPOP", b"RPOP", b"ZREM", b"RENAME", b"RENAMENX"}

# Mismatches already reported, which --avoid NAME,... leaves out of the
# stream so that a run can look past them (the default generates all).
KNOWN = {
    "flush-null-protocol": "fixed in ringkv, kept to replay it: FLUSHDB / FLUSHALL with a tracking client that redirects to a connection of the other "
                           "protocol: Redis writes the invalidation's null in the tracking client's protocol, ringkv "
                           "in the target's. c1: HELLO 3; c0: CLIENT TRACKING on REDIRECT <c1>; c0: FLUSHALL -- c1 "
                           "gets >2 invalidate $-1 from Redis, >2 invalidate _ from ringkv (the other way round: a "
                           "RESP3 tracker, a RESP2 target subscribed to anything: *3 message __redis__:invalidate _ "
                           "against ... $-1)",
    "star-empty": "fixed in ringkv, kept to replay it: a pattern of stars only and the empty channel name: Redis 7.0's stringmatchlen does not match "
                  "'*' (or '**') with '' (ringkv does). c0: PSUBSCRIBE *; c1: PUBLISH \"\" m -- Redis :0 and "
                  "nothing on c0, ringkv :1 and *4 pmessage * \"\" m on c0; likewise PUBSUB CHANNELS * and "
                  "SHARDCHANNELS * list a subscribed \"\" in ringkv only (and SCAN 0 MATCH ** finds a key \"\")",
    "empty-pattern": "fixed in ringkv, kept to replay it: the empty pattern: a PSUBSCRIBE \"\" subscriber gets 'message' instead of 'pmessage', and "
                     "PUBSUB CHANNELS \"\" / SHARDCHANNELS \"\" list every channel (Redis: only the empty one). c0: "
                     "PSUBSCRIBE \"\"; c1: PUBLISH \"\" m -- c0 gets *4 pmessage \"\" \"\" m from Redis, *3 message "
                     "\"\" m from ringkv; c0: SUBSCRIBE a; c1: PUBSUB CHANNELS \"\" -- Redis *0, ringkv *1 a",
    "prefix-overlap-name": "fixed in ringkv, kept to replay it: CLIENT TRACKING ... PREFIX p that overlaps several of the client's prefixes (BCAST "
                           "without PREFIX adds '' unchecked, so '' and others can be there): Redis names the first "
                           "in its sorted rax, ringkv the first added. c0: CLIENT TRACKING on BCAST PREFIX z PREFIX "
                           "a; c0: CLIENT TRACKING on BCAST PREFIX \"\" -- Redis: -ERR Prefix '' overlaps with an "
                           "existing prefix 'a'. ..., ringkv: ... prefix 'z'. ... (or PREFIX k, then BCAST alone, "
                           "then PREFIX k1: Redis names '', ringkv 'k')",
    "self-notification-order": "fixed in ringkv, kept to replay it: a client subscribed to its own command's keyspace notifications (RESP3, or RESP2 in "
                               "the EXEC that subscribed it): Redis sends the reply and the notifications in the "
                               "order the command makes them (the reply first for LPUSH, RPUSH, HSET, ZADD, EXPIRE, "
                               "XADD, SINTERSTORE, SET ... GET, GETSET, ...; in between for LMOVE, LPOP, SPOP, "
                               "ZPOPMIN, ...), ringkv sends the notifications first. c0: HELLO 3; c0: CONFIG SET "
                               "notify-keyspace-events KEA; c0: PSUBSCRIBE "
                               "__keyevent*; c0: RPUSH l a -- Redis :1 then >4 pmessage __keyevent* "
                               "__keyevent@0__:rpush l, ringkv the pmessage then :1",
    "redirect-self-order": "fixed in ringkv, kept to replay it: the invalidation of a key another client tracks with REDIRECT to the connection that "
                           "writes it: Redis sends it where the command signals the key (after the reply for HSET, "
                           "EXPIRE, ...; before it for SET), ringkv always before the reply. c2: HELLO 3; c1: CLIENT "
                           "TRACKING on REDIRECT <c2>; c1: GET k; c2: HSET k f v -- Redis :1 then >2 invalidate [k], "
                           "ringkv >2 invalidate [k] then :1",
    "trackinginfo-prefix-order": "fixed in ringkv, kept to replay it: CLIENT TRACKINGINFO lists BCAST prefixes sorted in Redis (its rax), in the order "
                                 "they were added in ringkv. c0: CLIENT TRACKING on BCAST PREFIX k PREFIX b; c0: "
                                 "CLIENT TRACKINGINFO -- Redis prefixes *2 b k, ringkv *2 k b",
    "tracking-off-forgets": "fixed in ringkv, kept to replay it: a key read while tracking, then written while the reader has tracking off (CLIENT "
                            "TRACKING off or RESET): Redis drops the key's tracking entry on that write, ringkv keeps "
                            "the reader in it, so once tracking is on again the next write invalidates the key in "
                            "ringkv only. c0: HELLO 3; c0: CLIENT TRACKING on; c0: GET b; c0: CLIENT TRACKING off; "
                            "c1: SET b x; c0: CLIENT TRACKING on; c1: SET b y -- c0 gets nothing from Redis, "
                            ">2 invalidate [b] from ringkv",
    "notify-invalidate-order": "fixed in ringkv, kept to replay it: a connection that gets both a write's keyspace notifications and its tracking "
                               "invalidations (non-BCAST): Redis sends them in the order the command's code makes "
                               "them (LPOP, RPOP, ZREM: the events, then the invalidation; RENAME: both "
                               "invalidations, then the rename_from and rename_to events), ringkv sends each key's "
                               "invalidation just before its events. c0: HELLO 3; c0: CONFIG SET "
                               "notify-keyspace-events KEA; c0: PSUBSCRIBE __keyevent@0__:*; c0: CLIENT TRACKING on; "
                               "c1: RPUSH l a b; c0: LRANGE l 0 -1; c1: RPOP l -- c0 gets the rpop pmessage then "
                               ">2 invalidate [l] from Redis, the other way round from ringkv",
    "config-rollback-n": "fixed in ringkv, kept to replay it: a CONFIG SET notify-keyspace-events that fails (a bad class) while the classes hold A and "
                         "n: Redis restores the old value from its printed form, AKE, which has lost n; ringkv keeps "
                         "n. c0: PSUBSCRIBE __key*__:*; c1: CONFIG SET notify-keyspace-events KEAn; c1: CONFIG SET "
                         "notify-keyspace-events q (an error in both); c1: SET k3 a -- Redis sends set events only, "
                         "ringkv new and set",
    "exec-tracking-off-redirect": "fixed in ringkv, kept to replay it: a flush and CLIENT TRACKING off in one EXEC of a client that redirects: "
                                  "Redis still sends the flush's invalidation to the redirect (disabling keeps "
                                  "client_tracking_redirection), ringkv drops it. c0: CLIENT TRACKING on REDIRECT "
                                  "<c1> BCAST; c1: HELLO 3; c0: MULTI, FLUSHDB, CLIENT TRACKING off, EXEC -- c1 gets "
                                  ">2 invalidate $-1 from Redis, nothing from ringkv",
}
AVOID, avoiding = fd.switches(KNOWN)  # --avoid fills AVOID; avoiding(NAME): that mismatch is left out


def idarg(i):
    """In a command, the CLIENT ID of connection i on the server it goes to."""
    return b"\x00id:%d" % i


class Model:
    """What the generator assumes of a connection (from its own commands, not
    from replies, so that a seed's stream is the same whatever the servers
    answer); where it may be wrong it errs on the safe side for the reader:
    in_multi is true whenever the connection may be in MULTI, caching
    whenever a CLIENT CACHING may be pending."""

    def __init__(self):
        self.proto = 2
        self.maybe3 = False  # RESP3, or it may be (a HELLO 3 sent, no HELLO 2 outside MULTI since)
        self.subs, self.psubs, self.ssubs = set(), set(), set()
        self.in_multi = False
        self.queued = 0
        self.caching = False
        self.tracking = False
        self.redirected = False  # a CLIENT TRACKING ... REDIRECT was sent since the last RESET
        self.targets = set()  # the connections it named in REDIRECT since then
        self.tracked_keys = False  # tracking turned on without BCAST (it may remember keys)
        self.off_after_keys = False  # and turned off (or RESET) after that
        self.prefixes = 0  # BCAST prefixes it may have

    def subscribed(self):
        return bool(self.subs or self.psubs or self.ssubs)


class Generator(fd.Seeded):
    def __init__(self, seed):
        super().__init__(seed)
        # The empty channel name (no other matches a pattern of stars only
        # differently) and the empty pattern, where they are avoided
        self.channels = [c for c in CHANNELS if c or not avoiding("star-empty")]
        self.shards = [c for c in SHARDS if c or not avoiding("star-empty")]
        self.patterns = [c for c in PATTERNS if c or not avoiding("empty-pattern")]
        # None that would overlap two others (a and a:, ab; '' and any)
        self.prefixes = [x for x in PREFIXES if x not in (b"", b"a") or not avoiding("prefix-overlap-name")]
        self.models = [Model() for _ in range(NCONNS)]
        self.n = 0

    def reset_models(self):
        self.models = [Model() for _ in range(NCONNS)]

    def next(self):
        """(connection, args) of the next command."""
        self.n += 1
        # A connection in MULTI is likely to go on with it, and to end it.
        open_multi = [i for i, m in enumerate(self.models) if m.in_multi]
        if open_multi and self.chance(0.5):
            ci = self.pick(open_multi)
        else:
            ci = self.rnd.randrange(NCONNS)
        m = self.models[ci]
        if m.in_multi:
            if m.queued >= self.rnd.randint(1, 5) or self.chance(0.05):
                args = [self.pick([b"EXEC", b"EXEC", b"EXEC", b"DISCARD"])]
            else:
                args = self.queued_command(ci)
        else:
            args = self.command(ci)
        self.apply(ci, args)
        return ci, args

    def apply(self, ci, args):
        """The model's view of what args does on connection ci."""
        m = self.models[ci]
        name = args[0].upper()
        if name != b"CLIENT":
            m.caching = False
        if name == b"RESET":
            self.models[ci] = Model()
            self.models[ci].off_after_keys = m.off_after_keys or m.tracked_keys
            return
        if m.in_multi:
            if name in (b"EXEC", b"DISCARD"):
                m.in_multi, m.queued = False, 0
                return
            if name not in (b"MULTI", b"WATCH"):
                m.queued += 1
        if name == b"MULTI":
            m.in_multi = True
        elif name == b"HELLO" and len(args) > 1 and args[1] in (b"2", b"3"):
            m.maybe3 = args[1] == b"3" or m.maybe3 and m.in_multi
            if not (m.proto == 2 and m.subscribed()) or m.in_multi:  # (else refused, most likely)
                m.proto = int(args[1])
        elif name == b"SUBSCRIBE":
            m.subs.update(args[1:])
        elif name == b"PSUBSCRIBE":
            m.psubs.update(args[1:])
        elif name == b"SSUBSCRIBE":
            m.ssubs.update(args[1:])
        elif name in (b"UNSUBSCRIBE", b"PUNSUBSCRIBE", b"SUNSUBSCRIBE") and not m.in_multi:
            # (queued, they may be discarded: the sets hold every subscription it may have)
            s = {b"UNSUBSCRIBE": m.subs, b"PUNSUBSCRIBE": m.psubs, b"SUNSUBSCRIBE": m.ssubs}[name]
            if len(args) == 1:
                s.clear()
            else:
                s.difference_update(args[1:])
        elif args[:2] == [b"CLIENT", b"CACHING"]:
            m.caching = True
        elif args[:2] == [b"CLIENT", b"TRACKING"] and len(args) > 2:
            m.tracking = args[2].lower() == b"on"
            m.redirected = m.redirected or b"REDIRECT" in args
            m.targets.update(int(a[4:]) for a in args if a.startswith(b"\x00id:"))
            if m.tracking and b"BCAST" in args:
                m.prefixes += max(1, args.count(b"PREFIX"))
            elif m.tracking:
                m.tracked_keys = True
            else:
                m.off_after_keys = m.off_after_keys or m.tracked_keys
                if not (m.in_multi or m.subscribed()):  # (else it may be queued, or refused in RESP2)
                    m.prefixes = 0

    def flush(self):
        if avoiding("flush-null-protocol") and any(m.redirected for m in self.models):
            return [b"DBSIZE"]
        return [self.pick([b"FLUSHDB", b"FLUSHALL"])] + self.pick([[], [], [b"ASYNC"], [b"SYNC"]])

    def write_on(self, ci):
        """A write; a read instead where the connection may get pushes of its
        own write while it runs (RESP3, or in an EXEC) and the differences
        in their order are avoided: its own keyspace notifications, or the
        invalidations of another connection that redirects to it."""
        m = self.models[ci]
        if (m.maybe3 or m.in_multi) and (
                avoiding("self-notification-order") and (m.subs or m.psubs) or
                avoiding("redirect-self-order") and any(ci in o.targets for o in self.models)):
            return self.read()
        while True:
            args = self.write()
            if not (avoiding("notify-invalidate-order") and args[0] in NOTIFY_FIRST and
                    any(o.tracked_keys for o in self.models)):
                return args

    # -- commands ---------------------------------------------------------------
    def message(self):
        return self.pick(MESSAGES) if self.chance(0.3) else b"m%d" % self.n

    def channel(self):
        return self.pick(self.channels)

    def subscribe_family(self, ci, in_multi=False, leaving=False):
        m, p = self.models[ci], self.pick
        r = self.rnd.random() if not leaving else self.rnd.uniform(0.35, 1)
        if r < 0.25:
            return [b"SUBSCRIBE"] + self.some(self.channels, 1, 3)
        if r < 0.45:
            return [b"PSUBSCRIBE"] + self.some(self.patterns, 1, 3)
        if r < 0.52:
            return [b"SSUBSCRIBE"] + self.some(self.shards, 1, 2)
        # Unsubscribing: mostly what it has, sometimes what it has not, or all.
        name, have, pool = p([(b"UNSUBSCRIBE", m.subs, self.channels), (b"UNSUBSCRIBE", m.subs, self.channels),
                              (b"PUNSUBSCRIBE", m.psubs, self.patterns), (b"PUNSUBSCRIBE", m.psubs, self.patterns),
                              (b"SUNSUBSCRIBE", m.ssubs, self.shards)])
        if self.chance(0.3) and not (in_multi and name in UNSUB_ALL):  # (see normalized())
            return [name]
        names = self.some(sorted(have), 1, 2) if have and self.chance(0.7) else self.some(pool, 1, 3)
        return [name] + names

    def publish(self):
        """To a channel someone is subscribed to, half of the time."""
        shard = self.chance(0.15)
        have = sorted(set().union(*((m.ssubs if shard else m.subs) for m in self.models)))
        name = self.pick(have) if have and self.chance(0.5) else self.pick(self.shards if shard else self.channels)
        return [b"SPUBLISH" if shard else b"PUBLISH", name, self.message()]

    def pubsub_query(self, in_multi=False):
        p = self.pick
        forms = [
            lambda: [b"PUBSUB", b"NUMSUB"] + self.some(self.channels, 0, 3),
            lambda: [b"PUBSUB", b"NUMPAT"],
            lambda: [b"PUBSUB", b"SHARDNUMSUB"] + self.some(self.shards, 0, 3),
        ]
        if not in_multi:  # (sorted: see normalized())
            forms += [
                lambda: [b"PUBSUB", b"CHANNELS"] + ([p(self.patterns)] if self.chance(0.6) else []),
                lambda: [b"PUBSUB", b"SHARDCHANNELS"] + ([p(self.patterns + self.shards)] if self.chance(0.5) else []),
            ]
        return p(forms)()

    def write(self):
        k, k2, p, v = self.pick(KEYS), self.pick(KEYS), self.pick, self.message
        forms = [
            lambda: [b"SET", k, v()],
            lambda: [b"SET", k, v(), p([b"EX", b"PX"]), b"100000000"],
            lambda: [b"SET", k, v(), b"PXAT", b"1"],  # expired, deleted when next reached
            lambda: [b"SET", k, v(), p([b"NX", b"XX", b"GET", b"KEEPTTL"])],
            lambda: [p([b"DEL", b"UNLINK"]), k] + self.some(KEYS, 0, 2),
            lambda: [p([b"EXPIRE", b"PEXPIRE"]), k, p([b"100000", b"0", b"-1"])],
            lambda: [b"PERSIST", k],
            lambda: [p([b"LPUSH", b"RPUSH"]), k, v()] + self.some(MESSAGES, 0, 1),
            lambda: [p([b"LPOP", b"RPOP"]), k],
            lambda: [b"HSET", k, p([b"f", b"g"]), v()],
            lambda: [b"HDEL", k, p([b"f", b"g"])],
            lambda: [b"ZADD", k, p([b"1", b"2.5", b"-3"]), p([b"m1", b"m2"])],
            lambda: [b"ZREM", k, p([b"m1", b"m2"])],
            lambda: [b"ZINCRBY", k, b"1", p([b"m1", b"m2"])],
            lambda: [b"SADD", k, p([b"m1", b"m2"])],
            lambda: [b"SREM", k, p([b"m1", b"m2"])],
            lambda: [p([b"INCR", b"DECR"]), k],
            lambda: [b"INCRBY", k, p([b"5", b"-2"])],
            lambda: [b"APPEND", k, v()],
            lambda: [b"SETRANGE", k, p([b"0", b"3"]), b"zz"],
            lambda: [p([b"RENAME", b"RENAMENX"]), k, k2],
            lambda: [b"COPY", k, k2] + p([[], [b"REPLACE"]]),
            lambda: [b"GETDEL", k],
            lambda: [b"GETEX", k, b"PERSIST"],
            lambda: [b"MSET", k, v(), k2, v()],
            lambda: [b"LMOVE", k, k2, b"LEFT", b"RIGHT"],
        ]
        return p(forms)()

    def read(self):
        k, p = self.pick(KEYS), self.pick
        forms = [
            lambda: [b"GET", k],
            lambda: [b"MGET", k] + self.some(KEYS, 1, 2),
            lambda: [p([b"EXISTS", b"TYPE", b"STRLEN", b"LLEN", b"SCARD", b"HLEN", b"ZCARD"]), k],
            lambda: [b"HGET", k, p([b"f", b"g"])],
            lambda: [b"LRANGE", k, b"0", b"-1"],
            lambda: [b"ZSCORE", k, p([b"m1", b"m2"])],
            lambda: [b"SISMEMBER", k, p([b"m1", b"m2"])],
            lambda: [b"HGETALL", k],
        ]
        return p(forms)()

    def notify_config(self):
        r = self.rnd.random()
        if r < 0.15:
            flags = b""
        elif r < 0.35:
            flags = self.pick([b"KEA", b"KA", b"EA", b"Kg$", b"El", b"KEAnm", b"Kx", b"Ex$"])
        elif r < 0.4:
            flags = self.pick([b"q", b"KEz?", b"g"])  # a bad class; none but K/E: accepted, sends nothing
        else:
            flags = "".join(self.rnd.sample(NOTIFY_CLASSES, self.rnd.randint(1, 5)))
            if self.chance(0.7):  # K or E or both: some are sent
                flags += self.pick(["K", "E", "KE"])
            flags = "".join(self.rnd.sample(flags, len(flags))).encode()
        if avoiding("config-rollback-n") and b"A" in flags:
            flags = flags.replace(b"n", b"")
        return [b"CONFIG", b"SET", b"notify-keyspace-events", flags]

    def tracking(self, ci, in_multi=False):
        p = self.pick
        if self.chance(0.2) and not (in_multi and avoiding("exec-tracking-off-redirect")):
            return [b"CLIENT", b"TRACKING", p([b"off", b"OFF"])]
        args = [b"CLIENT", b"TRACKING", p([b"on", b"ON"])]
        opts = []
        if self.chance(0.6):
            opts.append([b"REDIRECT", idarg(self.rnd.randrange(NCONNS)) if self.chance(0.95) else b"999999"])
        bcast = self.chance(0.35) or avoiding("tracking-off-forgets") and self.models[ci].off_after_keys
        if bcast:
            opts.append([b"BCAST"])
            # (without PREFIX, Redis adds the prefix '' unchecked: beside others, it overlaps them all)
            fewest = 1 if avoiding("prefix-overlap-name") and self.models[ci].prefixes else 0
            for _ in range(self.rnd.randint(fewest, 2)):
                opts.append([b"PREFIX", p(self.prefixes)])
        elif self.chance(0.05):
            opts.append([b"PREFIX", p(self.prefixes)])  # (refused without BCAST)
        r = self.rnd.random()
        if r < 0.25:
            opts.append([b"OPTIN"])
        elif r < 0.45:
            opts.append([b"OPTOUT"])
        elif r < 0.47:
            opts += [[b"OPTIN"], [b"OPTOUT"]]
        if self.chance(0.3):
            opts.append([b"NOLOOP"])
        self.rnd.shuffle(opts)
        return args + [x for o in opts for x in o]

    def client(self, ci, in_multi=False):
        p = self.pick
        r = self.rnd.random()
        if r < 0.5:
            return self.tracking(ci, in_multi)
        if r < 0.8:
            return [b"CLIENT", b"CACHING", p([b"yes", b"no", b"YES", b"maybe"])]
        if r < 0.9 or avoiding("trackinginfo-prefix-order") and self.models[ci].prefixes > 1:
            # (not in MULTI: an id inside EXEC's reply is not matched to its connection)
            return [b"CLIENT", b"GETREDIR"] if not in_multi else [b"CLIENT", b"CACHING", b"no"]
        return [b"CLIENT", b"TRACKINGINFO"]

    def command(self, ci):
        m, p = self.models[ci], self.pick
        r = self.rnd.random()
        if m.caching:  # its next command is the one CLIENT CACHING is for (read as one reply)
            if r < 0.7:
                return self.read()
            return p([lambda: self.write_on(ci), lambda: [b"PING"], lambda: [b"MULTI"], lambda: self.client(ci)])()
        if m.proto == 2 and m.subscribed() and r < 0.75:
            # RESP2's subscribed context (the rest: the general mix, mostly refused)
            if r < 0.35:
                return self.subscribe_family(ci, leaving=True)
            if r < 0.45:
                return [b"PING"] + ([self.message()] if self.chance(0.5) else [])
            if r < 0.5:
                return [b"RESET"]
            return self.publish() if self.chance(0.5) else self.tracking(ci)
        if r < 0.18:
            return self.subscribe_family(ci)
        if r < 0.34:
            return self.publish()
        if r < 0.42:
            return self.pubsub_query()
        if r < 0.56:
            return self.write_on(ci)
        if r < 0.66:
            return self.read()
        if r < 0.7:
            return self.notify_config()
        if r < 0.8:
            return self.client(ci)
        if r < 0.83:
            return [b"PING"] + ([self.message()] if self.chance(0.5) else [])
        if r < 0.88:
            return [b"HELLO", p([b"2", b"3", b"3", b"3"])]
        if r < 0.91:
            return [b"MULTI"]
        if r < 0.93:
            return [b"RESET"]
        if r < 0.945:
            return self.flush()
        if r < 0.96:
            return [p([b"ECHO", b"CLIENT"]), b"x"] if self.chance(0.5) else [b"EXEC"]
        if r < 0.97:
            return [b"SELECT", p([b"0", b"1"])]
        return [b"DBSIZE"]

    def queued_command(self, ci):
        p = self.pick
        r = self.rnd.random()
        if r < 0.25:
            return self.publish()
        if r < 0.4:
            return self.subscribe_family(ci, in_multi=True)
        if r < 0.55:
            return self.write_on(ci)
        if r < 0.65:
            return self.read()
        if r < 0.75:
            return self.client(ci, in_multi=True) if self.chance(0.5) else self.tracking(ci, in_multi=True)
        if r < 0.8:
            return self.pubsub_query(in_multi=True)
        if r < 0.85:
            return [b"PING"]
        if r < 0.88:
            return self.flush()
        if r < 0.9:
            return self.notify_config()
        if r < 0.92:
            return [b"MULTI"]  # refused, the transaction stays open
        if r < 0.94:
            return [b"NOSUCHCOMMAND"]  # refused: EXEC answers EXECABORT
        if r < 0.96:
            return [b"RESET"]  # (not queued: it ends the transaction)
        return [b"GET"]  # an arity error: EXECABORT too


# -- comparing ----------------------------------------------------------------

def tokens(data):
    """The RESP bytes as tokens: an aggregate's header, or a scalar whole (a
    bulk with its payload), whatever the framing (a push that lands inside
    EXEC's array makes it announce fewer elements than follow)."""
    out, i = [], 0
    while i < len(data):
        end = data.index(b"\r\n", i) + 2
        t = data[i:i + 1]
        if t in (b"$", b"=", b"!") and int(data[i + 1:end - 2]) >= 0:
            end += int(data[i + 1:end - 2]) + 2
        out.append(data[i:end])
        i = end
    return out


PMESSAGE = b"$8\r\npmessage\r\n"
UNSUBS = (b"$11\r\nunsubscribe\r\n", b"$12\r\nsunsubscribe\r\n")


def run_of(toks, i, size):
    """The starts of the messages of size tokens (their header first, then
    the kind of toks[i + 1]) that follow each other from toks[i] on."""
    out = []
    while i + size <= len(toks) and toks[i] in (b">%d\r\n" % (size - 1), b"*%d\r\n" % (size - 1)) and \
            toks[i + 1] == toks[out[0] + 1 if out else i + 1]:
        out.append(i)
        i += size
    return out


def normalized(replies, names, unsub_all=False, main=None, sort_main=False, getredir=False):
    """One connection's bytes for one command, as tokens compared between the
    servers; `names` maps this server's client ids to connection names and
    `main` is the index in `replies` of the command's own reply (when this
    is the connection it ran on). Sorted, because Redis orders them by a
    hash table with a random seed, and only they:
    - the pmessages of one PUBLISH (one after the other, the same channel
      and payload) that several patterns of this connection match: Redis
      walks its server-wide dict of patterns;
    - with unsub_all (an UNSUBSCRIBE / SUNSUBSCRIBE without arguments ran),
      the channel names in a run of their confirmations, the counts left in
      place: Redis walks the client's dict of channels;
    - with sort_main, the elements of the main reply (PUBSUB CHANNELS /
      SHARDCHANNELS: the server's dict).
    Client ids become the name of the connection they belong to: HELLO's
    id, CLIENT TRACKINGINFO's redirect, with getredir the main reply."""
    out = []
    for n, reply in enumerate(replies):
        toks = tokens(reply)
        if n == main and sort_main and toks and toks[0][:1] == b"*":
            toks = toks[:1] + sorted(toks[1:])
        if n == main and getredir and len(toks) == 1 and toks[0][:1] == b":" and toks[0][1:-2] in names:
            toks = [b":<%s>\r\n" % names[toks[0][1:-2]]]
        out += toks
    i = 0
    while i < len(out):
        if i + 1 < len(out) and out[i + 1] == PMESSAGE:
            run = run_of(out, i, 5)
            if run:
                j = 0
                while j < len(run):  # the same channel and payload: one PUBLISH
                    k = j
                    while k < len(run) and out[run[k] + 3:run[k] + 5] == out[run[j] + 3:run[j] + 5]:
                        k += 1
                    msgs = sorted((out[s:s + 5] for s in run[j:k]), key=lambda g: g[2])
                    for s, g in zip(run[j:k], msgs):
                        out[s:s + 5] = g
                    j = k
                i = run[-1] + 5
                continue
        if unsub_all and i + 1 < len(out) and out[i + 1] in UNSUBS:
            run = run_of(out, i, 4)
            if run:
                for s, name in zip(run, sorted(out[s + 2] for s in run)):
                    out[s + 2] = name
                i = run[-1] + 4
                continue
        i += 1
    for i in range(1, len(out)):
        if out[i - 1] in (b"$2\r\nid\r\n", b"$8\r\nredirect\r\n") and out[i][1:-2] in names:
            out[i] = b":<%s>\r\n" % names[out[i][1:-2]]
    return out


# -- talking to the servers ----------------------------------------------------

class Side:
    """One server's connections, with each one's CLIENT ID."""

    def __init__(self, name, port):
        self.name, self.port = name, port
        self.conns = [rd.Conn(port) for _ in range(NCONNS)]
        self.ids = []
        for c in self.conns:
            c.sock.settimeout(5)
            self.ids.append(c.call([b"CLIENT", b"ID"])[1:-2])
        self.names = {x: b"c%d" % i for i, x in enumerate(self.ids)}

    def args(self, args):
        out = []
        for a in args:
            if a.startswith(b"\x00id:"):
                a = self.ids[int(a[4:])]
            out.append(a)
        return out

    def close(self):
        """RESET first, so that no subscription or tracking of these
        connections is left for the next seed while the server has yet to
        see them closed."""
        for c in self.conns:
            try:
                c.send([b"RESET"])
                while c.reply() != b"+RESET\r\n":
                    pass
            except (OSError, ConnectionError):
                pass
            c.sock.close()


def is_token_reply(reply, token):
    return reply.endswith(b"\r\n" + token + b"\r\n") and (
        reply.startswith(b"$") or reply.startswith(b"*2\r\n$4\r\npong\r\n"))


class State:
    """What the reader knows of each connection, from redis-server's replies:
    in MULTI (a barrier PING would be queued), CLIENT CACHING waiting for
    the next command (a barrier PING would use it up), the commands
    queued."""

    def __init__(self):
        self.multi = [False] * NCONNS
        self.caching = [False] * NCONNS
        self.queued = [[] for _ in range(NCONNS)]

    def update(self, ci, args, reply):
        name = args[0].upper()
        was_multi = self.multi[ci]
        if name != b"CLIENT":
            self.caching[ci] = False
        if name == b"RESET":
            self.multi[ci], self.caching[ci], self.queued[ci] = False, False, []
        elif was_multi and name in (b"EXEC", b"DISCARD"):
            self.multi[ci], self.queued[ci] = False, []
        elif not was_multi and name == b"MULTI" and reply == b"+OK\r\n":
            self.multi[ci] = True
        elif was_multi and reply == b"+QUEUED\r\n":
            self.queued[ci].append(args)
        elif not was_multi and args[:2] == [b"CLIENT", b"CACHING"] and reply == b"+OK\r\n":
            self.caching[ci] = True


def read_command(conn, args, multi):
    """The replies of the command just sent: up to the first that is not a
    RESP3 push, or, for a subscribe-family command outside MULTI (whose
    replies are pushes in RESP3), the first."""
    out = []
    one = args[0].upper() in SUBFAMILY and not multi
    while True:
        r = conn.reply()
        out.append(r)
        if one or r[:1] != b">":
            return out


def step(sides, state, ci, args, n):
    """Runs one command on both servers. Returns {connection: [redis-server's
    replies, ringkv's]} and None, or what was read and a note when a side
    did not answer (in 5 s) or closed the connection."""
    streams = {ci: [[], []]}
    multi = state.multi[ci]
    for side in sides:
        side.conns[ci].send(side.args(args))
    for s, side in enumerate(sides):
        try:
            streams[ci][s] = read_command(side.conns[ci], args, multi)
        except (OSError, ConnectionError) as e:  # (socket.timeout is an OSError)
            streams[ci][s] = [b"(no reply: %s)" % str(e).encode()]
            return streams, "%s did not answer" % side.name
    state.update(ci, args, streams[ci][0][-1])
    targets = [i for i in range(NCONNS) if not state.multi[i] and not state.caching[i]]
    return streams, barrier(sides, targets, n, streams)


def barrier(sides, targets, n, streams):
    """Each of the `targets` connections, on both sides, gets a PING with
    a token of its own and is read up to the token's reply, which appends
    every reply before it to streams[connection][side]. None, or a note
    saying which side did not answer."""
    token = b"sync-%d" % n
    for side in sides:
        for i in targets:
            side.conns[i].send([b"PING", token])
    for s, side in enumerate(sides):
        for i in targets:
            got = streams.setdefault(i, [[], []])[s]
            try:
                while True:
                    r = side.conns[i].reply()
                    got.append(r)
                    if is_token_reply(r, token):
                        break
            except (OSError, ConnectionError) as e:
                got.append(b"(no PING reply: %s)" % str(e).encode())
                return "%s did not answer the PING on c%d" % (side.name, i)
    return None


def main_reply(replies):
    """The index of the first reply that is not a push."""
    return next((n for n, r in enumerate(replies) if r[:1] != b">"), None)


def differing(sides, ci, args, queued, streams):
    """The connections whose bytes differ: [(connection, redis's, ringkv's)].
    `queued`: the commands an EXEC ran."""
    unsub_all = any(a[0].upper() in UNSUB_ALL and len(a) == 1 for a in [args] + queued)
    listing = args[:2] in ([b"PUBSUB", b"CHANNELS"], [b"PUBSUB", b"SHARDCHANNELS"])
    getredir = args[:2] == [b"CLIENT", b"GETREDIR"]
    bad = []
    for i, (x, y) in sorted(streams.items()):
        nx, ny = [normalized(r, side.names, i == ci and unsub_all, main_reply(r) if i == ci else None,
                             listing, getredir) for r, side in ((x, sides[0]), (y, sides[1]))]
        if nx != ny:
            bad.append((i, x, y))
    return bad


def fresh(ports, sides):
    """Both servers empty and at their defaults, with new connections."""
    for side in sides or []:
        side.close()
    for port in ports:
        admin = rd.Conn(port)
        for cmd in ([b"FLUSHALL"], [b"CONFIG", b"SET", b"notify-keyspace-events", b""],
                    [b"DEBUG", b"SET-ACTIVE-EXPIRE", b"0"], [b"CONFIG", b"RESETSTAT"]):
            admin.call(cmd)
        admin.sock.close()
    return [Side("redis-server", ports[0]), Side("ringkv", ports[1])]


def shown(args):
    """A command as a line of a run_diff.py script ({id:cN}: that connection's id)."""
    return b" ".join(b"{id:c%s}" % a[4:] if a.startswith(b"\x00id:") else fp.quote_inline(a)
                     for a in args).decode("latin-1")


def run_seed(seed, commands, ports, keep_going, show=None):
    gen = Generator(seed)
    if show is not None:
        for n in range(show + 1):
            ci, args = gen.next()
            print("%d c%d %s" % (n, ci, shown(args)))
        return True
    sides = fresh(ports, None)
    state = State()
    history = []
    ok = True
    for n in range(commands):
        ci, args = gen.next()
        history = (history + ["%d c%d %s" % (n, ci, shown(args))])[-15:]
        queued = list(state.queued[ci]) if args[0].upper() == b"EXEC" else []
        streams, note = step(sides, state, ci, args, n)
        bad = differing(sides, ci, args, queued, streams) if note is None else \
            [(i, x, y) for i, (x, y) in sorted(streams.items())]
        if not bad:
            continue
        ok = False
        print("seed %d, command %d, on c%d: %s%s" % (seed, n, ci, shown(args), " (%s)" % note if note else ""))
        print("  the commands up to it:\n    " + "\n    ".join(history))
        for i, x, y in bad:
            print("  c%d redis : %r\n  c%d ringkv: %r" % (i, b"".join(x)[:3000], i, b"".join(y)[:3000]))
        if not keep_going:
            break
        sides = fresh(ports, sides)
        state = State()
        gen.reset_models()
    if ok:  # INFO's error and command counts (the PINGs are the same in both)
        admins = [rd.Conn(p) for p in ports]
        ok = rd.stats_match(admins[0], admins[1], "seed %d, at the end" % seed)
        for a in admins:
            a.sock.close()
    for side in sides:
        side.close()
    return ok


def main():
    ap = fd.parser(commands=2000, known=KNOWN,
                   keep_going="after a mismatch, empty both servers, reopen the connections and go on",
                   show="SEED:N prints that seed's commands up to N, runs nothing")
    opts = fd.parse(ap, KNOWN, AVOID)
    if opts.show:
        seed, last = opts.show
        run_seed(seed, last + 1, None, False, show=last)
        return
    with fd.servers("ringkv-fuzz-pubsub-", [opts.redis], [opts.ringkv]) as run:
        run.seeds(opts.seeds, lambda seed: run_seed(seed, opts.commands, run.ports, opts.keep_going),
                  stop_on_mismatch=not opts.keep_going)
        run.summary("fuzz_pubsub", opts.commands)
    sys.exit(run.status)


if __name__ == "__main__":
    main()

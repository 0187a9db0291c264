#!/usr/bin/env python3
"""Randomized differential test of ACLs (Redis 7.0): the same seeded stream
goes to redis-server 7.0 and to ringkv, and every reply must match byte for
byte (after the normalizations listed below); every 50 commands, and at the
end of a seed, INFO's error, command and lookup counts must too
(run_diff.stats_match: errorstats, rejected / failed calls, keyspace hits).

What the stream holds, on three connections per server: "ctl" (an admin
user created at start, never touched by the stream) and two user
connections "a" and "b" (opened as the default user):
  * ACL SETUSER of u1 / u2 / u3 / u4 (now and then the default user, or a
    bad name) with random rule lists, well-formed and not: on / off,
    >pass <pass #hash !hash (good and malformed hashes), nopass, resetpass,
    ~pattern %R~ %W~ %RW~ (and bad %X~), allkeys, resetkeys, &channel,
    allchannels, resetchannels, +cmd -cmd +cmd|sub +cmd|firstarg (7.0
    first-arg rules), +@category -@category (unknown ones too),
    allcommands, nocommands, selectors "(...)" (also split over several
    arguments, unbalanced, with flags inside), clearselectors,
    sanitize-payload, reset, keys or channels after allkeys / allchannels,
    names in other cases;
  * ACL GETUSER, LIST, USERS, DELUSER, CAT [category], WHOAMI, DRYRUN,
    GENPASS [bits], LOG [count|RESET], HELP, LOAD, SAVE, unknown
    subcommands and wrong arities; CONFIG SET acl-pubsub-default and
    acllog-max-len;
  * on the user connections: AUTH user pass, AUTH pass, HELLO 2|3 AUTH ...
    [SETNAME], RESET, then commands as that user: strings, hashes, lists,
    sets, COPY / RENAME / LMOVE / SORT (BY, GET, STORE) / SINTERSTORE on
    keys that match or miss the read / write patterns, SELECT (first-arg
    rules), CONFIG GET / SET, CLIENT GETNAME / SETNAME, ACL WHOAMI /
    USERS / DRYRUN, PUBLISH, EVAL / EVAL_RO with redis.call / pcall /
    acl_check_cmd, MULTI ... EXEC with commands denied while queueing or
    by rules changed (on ctl) before EXEC, SUBSCRIBE / PSUBSCRIBE rounds
    with PUBLISH from ctl (and the subscriber killed when its channels are
    taken away), users deleted while connected (their connections closed:
    "<closed>" must come from both servers).

Normalizations, each because Redis's own answer is not reproducible:
  * ACL LIST / ACL GETUSER "commands": after the +@all / -@all and category
    rules, Redis 7.0 lists the single commands and subcommands in the order
    of its command dicts (random hash seed per process), so a run of such
    rules is compared sorted (a command's first-arg rules keep their order,
    which is the order they were added);
  * ACL CAT <category>: the commands in dict order, compared sorted;
  * ACL GENPASS: random; only its length and lower-case hex are compared;
  * ACL LOG: age-seconds is a clock reading (compared as "a number"); of
    client-info only the fields that do not depend on the connection's
    address, id, fd, age or memory are compared (name flags db sub psub
    ssub multi cmd user redir resp; ringkv also writes 7.2's lib-name /
    lib-ver, left out);
  * HELLO: the client id (each server counts its own connections);
  * SORT ... BY nosort: a hash-table set's order, compared sorted;
  * a PUBLISH's pmessages: Redis walks its dict of patterns, compared sorted;
  * EXEC: each reply normalized as that of the command queued there.
Never sent: commands whose output is random or a clock (CLIENT LIST / INFO
/ ID, INFO, KEYS, SCAN, SMEMBERS, TIME, XADD *, COMMAND COUNT).

Usage: fuzz_acl.py --ringkv PATH [--redis redis-server] [--seeds 1,2,3]
                   [--commands 2000] [--resp3] [--check-every 50]
                   [--avoid NAME,...|all] [--keep-going] [--show SEED:N]

Mismatches already reported are listed in KNOWN; --avoid NAME,... (or all)
leaves them out of the generator so that a run looks past them; where the
generator cannot steer clear, out of the comparison: commands-72 drops
client|setinfo / waitaof rules from the descriptions compared,
log-exec-client-info and dirty-multi-count the fields they are about from
ACL LOG's client-info (only in the entries concerned).
--keep-going reports every mismatch of a seed, resetting both servers
after each. Exit status 1 on a mismatch, with the seed, the command number,
the connection, the command and both replies; the server logs are kept.
--show SEED:N prints that seed's steps up to N (what to replay by hand).
"""
import hashlib
import re
import socket
import sys

import fuzz_driver as fd
import run_diff as rd

# Mismatches already reported, which --avoid NAME,... leaves out of the
# generator (the default generates all). Each with a reproduction.
KNOWN = {
    "commands-72": "ringkv has two Redis 7.2 commands, CLIENT SETINFO and WAITAOF (in @slow and @connection), "
                   "which redis-server 7.0.15 does not know: ACL CAT connection (or slow) lists client|setinfo and "
                   "waitaof; ACL SETUSER z -@all +@connection -client, ACL GETUSER z: ringkv's commands add "
                   "-client|setinfo; ACL SETUSER z -waitaof: OK in ringkv, 'Unknown command' in redis",
    "selector-reopen": "fixed in ringkv, kept to replay it: an ACL SETUSER argument that opens a selector while one is still open: Redis starts the "
                       "selector again there (ACLMergeSelectorArguments), so the error names the last one. "
                       "ACL SETUSER w (~a (~b -- redis: ERR Unmatched parenthesis in acl selector starting at "
                       "'(~b'.  ringkv: ... starting at '(~a'.",
    "selector-bad-quotes": "fixed in ringkv, kept to replay it: a selector whose rules sdssplitargs cannot split (an unbalanced quote): Redis "
                           "(aclCreateSelectorFromOpSet) gets no rules and adds an empty selector; ringkv refuses "
                           "it. ACL SETUSER q '(+get \"x)' -- redis: OK (ACL GETUSER q: one selector, -@all), "
                           "ringkv: ERR Error in ACL SETUSER modifier '(+get \"x)': Syntax error",
    "log-exec-client-info": "fixed in ringkv, kept to replay it: ACL LOG's client-info for a denial inside EXEC (rules changed after queueing, or a "
                            "script's redis.call): Redis shows the client still in its transaction, flags=x "
                            "multi=<queued> cmd=exec; ringkv flags=N multi=-1, and cmd=eval for a script. "
                            "ACL SETUSER v on nopass ~* +@all; (2nd connection) AUTH v x, MULTI, GET k, (1st) "
                            "ACL SETUSER v -get, (2nd) EXEC, (1st) ACL LOG 1 -- client-info has 'flags=x ... "
                            "multi=1 ... cmd=exec' in redis, 'flags=N ... multi=-1 ... cmd=exec' in ringkv",
    "acllog-trim": "fixed in ringkv, kept to replay it: CONFIG SET acllog-max-len to fewer than the log holds: Redis trims the log only when it "
                   "next adds an entry (a repeated one, merged, does not trim either); ringkv at once. "
                   "(2nd connection) AUTH x1 y, AUTH x2 y, AUTH x3 y; (1st) CONFIG SET acllog-max-len 1, "
                   "ACL LOG -- redis: 3 entries, ringkv: 1; and so a repeated denial that Redis merges "
                   "(count 2) is a new entry in ringkv (count 1)",
    "dirty-multi-count": "fixed in ringkv, kept to replay it: the multi= count of a client whose transaction is already doomed (a command refused "
                         "while queueing): Redis 7.0 stops queueing (queueMultiCommand returns early, +QUEUED "
                         "all the same), ringkv goes on counting; seen in ACL LOG's client-info. (2nd "
                         "connection) MULTI, NOSUCH, PING; (1st) CLIENT LIST -- the 2nd connection has multi=0 "
                         "in redis, multi=1 in ringkv",
}
AVOID, avoiding = fd.switches(KNOWN)  # --avoid fills AVOID; avoiding(NAME): that mismatch is left out


ADMIN = [b"admin", b"admin-pw"]  # ctl's user: created at start, never in the stream
USERS = [b"u1", b"u2", b"u3", b"u4"]
BAD_NAMES = [b"a b", b"x\x00y", b"", b"U1"]
PASSWORDS = [b"p1", b"p2", b"secret", b"", b"with space"]
KEYS = [b"k1", b"k2", b"a1", b"b1", b"{k}x"]
KEY_PATTERNS = [b"*", b"k*", b"k1", b"a*", b"?1", b"[ab]*", b"{k}*", b"x", b"k[!1]", b"*1"]
CHANNELS = [b"ch1", b"ch2", b"news.a", b"x"]
CHANNEL_PATTERNS = [b"*", b"ch*", b"ch1", b"news.*", b"ch[12]", b"x", b"n?ws.a"]
CATEGORIES = [b"keyspace", b"read", b"write", b"set", b"sortedset", b"list", b"hash", b"string", b"bitmap",
              b"hyperloglog", b"geo", b"stream", b"pubsub", b"admin", b"fast", b"slow", b"blocking",
              b"dangerous", b"connection", b"transaction", b"scripting"]
BAD_CATEGORIES = [b"nosuch", b"", b"all|x", b"READ", b"Hash", b"@read"]
COMMANDS = [b"get", b"set", b"hset", b"hget", b"del", b"exists", b"copy", b"rename", b"lmove", b"rpush", b"lpush",
            b"sort", b"sinterstore", b"sadd", b"type", b"object", b"mget", b"mset", b"expire", b"persist", b"touch",
            b"getdel", b"append", b"incr", b"ping", b"echo", b"dbsize", b"select", b"config", b"client", b"acl",
            b"publish", b"subscribe", b"psubscribe", b"unsubscribe", b"punsubscribe", b"eval", b"eval_ro",
            b"evalsha", b"multi", b"exec", b"discard", b"watch", b"blpop", b"pfadd", b"setbit", b"auth", b"hello",
            b"reset", b"flushdb", b"spublish", b"strlen", b"getrange", b"lrange", b"llen"]
SUBCOMMANDS = [b"config|get", b"config|set", b"client|getname", b"client|setname", b"client|info", b"acl|whoami",
               b"acl|cat", b"acl|users", b"acl|getuser", b"acl|dryrun", b"acl|setuser", b"acl|log",
               b"object|encoding", b"object|freq", b"acl|list", b"client|list"]
FIRST_ARGS = [b"select|0", b"select|1", b"get|k1", b"set|k1", b"ping|x", b"echo|hi", b"hset|k1", b"publish|ch1",
              b"select|2"]
BAD_COMMANDS = [b"nosuch", b"get|x|y", b"config|nosuch", b"acl|whoami|x", b"", b"|", b"select|", b"|get",
                b"config|", b"Config|Get", b"GET", b"acl|WhoAmI"]
# Redis 7.0's container commands: their subcommand rules come in dict order.
CONTAINERS = {b"acl", b"client", b"cluster", b"command", b"config", b"function", b"latency", b"memory", b"module",
              b"object", b"pubsub", b"script", b"slowlog", b"xgroup", b"xinfo"}
SCRIPTS = [
    (b"return redis.call('get', KEYS[1])", 1, 0),
    (b"return redis.call('set', KEYS[1], ARGV[1])", 1, 1),
    (b"return redis.pcall('hset', KEYS[1], 'f', ARGV[1])", 1, 1),
    (b"return redis.call('publish', ARGV[1], 'm')", 0, 1),
    (b"return redis.acl_check_cmd('set', KEYS[1], 'v')", 1, 0),
    (b"return redis.acl_check_cmd('get', KEYS[1])", 1, 0),
    (b"return redis.acl_check_cmd('nosuch')", 0, 0),
    (b"return redis.acl_check_cmd('select', ARGV[1])", 0, 1),
    (b"redis.call('select', ARGV[1]) return redis.call('get', KEYS[1])", 1, 1),
    (b"return redis.call('get', 'k2')", 0, 0),
    (b"local ok, e = pcall(redis.call, 'set', KEYS[1], 'x') if type(e) == 'table' then return e.err end "
     b"return {tostring(ok), e}", 1, 0),
    (b"return redis.call('copy', KEYS[1], KEYS[2])", 2, 0),
    (b"return redis.call('config', 'get', 'maxmemory')", 0, 0),
    (b"return redis.call('acl', 'whoami')", 0, 0),
    (b"return redis.call('lmove', KEYS[1], KEYS[2], 'left', 'right')", 2, 0),
    (b"return redis.pcall('nosuch')", 0, 0),
    (b"return 1", 0, 0),
]


def sha256(text):
    return hashlib.sha256(text).hexdigest().encode()


class Generator(fd.Seeded):
    """Items: lists of steps (connection, args, kind); kind is "call" (one
    reply), "sub" (a (P)SUBSCRIBE / UNSUBSCRIBE: one reply per channel, or
    one error), "pub:NAME" (ctl's PUBLISH, then as many messages as it
    reached read on connection NAME) or "reopen" (the connection closed,
    opened again as the default user at its next use; nothing compared)."""

    def case(self, word):
        """A rule or name now and then in another case (Redis compares them without case)."""
        if self.chance(0.05):
            return word.upper() if self.chance(0.5) else word.capitalize()
        return word

    # ---- rules ------------------------------------------------------------------

    def password(self):
        return self.pick(PASSWORDS[:1] * 3 + PASSWORDS)

    def key_rule(self):
        pat = self.pick(KEY_PATTERNS)
        r = self.rnd.random()
        if r < 0.4:
            return b"~" + pat
        if r < 0.75:
            return self.pick([b"%R~", b"%W~", b"%RW~", b"%WR~", b"%r~", b"%w~"]) + pat
        if r < 0.8:
            return self.pick([b"%X~", b"%~", b"%R", b"%RR~", b"%R~", b"~", b"%RW"]) + self.pick([b"", pat])
        return self.case(self.pick([b"allkeys", b"resetkeys"]))

    def channel_rule(self):
        r = self.rnd.random()
        if r < 0.65:
            return b"&" + self.pick(CHANNEL_PATTERNS + [b""])
        return self.case(self.pick([b"allchannels", b"resetchannels"]))

    def command_rule(self):
        r = self.rnd.random()
        sign = self.pick([b"+", b"+", b"-"])
        if r < 0.3:
            return sign + self.case(self.pick(COMMANDS))
        if r < 0.45:
            return sign + self.pick(SUBCOMMANDS)
        if r < 0.55:
            return self.pick([b"+", b"+", b"+", b"-"]) + self.pick(FIRST_ARGS)
        if r < 0.8:
            return sign + b"@" + self.case(self.pick(CATEGORIES + [b"all"]))
        if r < 0.85:
            return sign + b"@" + self.pick(BAD_CATEGORIES)
        if r < 0.9:
            return sign + self.pick(BAD_COMMANDS)
        return self.case(self.pick([b"allcommands", b"nocommands"]))

    def flag_rule(self):
        r = self.rnd.random()
        if r < 0.5:
            return self.case(self.pick([b"on", b"off", b"nopass", b"resetpass", b"sanitize-payload",
                                        b"skip-sanitize-payload", b"reset"]))
        p = self.password()
        if r < 0.7:
            return b">" + p
        if r < 0.78:
            return b"<" + p
        if r < 0.88:
            return b"#" + self.pick([sha256(p), sha256(p), sha256(p).upper(), b"abc", sha256(p)[:-1] + b"g",
                                     sha256(p) + b"0"])
        if r < 0.95:
            return b"!" + self.pick([sha256(p), sha256(p), b"xyz"])
        return self.pick([b"junk", b"", b"+", b"-", b"@all", b"&", b"on off", b"(", b")", b"()"])

    def selector_rules(self, n):
        rules = []
        for _ in range(n):
            r = self.rnd.random()
            if r < 0.3:
                rules.append(self.key_rule())
            elif r < 0.45:
                rules.append(self.channel_rule())
            elif r < 0.95:
                rules.append(self.command_rule())
            else:
                rules.append(self.flag_rule())  # refused in a selector
        return rules

    def selector(self):
        """One selector: "(...)" in one argument, split over several, or malformed."""
        inner = self.selector_rules(self.rnd.randint(0, 4))
        r = self.rnd.random()
        if r < 0.7 or len(inner) < 2:
            return [b"(" + b" ".join(inner) + b")"]
        if r < 0.85:  # ACL SETUSER joins "(~a*" "+get)" into one selector
            words = [b"(" + inner[0]] + inner[1:-1] + [inner[-1] + b")"]
            return words
        # (Not a rule list without "(" that starts with +cmd|arg: its first arg would hold spaces, which an ACL
        # LIST line cannot tell from separate rules, and the normalization would sort its words apart.)
        return self.pick([[b"(" + b" ".join(inner)], [b"~" + b" ".join(inner) + b")"],
                          [b"((" + b" ".join(inner) + b")"], [b"(" + b" ".join(inner) + b"))"],
                          [b"(" + inner[0]] + inner[1:], [b"( " + b" ".join(inner) + b" )"],
                          # a selector's rules are read with sdssplitargs: quotes and escapes
                          [b'(~"a b" ' + b" ".join(inner) + b")"], [b"(~'k*' '+get' " + b" ".join(inner) + b")"],
                          [b"(+get " + b" ".join(inner) + b")" if avoiding("selector-bad-quotes") else
                           b'(+get "unterminated ' + b" ".join(inner) + b")"], [b'("+select|0" ~\\x41 +get)'],
                          [b'(+echo|"a b" ' + b" ".join(inner) + b")"], [b"(\t" + b"\t".join(inner) + b")"]])

    def rules(self):
        out = []
        if self.chance(0.4):
            out += [b"on", b">" + self.password()]
        if self.chance(0.3):  # a broad start, so that commands get past the gate too
            out += self.pick([[b"+@all"], [b"allkeys"], [b"+@all", b"~*"], [b"allcommands", b"allkeys", b"allchannels"],
                              [b"+@read", b"~k*"], [b"+@write", b"%W~*"], [b"+@all", b"%R~*", b"%W~k*"]])
        for _ in range(self.rnd.randint(0, 6)):
            r = self.rnd.random()
            if r < 0.25:
                out.append(self.key_rule())
            elif r < 0.37:
                out.append(self.channel_rule())
            elif r < 0.7:
                out.append(self.command_rule())
            elif r < 0.9:
                out.append(self.flag_rule())
            elif r < 0.97:
                out += self.selector()
            else:
                out.append(self.case(b"clearselectors"))
        if avoiding("selector-reopen"):  # no "(..." argument while a selector is open
            kept, open_ = [], False
            for arg in out:
                opens = arg[:1] == b"(" and arg[-1:] != b")"
                if opens and open_:
                    continue
                if opens:
                    open_ = True
                elif open_ and arg[-1:] == b")":
                    open_ = False
                kept.append(arg)
            out = kept
        return out

    def target(self):
        r = self.rnd.random()
        if r < 0.95:
            return self.pick(USERS)
        if r < 0.98:
            return b"default"
        return self.pick(BAD_NAMES)

    def setuser(self):
        return [b"ACL", self.case(b"SETUSER"), self.target()] + self.rules()

    # ---- commands ---------------------------------------------------------------

    def user_command(self):
        """A command for a user connection (or to queue in its MULTI, or for ACL DRYRUN)."""
        p = self.pick
        k, k2, v = p(KEYS), p(KEYS), p([b"1", b"v", b"10", b"abc"])
        forms = [
            lambda: [b"GET", k], lambda: [b"SET", k, v], lambda: [b"HSET", k, b"f", v], lambda: [b"HGET", k, b"f"],
            lambda: [b"EXISTS", k, k2], lambda: [b"DEL", k], lambda: [b"COPY", k, k2] + p([[], [b"REPLACE"]]),
            lambda: [b"RENAME", k, k2], lambda: [b"LMOVE", k, k2, b"LEFT", b"RIGHT"], lambda: [b"RPUSH", k, v],
            lambda: [b"LPUSH", k, v, v], lambda: [b"SORT", k], lambda: [b"SORT", k, b"STORE", k2],
            lambda: [b"SORT", k, b"BY", p([b"w_*", b"nosort"])],
            lambda: [b"SORT", k, b"GET", p([b"#", b"w_*"])],
            lambda: [b"SORT_RO", k], lambda: [b"SINTERSTORE", k, k2, p(KEYS)], lambda: [b"SADD", k, v],
            lambda: [b"TYPE", k], lambda: [b"OBJECT", b"ENCODING", k], lambda: [b"MGET", k, k2],
            lambda: [b"MSET", k, v, k2, v], lambda: [b"EXPIRE", k, b"100000"], lambda: [b"PERSIST", k],
            lambda: [b"TOUCH", k], lambda: [b"GETDEL", k], lambda: [b"APPEND", k, v], lambda: [b"INCR", k],
            lambda: [b"STRLEN", k], lambda: [b"GETRANGE", k, b"0", b"1"], lambda: [b"LRANGE", k, b"0", b"-1"],
            lambda: [b"LLEN", k], lambda: [b"PING"] + p([[], [b"x"]]), lambda: [b"ECHO", b"hi"],
            lambda: [b"DBSIZE"], lambda: [b"SELECT", p([b"0", b"0", b"1", b"2", b"x"])],
            lambda: [b"CONFIG", b"GET", p([b"maxmemory", b"acllog-max-len", b"acl-pubsub-default"])],
            lambda: [b"CONFIG", b"SET", b"acllog-max-len", p([b"128", b"128" if avoiding("acllog-trim") else b"5"])],
            lambda: [b"CLIENT", b"GETNAME"], lambda: [b"CLIENT", b"SETNAME", p([b"n1", b"n2", b""])],
            lambda: [b"ACL", b"WHOAMI"], lambda: [b"ACL", b"USERS"], lambda: [b"ACL", b"CAT"],
            lambda: [b"ACL", b"DRYRUN", p(USERS), b"get", k],
            lambda: [b"PUBLISH", p(CHANNELS), b"m"], lambda: [b"SPUBLISH", p(CHANNELS), b"m"],
            lambda: [b"PFADD", k, v], lambda: [b"SETBIT", k, b"1", b"1"], lambda: [b"BLPOP", k, b"0.01"],
            lambda: [b"WATCH", k], lambda: [b"UNWATCH"], lambda: [b"FLUSHDB"] if self.chance(0.2) else [b"PING"],
            lambda: [b"NOSUCH", k], lambda: [b"GET"], lambda: [b"EVAL"] + self.script_args(),
            lambda: [b"ACL", b"GETUSER", p(USERS)], lambda: [b"ACL", b"SETUSER", p(USERS[2:]), b"+get"],
        ]
        return p(forms)()

    def script_args(self):
        body, nkeys, nargs = self.pick(SCRIPTS)
        keys = [self.pick(KEYS) for _ in range(nkeys)]
        args = [self.pick([b"v", b"0", b"1", b"ch1", b"news.a", b"x"]) for _ in range(nargs)]
        return [body, b"%d" % nkeys] + keys + args

    def auth(self, conn):
        p = self.pick
        user = p(USERS + [b"default", b"nosuch"])
        pw = p(PASSWORDS[:1] * 4 + PASSWORDS + [b"wrong"])
        r = self.rnd.random()
        if r < 0.45:
            return [(conn, [b"AUTH", user, pw], "call")]
        if r < 0.55:
            return [(conn, [b"AUTH", pw], "call")]
        if r < 0.8:
            args = [b"HELLO", p([b"2", b"3", b"3"]), b"AUTH", user, pw]
            if self.chance(0.3):
                args += [b"SETNAME", p([b"h1", b"h2"])]
            return [(conn, args, "call")]
        if r < 0.9:
            return [(conn, [b"RESET"], "call")]
        return [(conn, p([[b"AUTH"], [b"AUTH", user, pw, b"x"], [b"HELLO", b"3", b"AUTH", user],
                          [b"HELLO", b"4", b"AUTH", user, pw], [b"HELLO", b"AUTH", user, pw]]), "call")]

    def admin(self):
        p = self.pick
        r = self.rnd.random()
        if r < 0.15:
            return [b"ACL", b"GETUSER", p(USERS + [b"default", b"nosuch"])]
        if r < 0.25:
            return [b"ACL", b"LIST"]
        if r < 0.3:
            return [b"ACL", b"USERS"]
        if r < 0.38:
            return [b"ACL", b"DELUSER"] + [p(USERS + [b"default", b"nosuch"]) for _ in range(self.rnd.randint(1, 2))]
        if r < 0.45:
            cats = [c for c in CATEGORIES if not avoiding("commands-72") or c not in (b"slow", b"connection")]
            return [b"ACL", b"CAT"] + p([[], [p(cats)], [p(cats)], [p(BAD_CATEGORIES)]])
        if r < 0.48:
            return [b"ACL", b"WHOAMI"]
        if r < 0.62:
            # (and commands that only a dry run may send here: never run, nothing to read after them)
            cmd = self.user_command() if self.chance(0.75) else p([
                [b"SUBSCRIBE", p(CHANNELS), p(CHANNELS)], [b"PSUBSCRIBE", p(CHANNEL_PATTERNS)],
                [b"SSUBSCRIBE", p(CHANNELS)], [b"SORT", p(KEYS), b"BY", b"w_*", b"GET", b"#"],
                [b"MIGRATE", b"127.0.0.1", b"1", p(KEYS), b"0", b"10"], [b"CONFIG", b"SET", b"maxmemory", b"0"],
                [b"CLIENT", b"KILL", b"ID", b"1"], [b"DEBUG", b"SLEEP", b"0"], [b"SHUTDOWN"], [b"FLUSHALL"],
                [b"SELECT", p([b"0", b"1", b"2"])], [b"OBJECT", b"FREQ", p(KEYS)],
                [b"GEOADD", p(KEYS), b"1", b"1", b"m"],
                [b"XADD", p(KEYS), b"*", b"f", b"v"], [b"ZADD", p(KEYS), b"1", b"m"], [b"EVALSHA", b"x", b"1", p(KEYS)],
                [b"FCALL", b"f", b"1", p(KEYS)], [b"PUBSUB", b"CHANNELS"], [b"MSET", p(KEYS), b"1", p(KEYS), b"2"],
                [b"SMOVE", p(KEYS), p(KEYS), b"m"], [b"BITOP", b"AND", p(KEYS), p(KEYS)], [b"PING", b"x", b"y"]])
            return [b"ACL", b"DRYRUN", p(USERS + [b"default", b"nosuch"])] + cmd
        if r < 0.66:
            return [b"ACL", b"GENPASS"] + p([[], [p([b"1", b"5", b"64", b"255", b"4096", b"0", b"4097", b"-1",
                                                    b"x"])]])
        if r < 0.8:
            return [b"ACL", b"LOG"] + p([[], [], [p([b"0", b"1", b"3", b"-1", b"x"])], [b"RESET"], [b"reset"]])
        if r < 0.82:
            return [b"ACL", b"HELP"]
        if r < 0.85:
            return [b"CONFIG", b"SET", p([b"acl-pubsub-default", b"acllog-max-len"]),
                    p([b"allchannels", b"resetchannels", b"3", b"128", b"0", b"x"])]  # (see items: acllog-trim)
        return p([[b"ACL"], [b"ACL", b"NOSUCH"], [b"ACL", b"GETUSER"], [b"ACL", b"SETUSER"], [b"ACL", b"DELUSER"],
                  [b"ACL", b"CAT", b"read", b"x"], [b"ACL", b"LOAD"], [b"ACL", b"SAVE"], [b"ACL", b"DRYRUN", b"u1"],
                  [b"ACL", b"WHOAMI", b"x"], [b"ACL", b"LOG", b"1", b"2"], [b"ACL", b"USERS", b"x"],
                  [b"ACL", b"GENPASS", b"1", b"2"], [b"ACL", b"DRYRUN", b"u1", b"nosuch"],
                  [b"ACL", b"DRYRUN", b"u1", b"get"]])

    def items(self):
        """The next item: a list of steps."""
        p = self.pick
        u = p(["a", "b"])
        r = self.rnd.random()
        if r < 0.25:
            return [("ctl", self.setuser(), "call")]
        if r < 0.38:
            args = self.admin()
            if avoiding("acllog-trim") and args[:3] == [b"CONFIG", b"SET", b"acllog-max-len"]:
                return [("ctl", [b"ACL", b"LOG", b"RESET"], "call"), ("ctl", args, "call")]
            return [("ctl", args, "call")]
        if r < 0.48:
            steps = self.auth(u)
            if self.chance(0.5):
                steps.append((u, [b"ACL", b"WHOAMI"], "call"))
            return steps
        if r < 0.78:
            return [(u, self.user_command(), "call")]
        if r < 0.84:
            return self.multi_round(u)
        if r < 0.89:
            return [(u, [p([b"EVAL", b"EVAL", b"EVAL_RO"])] + self.script_args(), "call")]
        if r < 0.94:
            return self.pubsub_round(u)
        if r < 0.955:
            k = p(KEYS)
            return [("ctl", p([[b"SET", k, b"3"], [b"RPUSH", k, b"2", b"1"], [b"HSET", k, b"f", b"v"],
                               [b"SADD", k, b"1", b"2"], [b"SET", b"w_1", b"5"], [b"SET", b"w_2", b"4"]]), "call")]
        if r < 0.97:  # the default user as at the start (new connections get past NOAUTH again)
            return [("ctl", [b"ACL", b"SETUSER", b"default", b"on", b"nopass", b"allkeys", b"allchannels",
                             b"allcommands"], "call")]
        return [(u, None, "reopen")]

    def multi_round(self, u):
        """MULTI, commands (some denied while queueing), now and then rules
        changed on ctl before EXEC (Redis checks every command again then)."""
        steps = [(u, [b"MULTI"], "call")]
        steps += [(u, self.user_command(), "call") for _ in range(self.rnd.randint(0, 4))]
        if self.chance(0.4):
            steps.append(("ctl", [b"ACL", b"SETUSER", self.pick(USERS)] + self.rules(), "call"))
        steps.append((u, [self.pick([b"EXEC", b"EXEC", b"EXEC", b"DISCARD"])], "call"))
        return steps

    def pubsub_round(self, u):
        """(P)SUBSCRIBE, maybe the user's channel rules changed (Redis
        kills a subscriber whose channels are no longer allowed), PUBLISH
        from ctl, UNSUBSCRIBE; the connection is then closed (no
        subscription outlives the round)."""
        p = self.pick
        pattern = self.chance(0.3)
        chans = [p(CHANNEL_PATTERNS if pattern else CHANNELS) for _ in range(self.rnd.randint(1, 2))]
        steps = []
        if self.chance(0.5):
            steps += self.auth(u)[:1]
        steps.append((u, [b"PSUBSCRIBE" if pattern else b"SUBSCRIBE"] + chans, "sub"))
        if self.chance(0.35):
            target = p(USERS)
            steps.append(("ctl", [b"ACL", b"SETUSER", target] + [self.channel_rule()
                                                                 for _ in range(self.rnd.randint(1, 2))], "call"))
            steps.append((u, [b"PING"], "call"))
        steps.append(("ctl", [b"PUBLISH", p(CHANNELS), b"hello"], "pub:" + u))
        steps.append((u, [b"PUNSUBSCRIBE" if pattern else b"UNSUBSCRIBE"] + chans, "sub"))
        steps.append((u, None, "reopen"))
        return steps


# ---- normalization -------------------------------------------------------------

CLIENT_FIELDS = {b"name", b"flags", b"db", b"sub", b"psub", b"ssub", b"multi", b"cmd", b"user", b"redir", b"resp"}


def rule_key(token):
    """Sort key of a single-command rule: by command; a container's
    subcommands among themselves too (dict order in Redis), a command's
    first-arg rules not (stable: the order they were added)."""
    name = token[1:].lower()
    base = name.split(b"|")[0]
    return (base, name if base in CONTAINERS else b"")


def sorted_runs(tokens):
    """The tokens with each run of single-command rules (+get, -config|set,
    +select|0: not +@ / -@ categories) sorted by rule_key."""
    out, run = [], []
    for t in tokens + [None]:
        if t is not None and len(t) > 1 and t[:1] in (b"+", b"-") and t[1:2] != b"@":
            if not (avoiding("commands-72") and t[1:].lower() in (b"client|setinfo", b"waitaof")):
                run.append(t)
            continue
        out += sorted(run, key=rule_key)
        run = []
        if t is not None:
            out.append(t)
    return out


def normalize_rules(text, line=False):
    """GETUSER's "commands" (or, with `line`, an ACL LIST line, whose
    selectors are "(...)"): runs of single-command rules sorted. A
    selector of a line starts at a token that starts with "(" (no rule
    inside one does) and its last token ends with its ")"."""
    tokens = []
    for t in text.split(b" "):
        # A first argument may hold spaces (+echo|"a b" in a selector): its words go with it.
        if tokens and t[:1] not in (b"+", b"-", b"(") and tokens[-1][:1] in (b"+", b"-") and \
                tokens[-1][1:2] != b"@" and b"|" in tokens[-1]:
            tokens[-1] += b" " + t
        else:
            tokens.append(t)
    if not line:
        return b" ".join(sorted_runs(tokens))
    segments = []
    for t in tokens:
        if t[:1] == b"(" or not segments:
            segments.append([])
        segments[-1].append(t)
    out = []
    for seg in segments:
        selector = seg[0][:1] == b"("
        closing = selector and seg[-1][-1:] == b")"
        if closing:
            seg[-1] = seg[-1][:-1]
        if selector:
            seg[0] = seg[0][1:]
        seg = sorted_runs(seg)
        if selector:
            seg[0] = b"(" + seg[0]
        if closing:
            seg[-1] += b")"
        out += seg
    return b" ".join(out)


def pairs(items):
    return [(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]


def normalize_getuser(value):
    if not isinstance(value, tuple):
        return value
    kind, items = value
    items = list(items)
    for i in range(0, len(items) - 1, 2):
        if items[i] == b"$commands" and isinstance(items[i + 1], bytes):
            items[i + 1] = b"$" + normalize_rules(items[i + 1][1:])
        elif items[i] == b"$selectors" and isinstance(items[i + 1], tuple):
            items[i + 1] = (items[i + 1][0], [normalize_getuser(s) for s in items[i + 1][1]])
    return kind, items


def normalize_log_entry(entry):
    if not isinstance(entry, tuple):
        return entry
    kind, items = entry
    items = list(items)
    fields = CLIENT_FIELDS
    info = dict(pairs(items))
    if avoiding("log-exec-client-info") and (info.get(b"$context") == b"$lua" or
                                              b" cmd=exec " in info.get(b"$client-info", b"")):
        fields = CLIENT_FIELDS - {b"flags", b"multi", b"cmd"}
    if avoiding("dirty-multi-count") and re.search(rb" flags=\S*x", info.get(b"$client-info", b"")):
        fields = fields - {b"multi"}
    for i in range(0, len(items) - 1, 2):
        if items[i] == b"$age-seconds" and isinstance(items[i + 1], bytes):
            # a clock reading; Redis writes it with %.17g (0.0040000000000000001)
            items[i + 1] = b"$<age>" if re.fullmatch(rb"[$,][0-9.e-]+", items[i + 1]) else items[i + 1]
        elif items[i] == b"$client-info" and isinstance(items[i + 1], bytes):
            kept = [f for f in items[i + 1][1:].split(b" ") if f.split(b"=")[0] in fields]
            items[i + 1] = b"$" + b" ".join(kept)
    return kind, items


def normalized(args, value):
    """A parsed reply (run_diff.parse) to `args`, with what Redis makes
    random taken out (see the module comment). `args` of an EXEC is the
    list of the commands it ran (each of its replies is normalized as
    theirs)."""
    if args and isinstance(args[0], list):  # EXEC
        if isinstance(value, tuple) and len(value[1]) == len(args):
            return value[0], [normalized(a, v) for a, v in zip(args, value[1])]
        return value
    if not args:
        return value
    name = args[0].upper()
    sub = args[1].upper() if len(args) > 1 else b""
    if name == b"HELLO" and isinstance(value, tuple):
        kind, items = value
        items = list(items)
        for i in range(0, len(items) - 1, 2):
            if items[i] == b"$id":
                items[i + 1] = b":<id>"
        return kind, items
    if name in (b"SORT", b"SORT_RO") and isinstance(value, tuple) and any(
            a.upper() == b"BY" and i + 1 < len(args) and b"*" not in args[i + 1] for i, a in enumerate(args)):
        return value[0], sorted(value[1], key=repr)  # BY nosort: a hash-table set's own (random) order
    if name != b"ACL":
        return value
    if sub == b"LIST" and isinstance(value, tuple):
        return value[0], [normalize_rules(x, line=True) if isinstance(x, bytes) else x for x in value[1]]
    if sub == b"GETUSER":
        return normalize_getuser(value)
    if sub == b"CAT" and len(args) == 3 and isinstance(value, tuple):
        return value[0], sorted(value[1], key=repr)
    if sub == b"GENPASS" and isinstance(value, bytes) and value[:1] == b"$":
        # random; its length and lower-case hex only
        return b"genpass", len(value) - 1, re.fullmatch(rb"[0-9a-f]*", value[1:]) is not None
    if sub == b"LOG" and isinstance(value, tuple):
        return value[0], [normalize_log_entry(e) for e in value[1]]
    return value


def comparable(args, reply):
    """The reply as compared: normalized (parsed) where a normalization
    applies, else its bytes."""
    if args is None or reply is None or not reply[:1] in (b"*", b"%", b"$", b">"):
        return reply
    try:
        value, end = rd.parse(reply)
    except (ValueError, IndexError):
        return reply
    out = normalized(args, value)
    return reply if out is value else out


# ---- running --------------------------------------------------------------------

CLOSED = b"<closed>"
TIMEOUT = b"<timeout>"


class Side:
    """One server's connections: ctl (the admin user) and the user ones,
    opened at first use."""

    def __init__(self, port, resp3):
        self.port, self.resp3 = port, resp3
        self.conns = {}
        self.queued = {}  # connection: the commands its open MULTI queued

    def get(self, name):
        conn = self.conns.get(name)
        if conn is None:
            conn = self.conns[name] = rd.Conn(self.port)
            if name == "ctl":
                reply = conn.call([b"AUTH"] + ADMIN)
                if reply != b"+OK\r\n":
                    raise RuntimeError("ctl: AUTH admin: %r" % reply)
            if self.resp3:
                # (refused with NOAUTH where the default user is off: the
                # connection stays RESP2, on both servers alike)
                conn.hello = conn.call([b"HELLO", b"3"])
        return conn

    def close(self, name):
        self.queued.pop(name, None)
        conn = self.conns.pop(name, None)
        if conn is not None:
            conn.sock.close()

    def close_all(self):
        for name in list(self.conns):
            self.close(name)

    def call(self, name, args):
        conn = self.get(name)
        try:
            return conn.call(args)
        except socket.timeout:
            self.close(name)
            return TIMEOUT
        except (ConnectionError, OSError):
            self.close(name)
            return CLOSED

    def read(self, name):
        conn = self.conns.get(name)
        if conn is None:
            return CLOSED
        try:
            return conn.reply()
        except socket.timeout:
            self.close(name)
            return TIMEOUT
        except (ConnectionError, OSError):
            self.close(name)
            return CLOSED


def is_pubsub_ack(reply):
    """A (P)SUBSCRIBE / (P)UNSUBSCRIBE acknowledgement (RESP2 array, RESP3 push)."""
    if reply[:1] not in (b"*", b">"):
        return False
    try:
        value = rd.parse(reply)[0]
    except (ValueError, IndexError):
        return False
    return isinstance(value, tuple) and len(value[1]) == 3 and isinstance(value[1][0], bytes) and \
        value[1][0][1:].lower() in (b"subscribe", b"psubscribe", b"unsubscribe", b"punsubscribe")


def run_step(side, step):
    """Runs one step on one server: the list of (args, reply) to compare."""
    conn, args, kind = step
    if kind == "reopen":
        side.close(conn)
        return []
    hello = None
    if conn not in side.conns and side.resp3:
        side.get(conn)
        hello = side.conns[conn].hello
    out = [([b"HELLO", b"3"], hello)] if hello is not None and conn != "ctl" else []
    reply = side.call(conn, args)
    # What a MULTI queued, so that EXEC's replies are normalized as the commands' own.
    name = args[0].upper()
    if name == b"EXEC" and conn in side.queued:
        out.append((side.queued[conn] or None, reply))
        if not reply.startswith(b"-") or reply.startswith(b"-EXECABORT"):  # (an EXEC refused leaves it open)
            del side.queued[conn]
    else:
        out.append((args, reply))
    if name == b"MULTI" and reply == b"+OK\r\n":
        side.queued[conn] = []
    elif reply == b"+QUEUED\r\n" and conn in side.queued:
        side.queued[conn].append(args)
    elif name in (b"DISCARD", b"RESET") and not reply.startswith(b"-"):
        side.queued.pop(conn, None)
    if kind == "sub" and is_pubsub_ack(reply):
        for _ in range(len(args) - 2):
            out.append((args, side.read(conn)))
    elif kind.startswith("pub:"):
        m = re.fullmatch(rb":(\d+)\r\n", reply)
        messages = [side.read(kind[4:]) for _ in range(min(int(m.group(1)), 4) if m else 0)]
        # Redis 7.0 walks its dict of patterns (random order) for the
        # pmessages, after the channel's message: those are compared sorted.
        patterned = iter(sorted(x for x in messages if b"pmessage" in x[:20]))
        out += [([b"(message)"], next(patterned) if b"pmessage" in x[:20] else x) for x in messages]
    return out


def reset(sides):
    """Both servers as at the start: only default (all allowed) and admin,
    no keys, no log, statistics zero, the user connections closed."""
    for side in sides:
        side.close_all()
        ctl = side.get("ctl")
        for args in ([b"CONFIG", b"SET", b"acl-pubsub-default", b"resetchannels"],
                     [b"ACL", b"SETUSER", b"default", b"reset", b"on", b"nopass", b"~*", b"&*", b"+@all"],
                     [b"CONFIG", b"SET", b"acllog-max-len", b"128"]):
            reply = ctl.call(args)
            if reply != b"+OK\r\n":
                raise RuntimeError("reset: %r: %r" % (args, reply))
        users = rd.parse(ctl.call([b"ACL", b"USERS"]))[0][1]
        extra = [u[1:] for u in users if u[1:] not in (b"default", ADMIN[0])]
        if extra:
            ctl.call([b"ACL", b"DELUSER"] + extra)
        for args in ([b"ACL", b"LOG", b"RESET"], [b"FLUSHALL"], [b"SCRIPT", b"FLUSH"], [b"CONFIG", b"RESETSTAT"]):
            ctl.call(args)
        side.close_all()  # a fresh ctl (RESETSTAT counted its own commands so far)


def first_difference(a, b):
    """The first items that differ in two compared values; None when equal."""
    if a == b:
        return None
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) == 2 and isinstance(a[1], list) and \
            isinstance(b[1], list) and a[0] == b[0]:
        for i, j in zip(a[1], b[1]):
            if i != j:
                return first_difference(i, j)
        return ("%d items" % len(a[1]), "%d items" % len(b[1]))
    return a, b


def describe(args):
    return b" ".join(a if re.fullmatch(rb"[\x21-\x7e]+", a) else repr(a).encode() for a in args)


def run_seed(seed, commands, redis_port, ringkv_port, resp3, check_every, show=None, keep_going=False):
    gen = Generator(seed)
    sides = None
    if show is None:
        sides = [Side(redis_port, resp3), Side(ringkv_port, resp3)]
        reset(sides)
    n = 0
    failed = False
    while n < commands:
        for step in gen.items():
            if n >= commands:
                break
            conn, args, kind = step
            if show is not None:
                if n <= show:
                    print("%d: [%s] %s%s" % (n, conn, describe(args).decode("latin-1") if args else "(reopen)",
                                             "" if kind == "call" else "  (%s)" % kind))
                n += 1
                continue
            x, y = run_step(sides[0], step), run_step(sides[1], step)
            same = len(x) == len(y) and all(comparable(a, r) == comparable(b, s) for (a, r), (b, s) in zip(x, y))
            if any(r == TIMEOUT for _, r in x + y):  # a reply that never came: a hang (or the harness waits wrongly)
                print("seed %d, command %d: no reply within 10 s" % (seed, n))
                same = False
            if not same:
                print("seed %d, command %d, connection %s: %s%s" % (seed, n, conn, describe(args).decode("latin-1"),
                                                                     "" if kind == "call" else " (%s)" % kind))
                print("  redis : %r\n  ringkv: %r" % (b"".join(r for _, r in x if r)[:1500],
                                                      b"".join(r for _, r in y if r)[:1500]))
                for (a, r), (b, t) in zip(x, y):
                    where = first_difference(comparable(a, r), comparable(b, t))
                    if where:
                        print("  first difference (as compared):\n    redis : %r\n    ringkv: %r" % where)
                        break
                failed = True
                if not keep_going:
                    return False
                reset(sides)
            elif check_every and n % check_every == check_every - 1:
                if not stats_match(seed, n, sides):
                    failed = True
                    if not keep_going:
                        return False
                    reset(sides)
            n += 1
    if show is not None:
        return True
    return stats_match(seed, n, sides) and not failed


def stats_match(seed, n, sides):
    """INFO's error, command and lookup counts alike (asked on ctl)."""
    return rd.stats_match(sides[0].get("ctl"), sides[1].get("ctl"), "seed %d, after command %d" % (seed, n))


def main():
    ap = fd.parser(commands=2000, known=KNOWN, resp3=True,
                   keep_going="after a mismatch, reset both servers and go on (every mismatch of a seed)",
                   show="SEED:N prints that seed's steps up to N, runs nothing")
    ap.add_argument("--check-every", type=int, default=50, help="INFO's counts every N commands (0: at the end)")
    opts = fd.parse(ap, KNOWN, AVOID)
    if opts.show:
        seed, last = opts.show
        run_seed(seed, last + 1, None, None, opts.resp3, opts.check_every, show=last)
        return
    with fd.servers("ringkv-fuzz-", [opts.redis], [opts.ringkv]) as run:
        redis_port, ringkv_port = run.ports
        for port in run.ports:
            reply = rd.Conn(port).call([b"ACL", b"SETUSER", ADMIN[0], b"on", b">" + ADMIN[1], b"~*", b"&*",
                                        b"+@all"])
            if reply != b"+OK\r\n":
                raise RuntimeError("creating the admin user: %r" % reply)
        run.seeds(opts.seeds, lambda seed: run_seed(seed, opts.commands, redis_port, ringkv_port, opts.resp3,
                                                    opts.check_every, keep_going=opts.keep_going))
        run.summary("fuzz_acl", opts.commands, note=" (RESP3)" if opts.resp3 else "")
    sys.exit(run.status)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Randomized differential test of Lua scripting: the same seeded stream of
EVAL, EVAL_RO, SCRIPT LOAD + EVALSHA(_RO), FUNCTION LOAD of generated
libraries + FCALL(_RO), FUNCTION LIST / STATS / DUMP / RESTORE / DELETE /
FLUSH, SCRIPT EXISTS / FLUSH, COMMAND INFO / GETKEYS of the scripting
commands and DEBUG RELOAD goes to redis-server 7.0 and to ringkv; every reply
must match byte for byte, and every 25 commands DEBUG DIGEST (the keyspace),
the loaded functions (FUNCTION LIST WITHCODE, order-free) and INFO's
counts (keyspace hits / misses, expired keys, errorstats, commandstats:
run_diff.stats_match) must too.

Usage: fuzz_scripting.py --ringkv PATH [--redis redis-server]
                         [--seeds 1,2,3] [--commands 2000] [--resp3]
                         [--check-every 25] [--avoid NAME,...|all]
                         [--no-lookup-stats] [--keep-going] [--show SEED:N]
                         [--replica] [--aof]

The scripts are random statements: redis.call / redis.pcall of string, list,
hash, set, sorted-set and generic commands, mostly on their own type's key
(k1 string, k2 list, k3 hash, k4 set, k5 zset), some on another one or on
KEYS[i] (WRONGTYPE), with well-formed and arbitrary arguments (numbers,
floats, huge, negative, inf / nan, empty, binary with NUL and CR LF, nil /
booleans / tables, which Redis refuses with its own error), disallowed,
unknown and oddly spelled commands, then a return of any Lua type: numbers
(3.99 becomes 3), strings, booleans, nil, nested tables with holes, err /
ok / double / big_number / map / set / verbatim_string tables,
redis.error_reply / status_reply, error() with a string or an err table,
pcall / xpcall / coroutine results, redis.sha1hex, cjson (and its settings),
cmsgpack, struct, bit, string and math functions, the sandbox's globals and
metatables, redis.setresp(3) (RESP3 replies inside the script), set_repl,
replicate_commands, breakpoint, debug, log, acl_check_cmd, math.random.
Shebang flags (good and bad), wrong numkeys, syntax errors, writes from
EVAL_RO and from no-writes scripts and functions, scripts inside MULTI and
after WATCH, and stretches under maxmemory 1 (the OOM paths) are all in the
mix; FUNCTION DUMP payloads are restored into both servers whole and
damaged (truncated, bits flipped, version, opcode or code changed with the
CRC made right again).

Left out, because Redis's own answer is not reproducible (or Redis fails):
  * nothing of math.random: Redis 7.0 seeds its rand48 at random once, at
    start (no reset per script), and EVAL and functions share it; so every
    seed starts with an EVAL of math.randomseed(0) on both servers, and from
    there the sequences are the same;
  * tostring() of a table or function, and anything else that prints an
    address; collectgarbage / gcinfo (memory figures); newproxy;
  * RESP3 sets and maps whose members are tables (a status reply becomes
    {ok=...}): a table key's place in a Lua table follows its address, so
    their order is Redis's own chance (COMMAND INFO under setresp(3));
  * error() with a table that has no string `err` field: redis-server
    7.0.15 crashes (a NULL message into sdscatfmt in luaCallFunction);
  * a verbatim_string format shorter than 3 bytes: Redis copies 3 bytes of
    it regardless (reads past the string);
  * SMEMBERS / SINTER / SUNION / SDIFF / KEYS replies: Redis 7.0 no longer
    sorts them for scripts, and a hash-table set's order follows its random
    hash seed, so the scripts sort them (table.sort) before using them;
    hashes stay small listpacks (short values, few fields) so that HGETALL,
    HKEYS and HVALS keep insertion order; SPOP, SRANDMEMBER, RANDOMKEY,
    TIME, LASTSAVE, CLIENT ID and the like are never called;
  * expiry times that are relative and in the future (they land some
    milliseconds apart, which DEBUG DIGEST sees) or absolute and past in
    SET (the key stays until active expiry removes it, at any moment);
  * FUNCTION LIST's order of libraries and of a library's functions (Redis
    walks its dicts): it is compared sorted; FUNCTION DUMP's bytes are
    compared only with at most one library loaded; with several conflicts
    FUNCTION LOAD / RESTORE reports the first its dict gives, so which name
    a "Function / Library ... already exists" names is not compared (when
    the code names it); COMMAND INFO of FUNCTION and SCRIPT (their
    subcommands come in dict order).
What the scripts propagate is compared too, Redis's replicas and AOF
against ringkv's, so that redis.set_repl's modes (a write kept from the
replicas or the AOF) count as well:
  * --replica: a redis-server replica follows redis-server and a ringkv
    replica ringkv; at every check each reaches its primary's offset, then
    the two replicas' DEBUG DIGEST and FUNCTION LIST WITHCODE must match;
  * --aof: both servers write an AOF (appendfsync always, BGREWRITEAOF half
    way through each seed); at each seed's end redis-server's AOF loaded
    into a new redis-server is the reference, and ringkv's AOF loaded into
    ringkv and into redis-server, and redis-server's into ringkv, must give
    its DEBUG DIGEST and FUNCTION LIST WITHCODE.

Mismatches already reported are listed in KNOWN; --avoid NAME,... (or all)
leaves them out of the generator so that a run looks past them.
--keep-going reports every mismatch of a seed, emptying both servers after
each. Exit status 1 on a mismatch, with the seed and command number; --show
SEED:N prints the commands of that seed up to N (what to replay by hand).
"""
import hashlib
import random
import re
import sys

import fuzz_collections as fc
import fuzz_driver as fd
import run_diff as rd

# Keys by the type their commands want: most calls go to a key of their own
# family, some to another (WRONGTYPE) or to KEYS[i].
FAMILY_KEY = {"string": b"k1", "list": b"k2", "hash": b"k3", "set": b"k4", "zset": b"k5", "any": b"k1"}
KEYS = [b"k1", b"k2", b"k3", b"k4", b"k5"]
STRINGS = [b"", b"a", b"b", b"c", b"k1", b"k2", b"1", b"0", b"-1", b"10", b"3.5", b"-2.5", b"1e3", b"inf",
           b"-inf", b"nan", b"9223372036854775807", b"-9223372036854775808", b"9223372036854775808",
           b"a\x00b", b"\x00", b"\r\n", b"x\r\ny", b"hello world", b"\xff\xfe", b"OK", b"ERR x", b"-ERR y",
           b"+ok", b"x" * 30, b"{}", b"[1,2]", b"0x10", b" 1", b"(1", b"[a", b"-", b"+", b"3.0", b"01",
           b"WRONGTYPE z", b"-NOSCRIPT q", b"\n", b"\r", b"\r\nab\n"]
NUMBERS = ["0", "1", "-1", "2", "3", "10", "3.99", "-3.99", "0.5", "-0.5", "0.1", "1e3", "1.5e20", "1e300",
           "-1e300", "2^53", "2^53+1", "2^63", "-2^63", "1/0", "-1/0", "0/0", "123456789", "9007199254740993",
           "-0", "1e-300", "4294967296", "2147483647", "-2147483648", "1e15", "123456.789", "-(2^31)", "1e16",
           "0.30000000000000004", "5e-324", "-(0/0)"]
INDEXES = ["0", "1", "-1", "2", "-2", "5", "100", "'x'", "'1'", "1.5", "-100"]
SCORES = ["1", "2", "2.5", "-1", "0", "'inf'", "'-inf'", "1e20", "'3.0000000000000004'", "'x'", "0.1", "'nan'",
          "-0", "'+inf'", "1/0", "1.5"]
MEMBERS = [b"a", b"b", b"c", b"1", b"2", b"10", b"x y", b"", b"\x00"]
# No long values: a hash past hash-max-listpack-value becomes a hash table,
# whose HGETALL order follows Redis's random seed.
FIELDS = [b"f", b"g", b"h", b"1", b"", b"a\x00"]

# Commands inside scripts, by family. K a key of the family, V value, N
# number, I index, F field, M member, S score, B score bound, D database, T an
# absolute expiry, R a relative one; neither a few ms ahead (the two servers'
# clocks differ), nor a past one that SET keeps (active expiry removes it at
# any time). Anything else is literal. A "sorted:" form's reply is sorted in
# Lua first (see the module comment).
SPECS = {
    "string": ["set K V", "set K V exat 4102444800", "set K V nx", "set K V xx get", "set K V pxat T", "get K",
               "getdel K", "incr K", "decr K", "incrby K N", "decrby K N", "incrbyfloat K S", "append K V",
               "strlen K", "getrange K I I", "setrange K I V", "mget K K", "mset K V K V", "setnx K V",
               "getset K V", "getex K persist", "lcs K K", "lcs K K len", "lcs K K idx withmatchlen", "get K",
               "set K N", "incrbyfloat K N", "msetnx K V K V", "substr K I I"],
    "list": ["lpush K V V", "rpush K V", "rpush K M M M", "lpop K", "rpop K N", "lpop K 2", "lrange K I I", "llen K",
             "lindex K I", "lset K I V", "lrem K I M", "linsert K before M V", "linsert K after M V", "lpos K M",
             "lpos K M rank I count I", "lmove K K left right", "rpoplpush K K", "ltrim K I I", "lpushx K V",
             "lrange K 0 -1", "lmpop 1 K left", "blpop K 0", "brpoplpush K K 0"],
    "hash": ["hset K F V", "hset K F V F V", "hget K F", "hdel K F", "hlen K", "hincrby K F N", "hincrbyfloat K F S",
             "hmget K F F", "hexists K F", "hstrlen K F", "hgetall K", "hkeys K", "hvals K", "hsetnx K F V",
             "hmset K F V", "hget K F", "hgetall K"],
    "set": ["sadd K M M", "sadd K M", "srem K M", "scard K", "sismember K M", "smismember K M M",
            "sorted:smembers K", "sorted:sinter K K", "sorted:sunion K K", "sorted:sdiff K K", "sinterstore K K K",
            "sunionstore K K K", "smove K K M", "sintercard 2 K K", "sadd K 1 2 3"],
    "zset": ["zadd K S M", "zadd K S M S M", "zadd K incr S M", "zadd K nx S M", "zadd K gt ch S M", "zscore K M",
             "zincrby K S M", "zrange K I I", "zrange K I I withscores", "zrangebyscore K B B withscores",
             "zrangebyscore K B B", "zrevrange K I I withscores", "zrem K M", "zcard K", "zrank K M", "zcount K B B",
             "zpopmin K", "zpopmax K N", "zmscore K M M", "zunionstore K 2 K K", "zrangestore K K I I",
             "zremrangebyrank K I I", "zrange K 0 -1 withscores", "zunion 2 K K withscores", "zmpop 1 K min",
             "bzpopmin K 0", "zinter 2 K K withscores"],
    "any": ["ping", "ping V", "echo V", "dbsize", "exists K", "exists K K", "object encoding K", "select D",
            "sorted:keys *", "pexpiretime K", "persist K", "expireat K 4102444800", "pexpire K R", "rename K K",
            "copy K K", "unlink K", "type K", "del K", "del K K", "touch K", "expiretime K", "exists K"],
}
FAMILIES = sorted(SPECS)
# Random names for redis.call with random arguments: disallowed in scripts
# (noscript), unknown, blocking ones (which never block in a script), odd
# spellings.
ODD_COMMANDS = ["multi", "exec", "watch", "unwatch", "subscribe", "psubscribe", "eval", "evalsha", "fcall",
                "script", "function", "blpop", "brpop", "bzpopmin", "blmove", "wait", "monitor", "hello",
                "auth", "nosuch", "", "GeT", "SET", "Incr", "client", "save", "reset", "quit", "xread",
                "config", "select", "swapdb", "flushdb", "publish", "pubsub", "spublish", "sync",
                "eval_ro", "object", "memory", "readonly", "asking", "get\x00", "discard", "ssubscribe",
                "unsubscribe", "debug", "shutdown", "slaveof", "replicaof", "bgsave", "acl"]  # (not LASTSAVE, TIME)
# Globals and library fields whose presence (type) the sandbox decides.
GLOBALS = ["assert", "collectgarbage", "coroutine", "dofile", "error", "gcinfo", "getfenv", "getmetatable",
           "ipairs", "load", "loadfile", "loadstring", "module", "newproxy", "next", "pairs", "pcall", "print",
           "rawequal", "rawget", "rawset", "require", "select", "setfenv", "setmetatable", "tonumber",
           "tostring", "type", "unpack", "xpcall", "_G", "_VERSION", "string", "table", "math", "os", "io",
           "debug", "package", "bit", "cjson", "cmsgpack", "struct", "redis", "KEYS", "ARGV", "string.dump",
           "os.clock", "os.time", "table.getn", "math.mod", "string.gfind", "coroutine.wrap", "cjson.new",
           "cjson.encode_keep_buffer", "cjson.encode_max_depth", "cjson.decode_max_depth", "bit.tohex",
           "cmsgpack.unpack_one", "struct.size", "redis.breakpoint", "redis.register_function", "redis.setresp",
           "redis.REPL_SLAVE", "redis.LOG_DEBUG", "table.concat", "math.huge", "math.pi", "string.format",
           "table.maxn", "enableGlobalsProtection", "__redis__err__handler", "cjson.safe", "lua_cjson"]
FLAGS = ["no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"]
BAD_FLAGS = ["bad", "No-Writes", "", "no-writes,", "no_writes", ",allow-oom"]
LIBS = ["lib1", "lib2", "lib3", "lib4"]
FUNCS = ["f1", "f2", "f3", "f4", "f5", "f6", "F1", "f-x", ""]
JSON = ['[1,2,3]', '{"a":1,"b":[true,false,null]}', '"str"', '1.5', '1e400', '[', 'nan', '{"a":', '[1,2,[3,[4]]]',
        '"\\u00e9\\u0000x"', '"\\ud83d\\ude00"', 'null', ' true ', '[-0]', '123456789012345678901234',
        '{"1":1,"2":2}', '[' * 1001 + ']' * 1001, '[[[[1]]]]', '{"a":{"b":{"c":[1,{"d":null}]}}}', '', '[1,]',
        '"\\x41"', '0x10', '-', '[1e308, -1e308, 5e-324]', '"a\\nb\\r\\tc\\"\\\\"', 'Infinity', '-Infinity',
        '{"a":1,"a":2}', '[true,false]', '{1:2}', '"unterminated', '[1 2]', '01', '1.', '.5', '[nul]',
        '[0.1, 1e-7, 123456789012345]', '{"k1":"v","k2":["a",{"x":-1.5}]}']
STRUCT_FORMATS = ["'>I2'", "'<i4'", "'b'", "'B'", "'h'", "'H'", "'l'", "'L'", "'f'", "'d'", "'s'", "'z'",
                  "'c5'", "'c0'", "'x'", "'!4i'", "'i8'", "'I16'", "'Q'", "'>i3'", "'<I3'", "'bhBH'",
                  "'>l<l'", "'i0'", "'c'", "'!2hb'", "'xi'", "'=i'", "''", "'>d'", "'I'", "'i'", "'T'", "'>I8'",
                  "'c1'", "'c2c0'", "'i7'"]
MSGPACK = [b"\x93\x01\x02\x03", b"\x81\xa1a\x01", b"\xc0", b"\xc2", b"\xc3", b"\xcb\x3f\xf8\x00\x00\x00\x00\x00\x00",
           b"\xa3abc", b"\xcd\x01\x00", b"\xd0\xff", b"\xcf\xff\xff\xff\xff\xff\xff\xff\xff", b"\x91", b"\xc1",
           b"\x01\x02\x03", b"", b"\xdc\x00\x02\x01\x02", b"\xca\x3f\x80\x00\x00", b"\xd3\x80\x00\x00\x00\x00\x00"
           b"\x00\x00", b"\x92\x90\x80", b"\xd9\x03abc", b"\x82\x01\x02\xa1b\xc3", b"\xde\x00\x01\xa1a\x91\x05",
           b"\xc4\x02ab", b"\xd4\x01\x02", b"\xa5ab"]

# Mismatches already reported, which --avoid NAME,... leaves out of the
# generator so that a run can look past them (the default generates all).
KNOWN = {
    "shebang-parse": "fixed in ringkv, kept to replay it: an EVAL shebang without a newline, one sdssplitargs "
                     "refuses (quotes), an empty flag "
                     "between commas",
    "set-repl-args": "redis.set_repl() with other than one argument ('requires two arguments.' in Redis)",
    "error-crlf": "an error message with CR / LF at its ends ({err=...}, redis.error_reply, a command's error "
                  "quoting an argument): Redis trims them (sdstrim) before mapping the rest to spaces",
    "nan-format": "0/0 as a redis.call argument or a {double=0/0} reply: Redis's %.17g writes -nan",
    "reply-depth": "fixed in ringkv, kept to replay it: a returned table nested deeper than 1000 (a table holding "
                   "itself): Redis converts up to "
                   "the Lua C stack's limit (about 8000)",
    "function-api": "fixed in ringkv, kept to replay it: redis.replicate_commands / breakpoint / debug in a function "
                    "(nil in Redis)",
    "function-name-case": "functions whose names differ in case only, in one library: Redis 7.0.15 has no "
                          "answer to compare with (which one FCALL runs follows its dict's hash seed, and a later "
                          "FUNCTION LOAD REPLACE can fail its assertion functions.c:291 'ret == DICT_OK')",
    "function-flag-case": "register_function flags in another case (Redis compares them with strcasecmp)",
    "api-error-string": "the redis API's own errors (sha1hex, setresp, log, set_repl, acl_check_cmd) raised as "
                        "strings: Redis raises an err table, which pcall gives as 'ERR ...'",
    "string-metatable": "the strings' metatable, getmetatable(''), is writable (Redis: read-only), so a script "
                        "changes string methods for every later script",
    "function-globals": "fixed in ringkv, kept to replay it: __redis__err__handler is a global in functions (not in "
                        "Redis's function sandbox)",
    "multi-oom": "a command queued in MULTI while used memory > maxmemory: Redis refuses every one but EXEC, "
                 "DISCARD, QUIT and RESET with -OOM (then EXECABORT); ringkv queues it",
    "command-flags": "fixed in ringkv, kept to replay it: COMMAND INFO of EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, FCALL, "
                     "FCALL_RO: Redis lists the "
                     "no_mandatory_keys flag",
    "getkeys-numkeys": "COMMAND GETKEYS / GETKEYSANDFLAGS of EVAL & co. with numkeys like '1.0' or ' 1': "
                       "Redis reads it with atoi",
    "restore-pre-ga": "fixed in ringkv, kept to replay it: FUNCTION RESTORE of the 7.0-rc format (opcode 0xF6: name, "
                      "engine, description, code), "
                      "which Redis 7.0 loads",
    "restore-order": "fixed in ringkv, kept to replay it: FUNCTION RESTORE of a damaged payload: Redis compiles each "
                     "library as it reads it (the "
                     "first bad one's error wins; a conflict with the loaded ones comes last); ringkv reads the "
                     "whole payload first, and reports an existing library before compiling",
    "restore-duplicate": "fixed in ringkv, kept to replay it: FUNCTION RESTORE of a payload that names one library "
                         "twice: Redis refuses it (\"Library "
                         "'x' already exists\", checked before the second copy is compiled), ringkv loads it",
    "metadata-quotes": "fixed in ringkv, kept to replay it: FUNCTION LOAD's '#!lua name=...' line as sdssplitargs "
                       "reads it: a closing quote must end "
                       "the word, \\xHH and \\n escapes in double quotes",
    "function-flush-state": "fixed in ringkv, kept to replay it: the functions' Lua state after FUNCTION FLUSH: "
                            "Redis keeps it (a cjson setting "
                            "such as encode_number_precision stays), ringkv starts a new one",
    "metatable": "fixed in ringkv, kept to replay it: getmetatable() of redis, cjson, string, math, bit, struct, "
                 "cmsgpack, table: nil in Redis (its "
                 "tables are read-only by a flag, not a metatable); _G's is {__index = function} in Redis, "
                 "{__index = table, __newindex = function, __metatable = ...} in ringkv",
}
AVOID, avoiding = fd.switches(KNOWN)  # --avoid fills AVOID; avoiding(NAME): that mismatch is left out
LOOKUP_STATS = True  # --no-lookup-stats: INFO's error and command counts only


def lua_str(b):
    """A Lua string literal of any bytes."""
    out = []
    for c in b:
        if c == 0x5C:
            out.append("\\\\")
        elif c == 0x22:
            out.append('\\"')
        elif 32 <= c < 127:
            out.append(chr(c))
        else:
            out.append("\\%03d" % c)
    return '"' + "".join(out) + '"'


class Body:
    """The Lua source of one script or function: statements over locals.
    keys / argv name the tables of keys and arguments (KEYS / ARGV, or a
    function's parameters), nkeys / nargs how many the call will likely
    pass."""

    def __init__(self, gen, keys="KEYS", argv="ARGV", nkeys=2, nargs=2):
        self.rnd = gen.rnd
        self.K, self.A = keys, argv
        self.nkeys, self.nargs = nkeys, nargs
        self.in_function = keys != "KEYS"
        self.vars = []
        self.lines = []
        self.helpers = False

    def pick(self, seq):
        return self.rnd.choice(seq)

    # ---- expressions --------------------------------------------------------

    def key(self, family="any"):
        r = self.rnd.random()
        if r < 0.65:
            return lua_str(FAMILY_KEY[family])
        if r < 0.85 and self.nkeys:
            return "%s[%d]" % (self.K, self.rnd.randint(1, self.nkeys))
        if r < 0.97:
            return lua_str(self.pick(KEYS))
        return self.value()

    def string(self):
        if avoiding("error-crlf"):
            return lua_str(self.pick([x for x in STRINGS if x.strip(b"\r\n") == x]))
        return lua_str(self.pick(STRINGS))

    def number(self):
        if avoiding("nan-format"):
            return self.pick([x for x in NUMBERS if x != "0/0"])
        return self.pick(NUMBERS)

    def argv_item(self):
        if self.nargs and self.rnd.random() < 0.9:
            return "%s[%d]" % (self.A, self.rnd.randint(1, self.nargs))
        return "%s[%d]" % (self.A, self.rnd.randint(1, 4))

    def value(self):
        """An argument for redis.call: mostly a string or a number."""
        r = self.rnd.random()
        if r < 0.45:
            return self.string()
        if r < 0.7:
            return self.number()
        if r < 0.82:
            return self.argv_item()
        if r < 0.88 and self.vars:
            return self.pick(self.vars)
        if r < 0.91:
            return self.pick(["nil", "true", "false", "{}", "{1}", "{'a'}", "redis", "print"])
        return self.pick(["'a'..'b'", "string.rep('ab', 3)", "tostring(1.5)", "tostring(-0)", "1 .. ''",
                          "'k' .. 1", "string.char(0, 1, 255)", "('x'):upper()", "#'abc'", "2 * 3.5",
                          "string.format('%.17g', 0.1)", "tostring(2^63)", "tostring(1e15)", "7 / 2", "-7 % 3",
                          "2^31", "1e15 + 0.5"])

    def arg(self, kind, family):
        if kind == "K":
            return self.key(family)
        if kind == "V":
            return self.value()
        if kind == "N":
            if self.rnd.random() < 0.8:
                return self.pick([x for x in NUMBERS + INDEXES if x != "0/0" or not avoiding("nan-format")])
            return self.value()
        if kind == "I":
            return self.pick(INDEXES)
        if kind == "F":
            return lua_str(self.pick(FIELDS)) if self.rnd.random() < 0.9 else self.value()
        if kind == "M":
            return lua_str(self.pick(MEMBERS)) if self.rnd.random() < 0.9 else self.value()
        if kind == "S":
            return self.pick(SCORES)
        if kind == "B":
            return self.pick(["'-inf'", "'+inf'", "'(1'", "2", "1", "'(2.5'", "0", "'x'"])
        if kind == "T":
            return self.pick(["4102444800000", "0", "-1", "'x'", "1.5", "2^63", "-2^63", "''"])
        if kind == "R":
            return self.pick(["0", "-1", "'x'", "1.5", "2^63", "-2^63", "''", "-100000"])
        if kind == "D":
            return self.pick(["0", "1", "2", "'1'", "16", "-1", "'x'"])
        return lua_str(kind.encode())

    def call(self, pcall=None, family=None):
        """redis.call / redis.pcall of a command; its Lua expression."""
        fn = "redis.pcall" if (pcall if pcall is not None else self.rnd.random() < 0.5) else "redis.call"
        if self.rnd.random() < 0.9:
            family = family or self.pick(FAMILIES)
            spec = self.pick(SPECS[family])
            do_sort = spec.startswith("sorted:")
            words = spec.split(":", 1)[-1].split()
            args = [lua_str(words[0].encode())] + [self.arg(w, family) for w in words[1:]]
            # A few argument-count mistakes, an extra arbitrary argument.
            if self.rnd.random() < 0.03 and len(args) > 1:
                args.pop()
            elif self.rnd.random() < 0.03:
                args.append(self.value())
            if self.rnd.random() < 0.05:
                args[0] = lua_str(self.pick([words[0].upper().encode(), words[0].capitalize().encode()]))
            expr = "%s(%s)" % (fn, ", ".join(args))
            if do_sort:
                self.helpers = True
                expr = "sorted_(%s)" % expr
            return expr
        r = self.rnd.random()
        if r < 0.8:
            name = lua_str(self.pick(ODD_COMMANDS).encode())
        elif r < 0.9:
            name = self.value()
        else:
            return "%s()" % fn
        args = [name] + [self.value() for _ in range(self.rnd.randint(0, 3))]
        return "%s(%s)" % (fn, ", ".join(args))

    def table(self, depth=0):
        """A table constructor: arrays with holes, nested tables, keyed entries."""
        items = []
        for _ in range(self.rnd.randint(0, 4)):
            r = self.rnd.random()
            if r < 0.1:
                items.append("nil")
            elif r < 0.25 and depth < 3:
                items.append(self.table(depth + 1))
            elif r < 0.35:
                items.append("%s = %s" % (self.pick(["a", "b", "x", "err_", "n", "ok", "double"]), self.scalar()))
            elif r < 0.4:
                items.append("[%s] = %s" % (self.pick(["1", "2", "3", "5", "'1'", "1.5", "true", "-1", "0"]),
                                            self.scalar()))
            else:
                items.append(self.scalar())
        return "{" + ", ".join(items) + "}"

    def scalar(self):
        r = self.rnd.random()
        if r < 0.4:
            return self.string()
        if r < 0.75:
            return self.number()
        if r < 0.85:
            return self.pick(["true", "false"])
        if r < 0.92 and self.vars:
            return self.pick(self.vars)
        return self.argv_item() if self.rnd.random() < 0.5 else "%s[%d]" % (self.K, self.rnd.randint(1, 3))

    def special(self):
        """A table Redis converts by its fields."""
        s, n, sc, t = self.string, self.number, self.scalar, self.table
        forms = [
            lambda: "{err = %s}" % s(), lambda: "{ok = %s}" % s(), lambda: "{err = %s, ok = %s}" % (s(), s()),
            lambda: "{err = %s}" % n(), lambda: "{ok = %s}" % n(), lambda: "{double = %s}" % n(),
            lambda: "{double = %s}" % n(), lambda: "{double = %s}" % s(), lambda: "{big_number = %s}" % s(),
            lambda: "{big_number = %s}" % n(), lambda: "{map = %s}" % t(1),
            lambda: "{map = {a = %s, b = %s}}" % (sc(), sc()),
            lambda: "{map = {[1] = %s, x = %s, [%s] = %s}}" % (sc(), t(2), self.pick(["true", "1.5", "-1"]), sc()),
            lambda: "{map = {m = {map = {x = %s}}, s = {set = {y = true}}, d = {double = %s}}}" % (sc(), n()),
            lambda: "{set = {a = true, b = true, [1] = true}}", lambda: "{set = %s}" % t(1),
            lambda: "{set = {a = false, [2.5] = 1, [true] = true}}",
            lambda: "{set = {}}", lambda: "{map = {}}",
            lambda: "{verbatim_string = {format = %s, string = %s}}" % (
                self.pick(["'txt'", "'mkd'", "'abcd'", "'x:y'"]), s()),
            lambda: "{verbatim_string = {format = 'txt'}}", lambda: "{verbatim_string = 'x'}",
            lambda: "{verbatim_string = {format = 'txt', string = 5}}",
            lambda: "{double = %s, err = %s}" % (n(), s()),
            lambda: "{1, 2, err = %s}" % s(), lambda: "{ok = 'x', 5, 6}", lambda: "{map = 5}",
            lambda: "{set = 'x', 1}", lambda: "{big_number = %s, double = %s}" % (s(), n()),
            lambda: "redis.error_reply(%s)" % s(), lambda: "redis.status_reply(%s)" % s(),
            lambda: "redis.error_reply(%s)" % self.pick(["", "1", "nil", "{}", "'-'", "'x', 'y'"]),
            lambda: "redis.status_reply(%s)" % self.pick(["", "1", "nil", "{}", "'x', 'y'"]),
        ]
        return self.pick(forms)()

    def library(self):
        """cjson, cmsgpack, struct, bit, sha1hex, string and math calls."""
        p, s, n, t = self.pick, self.string, self.number, self.table
        forms = [
            lambda: "redis.sha1hex(%s)" % p([s(), n(), "nil", "{}"] + ([] if avoiding("api-error-string") else
                                                                       ["", "%s, %s" % (s(), s())])),
            lambda: "cjson.encode(%s)" % p([t(), t(), s(), n(), "true", "nil", self.special(),
                                            "{[1]=1, [2]=2, [10]=3}", "{[1]=1, [1000]=2}", "{1, nil, 3}",
                                            "cjson.null", "{cjson.null}", "{a = {b = {c = {}}}}", "print",
                                            "{[1.5] = 1}", "{[true] = 1}", "{1, x = 2}"]),
            lambda: "cjson.decode(%s)" % lua_str(p(JSON).encode()),
            lambda: "cjson.decode(cjson.encode(%s))" % t(),
            lambda: "cjson.decode(%s)" % p(["nil", "1", "{}", "'1', 2"]),
            lambda: "cmsgpack.pack(%s)" % ", ".join(self.scalar_or_table() for _ in range(self.rnd.randint(0, 3))),
            lambda: "cmsgpack.unpack(cmsgpack.pack(%s))" % t(),
            lambda: "{cmsgpack.unpack(%s)}" % lua_str(p(MSGPACK)),
            lambda: "{cmsgpack.unpack_one(%s%s)}" % (lua_str(p(MSGPACK)), p(["", ", 0", ", 1", ", -1", ", 3"])),
            lambda: "{cmsgpack.unpack_limit(%s, %s%s)}" % (lua_str(p(MSGPACK) * 2), p(["0", "1", "2", "-1"]),
                                                          p(["", ", 1", ", 4", ", -1"])),
            lambda: "cmsgpack.pack(%s)" % p(["1.5", "-1", "127", "128", "-32", "-33", "255", "256", "65535",
                                             "65536", "2^32", "-2^31-1", "2^63", "0.1", "1/0", "-(0/0)", "-(2^40)",
                                             "string.rep('a', 40)", "string.rep('a', 300)", "{[1]=1, [3]=3}",
                                             "-128", "-129", "-32768", "-32769", "2^64", "-2^63", "2^53+1",
                                             "1e-300", "{a = {b = {1, 2}}}", "nil", "true, false"]),
            lambda: "struct.pack(%s)" % ", ".join([p(STRUCT_FORMATS)] + [self.scalar() for _ in
                                                                       range(self.rnd.randint(0, 3))]),
            lambda: "{struct.unpack(%s, %s)}" % (p(STRUCT_FORMATS), p([s(), "'\\001\\002\\003\\004\\005\\006"
                                                                         "\\007\\008\\009'", "'abcdefghijklmnop'"])),
            lambda: "{struct.unpack(%s, struct.pack(%s, %s, %s))}" % ((p(STRUCT_FORMATS),) * 2 + (n(), n())),
            lambda: "{struct.unpack('>I2', 'abcdef', %s)}" % p(["1", "2", "5", "6", "0", "-1", "10"]),
            lambda: "struct.size(%s)" % p(STRUCT_FORMATS),
            lambda: "bit.%s(%s)" % (p(["band", "bor", "bxor"]), ", ".join(n() for _ in range(self.rnd.randint(0, 3)))),
            lambda: "bit.%s(%s, %s)" % (p(["lshift", "rshift", "arshift", "rol", "ror"]), n(),
                                        p(["0", "1", "4", "31", "32", "33", "-1"])),
            lambda: "bit.%s(%s)" % (p(["bnot", "tobit", "bswap"]), n()),
            lambda: "bit.tohex(%s%s)" % (n(), p(["", ", 2", ", -4", ", 0", ", 9"])),
            lambda: "tostring(%s)" % p([n(), s(), "true", "nil"]),
            lambda: "tonumber(%s)" % p([s(), n(), "'0x1f'", "'  5  '", "'1e'", "'z', 36"]),
            lambda: "string.format(%s, %s)" % (p(["'%d'", "'%5.2f'", "'%s'", "'%q'", "'%x'", "'%g'", "'%.17g'",
                                                  "'%c'", "'%i'", "'%%'", "'%10s|'"]), p([n(), s()])),
            lambda: "#%s" % p([s(), t()]),
            lambda: "select('#', %s)" % ", ".join(self.scalar() for _ in range(self.rnd.randint(0, 3))),
            lambda: "type(%s)" % self.expr(1),
            lambda: "type(%s)" % p(self.globals()),
            lambda: "{type(%s), type(%s), type(%s)}" % (p(self.globals()), p(self.globals()), p(self.globals())),
            lambda: "_VERSION",
            lambda: "math.%s(%s)" % (p(["floor", "ceil", "abs", "sqrt", "fmod", "max", "min", "modf", "pow", "exp",
                                        "log", "log10", "frexp", "ldexp"]),
                                     ", ".join([n(), n()][:self.rnd.randint(1, 2)])),
            lambda: "string.%s(%s)" % (p(["sub", "byte", "upper", "lower", "reverse", "len", "rep"]),
                                       ", ".join([s(), p(["1", "2", "-1", "0", "3"])][:self.rnd.randint(1, 2)])),
            lambda: "table.concat(%s, %s)" % (p(["{'a', 'b'}", "{1, 2.5, 'x'}", "{}", "{{}}"]), p(["','", "''"])),
            lambda: "redis.REDIS_VERSION_NUM", lambda: "redis.REDIS_VERSION",
            lambda: "redis.LOG_WARNING + redis.REPL_ALL + redis.REPL_SLAVE + redis.REPL_AOF + redis.REPL_NONE",
            lambda: "{pcall(%s)}" % p(["error", "redis.call", "cjson.decode", "struct.pack", "bit.band",
                                       "function() return 1, 2 end", "string.rep", "math.random", "redis.pcall",
                                       "redis.error_reply", "cmsgpack.unpack"] +
                                      ([] if avoiding("api-error-string") else
                                       ["redis.sha1hex", "redis.setresp", "redis.log", "redis.set_repl, 9",
                                        "redis.acl_check_cmd", "redis.setresp, 4", "redis.log, 'x', 'y'"])),
            lambda: "{pcall(error, %s)}" % p([s(), n(), "{err = 'x y'}", "{err = 'E'}", "nil"]),
            lambda: "{pcall(redis.call, %s)}" % ", ".join(self.value() for _ in range(self.rnd.randint(0, 3))),
            lambda: "{redis.pcall(%s)}" % self.call(pcall=True)[len("redis.pcall("):-1],
            lambda: "{xpcall(function() return %s end, function(e) return {e} end)}" % self.call(pcall=False),
            lambda: "string.len(string.rep('x', %s))" % p(["0", "5", "-1", "2^20"]),
            lambda: "redis.sha1hex(cjson.encode(%s))" % t(),
            lambda: "getmetatable(%s)" % p(["KEYS"] + ([] if avoiding("string-metatable") else ["''"]) +
                                           ([] if avoiding("metatable") else
                                            ["_G", "redis", "cjson", "string", "bit"])),
            lambda: "sorted_(keys_(%s))" % p(["cjson", "string", "math", "table", "bit", "struct",
                                              "cmsgpack", "coroutine", self.K, "getmetatable('')"] +
                                             ([] if self.in_function and avoiding("function-globals") else ["_G"]) +
                                             ([] if self.in_function and avoiding("function-api") else ["redis"])),
            lambda: "{unpack(%s)}" % p(["{1, 2, 3}", "{}", "{1, nil, 3}", self.K, self.A]),
            lambda: "%s.%s" % (p(["redis.call('ping')", "redis.pcall('incr', 'nokey:x', 'y')",
                                  "redis.pcall('nosuch')", "redis.error_reply('E x')"]), p(["ok", "err"])),
        ]
        forms += [lambda: "math.random()", lambda: "math.random(%s)" % p(["1", "10", "100", "0", "-1", "2^40"]),
                  lambda: "math.random(%s, %s)" % (p(["1", "-5", "10"]), p(["1", "10", "100", "-10"])),
                  lambda: "tostring(math.random())",
                  lambda: "coroutine.wrap(function() return %s end)()" % self.call(),
                  lambda: "{coroutine.resume(coroutine.create(function(a) local b = coroutine.yield(a) "
                          "return %s, b end), %s)}" % (self.call(), self.scalar()),
                  lambda: "{xpcall(%s, %s)}" % (p(["error", "redis.call", "function() return 1 end"]),
                                               p(["error", "function(e) return e end", "redis.call"])),
                  lambda: "select(2, pcall(function() local function f(n) return 1 + f(n + 1) end return f(1) end))"]
        if not avoiding("reply-depth"):  # nested deeper than 1000
            forms += [lambda: "(function() local t = {1} t[2] = t return t end)()",
                      lambda: "(function() local t = {} local c = t for i = 1, %d do c[1] = {i} c = c[1] end "
                              "return t end)()" % p([999, 1000, 1001, 1500, 3000])]
        if self.in_function:  # what a function's sandbox has
            forms += [lambda: "sorted_(keys_(_G))" if not avoiding("function-globals") else "sorted_(keys_(math))",
                      lambda: "{type(%s), type(%s)}" % (p(self.globals()), p(self.globals()))]
        if not (self.in_function and avoiding("function-flush-state")):
            depths = ["1", "5", "100", "1000"] + ([] if avoiding("reply-depth") else ["2000", "0", "-1"])
            forms += [lambda: "{cjson.encode_number_precision(%s)}" % p(["", "1", "3", "14", "17", "0", "15"]),
                      lambda: "{cjson.encode_sparse_array(%s)}" % p(["", "true", "false, 0", "true, 1, 1", "'on'"]),
                      lambda: "{cjson.%s_max_depth(%s)}" % (p(["encode", "decode"]), p(depths + [""])),
                      lambda: "{cjson.%s_invalid_numbers(%s)}" % (p(["encode", "decode"]),
                                                                  p(["", "true", "false", "'null'", "'on'", "1"])),
                      lambda: "{cjson.encode_keep_buffer(%s)}" % p(["", "true", "false"])]
        return self.pick(forms)()

    def globals(self):
        out = GLOBALS
        if self.in_function and avoiding("function-globals"):
            out = [g for g in out if g != "__redis__err__handler"]
        if self.in_function and avoiding("function-api"):
            out = [g for g in out if g not in ("redis.breakpoint", "redis.debug", "redis.replicate_commands")]
        return out

    def scalar_or_table(self):
        return self.table(1) if self.rnd.random() < 0.3 else self.scalar()

    def expr(self, depth=0):
        """Any value: what a local gets, what a script returns."""
        r = self.rnd.random()
        if r < 0.25:
            return self.call()
        if r < 0.35:
            return self.scalar()
        if r < 0.45 and depth < 2:
            return self.table()
        if r < 0.57:
            return self.special()
        if r < 0.62 and depth < 2:
            return "{%s}" % ", ".join(self.expr(depth + 1) for _ in range(self.rnd.randint(1, 3)))
        if r < 0.65:
            return self.pick(["nil", "true", "false", "{}", self.K, self.A, "{%s[1], %s[2]}" % (self.K, self.A)])
        if r < 0.72 and self.vars:
            v = self.pick(self.vars)
            return self.pick([v, v, "%s[1]" % v, "%s.err" % v, "%s.ok" % v, "%s.double" % v, "{%s}" % v,
                              "%s.map" % v, "%s.set" % v, "{map = %s.map}" % v])
        return self.library()

    # ---- statements ---------------------------------------------------------

    def statement(self):
        r = self.rnd.random()
        p = self.pick
        if r < 0.33:
            name = "v%d" % len(self.vars)
            self.lines.append("local %s = %s" % (name, self.expr()))
            self.vars.append(name)
        elif r < 0.6:
            self.lines.append(self.call())
        elif r < 0.66:
            self.lines.append("redis.setresp(%s)" % p(["3", "3", "3", "2", "1", "4", "'3'", "3.5"]))
        elif r < 0.69:
            self.lines.append(self.api_statement())
        elif r < 0.72:
            self.lines.append("math.randomseed(%s)" % p(["1", "5", "-5", "1.5", "2^40", "0"]))
        elif r < 0.76:
            self.lines.append("for i = 1, %d do %s end" % (self.rnd.randint(0, 5), self.call()))
        elif r < 0.8 and self.vars:
            v = p(self.vars)
            x = self.scalar()
            if x in self.vars and avoiding("reply-depth"):  # no cycle
                x = "1"
            self.lines.append("if type(%s) == 'table' and %s.err == nil then %s[%s] = %s end" % (
                v, v, v, p(["1", "#%s + 1" % v, "'x'", "3"]), x))
        elif r < 0.83 and self.vars:
            # A table's contents as an array, by pairs() -- the iteration
            # order of tables both servers built the same way.
            v = p(self.vars)
            name = "v%d" % len(self.vars)
            self.lines.append("local %s = {} if type(%s) == 'table' then for k, x in pairs(%s) do "
                              "if type(x) ~= 'table' then %s[#%s + 1] = k %s[#%s + 1] = x end end end" % (
                                  name, v, v, name, name, name, name))
            self.vars.append(name)
        elif r < 0.84:
            self.lines.append(p(["error(%s)" % p([self.string(), self.number(), "{err = %s}" % self.string(), "nil",
                                                  "true", "redis.error_reply(%s)" % self.string(),
                                                  "{err = 'E1', x = 1}", "redis.pcall('incr', 'k3')"]),
                                 "error(%s, %s)" % (self.string(), p(["0", "1", "2", "3"])),
                                 "assert(false)", "assert(%s, %s)" % (self.scalar(), self.string())]))
        elif r < 0.855:
            self.lines.append(p(["x = 1", "local x = undefined_global", "return (", "end", "local t = {} t.a.b = 1",
                                 "local n = nil + 1", "local s = 'a' .. {}", "KEYS = nil", "redis.call = nil",
                                 "cjson = nil", "local f = loadstring('return 1')", "setmetatable(_G, nil)",
                                 "rawset(_G, 'y', 1)", "local z = #nil", "local w = ('x')()", "goto x",
                                 "local q = 1 < 'x'", "local c = {} < {}", "_G.x = 1", "print('x')",
                                 "local f = function() end f()", "local t = string.rep('x', -1)",
                                 "local u = redis.x", "local v = bit.x", "string.x = 1", "redis.y = 2",
                                 "cjson.encode = nil", "math.random = nil", "KEYS[1] = 'x'",
                                 "local f = loadstring('return KEYS') local k = f()",
                                 "local f = loadstring('x = 5') f()", "local m = getmetatable('').__index.upper('a')",
                                 "getmetatable('').__index = {}" if not avoiding("string-metatable") else "local s = 1",
                                 "table.insert(%s, 'x')" % self.K, "local g = getfenv(1)"]))
        elif r < 0.89:
            name = "v%d" % len(self.vars)
            self.lines.append("local ok_%s, %s = pcall(function() %s end)" % (name, name, self.inner_return()))
            self.vars.append(name)
            self.vars.append("ok_%s" % name)
        else:
            # a few calls on one family's key, so that the data builds up
            family = p(FAMILIES)
            for _ in range(self.rnd.randint(1, 3)):
                self.lines.append(self.call(family=family))

    def api_statement(self):
        """The rest of the redis API, for its effect or its error."""
        p = self.pick
        forms = [
            lambda: "redis.set_repl(redis.REPL_%s)" % p(["ALL", "NONE", "AOF", "REPLICA", "SLAVE"]),
            lambda: "redis.set_repl(%s)" % p(["5", "-1", "'x'"] + ([] if avoiding("set-repl-args") else ["", "1, 2"])),
            lambda: "redis.log(redis.LOG_%s, %s)" % (p(["DEBUG", "VERBOSE", "NOTICE", "WARNING"]), self.value()),
            lambda: "redis.log(%s)" % p(["", "1", "5, 'x'", "'x', 'y'", "-1, 'x'", "0, 'a', 'b', {}", "'1', 'x'"]),
            lambda: "redis.setresp()",
            lambda: "local _ = redis.acl_check_cmd(%s)" % ", ".join([lua_str(p(ODD_COMMANDS + ["set", "get"]).encode()),
                                                                    self.value()]),
        ]
        if not self.in_function or not avoiding("function-api"):  # not in a function's redis API
            forms += [lambda: "redis.replicate_commands()", lambda: "redis.breakpoint()",
                      lambda: "redis.debug(%s)" % self.value()]
        return p(forms)()

    def inner_return(self):
        return "return %s" % self.expr(1) if self.rnd.random() < 0.6 else self.call(pcall=False)

    def source(self, statements=None):
        for _ in range(statements if statements is not None else self.rnd.randint(0, 6)):
            self.statement()
        r = self.rnd.random()
        if r < 0.78:
            self.lines.append("return %s" % self.expr())
        elif r < 0.88:
            self.lines.append("return %s, %s" % (self.expr(), self.expr()))
        elif r < 0.93:
            self.lines.append("return")
        # else: no return at all
        if self.helpers or "sorted_(" in "".join(self.lines):
            self.lines.insert(0, "local function sorted_(t) if type(t) ~= 'table' or t.err then return t end "
                                 "if t.set then local a = {} for k in pairs(t.set) do a[#a + 1] = k end "
                                 "table.sort(a) return a end table.sort(t) return t end "
                                 "local function keys_(t) local a = {} for k in pairs(t) do "
                                 "a[#a + 1] = tostring(k) end return a end")
        sep = self.pick(["\n"] * 8 + [" ", " ", "\r\n", "\r"])
        return sep.join(self.lines)


class Generator:
    def __init__(self, seed, resp3):
        self.rnd = random.Random(seed)
        self.resp3 = resp3
        self.bodies = []  # bodies sent with EVAL or SCRIPT LOAD (their SHAs)
        self.functions = {}  # library name: the function names its last FUNCTION LOAD registers
        self.restore_mode = b"FLUSH"
        self.oom_left = 0  # items left under maxmemory 1 (every write refused: the OOM paths)

    def pick(self, seq):
        return self.rnd.choice(seq)

    def keys_and_args(self):
        """(numkeys, keys and args; how many keys; how many args): mostly
        right, sometimes numkeys wrong."""
        nkeys = self.rnd.choice([0, 1, 1, 2, 2, 3])
        keys = [self.pick(KEYS) for _ in range(nkeys)]
        pool = STRINGS + MEMBERS
        if avoiding("error-crlf"):  # (an argument a command's error quotes)
            pool = [x for x in pool if x.strip(b"\r\n") == x]
        args = [self.pick(pool) for _ in range(self.rnd.randint(0, 3))]
        r = self.rnd.random()
        if r < 0.03:
            numkeys = self.pick([b"-1", b"x", b"1.0", b"", b"99", b"9223372036854775808", b" 1"])
        elif r < 0.05:
            numkeys = b"%d" % (nkeys + len(args) + 1)
        else:
            numkeys = b"%d" % nkeys
        return [numkeys] + keys + args, nkeys, len(args)

    def shebang(self, read_only=False):
        r = self.rnd.random()
        if read_only and r < 0.75:
            flags = ["no-writes"] + [self.pick(FLAGS) for _ in range(self.rnd.randint(0, 1))]
            self.rnd.shuffle(flags)
            return "#!lua flags=%s\n" % ",".join(flags)
        if r < 0.6:
            return ""
        if r < 0.93:
            flags = [self.pick(FLAGS) for _ in range(self.rnd.randint(0, 2))]
            if self.rnd.random() < 0.2:
                return "#!lua\n"
            return "#!lua flags=%s\n" % ",".join(flags)
        if avoiding("shebang-parse"):
            return self.pick(["#!lua flags=%s\n" % self.pick(["bad", "No-Writes", "", "no_writes"]), "#!lua name=x\n",
                              "#!luax\n", "#!lua \n", "#! lua\n", "#!lua flags=no-writes flags=allow-oom\n", "#!js\n"])
        return self.pick(["#!lua flags=%s\n" % self.pick(BAD_FLAGS), "#!lua name=x\n", "#!luax\n", "#!lua \n",
                          "#! lua\n", "#!lua flags=no-writes flags=allow-oom\n", "#!js\n", "#!lua flags=no-writes",
                          "#!lua flags='no-writes'\n", "#!lua\tflags=no-writes\n", "#!lua flags=\"no-writes\"x\n"])

    def eval_item(self, command, read_only=False):
        """EVAL-like: the command, the body, numkeys, keys and args."""
        call_args, nkeys, nargs = self.keys_and_args()
        if self.bodies and self.rnd.random() < 0.1:
            body = self.pick(self.bodies)  # the same again: cached in both
        else:
            body = (self.shebang(read_only) + Body(self, nkeys=nkeys, nargs=nargs).source()).encode()
            self.bodies.append(body)
        return [command, body] + call_args

    def function_library(self):
        lib = self.pick(LIBS)
        lines = []
        if self.rnd.random() < 0.93:
            lines.append("#!lua name=%s" % lib)
        else:
            lines.append(self.pick(["#!lua", "#!lua name=%s flags=no-writes" % lib, "#!lua name=", "#!lua name=a-b",
                                    "#!lua name=%s x=y" % lib, "", "#!luax name=%s" % lib,
                                    "#!lua name=%s name=%s" % (lib, lib), "#!lua NAME=%s" % lib,
                                    "#!lua 'name=%s'" % lib, "#!lua  name=%s  " % lib, "#!lua\tname=%s" % lib] +
                                   ([] if avoiding("metadata-quotes") else
                                    ["#!lua name=%s 'x'y" % lib, "#!lua name=\"%s\"" % lib.replace("i", "\\x69"),
                                     "#!lua name='%s'x" % lib, "#!lua name=\"%s" % lib])))
        for _ in range(self.rnd.randint(0, 2)):
            if self.rnd.random() < 0.85:
                lines.append(self.pick(["local helper = 1", "local function h(x) return x end",
                                        "redis.log(redis.LOG_NOTICE, 'loading')", "local v = redis.REDIS_VERSION",
                                        "local c = cjson.encode({1})", "local s = struct.pack('>I2', 1)",
                                        "local t = {}", "local function get(k) return redis.call('get', k) end"]))
            else:
                lines.append(self.pick(["redis.call('ping')", "error('load failed')", "return 1", "x = 1",
                                        "local y = redis.setresp", "local m = math.random()", "(",
                                        "redis.setresp(3)", "local k = KEYS", "redis.pcall('ping')",
                                        "error({err = 'E load'})"]))
        names = []
        for _ in range(self.rnd.randint(1, 3)):
            pool = FUNCS if self.rnd.random() < 0.1 else FUNCS[:6]
            fname = self.pick([f for f in pool if f != "F1" or not avoiding("function-name-case")])
            names.append(fname)
            name = lua_str(fname.encode())
            body = Body(self, "keys", "args").source(self.rnd.randint(0, 4))
            fn = "function(keys, args)\n%s\nend" % body
            r = self.rnd.random()
            if r < 0.55:
                lines.append("redis.register_function(%s, %s)" % (name, fn))
            elif r < 0.95:
                fields = ["function_name = %s" % name, "callback = %s" % fn]
                if self.rnd.random() < 0.6:
                    bad = [f for f in BAD_FLAGS if f != "No-Writes" or not avoiding("function-flag-case")]
                    flags = [self.pick(FLAGS + (bad if self.rnd.random() < 0.1 else [])) for _ in
                             range(self.rnd.randint(0, 2))]
                    fields.append("flags = {%s}" % ", ".join(lua_str(f.encode()) for f in flags))
                if self.rnd.random() < 0.4:
                    fields.append("description = %s" % self.pick(["'desc'", "'a b'", "''", "1", "'x\\0y'"]))
                if self.rnd.random() < 0.05:
                    fields.append(self.pick(["bad = 1", "flags = 'no-writes'", "[1] = 2", "callback = 1",
                                             "function_name = {}", "description = {}"]))
                self.rnd.shuffle(fields)
                lines.append("redis.register_function{%s}" % ", ".join(fields))
            else:
                lines.append(self.pick(["redis.register_function(%s)" % name,
                                        "redis.register_function(%s, 1)" % name,
                                        "redis.register_function(%s, %s, 1)" % (name, fn),
                                        "redis.register_function(1, %s)" % fn,
                                        "redis.register_function{function_name = %s}" % name,
                                        "redis.register_function()"]))
        self.functions[lib] = names
        return "\n".join(lines).encode()

    def fcall_item(self):
        call_args = self.keys_and_args()[0]
        known = [f for names in self.functions.values() for f in names]
        name = self.pick(known) if known and self.rnd.random() < 0.85 else self.pick(FUNCS)
        return [self.pick([b"FCALL", b"FCALL", b"FCALL_RO"]), name.encode()] + call_args

    def script_item(self):
        """One of the scripting commands."""
        r = self.rnd.random()
        p = self.pick
        if r < 0.36:
            return [self.eval_item(b"EVAL")]
        if r < 0.44:
            return [self.eval_item(b"EVAL_RO", read_only=True)]
        if r < 0.54:
            ro = self.rnd.random() < 0.3
            item = self.eval_item(b"EVALSHA_RO" if ro else b"EVALSHA", read_only=ro)
            sha = hashlib.sha1(item[1]).hexdigest().encode()
            return [[b"SCRIPT", b"LOAD", item[1]], item[:1] + [p([sha, sha, sha.upper()])] + item[2:]]
        if r < 0.58:
            shas = [hashlib.sha1(b).hexdigest().encode() for b in self.bodies] or [b"0" * 40]
            sha = p(shas + [b"ffffffffffffffffffffffffffffffffffffffff", b"abc", b"", p(shas) + b"0"])
            return [[p([b"EVALSHA", b"EVALSHA_RO"]), sha] + self.keys_and_args()[0]]
        if r < 0.68:
            args = [b"FUNCTION", b"LOAD"]
            if self.rnd.random() < 0.5:
                args.append(p([b"REPLACE", b"REPLACE", b"replace", b"REPLACEX"]))
            return [args + [self.function_library()]]
        return [self.fcall_item()]

    def commands(self):
        """The next item: a list of commands, each one compared."""
        if self.oom_left:
            self.oom_left -= 1
            if not self.oom_left:
                return [[b"CONFIG", b"SET", b"maxmemory", b"0"]]
        elif self.rnd.random() < 0.01:
            self.oom_left = self.rnd.randint(5, 40)
            return [[b"CONFIG", b"SET", b"maxmemory", b"1"]]
        r = self.rnd.random()
        p = self.pick
        if r < 0.85 or self.oom_left and avoiding("multi-oom") and r < 0.89:
            return self.script_item()
        if r < 0.86:
            # WATCH, then a script that may touch the key: EXEC fails if it did.
            return [[b"WATCH", p(KEYS)]] + self.script_item() + [[b"MULTI"], [b"INCR", b"k1"], [b"EXEC"]]
        if r < 0.89:
            # A transaction of scripts (an error queued aborts it).
            items = [c for _ in range(self.rnd.randint(1, 3)) for c in self.script_item()]
            if self.rnd.random() < 0.1:
                items.append(p([[b"EVAL"], [b"FCALL", b"f1"], [b"EVALSHA", b"x", b"y"]]))
            return [[b"MULTI"]] + items + [[p([b"EXEC", b"EXEC", b"DISCARD"])]]
        if r < 0.94:
            # Keys of every type for the scripts to meet.
            k = p(KEYS)
            m = lambda: p(MEMBERS)
            return [p([[b"SET", k, p(STRINGS)], [b"RPUSH", k, m(), m()], [b"HSET", k, p(FIELDS), m()],
                       [b"SADD", k, m(), m()], [b"ZADD", k, p([b"1", b"2.5", b"-1"]), m()], [b"DEL", k],
                       [b"INCR", k]])]
        return [self.admin()]

    def admin(self):
        p = self.pick
        r = self.rnd.random()
        if r < 0.2:
            return [b"FUNCTION", b"LIST"] + p([[], [b"WITHCODE"], [b"LIBRARYNAME", p([b"lib1", b"lib*", b"*", b"x"])],
                                              [b"WITHCODE", b"LIBRARYNAME", b"lib?"], [b"BAD"]])
        if r < 0.3:
            return [b"FUNCTION", b"STATS"]
        if r < 0.42:
            return [b"FUNCTION", b"DELETE", p(LIBS + ["nolib"]).encode()]
        if r < 0.45:
            return [b"FUNCTION", b"FLUSH"] + p([[], [b"ASYNC"], [b"SYNC"], [b"x"]])
        if r < 0.6:
            # and a RESTORE of redis-server's payload (see run_seed) in this mode:
            self.restore_mode = p([b"FLUSH", b"REPLACE", b"APPEND", b"FLUSH"])
            return [b"FUNCTION", b"DUMP"]
        if r < 0.75:
            shas = [hashlib.sha1(b).hexdigest().encode() for b in self.bodies[-5:]]
            return [b"SCRIPT", b"EXISTS"] + shas + [b"0" * 40]
        if r < 0.78:
            return [b"SCRIPT", b"FLUSH"] + p([[], [b"ASYNC"], [b"SYNC"]])
        if r < 0.85:
            return [b"FUNCTION", p([b"RESTORE", b"KILL", b"HELP", b"NOSUCH"])] + p([[], [b"x"], [b"x", b"FLUSH"]])
        if r < 0.88:
            return [b"SCRIPT", p([b"KILL", b"HELP", b"NOSUCH", b"DEBUG"])] + p([[], [b"NO"], [b"x"]])
        if r < 0.95:
            # How the scripting commands' keys are found, and what they declare.
            # (Not FUNCTION / SCRIPT: their subcommands come in Redis's dict order.)
            names = [b"eval", b"evalsha", b"eval_ro", b"evalsha_ro", b"fcall", b"fcall_ro"]
            if self.rnd.random() < 0.2:
                if avoiding("command-flags"):
                    return [b"COMMAND", b"DOCS", p(names)]
                return [b"COMMAND", p([b"INFO", b"DOCS"]), p(names)]
            call_args, nkeys, _ = self.keys_and_args()
            if avoiding("getkeys-numkeys") and call_args[0] not in (b"%d" % i for i in range(-1, 100)):
                call_args[0] = b"%d" % nkeys
            return [b"COMMAND", p([b"GETKEYS", b"GETKEYSANDFLAGS"]), p(names), b"x"] + call_args
        return [b"DEBUG", b"RELOAD"]  # the libraries through an RDB round trip


def crc64(data):
    """Redis's CRC-64 (Jones, reflected), which ends a DUMP payload."""
    crc = 0
    for byte in data:
        crc = CRC64_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc


CRC64_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x95AC9329AC4BC9B5 if _c & 1 else _c >> 1
    CRC64_TABLE.append(_c)


def mutated(payload, rnd):
    """A damaged FUNCTION DUMP payload: its body, 2 bytes of RDB version and
    8 of CRC; mostly with the CRC made right again, so that the loader gets
    past it to the version, the opcode, the library's code."""
    body, version = bytearray(payload[:-10]), bytearray(payload[-10:-8])
    r = rnd.random()
    if r < 0.15:
        return payload[:rnd.randint(0, len(payload) - 1)]
    if r < 0.25:
        i = rnd.randrange(len(payload))
        return payload[:i] + bytes([payload[i] ^ (1 << rnd.randrange(8))]) + payload[i + 1:]
    if r < 0.35:
        version = bytearray(rnd.choice([b"\x0b\x00", b"\x09\x00", b"\xff\xff"]))
    elif r < 0.5 and body:
        body[0] = rnd.choice([0xF4, 0xFF, 0x00, 0xF5] + ([] if avoiding("restore-pre-ga") else [0xF6, 0xF6]))
    elif r < 0.65:
        code = bytes(body)
        for old, new in ((b"name=", b"nome="), (b"return", b"retur("), (b"register_function", b"register_functiox"),
                         (b"#!lua", b"#!luo"), (b"name=lib", b"name=l-b"), (b"function(", b"function[")):
            if old in code:
                code = code.replace(old, new, 1)
                break
        body = bytearray(code)
    elif r < 0.8:
        body += rnd.choice([b"\xf5", b"\x00", b"\xf5@\x05#!lua"] +
                           ([] if avoiding("restore-duplicate") else [body[:len(body) // 2], bytes(body)]))
    elif body and not avoiding("restore-order"):  # (a damaged length: read on, or compiled first?)
        i = rnd.randrange(len(body))
        if body[i] != 0x0A or not avoiding("metadata-quotes"):  # (a first line that runs on)
            body[i] = rnd.randrange(256)
    data = bytes(body + version)
    return data + crc64(data).to_bytes(8, "little")


CONFLICT = re.compile(rb"-ERR (Function|Library) (.*) already exists\r\n", re.S)
CONFLICT_IN_EXEC = re.compile(rb"-ERR (Function|Library) (\S*) already exists\r\n")


def comparable(args, reply):
    """FUNCTION LIST with its libraries and functions in order; a conflict
    of FUNCTION LOAD / RESTORE without the name of the function or library
    when the code names it: with several conflicts Redis reports the first
    its dict gives (a random order)."""
    if args[0].upper() == b"EXEC":  # FUNCTION LOADs queued: any name
        return CONFLICT_IN_EXEC.sub(rb"-ERR \1 (name) already exists\r\n", reply)
    conflict = CONFLICT.fullmatch(reply)
    if conflict and args[:2] == [b"FUNCTION", b"RESTORE"] or conflict and args[:2] == [b"FUNCTION", b"LOAD"] and \
            conflict.group(2) in args[-1]:
        return conflict.group(1)
    if args[:2] != [b"FUNCTION", b"LIST"] or reply[:1] != b"*":
        return reply
    kind, libs = fc.parse(reply)[0]
    out = []
    for lib in libs:
        lkind, fields = lib
        fields = list(fields)
        for i in range(0, len(fields) - 1, 2):
            if fields[i] == b"$functions" and fields[i + 1] is not None:
                fkind, funcs = fields[i + 1]
                fields[i + 1] = (fkind, sorted(funcs, key=repr))
        out.append((lkind, fields))
    return kind, sorted(out, key=repr)


def reset(conns, resp3):
    """Both servers empty: no keys, functions, scripts or statistics."""
    for conn in conns:
        conn.call([b"DISCARD"])  # a transaction left open by a mismatch
        if b"aof_enabled:1" in conn.call([b"INFO", b"persistence"]):
            fd.rewrite_finished(conn)  # (--keep-going: a seed that failed did not wait for its rewrite)
        conn.call([b"FLUSHALL"])
        conn.call([b"FUNCTION", b"FLUSH"])
        conn.call([b"SCRIPT", b"FLUSH"])
        conn.call([b"CONFIG", b"SET", b"maxmemory", b"0"])
        # Scripts and functions share one rand48 (in both): seeded, every
        # math.random is the same in the two.
        conn.call([b"EVAL", b"math.randomseed(0)", b"0"])
        conn.call([b"CONFIG", b"RESETSTAT"])
        if resp3:
            conn.call([b"HELLO", b"3"])


class Followers:
    """--replica and --aof: what follows the two servers' propagation.
    replica_ports: redis-server's replica, ringkv's (or None); aof: (work
    directory, ringkv, redis-server) when both servers write an AOF."""

    def __init__(self, replica_ports=None, aof=None):
        self.replicas = [rd.Conn(port) for port in replica_ports] if replica_ports else None
        self.aof = aof

    def replicas_match(self, seed, n, args, primaries):
        """Each replica at its primary's offset, then the two replicas alike."""
        if self.replicas is None:
            return True
        for primary, replica in zip(primaries, self.replicas):
            if not fd.caught_up(primary, replica):
                print("seed %d: a replica did not reach its primary's offset after command %d: %r" % (seed, n, args))
                return False
        return same_content(seed, "after command %d: %r, the replicas" % (n, args), self.replicas)

    def aofs_match(self, seed, ports):
        """At a seed's end: the AOFs loaded (see the module comment)."""
        if self.aof is None:
            return True
        work, ringkv, redis = self.aof
        return fd.aofs_load_alike(work, seed, (redis, ringkv), ports,
                                  [[b"DEBUG", b"DIGEST"], [b"FUNCTION", b"LIST", b"WITHCODE"]], canonical=comparable)


def same_content(seed, where, conns):
    """The two servers' keyspace (DEBUG DIGEST) and functions alike."""
    x, y = (c.call([b"DEBUG", b"DIGEST"]) for c in conns)
    if x != y:
        print("seed %d: DEBUG DIGEST differs %s:\n  redis : %r\n  ringkv: %r" % (seed, where, x, y))
        return False
    listing = [b"FUNCTION", b"LIST", b"WITHCODE"]
    x, y = (comparable(listing, c.call(listing)) for c in conns)
    if x != y:
        print("seed %d: FUNCTION LIST differs %s:\n  redis : %r\n  ringkv: %r" % (seed, where, x, y))
        return False
    return True


def run_seed(seed, commands, redis_port, ringkv_port, resp3, check_every, show=None, keep_going=False,
             followers=None):
    """True when every reply matched; with keep_going, a mismatch is printed,
    both servers are emptied and the stream goes on (False at the end).
    followers: --replica and --aof's checks (Followers)."""
    gen = Generator(seed, resp3)
    followers = followers or Followers()
    if show is None:
        redis, ringkv = rd.Conn(redis_port), rd.Conn(ringkv_port)
        reset((redis, ringkv), resp3)
        controls = [rd.Conn(redis_port), rd.Conn(ringkv_port)]  # (outside MULTI and RESP3)
    n = 0
    failed = False
    in_multi = check_due = False
    while n < commands:
        batch = gen.commands()
        for args in batch:
            if n >= commands:
                break
            if show is not None:
                if n <= show:
                    print("%d: %r" % (n, args))
                n += 1
                continue
            try:
                a = redis.call(args)
            except ConnectionError:
                print("seed %d, command %d: %r: redis-server closed the connection" % (seed, n, args))
                return False
            try:
                b = ringkv.call(args)
            except ConnectionError:
                print("seed %d, command %d: %r: ringkv closed the connection" % (seed, n, args))
                return False
            if args[:2] == [b"FUNCTION", b"DUMP"]:
                # Libraries in Redis's dict order: the bytes of one only.
                # (FUNCTION LIST on both: the statistics count it.)
                listed = [fc.parse(c.call([b"FUNCTION", b"LIST"]))[0][1] for c in (redis, ringkv)]
                same = a == b or a[:1] == b[:1] == b"$" and len(a) == len(b) and len(listed[0]) > 1
                # Each server's dump restored into both, redis-server's first.
                dumps = [(who, fc.parse(d)[0][1:]) for who, d in (("redis-server", a), ("ringkv", b))
                         if d.startswith(b"$") and not d.startswith(b"$-1")]
                if dumps:  # and one damaged, the same for both
                    damaged = mutated(dumps[0][1], random.Random("%d:%d" % (seed, n)))
                    dumps.append(("a damaged copy of redis-server", damaged))
                for who, payload in dumps if a != b else dumps[:1] + dumps[2:]:
                    mode = gen.restore_mode
                    if who.startswith("a damaged") and avoiding("restore-order"):
                        mode = b"FLUSH"
                    restore = [b"FUNCTION", b"RESTORE", payload, mode]
                    x, y = redis.call(restore), ringkv.call(restore)
                    if comparable(restore, x) != comparable(restore, y):
                        print("seed %d, command %d: FUNCTION RESTORE of %s's dump %r\n  redis : %r\n"
                              "  ringkv: %r" % (seed, n, who, payload, x, y))
                        if not keep_going:
                            return False
                        failed = True
                        reset((redis, ringkv), resp3)
                        in_multi = False
                        break
            else:
                same = comparable(args, a) == comparable(args, b)
            name = args[0].upper()
            if name == b"MULTI" and a == b"+OK\r\n":
                in_multi = True
            elif name in (b"EXEC", b"DISCARD"):
                in_multi = False
            check_due = check_due or n % check_every == 0
            if followers.aof is not None and n == commands // 2:
                for conn in controls:  # (the last seed's rewrite finished at its end)
                    conn.call([b"BGREWRITEAOF"])
            if not same:
                print("seed %d, command %d: %r\n  redis : %r\n  ringkv: %r" % (seed, n, args, a[:1000], b[:1000]))
                if not keep_going:
                    return False
                failed = True
                reset((redis, ringkv), resp3)
                in_multi = False
            elif check_due and not in_multi:  # (the checks' commands would be queued)
                check_due = False
                if not checks_match(seed, n, args, redis, ringkv) or \
                        not followers.replicas_match(seed, n, args, (redis, ringkv)):
                    if not keep_going:
                        return False
                    failed = True
                    reset((redis, ringkv), resp3)
                    in_multi = False
            n += 1
    if show is not None:
        return True
    return checks_match(seed, n, [b"(end)"], redis, ringkv) and not failed and \
        followers.replicas_match(seed, n, [b"(end)"], (redis, ringkv)) and \
        followers.aofs_match(seed, (redis_port, ringkv_port))


def checks_match(seed, n, args, redis, ringkv):
    x, y = redis.call([b"DEBUG", b"DIGEST"]), ringkv.call([b"DEBUG", b"DIGEST"])
    if x != y:
        print("seed %d: DEBUG DIGEST differs after command %d: %r" % (seed, n, args))
        for db in range(16):
            for conn in (redis, ringkv):
                conn.call([b"SELECT", b"%d" % db])
            names = set()
            for conn in (redis, ringkv):
                reply = conn.call([b"KEYS", b"*"])
                names.update(x[1:] for x in fc.parse(reply)[0][1])
            for k in sorted(names):
                if redis.call([b"DEBUG", b"DIGEST-VALUE", k]) != ringkv.call([b"DEBUG", b"DIGEST-VALUE", k]):
                    print("  db %d %r\n    redis : %r\n    ringkv: %r" % (db, k, fc.report(redis, k),
                                                                      fc.report(ringkv, k)))
                x, y = redis.call([b"PEXPIRETIME", k]), ringkv.call([b"PEXPIRETIME", k])
                if x != y:
                    print("  db %d %r PEXPIRETIME\n    redis : %r\n    ringkv: %r" % (db, k, x, y))
        for conn in (redis, ringkv):
            conn.call([b"SELECT", b"0"])
        return False
    listing = [b"FUNCTION", b"LIST", b"WITHCODE"]
    x, y = comparable(listing, redis.call(listing)), comparable(listing, ringkv.call(listing))
    if x != y:
        print("seed %d: FUNCTION LIST differs after command %d: %r\n  redis : %r\n  ringkv: %r" % (seed, n, args, x, y))
        return False
    where = "seed %d, after command %d: %r" % (seed, n, args)
    if LOOKUP_STATS:  # INFO's lookup counts (keyspace_hits / misses, expired_keys), error and command counts
        return rd.stats_match(redis, ringkv, where)
    x, y = rd.error_stats(redis).split(b"\n"), rd.error_stats(ringkv).split(b"\n")
    if x != y:
        print("%s: INFO error / command counts differ\n  redis : %r\n  ringkv: %r" % (
            where, [l for l in x if l not in y], [l for l in y if l not in x]))
    return x == y


def main():
    ap = fd.parser(commands=2000, known=KNOWN, resp3=True,
                   keep_going="after a mismatch, empty both servers and go on (every mismatch of a seed)",
                   show="SEED:N prints that seed's commands up to N, runs nothing")
    ap.add_argument("--check-every", type=int, default=25, help="1 finds the command that diverged")
    ap.add_argument("--no-lookup-stats", action="store_true",
                    help="compare INFO's error and command counts but not keyspace_hits / misses (a ringkv "
                         "from before 460080f counts GETDEL, TOUCH, S*STORE lookups otherwise)")
    ap.add_argument("--replica", action="store_true",
                    help="a redis-server replica of redis-server and a ringkv replica of ringkv: the two "
                         "replicas must match at every check")
    ap.add_argument("--aof", action="store_true",
                    help="both servers write an AOF; at each seed's end the AOFs, loaded by either server, "
                         "must give what redis-server's gives redis-server")
    opts = fd.parse(ap, KNOWN, AVOID)
    global LOOKUP_STATS
    LOOKUP_STATS = not opts.no_lookup_stats
    if opts.show:
        seed, last = opts.show
        run_seed(seed, last + 1, None, None, opts.resp3, opts.check_every, show=last)
        return
    replicas = [[opts.redis], [opts.ringkv]] if opts.replica else []
    with fd.servers("ringkv-fuzz-", [opts.redis], [opts.ringkv], *replicas) as run:
        redis_port, ringkv_port = run.ports[:2]
        fd.link_replicas(list(zip(run.ports[:2], run.ports[2:])))  # (before the first seed resets the counts)
        if opts.aof:
            fd.write_aof(run.ports[:2])
        followers = Followers(run.ports[2:] or None, (run.work, opts.ringkv, opts.redis) if opts.aof else None)
        run.seeds(opts.seeds, lambda seed: run_seed(seed, opts.commands, redis_port, ringkv_port, opts.resp3,
                                                    opts.check_every, keep_going=opts.keep_going,
                                                    followers=followers))
        run.summary("fuzz_scripting", opts.commands, note="".join(
            [" (RESP3)" if opts.resp3 else "", " (replicas)" if opts.replica else "", " (AOF)" if opts.aof else ""]))
    sys.exit(run.status)


if __name__ == "__main__":
    main()

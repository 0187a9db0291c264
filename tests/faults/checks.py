"""Convergence check and divergence diagnosis for the fault harness."""
import time

from resp_client import Client, ReplyError

EXAMPLES = 5


class NodeState:
    """What one node reported in one round: replication offset (the
    primary's master_repl_offset, a replica's slave_repl_offset), whether its
    link to its upstream is up (True for the primary), DEBUG DIGEST, and
    {db: (keys, expires)} from INFO keyspace; `error` when it did not answer."""

    def __init__(self, node, is_primary, full=True):
        self.node = node
        self.offset = self.digest = self.error = None
        self.link_up = is_primary
        self.keyspace = {}
        try:
            repl = node.info("replication")
            self.offset = int(repl["master_repl_offset" if is_primary else "slave_repl_offset"])
            self.link_up = is_primary or repl.get("master_link_status") == "up"
            if full:
                self.digest = node.call("DEBUG", "DIGEST")
                self.keyspace = keyspace(node)
        except (OSError, ReplyError, KeyError, ValueError) as e:
            self.error = "%s: %s" % (type(e).__name__, e)

    def describe(self):
        if self.error:
            return "%s(%s) %s" % (self.node.name, self.node.kind, self.error)
        dbs = " ".join("db%d=%d/%d" % (db, k, e) for db, (k, e) in sorted(self.keyspace.items()))
        return "%s(%s) offset=%s link=%s digest=%s keys/expires: %s" % (
            self.node.name, self.node.kind, self.offset, "up" if self.link_up else "DOWN",
            (self.digest or "?")[:12], dbs or "none")


def keyspace(node):
    """{db: (keys, expires)} from INFO keyspace."""
    out = {}
    for name, value in node.info("keyspace").items():
        fields = dict(kv.split("=") for kv in value.split(","))
        out[int(name[2:])] = (int(fields["keys"]), int(fields["expires"]))
    return out


def take_round(cluster, always_full=False):
    """One observation of every node, the primary read before and after the
    replicas; (converged, states). DEBUG DIGEST walks every key (over a
    second for 20,000 keys under ASan on a busy machine), so it is taken only
    once the offsets and links agree: until then a round costs a few INFO
    calls and the rounds stay frequent, and a round that straddles one of
    the primary's periodic PINGs is not left the last one before a deadline."""
    primary = NodeState(cluster.primary, True, full=False)
    replicas = [NodeState(n, False, full=False) for n in cluster.replicas()]
    states = [primary] + replicas
    if not always_full and not all(s.error is None and s.link_up and s.offset == primary.offset for s in states):
        return False, states
    primary = NodeState(cluster.primary, True)
    replicas = [NodeState(n, False) for n in cluster.replicas()]
    again = NodeState(cluster.primary, True)
    states = [again] + replicas
    converged = (all(s.error is None and s.link_up for s in states + [primary])
                 and primary.offset == again.offset and primary.digest == again.digest
                 and all(s.offset == again.offset and s.digest == again.digest and s.keyspace == again.keyspace
                         for s in replicas))
    return converged, states


def converge(cluster, timeout):
    """Waits until one round sees every link up, every offset equal to the
    primary's and every digest and key count equal to the primary's.
    Returns (converged, states of the last round)."""
    deadline = time.monotonic() + timeout
    while True:
        converged, states = take_round(cluster)
        if converged:
            return converged, states
        if time.monotonic() > deadline:
            return take_round(cluster, always_full=True)  # digests and keyspaces for the report
        time.sleep(0.1)


READ_COMMAND = {"list": ["LRANGE", "{}", 0, -1], "hash": ["HGETALL", "{}"], "set": ["SMEMBERS", "{}"],
                "zset": ["ZRANGE", "{}", 0, -1, "WITHSCORES"], "string": ["GET", "{}"]}


def value_digests(conn, keys):
    """DEBUG DIGEST-VALUE of each key in the selected db (40 zeros: absent)."""
    replies = conn.pipeline([["DEBUG", "DIGEST-VALUE", k] for k in keys])
    return [r[0] if isinstance(r, list) else "ERR " + str(r) for r in replies]


def type_and_expiry(conn, keys):
    """[(TYPE, PEXPIRETIME)] of keys in the selected db."""
    replies = conn.pipeline([c for k in keys for c in (["TYPE", k], ["PEXPIRETIME", k])])
    return [tuple(replies[i:i + 2]) for i in range(0, len(replies), 2)]


def read_key(conn, key):
    """(TYPE, PEXPIRETIME, content) of a key in the selected db, content
    comparable across servers: set members sorted, hash fields and zset
    members as sorted (name, value) pairs; None when absent to reads."""
    (kind, expire), = type_and_expiry(conn, [key])
    if kind not in READ_COMMAND:
        return kind, expire, None
    content = conn.pipeline([[key if a == "{}" else a for a in READ_COMMAND[kind]]])[0]
    if kind == "set" and isinstance(content, list):
        content = sorted(content)
    elif kind in ("hash", "zset") and isinstance(content, list):
        content = sorted(zip(content[::2], content[1::2]))
    return kind, expire, content


def shown(facts):
    """read_key()'s result, shortened, for a report."""
    kind, expire, content = facts
    if kind == "none":
        return "absent to reads (expired or missing)"
    text = repr(content)
    return "%s pexpiretime=%s %s" % (kind, expire, text[:100] + ("..." if len(text) > 100 else ""))


def delta(a, b, name_a, name_b):
    """For two read_key() results of the same collection type, where their
    contents part; None otherwise."""
    if a[0] != b[0] or not (isinstance(a[2], list) and isinstance(b[2], list)):
        return None
    if a[0] == "list":
        first = next((i for i, (x, y) in enumerate(zip(a[2], b[2])) if x != y), min(len(a[2]), len(b[2])))
        return "lists of %d and %d elements, equal up to index %d" % (len(a[2]), len(b[2]), first)
    only_a, only_b = sorted(set(a[2]) - set(b[2])), sorted(set(b[2]) - set(a[2]))
    return "only on %s %r; only on %s %r" % (name_a, only_a[:EXAMPLES], name_b, only_b[:EXAMPLES])


ABSENT = "0" * 40


def diagnose(primary, replica, dbs, names):
    """Lines naming, for each db, the keys (out of `names`) present on one
    side only and the keys whose content, type or expiry differ, a few
    examples each. Reads on a primary delete the logically expired keys
    they meet, so DBSIZE is shown before and after the probes."""
    lines = ["%s (%s) vs %s (%s):" % (primary.name, primary.kind, replica.name, replica.kind)]
    a, b = Client(primary.port), Client(replica.port)
    try:
        for db in dbs:
            for conn in (a, b):
                conn.call("SELECT", db)
            sizes = (a.call("DBSIZE"), b.call("DBSIZE"))
            digests = dict(zip(names, zip(value_digests(a, names), value_digests(b, names))))
            only_a = [k for k, (x, y) in digests.items() if x != ABSENT and y == ABSENT]
            only_b = [k for k, (x, y) in digests.items() if x == ABSENT and y != ABSENT]
            both = [k for k, (x, y) in digests.items() if ABSENT not in (x, y)]
            differ = [k for k, ta, tb in zip(both, type_and_expiry(a, both), type_and_expiry(b, both))
                      if ta != tb or digests[k][0] != digests[k][1]]
            after = (a.call("DBSIZE"), b.call("DBSIZE"))
            if not (only_a or only_b or differ or sizes[0] != sizes[1] or after[0] != after[1]):
                continue
            lines.append("  db%d: DBSIZE %d vs %d (%d vs %d after probing); %d keys only on %s, %d only on %s, "
                         "%d differ" % (db, sizes[0], sizes[1], after[0], after[1], len(only_a), primary.name,
                                        len(only_b), replica.name, len(differ)))
            for group, label in ((only_a, "only on " + primary.name), (only_b, "only on " + replica.name),
                                 (differ, "differs")):
                for key in group[:EXAMPLES]:
                    fa, fb = read_key(a, key), read_key(b, key)
                    lines += ["    %s: %r" % (label, key), "      %s: %s" % (primary.name, shown(fa)),
                              "      %s: %s" % (replica.name, shown(fb))]
                    parts = delta(fa, fb, primary.name, replica.name)
                    if parts:
                        lines.append("      content: " + parts)
    finally:
        a.close()
        b.close()
    if len(lines) == 1:
        lines.append("  no difference left to show (the probes of an earlier diagnosis expired keys)")
    return lines

"""A pycassa-era application on the raw Thrift client: Apache `thrift` from
PyPI plus Python bindings generated from thrift/cassandra.thrift at run time
(see run.sh). pycassa itself does not run on Python 3, so this program uses
the same calls pycassa made under the hood, in the order an application of
that era made them: framed transport, binary protocol, set_keyspace,
system_add_keyspace/column_family, batch_mutate, get_slice,
get_range_slices paging, super columns, CompositeType names packed by hand,
counters, remove, TTL, and the errors an application relies on.

    python cassandra_check.py HOST:PORT

Every check prints `ok NAME` or `FAIL NAME: detail`; the last line is
`N passed, N failed`. The keyspace is fresh per run and dropped at the end.

Where thriftd departs from Cassandra 3.11 on purpose, the check asks
diverges(name) and asserts the behaviour of the server it talks to
(checklib.py, shared with clients/pycassa).
"""

import os
import struct
import sys
import time

from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from cassandra import Cassandra
from cassandra.ttypes import (
    CfDef, Column, ColumnDef, ColumnOrSuperColumn, ColumnParent, ColumnPath,
    ConsistencyLevel, CounterColumn, CounterSuperColumn, Deletion,
    IndexClause, IndexExpression, IndexOperator, IndexType,
    InvalidRequestException, KeyRange, KsDef, Mutation, NotFoundException,
    SlicePredicate, SliceRange, SuperColumn)

from checklib import check, diverges, eq, eq_ttl, expect_error, finish, server, step

ONE = ConsistencyLevel.ONE
QUORUM = ConsistencyLevel.QUORUM


def now_us():
    return int(time.time() * 1e6)


def b(s):
    return s if isinstance(s, bytes) else s.encode()


def long_bytes(n):
    return struct.pack(">q", n)


def composite(*parts, eoc=0):
    """Packs CompositeType bytes: each component is a 2-byte length, the
    bytes and an end-of-component byte; eoc applies to the last one (0 an
    exact name, 1 'after every name with this prefix', -1 'before')."""
    out = b""
    for i, p in enumerate(parts):
        p = long_bytes(p) if isinstance(p, int) else b(p)
        last = eoc if i == len(parts) - 1 else 0
        out += struct.pack(">H", len(p)) + p + struct.pack(">b", last)
    return out


def uncomposite(data):
    parts = []
    while data:
        n = struct.unpack(">H", data[:2])[0]
        parts.append(data[2:2 + n])
        data = data[3 + n:]
    return parts


def col(name, value, ttl=None, ts=None):
    return Column(name=b(name), value=b(value), timestamp=ts or now_us(), ttl=ttl)


def ins(name, value, ttl=None):
    return Mutation(column_or_supercolumn=ColumnOrSuperColumn(column=col(name, value, ttl)))


def full(count=100, reversed=False, start=b"", finish=b""):
    return SlicePredicate(slice_range=SliceRange(start=start, finish=finish, reversed=reversed, count=count))


def names(*ns):
    return SlicePredicate(column_names=[b(n) for n in ns])


def connect(host, port):
    sock = TSocket.TSocket(host, port)
    sock.setTimeout(10000)
    transport = TTransport.TFramedTransport(sock)
    protocol = TBinaryProtocol.TBinaryProtocolAccelerated(transport)
    client = Cassandra.Client(protocol)
    transport.open()
    return client, transport


def wait_schema(client):
    """What pycassa's SystemManager did after every schema change."""
    deadline = time.time() + 30
    while time.time() < deadline:
        versions = client.describe_schema_versions()
        live = [v for v in versions if v != "UNREACHABLE"]
        if len(live) <= 1:
            return
        time.sleep(0.1)
    raise RuntimeError("schema did not agree: %r" % versions)


def main():
    host, port = (sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9160").rsplit(":", 1)
    client, transport = connect(host, int(port))
    ks = "pyc_%d_%d" % (os.getpid(), int(time.time() * 1000) % 10**9)
    created = False
    try:
        # pycassa-era code checked a minimum API version (19: Cassandra 1.0+).
        version = client.describe_version()
        check("describe_version >= 19 (%s)" % version, int(version.split(".")[0]) >= 19, version)
        # Cassandra 2.2-3.11 answer 20.1.0; thriftd 19.39.0 (Cassandra 2.1's
        # API, whose behaviour it keeps) unless started with --api-version.
        server(version)
        check("describe_cluster_name", len(client.describe_cluster_name()) > 0)
        check("describe_partitioner", client.describe_partitioner().endswith("Murmur3Partitioner"),
              client.describe_partitioner())
        # Schema, the way SystemManager.create_keyspace did it.
        client.system_add_keyspace(KsDef(
            name=ks, strategy_class="org.apache.cassandra.locator.SimpleStrategy",
            strategy_options={"replication_factor": "1"}, cf_defs=[], durable_writes=True))
        created = True
        wait_schema(client)
        check("system_add_keyspace", True)
        run(client, ks)
    finally:
        if created:
            try:
                client.system_drop_keyspace(ks)
                wait_schema(client)
                print("dropped keyspace", ks)
            except Exception as e:  # noqa: BLE001
                check("drop keyspace", False, "%s: %s" % (type(e).__name__, e))
        transport.close()


def run(client, ks):
    client.set_keyspace(ks)
    cfs = [
        CfDef(keyspace=ks, name="Users", comparator_type="UTF8Type",
              key_validation_class="UTF8Type", default_validation_class="UTF8Type",
              column_metadata=[
                  ColumnDef(name=b"age", validation_class="LongType"),
                  ColumnDef(name=b"state", validation_class="UTF8Type",
                            index_type=IndexType.KEYS, index_name="users_state")]),
        CfDef(keyspace=ks, name="Events", column_type="Super", comparator_type="LongType",
              subcomparator_type="UTF8Type", key_validation_class="UTF8Type",
              default_validation_class="UTF8Type"),
        CfDef(keyspace=ks, name="Timeline", comparator_type="CompositeType(UTF8Type,LongType)",
              key_validation_class="UTF8Type", default_validation_class="UTF8Type"),
        CfDef(keyspace=ks, name="Hits", comparator_type="UTF8Type",
              key_validation_class="UTF8Type", default_validation_class="CounterColumnType"),
        CfDef(keyspace=ks, name="DailyHits", column_type="Super", comparator_type="UTF8Type",
              subcomparator_type="UTF8Type", key_validation_class="UTF8Type",
              default_validation_class="CounterColumnType"),
        CfDef(keyspace=ks, name="Items", comparator_type="UTF8Type",
              key_validation_class="UTF8Type", default_validation_class="UTF8Type"),
    ]
    for cf in cfs:
        client.system_add_column_family(cf)
        wait_schema(client)
    check("system_add_column_family x%d" % len(cfs), True)

    @step("describe_keyspace")
    def _():
        kd = client.describe_keyspace(ks)
        eq("describe_keyspace name", kd.name, ks)
        eq("describe_keyspace replication_factor", kd.strategy_options.get("replication_factor"), "1")
        by = {c.name: c for c in kd.cf_defs}
        eq("describe_keyspace cfs", sorted(by), sorted(c.name for c in cfs))
        ev = by.get("Events")
        check("super cf type", ev is not None and ev.column_type == "Super"
              and ev.comparator_type.endswith("LongType") and ev.subcomparator_type.endswith("UTF8Type"),
              ev and (ev.column_type, ev.comparator_type, ev.subcomparator_type))
        # Clients build their marshallers from column_metadata (helenus decodes
        # each name with the comparator, and its LongType decoder throws on
        # Cassandra's internal '' name): a super cf declared without any.
        md = ev and [(c.name, c.validation_class) for c in (ev.column_metadata or [])]
        if diverges("super-internal-columns"):
            marshal = "org.apache.cassandra.db.marshal."
            eq("super cf column_metadata: Cassandra's internal columns", md,
               [(b"", marshal + "MapType(%sUTF8Type,%sUTF8Type)" % (marshal, marshal)),
                (b"value", marshal + "UTF8Type")])
        else:
            eq("super cf has no column_metadata", md, [])
        tl = by.get("Timeline")
        check("composite comparator", tl is not None and "CompositeType(" in tl.comparator_type
              and tl.comparator_type.replace("org.apache.cassandra.db.marshal.", "")
              == "CompositeType(UTF8Type,LongType)", tl and tl.comparator_type)
        hits = by.get("Hits")
        check("counter cf validation", hits is not None
              and hits.default_validation_class.endswith("CounterColumnType"),
              hits and hits.default_validation_class)
        users = by.get("Users")
        md = {c.name: c for c in (users.column_metadata or [])} if users else {}
        check("column metadata", b"age" in md and md[b"age"].validation_class.endswith("LongType")
              and b"state" in md and md[b"state"].index_type == IndexType.KEYS,
              md)

    users = ColumnParent(column_family="Users")

    # Writes: insert and batch_mutate (pycassa's ColumnFamily.insert/batch).
    @step("writes")
    def _():
        client.insert(b"alice", users, col("email", "alice@example.com"), QUORUM)
        client.insert(b"alice", users, Column(name=b"age", value=long_bytes(34), timestamp=now_us()), QUORUM)
        client.batch_mutate({
            b"alice": {"Users": [ins("state", "UT"), ins("name", "Alice")]},
            b"bob": {"Users": [ins("state", "CA"), ins("name", "Bob"),
                               Mutation(column_or_supercolumn=ColumnOrSuperColumn(
                                   column=Column(name=b"age", value=long_bytes(41), timestamp=now_us())))]},
            b"carol": {"Users": [ins("state", "UT"), ins("name", "Carol")]},
        }, QUORUM)
        check("insert + batch_mutate", True)

    @step("get")
    def _():
        c = client.get(b"alice", ColumnPath(column_family="Users", column=b"email"), ONE).column
        eq("get value", c.value, b"alice@example.com")
        check("get timestamp", c.timestamp and c.timestamp > 0, c.timestamp)
        age = client.get(b"alice", ColumnPath(column_family="Users", column=b"age"), ONE).column
        eq("get LongType value", struct.unpack(">q", age.value)[0], 34)

    @step("get_slice")
    def _():
        row = client.get_slice(b"alice", users, full(), ONE)
        eq("get_slice names (UTF8 order)", [c.column.name for c in row], [b"age", b"email", b"name", b"state"])
        # Users declares age and state in column_metadata; name and email are not declared.
        reversed_all = [c.column.name for c in client.get_slice(b"alice", users, full(reversed=True), ONE)]
        reversed_two = [c.column.name for c in client.get_slice(b"alice", users, full(count=2, reversed=True), ONE)]
        if diverges("static-reversed"):
            eq("get_slice reversed: Cassandra's static-column order", reversed_all,
               [b"age", b"name", b"email", b"state"])
            eq("get_slice reversed count=2: Cassandra's static-column order", reversed_two, [b"age", b"name"])
        else:
            eq("get_slice reversed", reversed_all, [b"state", b"name", b"email", b"age"])
            eq("get_slice reversed count=2", reversed_two, [b"state", b"name"])
        row = client.get_slice(b"alice", users, full(start=b"b", finish=b"n"), ONE)
        eq("get_slice start..finish", [c.column.name for c in row], [b"email"])
        row = client.get_slice(b"alice", users, names("name", "nosuch", "age"), ONE)
        eq("get_slice by names", [c.column.name for c in row], [b"age", b"name"])
        eq("get_count", client.get_count(b"alice", users, full(), ONE), 4)
        m = client.multiget_slice([b"alice", b"bob", b"nobody"], users, names("name"), ONE)
        eq("multiget_slice", {k: [c.column.value for c in v] for k, v in m.items()},
           {b"alice": [b"Alice"], b"bob": [b"Bob"], b"nobody": []})
        eq("multiget_count", client.multiget_count([b"alice", b"bob", b"nobody"], users, full(), ONE),
           {b"alice": 4, b"bob": 3, b"nobody": 0})

    @step("get_indexed_slices")
    def _():
        clause = IndexClause(expressions=[IndexExpression(column_name=b"state", op=IndexOperator.EQ, value=b"UT")],
                             start_key=b"", count=100)
        rows = client.get_indexed_slices(users, clause, names("name"), ONE)
        got = sorted((r.key, [c.column.value for c in r.columns]) for r in rows)
        if diverges("index-predicate"):
            eq("get_indexed_slices state=UT, predicate without the indexed column: no rows on Cassandra",
               got, [])
        else:
            eq("get_indexed_slices state=UT, predicate without the indexed column", got,
               [(b"alice", [b"Alice"]), (b"carol", [b"Carol"])])
        rows = client.get_indexed_slices(users, clause, names("name", "state"), ONE)
        eq("get_indexed_slices state=UT, predicate with the indexed column",
           sorted((r.key, [c.column.value for c in r.columns]) for r in rows),
           [(b"alice", [b"Alice", b"UT"]), (b"carol", [b"Carol", b"UT"])])
        rows = client.get_range_slices(users, names("name", "state"), KeyRange(
            start_key=b"", end_key=b"", count=100, row_filter=clause.expressions), ONE)
        eq("get_range_slices with row_filter state=UT", sorted(r.key for r in rows), [b"alice", b"carol"])

    # TTL: what an application did for sessions and caches.
    @step("ttl")
    def _():
        client.insert(b"alice", users, col("session", "s3cr3t", ttl=3), ONE)
        c = client.get(b"alice", ColumnPath(column_family="Users", column=b"session"), ONE).column
        eq("ttl column readable", c.value, b"s3cr3t")
        eq_ttl("ttl column's ttl", c.ttl, 3)
        client.batch_mutate({b"dave": {"Users": [ins("name", "Dave", ttl=3)]}}, ONE)
        time.sleep(4)
        try:
            client.get(b"alice", ColumnPath(column_family="Users", column=b"session"), ONE)
            check("ttl column expired (get)", False, "still there after 4 s")
        except NotFoundException:
            check("ttl column expired (get)", True)
        eq("ttl column expired (slice)", [c.column.name for c in client.get_slice(b"alice", users, full(), ONE)],
           [b"age", b"email", b"name", b"state"])
        eq("ttl row expired", client.get_slice(b"dave", users, full(), ONE), [])

    # Super columns (pycassa's super_column= arguments).
    events = ColumnParent(column_family="Events")

    @step("super columns")
    def _():
        ts = now_us()
        sc = lambda day, cols: Mutation(column_or_supercolumn=ColumnOrSuperColumn(super_column=SuperColumn(
            name=long_bytes(day), columns=[Column(name=b(k), value=b(v), timestamp=ts) for k, v in cols])))
        client.batch_mutate({b"u1": {"Events": [
            sc(20120103, [("login", "web"), ("logout", "web")]),
            sc(20120101, [("login", "mobile")]),
            sc(20120102, [("login", "web"), ("purchase", "42"), ("logout", "web")]),
        ]}}, ONE)
        client.insert(b"u1", ColumnParent(column_family="Events", super_column=long_bytes(20120101)),
                      col("logout", "mobile"), ONE)
        row = client.get_slice(b"u1", events, full(), ONE)
        eq("super slice order (LongType)", [struct.unpack(">q", c.super_column.name)[0] for c in row],
           [20120101, 20120102, 20120103])
        eq("super slice subcolumns (UTF8 order)", [s.name for s in row[1].super_column.columns],
           [b"login", b"logout", b"purchase"])
        eq("super slice subcolumns after insert", [s.name for s in row[0].super_column.columns],
           [b"login", b"logout"])
        row = client.get_slice(b"u1", events, full(count=1, reversed=True), ONE)
        eq("super slice reversed count=1", [struct.unpack(">q", c.super_column.name)[0] for c in row], [20120103])
        row = client.get_slice(b"u1", events, SlicePredicate(column_names=[long_bytes(20120102), long_bytes(1)]), ONE)
        eq("super slice by names", [struct.unpack(">q", c.super_column.name)[0] for c in row], [20120102])
        sub = ColumnParent(column_family="Events", super_column=long_bytes(20120102))
        row = client.get_slice(b"u1", sub, full(start=b"logout", finish=b""), ONE)
        eq("subcolumn slice", [(c.column.name, c.column.value) for c in row],
           [(b"logout", b"web"), (b"purchase", b"42")])
        eq("subcolumn count", client.get_count(b"u1", sub, full(), ONE), 3)
        eq("super column count", client.get_count(b"u1", events, full(), ONE), 3)
        got = client.get(b"u1", ColumnPath(column_family="Events", super_column=long_bytes(20120102),
                                           column=b"purchase"), ONE)
        eq("get subcolumn", got.column.value, b"42")
        got = client.get(b"u1", ColumnPath(column_family="Events", super_column=long_bytes(20120103)), ONE)
        eq("get super column", [c.name for c in got.super_column.columns], [b"login", b"logout"])
        # Deletions inside super columns.
        client.remove(b"u1", ColumnPath(column_family="Events", super_column=long_bytes(20120102),
                                        column=b"purchase"), now_us(), ONE)
        eq("remove subcolumn", [c.column.name for c in client.get_slice(b"u1", sub, full(), ONE)],
           [b"login", b"logout"])
        client.remove(b"u1", ColumnPath(column_family="Events", super_column=long_bytes(20120101)), now_us(), ONE)
        eq("remove super column", [struct.unpack(">q", c.super_column.name)[0]
                                   for c in client.get_slice(b"u1", events, full(), ONE)], [20120102, 20120103])
        client.batch_mutate({b"u1": {"Events": [Mutation(deletion=Deletion(
            timestamp=now_us(), super_column=long_bytes(20120103), predicate=names("logout")))]}}, ONE)
        got = client.get(b"u1", ColumnPath(column_family="Events", super_column=long_bytes(20120103)), ONE)
        eq("batch deletion of subcolumn", [c.name for c in got.super_column.columns], [b"login"])
        sk = client.get_range_slices(events, SlicePredicate(slice_range=SliceRange(b"", b"", False, 10)),
                                     KeyRange(start_key=b"", end_key=b"", count=10), ONE)
        eq("super range scan", [(k.key, len(k.columns)) for k in sk], [(b"u1", 2)])

    # Composite columns (pycassa's CompositeType tuples, packed by hand).
    timeline = ColumnParent(column_family="Timeline")

    @step("composite columns")
    def _():
        ts = now_us()
        muts = []
        for kind, seq in [("click", 3), ("view", 1), ("click", 1), ("view", 10), ("click", 20), ("buy", 5)]:
            muts.append(Mutation(column_or_supercolumn=ColumnOrSuperColumn(column=Column(
                name=composite(kind, seq), value=b("%s-%d" % (kind, seq)), timestamp=ts))))
        client.batch_mutate({b"t1": {"Timeline": muts}}, ONE)
        row = client.get_slice(b"t1", timeline, full(), ONE)
        decoded = [(p[0].decode(), struct.unpack(">q", p[1])[0]) for p in (uncomposite(c.column.name) for c in row)]
        eq("composite order", decoded,
           [("buy", 5), ("click", 1), ("click", 3), ("click", 20), ("view", 1), ("view", 10)])
        eq("composite names round-trip", row[0].column.name, composite("buy", 5))
        # All 'click' columns: start = ('click',) inclusive, finish = ('click',) with EOC 1.
        row = client.get_slice(b"t1", timeline, full(start=composite("click"), finish=composite("click", eoc=1)), ONE)
        eq("composite prefix slice", [c.column.value for c in row], [b"click-1", b"click-3", b"click-20"])
        # click with seq in [3, 20): start ('click', 3) EOC 0, finish ('click', 20) EOC -1.
        row = client.get_slice(b"t1", timeline, full(start=composite("click", 3), finish=composite("click", 20, eoc=-1)), ONE)
        eq("composite bounded slice", [c.column.value for c in row], [b"click-3"])
        # Everything after 'click': start ('click',) with EOC 1.
        row = client.get_slice(b"t1", timeline, full(start=composite("click", eoc=1)), ONE)
        eq("composite exclusive start", [c.column.value for c in row], [b"view-1", b"view-10"])
        row = client.get_slice(b"t1", timeline, full(reversed=True, count=2, start=composite("click", eoc=1),
                                                      finish=composite("click")), ONE)
        eq("composite reversed prefix", [c.column.value for c in row], [b"click-20", b"click-3"])
        client.remove(b"t1", ColumnPath(column_family="Timeline", column=composite("view", 1)), now_us(), ONE)
        eq("composite remove", client.get_count(b"t1", timeline, full(), ONE), 5)

    # Counters.
    hits = ColumnParent(column_family="Hits")

    @step("counters")
    def _():
        client.add(b"home", hits, CounterColumn(name=b"views", value=5), ONE)
        client.add(b"home", hits, CounterColumn(name=b"views", value=3), ONE)
        client.add(b"home", hits, CounterColumn(name=b"views", value=-2), ONE)
        client.add(b"home", hits, CounterColumn(name=b"clicks", value=1), ONE)
        client.batch_mutate({b"about": {"Hits": [Mutation(column_or_supercolumn=ColumnOrSuperColumn(
            counter_column=CounterColumn(name=b"views", value=7)))]}}, ONE)
        got = client.get(b"home", ColumnPath(column_family="Hits", column=b"views"), ONE)
        eq("counter add/get", got.counter_column.value, 6)
        row = client.get_slice(b"home", hits, full(), ONE)
        eq("counter slice", [(c.counter_column.name, c.counter_column.value) for c in row],
           [(b"clicks", 1), (b"views", 6)])
        m = client.multiget_slice([b"home", b"about"], hits, names("views"), ONE)
        eq("counter multiget", {k: [c.counter_column.value for c in v] for k, v in m.items()},
           {b"home": [6], b"about": [7]})
        client.remove_counter(b"home", ColumnPath(column_family="Hits", column=b"clicks"), ONE)
        eq("remove_counter", [c.counter_column.name for c in client.get_slice(b"home", hits, full(), ONE)], [b"views"])
        day = ColumnParent(column_family="DailyHits", super_column=b"2012-01-01")
        client.add(b"home", day, CounterColumn(name=b"views", value=4), ONE)
        client.add(b"home", day, CounterColumn(name=b"views", value=4), ONE)
        client.add(b"home", ColumnParent(column_family="DailyHits", super_column=b"2012-01-02"),
                   CounterColumn(name=b"views", value=1), ONE)
        row = client.get_slice(b"home", ColumnParent(column_family="DailyHits"), full(), ONE)
        eq("super counters", [(c.counter_super_column.name, [(x.name, x.value) for x in c.counter_super_column.columns])
                              for c in row],
           [(b"2012-01-01", [(b"views", 8)]), (b"2012-01-02", [(b"views", 1)])])
        expect_error("counter write to a regular cf", InvalidRequestException,
                     lambda: client.add(b"x", users, CounterColumn(name=b"n", value=1), ONE))
        expect_error("regular write to a counter cf", InvalidRequestException,
                     lambda: client.insert(b"x", hits, col("n", "1"), ONE))

    # Range scans and paging (pycassa's get_range with buffer_size).
    items = ColumnParent(column_family="Items")
    keys = [b"item%03d" % i for i in range(25)]

    @step("range scans")
    def _():
        client.batch_mutate({k: {"Items": [ins("n", k.decode()[4:]), ins("x", "y")]} for k in keys}, ONE)
        all_rows = client.get_range_slices(items, names("n"), KeyRange(start_key=b"", end_key=b"", count=1000), ONE)
        eq("range scan all keys", sorted(r.key for r in all_rows), keys)
        order = [r.key for r in all_rows]
        paged, start, pages = [], b"", 0
        while pages < 20:
            page = client.get_range_slices(items, names("n"), KeyRange(start_key=start, end_key=b"", count=10), ONE)
            pages += 1
            rows = page if not paged else page[1:]  # start_key is inclusive: drop the repeat
            paged += [r.key for r in rows]
            if len(page) < 10:
                break
            start = page[-1].key
        eq("paged range scan = full scan", paged, order)
        check("paging took several pages", pages >= 3, pages)
        # Token ranges, as a Hadoop-style split does: (min, 0] and (0, min].
        lo = client.get_range_slices(items, names("n"), KeyRange(start_token="-9223372036854775808", end_token="0",
                                                                 count=1000), ONE)
        hi = client.get_range_slices(items, names("n"), KeyRange(start_token="0", end_token="-9223372036854775808",
                                                                 count=1000), ONE)
        eq("token ranges partition the ring", [r.key for r in lo] + [r.key for r in hi], order)
        ring = client.describe_ring(ks)
        check("describe_ring", len(ring) >= 1 and all(len(r.endpoints) >= 1 for r in ring), ring)
        pg = client.get_paged_slice("Items", KeyRange(start_key=b"", end_key=b"", count=7), b"", ONE)
        eq("get_paged_slice first page", [(r.key, [c.column.name for c in r.columns]) for r in pg][:1],
           [(order[0], [b"n", b"x"])])
        # Columns of an emptied row disappear from range scans (the row still
        # shows as a range ghost with no columns in both servers' default).
        client.remove(keys[0], ColumnPath(column_family="Items"), now_us(), ONE)
        rows = client.get_range_slices(items, names("n"), KeyRange(start_key=b"", end_key=b"", count=1000), ONE)
        eq("removed row has no columns in range scan",
           [len(r.columns) for r in rows if r.key == keys[0]], [0] if any(r.key == keys[0] for r in rows) else [])
        eq("range scan live rows after remove", sorted(r.key for r in rows if r.columns), keys[1:])

    @step("deletions")
    def _():
        client.remove(b"bob", ColumnPath(column_family="Users", column=b"age"), now_us(), ONE)
        eq("remove column", [c.column.name for c in client.get_slice(b"bob", users, full(), ONE)], [b"name", b"state"])
        client.remove(b"bob", ColumnPath(column_family="Users"), now_us(), ONE)
        eq("remove row", client.get_slice(b"bob", users, full(), ONE), [])
        client.batch_mutate({b"carol": {"Users": [Mutation(deletion=Deletion(timestamp=now_us(),
                                                                            predicate=names("state")))]}}, ONE)
        eq("batch deletion by names", [c.column.name for c in client.get_slice(b"carol", users, full(), ONE)],
           [b"name"])
        # A write older than the delete stays deleted (timestamps decide).
        client.insert(b"carol", users, Column(name=b"state", value=b"NV", timestamp=now_us() - 10**9), ONE)
        eq("older write after delete is shadowed",
           [c.column.name for c in client.get_slice(b"carol", users, full(), ONE)], [b"name"])
        client.insert(b"carol", users, col("state", "NV"), ONE)
        eq("newer write after delete", [c.column.value for c in client.get_slice(b"carol", users, names("state"), ONE)],
           [b"NV"])
        client.truncate("Items")
        eq("truncate", client.get_range_slices(items, names("n"), KeyRange(start_key=b"", end_key=b"", count=100), ONE),
           [])

    @step("errors")
    def _():
        expect_error("get of a missing column -> NotFoundException", NotFoundException,
                     lambda: client.get(b"nobody", ColumnPath(column_family="Users", column=b"name"), ONE))
        expect_error("unknown column family -> InvalidRequestException", InvalidRequestException,
                     lambda: client.insert(b"k", ColumnParent(column_family="NoSuchCF"), col("a", "b"), ONE))
        expect_error("bad LongType name -> InvalidRequestException", InvalidRequestException,
                     lambda: client.insert(b"k", ColumnParent(column_family="Events", super_column=b"abc"),
                                           col("a", "b"), ONE))
        expect_error("bad LongType value -> InvalidRequestException", InvalidRequestException,
                     lambda: client.insert(b"k", users, col("age", "not a long"), ONE))
        expect_error("set_keyspace of a missing keyspace -> InvalidRequestException", InvalidRequestException,
                     lambda: client.set_keyspace(ks + "_missing"))
        expect_error("super_column on a standard cf -> InvalidRequestException", InvalidRequestException,
                     lambda: client.get_slice(b"k", ColumnParent(column_family="Users", super_column=b"x"), full(), ONE))
        expect_error("empty column name -> InvalidRequestException", InvalidRequestException,
                     lambda: client.insert(b"k", users, col("", "v"), ONE))
        expect_error("duplicate keyspace -> InvalidRequestException", InvalidRequestException,
                     lambda: client.system_add_keyspace(KsDef(
                         name=ks, strategy_class="SimpleStrategy",
                         strategy_options={"replication_factor": "1"}, cf_defs=[])))
        # The connection is still usable after the errors.
        eq("connection usable after errors",
           [c.column.value for c in client.get_slice(b"alice", users, names("name"), ONE)], [b"Alice"])

    @step("drop column family")
    def _():
        client.system_drop_column_family("Items")
        wait_schema(client)
        kd = client.describe_keyspace(ks)
        check("system_drop_column_family", "Items" not in [c.name for c in kd.cf_defs])


if __name__ == "__main__":
    finish(main)

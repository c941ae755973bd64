"""A pycassa application: pycassa 1.11.2 itself, the last release, on its
own pinned Thrift library (thrift 0.9.3, pure Python), under Jython 2.7
(pycassa is Python 2 only; see run.sh and clients/README.md). It uses
pycassa's own API the way applications of its era did: SystemManager for
the schema, a ConnectionPool, ColumnFamily with its typed names, values
and keys, ColumnFamilyMap, Mutator batches, paging with get_range and xget,
super columns, counters, TimeUUID and Composite names, secondary indexes,
TTLs and the errors an application relies on.

    jython pycassa_check.py HOST:PORT

Every check prints `ok NAME` or `FAIL NAME: detail`; the last line is
`N passed, N failed`. The keyspace is fresh per run and dropped at the end.

Where thriftd departs from Cassandra 3.11 on purpose, the check asks
diverges(name) and asserts the behaviour of the server it talks to
(clients/python/checklib.py, shared with the raw Thrift client's program).
"""

from __future__ import print_function

import datetime
import os
import sys
import threading
import time
import uuid
from decimal import Decimal

from pycassa import NotFoundException
from pycassa.batch import Mutator
from pycassa.cassandra.ttypes import IndexOperator, InvalidRequestException
from pycassa.columnfamily import ColumnFamily
from pycassa.columnfamilymap import ColumnFamilyMap
from pycassa.index import create_index_clause, create_index_expression
from pycassa.pool import ConnectionPool
from pycassa.system_manager import (
    ASCII_TYPE, COUNTER_COLUMN_TYPE, INT_TYPE, KEYS_INDEX, LONG_TYPE, SIMPLE_STRATEGY, SystemManager,
    TIME_UUID_TYPE, UTF8_TYPE)
from pycassa.types import (
    AsciiType, BooleanType, CompositeType, DateType, DecimalType, DoubleType, DynamicCompositeType, FloatType,
    Int32Type, IntegerType, LongType, UTF8Type, UUIDType)
from pycassa.util import convert_time_to_uuid, convert_uuid_to_time

from checklib import check, diverges, eq, eq_ttl, expect_error, finish, server, step

# The validators of family Typed: column name, pycassa's type, a value.
TYPED = [
    ("when", DateType(), datetime.datetime(2012, 3, 4, 5, 6, 7)),
    ("flag", BooleanType(), True),
    ("ratio", DoubleType(), -0.125),
    ("small", FloatType(), 1.5),
    ("big", IntegerType(), -(2 ** 70) + 3),
    ("count", Int32Type(), -123456),
    ("price", DecimalType(), Decimal("-12.345")),
    ("id", UUIDType(), uuid.UUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")),
    ("code", AsciiType(), "ABC-1"),
]


class User(object):
    """What ColumnFamilyMap maps a row of Users to."""
    name = UTF8Type()
    email = UTF8Type()
    age = LongType()
    state = UTF8Type()


def main():
    addr = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9160"
    sm = SystemManager(addr, timeout=10)
    ks = "pycassa_%d_%d" % (os.getpid(), int(time.time() * 1000) % 10 ** 9)
    created = False
    pool = None
    try:
        version = sm.describe_version()
        check("describe_version >= 19 (%s)" % version, int(version.split(".")[0]) >= 19, version)
        server(version)
        check("describe_cluster_name", len(sm.describe_cluster_name()) > 0)
        check("describe_partitioner", sm.describe_partitioner().endswith("Murmur3Partitioner"),
              sm.describe_partitioner())
        # create_keyspace waits for schema agreement (describe_schema_versions).
        sm.create_keyspace(ks, SIMPLE_STRATEGY, {"replication_factor": "1"})
        created = True
        check("create_keyspace", ks in sm.list_keyspaces())
        props = sm.get_keyspace_properties(ks)
        eq("get_keyspace_properties",
           (props["replication_strategy"], props["strategy_options"].get("replication_factor")),
           ("org.apache.cassandra.locator.SimpleStrategy", "1"))
        create_schema(sm, ks)
        pool = ConnectionPool(ks, [addr], pool_size=2, timeout=10, max_retries=2)
        run(sm, pool, ks)
    finally:
        if pool is not None:
            pool.dispose()
        if created:
            try:
                sm.drop_keyspace(ks)
                check("drop_keyspace", ks not in sm.list_keyspaces())
            except Exception as e:
                check("drop_keyspace", False, "%s: %s" % (type(e).__name__, e))
        sm.close()


def create_schema(sm, ks):
    sm.create_column_family(ks, "Users", comparator_type=UTF8_TYPE, key_validation_class=UTF8_TYPE,
                            default_validation_class=UTF8_TYPE,
                            column_validation_classes={"age": LONG_TYPE})
    sm.create_index(ks, "Users", "state", UTF8_TYPE, index_name="users_state")
    sm.create_column_family(ks, "Events", super=True, comparator_type=LONG_TYPE,
                            subcomparator_type=UTF8_TYPE, key_validation_class=UTF8_TYPE,
                            default_validation_class=UTF8_TYPE)
    sm.create_column_family(ks, "Timeline", comparator_type=TIME_UUID_TYPE,
                            key_validation_class=ASCII_TYPE, default_validation_class=UTF8_TYPE)
    sm.create_column_family(ks, "Scores", comparator_type=CompositeType(LongType(), UTF8Type()),
                            key_validation_class=UTF8_TYPE, default_validation_class=INT_TYPE)
    sm.create_column_family(ks, "Wide", comparator_type=LONG_TYPE, key_validation_class=UTF8_TYPE,
                            default_validation_class=UTF8_TYPE)
    sm.create_column_family(ks, "Hits", comparator_type=UTF8_TYPE, key_validation_class=UTF8_TYPE,
                            default_validation_class=COUNTER_COLUMN_TYPE)
    sm.create_column_family(ks, "SuperHits", super=True, comparator_type=UTF8_TYPE,
                            subcomparator_type=UTF8_TYPE, key_validation_class=UTF8_TYPE,
                            default_validation_class=COUNTER_COLUMN_TYPE)
    sm.create_column_family(ks, "Typed", comparator_type=UTF8_TYPE, key_validation_class=LONG_TYPE,
                            column_validation_classes=dict((name, t) for name, t, _ in TYPED))
    sm.create_column_family(ks, "Tags", comparator_type=DynamicCompositeType({"a": AsciiType(), "l": LongType()}),
                            key_validation_class=UTF8_TYPE, default_validation_class=UTF8_TYPE)
    sm.create_column_family(ks, "Scratch", comparator_type=UTF8_TYPE)
    cfs = sm.get_keyspace_column_families(ks)
    eq("create_column_family x10", sorted(cfs),
       ["Events", "Hits", "Scores", "Scratch", "SuperHits", "Tags", "Timeline", "Typed", "Users", "Wide"])
    users = cfs["Users"]
    md = dict((c.name, c) for c in users.column_metadata)
    check("column validator and index", md.get("age") is not None and md["age"].validation_class.endswith("LongType")
          and md.get("state") is not None and md["state"].index_type == KEYS_INDEX,
          users.column_metadata)
    ev = cfs["Events"]
    check("super column family", ev.column_type == "Super" and ev.comparator_type.endswith("LongType")
          and ev.subcomparator_type.endswith("UTF8Type"), (ev.column_type, ev.comparator_type))
    if diverges("super-internal-columns"):
        check("super family described with internal columns",
              sorted(c.name for c in ev.column_metadata) == ["", "value"]
              and any("MapType" in c.validation_class for c in ev.column_metadata), ev.column_metadata)
    else:
        eq("super family described without columns", ev.column_metadata, [])
    check("composite comparator", "CompositeType(" in cfs["Scores"].comparator_type, cfs["Scores"].comparator_type)
    check("counter family", cfs["Hits"].default_validation_class.endswith("CounterColumnType"),
          cfs["Hits"].default_validation_class)
    sm.alter_column(ks, "Scratch", "n", INT_TYPE)
    md = dict((c.name, c.validation_class) for c in sm.get_keyspace_column_families(ks)["Scratch"].column_metadata)
    check("alter_column", md.get("n", "").endswith("IntegerType"), md)
    sm.drop_column_family(ks, "Scratch")
    check("drop_column_family", "Scratch" not in sm.get_keyspace_column_families(ks))


def run(sm, pool, ks):
    users = ColumnFamily(pool, "Users")

    @step("standard rows")
    def _():
        users.insert("alice", {"name": "Alice", "email": "alice@example.com", "age": 34, "state": "UT"})
        users.insert("bob", {"name": "Bob", "age": 41, "state": "CA"})
        users.batch_insert({"carol": {"name": "Carol", "age": 29, "state": "UT"},
                            "dave": {"name": "Dave", "state": "NV"}})
        row = users.get("alice")
        eq("get: typed values", dict(row), {"name": "Alice", "email": "alice@example.com", "age": 34, "state": "UT"})
        eq("get: comparator order", list(row.keys()), ["age", "email", "name", "state"])
        eq("get columns", dict(users.get("alice", columns=["name", "age"])), {"name": "Alice", "age": 34})
        eq("get column_start..finish", list(users.get("alice", column_start="b", column_finish="o").keys()),
           ["email", "name"])
        eq("get column_count", list(users.get("alice", column_count=2).keys()), ["age", "email"])
        reversed_names = list(users.get("alice", column_reversed=True).keys())
        if diverges("static-reversed"):
            eq("get column_reversed", reversed_names, ["age", "name", "email", "state"])
        else:
            eq("get column_reversed", reversed_names, ["state", "name", "email", "age"])
        value, ts = users.get("alice", columns=["name"], include_timestamp=True)["name"]
        check("include_timestamp", value == "Alice" and ts > 1e15, (value, ts))
        eq("get_count", users.get_count("alice"), 4)
        eq("multiget_count", dict(users.multiget_count(["alice", "bob", "nobody"])),
           {"alice": 4, "bob": 3, "nobody": 0})
        got = users.multiget(["alice", "bob", "nobody"], columns=["name"])
        eq("multiget skips missing rows", dict((k, dict(v)) for k, v in got.items()),
           {"alice": {"name": "Alice"}, "bob": {"name": "Bob"}})
        expect_error("get of a missing row", NotFoundException, lambda: users.get("nobody"))
        expect_error("get of a missing column", NotFoundException, lambda: users.get("bob", columns=["email"]))

    @step("deletions")
    def _():
        users.insert("erin", {"name": "Erin", "email": "erin@example.com", "state": "WA"})
        users.remove("erin", columns=["email"])
        eq("remove columns", sorted(users.get("erin").keys()), ["name", "state"])
        users.remove("erin")
        expect_error("remove row", NotFoundException, lambda: users.get("erin"))
        # A write older than the deletion stays deleted; a newer one lives.
        ts = int(time.time() * 1e6)
        users.insert("frank", {"name": "Frank"}, timestamp=ts)
        users.remove("frank", timestamp=ts + 10)
        users.insert("frank", {"name": "Old"}, timestamp=ts + 5)
        expect_error("write under a row tombstone", NotFoundException, lambda: users.get("frank"))
        users.insert("frank", {"name": "New"}, timestamp=ts + 20)
        eq("write above a row tombstone", dict(users.get("frank")), {"name": "New"})
        users.remove("frank")

    @step("ttl")
    def _():
        users.insert("temp", {"name": "Temp"}, ttl=2)
        users.insert("temp", {"state": "OR"})
        value, ttl = users.get("temp", columns=["name"], include_ttl=True)["name"]
        eq("include_ttl value", value, "Temp")
        eq_ttl("include_ttl", ttl, 2)
        time.sleep(3.1)
        eq("expired column gone", dict(users.get("temp")), {"state": "OR"})
        users.remove("temp")

    @step("secondary index")
    def _():
        clause = create_index_clause([create_index_expression("state", "UT")], count=10)
        got = dict((k, dict(v)) for k, v in users.get_indexed_slices(clause))
        eq("get_indexed_slices", sorted(got), ["alice", "carol"])
        eq("indexed row columns", got.get("carol"), {"name": "Carol", "age": 29, "state": "UT"})
        clause = create_index_clause([create_index_expression("state", "UT"),
                                      create_index_expression("age", 30, op=IndexOperator.GT)])
        eq("indexed slice with a second expression", [k for k, _ in users.get_indexed_slices(clause)], ["alice"])

    @step("range scans")
    def _():
        keys = [k for k, _ in users.get_range()]
        eq("get_range rows", sorted(keys), ["alice", "bob", "carol", "dave"])
        paged = [k for k, _ in users.get_range(buffer_size=2)]
        eq("get_range paged by 2", paged, keys)
        eq("get_range row_count", len(list(users.get_range(row_count=3))), 3)
        cols = dict((k, dict(v)) for k, v in users.get_range(columns=["name"]))
        eq("get_range columns", cols.get("dave"), {"name": "Dave"})

    @step("column family map")
    def _():
        people = ColumnFamilyMap(User, pool, "Users")
        u = User()
        u.key = "gina"
        u.name, u.email, u.age, u.state = "Gina", "gina@example.com", 52, "ID"
        people.insert(u)
        got = people.get("gina")
        eq("ColumnFamilyMap get", (got.key, got.name, got.email, got.age, got.state),
           ("gina", "Gina", "gina@example.com", 52, "ID"))
        people.remove(u)
        expect_error("ColumnFamilyMap remove", NotFoundException, lambda: people.get("gina"))

    events = ColumnFamily(pool, "Events")

    @step("super columns")
    def _():
        events.insert("day1", {1: {"a": "x", "b": "y"}, 2: {"c": "z"}, 3: {"d": "w", "e": "v"}})
        got = events.get("day1")
        eq("get super row", [(s, dict(c)) for s, c in got.items()],
           [(1, {"a": "x", "b": "y"}), (2, {"c": "z"}), (3, {"d": "w", "e": "v"})])
        eq("get super_column", dict(events.get("day1", super_column=2)), {"c": "z"})
        eq("get super_column columns", dict(events.get("day1", super_column=3, columns=["e"])), {"e": "v"})
        eq("get super column_start", list(events.get("day1", column_start=2).keys()), [2, 3])
        eq("get super reversed", list(events.get("day1", column_reversed=True, column_count=2).keys()), [3, 2])
        eq("get super columns by name", list(events.get("day1", columns=[3, 1]).keys()), [1, 3])
        eq("get_count supers", events.get_count("day1"), 3)
        eq("get_count subcolumns", events.get_count("day1", super_column=3), 2)
        events.insert("day1", {1: {"c": "new"}})
        eq("insert into a super column", dict(events.get("day1", super_column=1)), {"a": "x", "b": "y", "c": "new"})
        events.remove("day1", super_column=1, columns=["a"])
        eq("remove subcolumn", dict(events.get("day1", super_column=1)), {"b": "y", "c": "new"})
        events.remove("day1", super_column=3)
        eq("remove super column", list(events.get("day1").keys()), [1, 2])
        expect_error("get removed super column", NotFoundException, lambda: events.get("day1", super_column=3))
        events.insert("day2", {5: {"q": "r"}})
        got = events.multiget(["day1", "day2"], columns=[2, 5])
        eq("multiget supers", dict((k, list(v.keys())) for k, v in got.items()), {"day1": [2], "day2": [5]})
        eq("get_range supers", sorted(k for k, _ in events.get_range()), ["day1", "day2"])

    @step("batches")
    def _():
        b = Mutator(pool, queue_size=3)
        b.insert(users, "hank", {"name": "Hank", "state": "UT"})
        b.insert(events, "day3", {7: {"x": "1"}})
        b.remove(users, "dave")
        b.insert(users, "ivy", {"name": "Ivy"})
        b.send()
        eq("Mutator across families", (dict(users.get("hank")), dict(events.get("day3", super_column=7))),
           ({"name": "Hank", "state": "UT"}, {"x": "1"}))
        expect_error("Mutator remove", NotFoundException, lambda: users.get("dave"))
        with users.batch(queue_size=10) as cb:
            cb.insert("ivy", {"email": "ivy@example.com"})
            cb.remove("hank", columns=["state"])
        eq("CfMutator as a context", (sorted(users.get("ivy").keys()), sorted(users.get("hank").keys())),
           (["email", "name"], ["name"]))
        b = Mutator(pool, atomic=True)
        b.insert(users, "jack", {"name": "Jack"})
        b.insert(events, "day4", {8: {"y": "2"}})
        b.send()
        eq("atomic batch", (dict(users.get("jack")), dict(events.get("day4", super_column=8))),
           ({"name": "Jack"}, {"y": "2"}))

    @step("time uuid names")
    def _():
        timeline = ColumnFamily(pool, "Timeline")
        t0 = time.time() - 100
        cols = dict((convert_time_to_uuid(t0 + i, randomize=True), "event %d" % i) for i in range(5))
        timeline.insert("feed", cols)
        got = timeline.get("feed")
        eq("time uuid order", list(got.values()), ["event %d" % i for i in range(5)])
        times = [convert_uuid_to_time(u) for u in got.keys()]
        check("time uuid times", all(abs(t - (t0 + i)) < 0.001 for i, t in enumerate(times)), times)
        # pycassa turns a time into the lowest or highest TimeUUID of it.
        eq("slice from a time", list(timeline.get("feed", column_start=t0 + 2).values()),
           ["event 2", "event 3", "event 4"])
        eq("slice to a time, reversed", list(timeline.get("feed", column_start=t0 + 3, column_reversed=True,
                                                         column_count=2).values()), ["event 3", "event 2"])

    @step("composite names")
    def _():
        scores = ColumnFamily(pool, "Scores")
        scores.insert("game", {(1, "ann"): 10, (1, "bea"): 20, (2, "ann"): 30, (3, "cid"): 40})
        eq("composite order", list(scores.get("game").items()),
           [((1, "ann"), 10), ((1, "bea"), 20), ((2, "ann"), 30), ((3, "cid"), 40)])
        eq("composite slice of a first component", list(scores.get("game", column_start=(1,),
                                                                    column_finish=(1,)).keys()),
           [(1, "ann"), (1, "bea")])
        eq("composite slice, exclusive start", list(scores.get("game", column_start=((1, False),)).keys()),
           [(2, "ann"), (3, "cid")])
        eq("composite slice inside a component", list(scores.get("game", column_start=(1, "b"),
                                                                  column_finish=(2,)).keys()),
           [(1, "bea"), (2, "ann")])

    @step("wide rows")
    def _():
        wide = ColumnFamily(pool, "Wide")
        with wide.batch(queue_size=50) as b:
            for i in range(250):
                b.insert("row", {i: "v%d" % i})
        got = list(wide.xget("row", buffer_size=64))
        eq("xget paged by 64", [n for n, _ in got], list(range(250)))
        eq("xget from, reversed", [n for n, _ in wide.xget("row", column_start=100, column_reversed=True,
                                                           column_count=3)], [100, 99, 98])
        eq("get_count of a slice", wide.get_count("row", column_start=10, column_finish=19), 10)
        eq("get reversed count", list(wide.get("row", column_reversed=True, column_count=3).keys()),
           [249, 248, 247])

    @step("counters")
    def _():
        hits = ColumnFamily(pool, "Hits")
        for _ in range(3):
            hits.add("page", "views")
        hits.add("page", "views", 5)
        hits.add("page", "errors", -2)
        eq("counter adds", dict(hits.get("page")), {"errors": -2, "views": 8})
        eq("counter multiget", dict((k, dict(v)) for k, v in hits.multiget(["page", "none"]).items()),
           {"page": {"errors": -2, "views": 8}})
        hits.remove_counter("page", "errors")
        eq("remove_counter", dict(hits.get("page")), {"views": 8})
        supers = ColumnFamily(pool, "SuperHits")
        supers.add("site", "a", 2, super_column="2024")
        supers.add("site", "b", 3, super_column="2024")
        supers.add("site", "a", 7, super_column="2025")
        eq("super counters", dict((s, dict(c)) for s, c in supers.get("site").items()),
           {"2024": {"a": 2, "b": 3}, "2025": {"a": 7}})
        eq("super counter column", dict(supers.get("site", super_column="2024", columns=["b"])), {"b": 3})

    @step("key ranges")
    def _():
        # Murmur3Partitioner: a key range runs in token order from start.
        keys = [k for k, _ in users.get_range()]
        eq("get_range from a key", [k for k, _ in users.get_range(start=keys[1])], keys[1:])
        eq("get_range from a key to a key", [k for k, _ in users.get_range(start=keys[0], finish=keys[2])],
           keys[0:3])
        expect_error("get_range whose start token is after its finish", InvalidRequestException,
                     lambda: list(users.get_range(start=keys[2], finish=keys[0])))
        eq("multiget in pages of 2", sorted(users.multiget(keys, buffer_size=2)), sorted(keys))

    @step("typed values")
    def _():
        typed = ColumnFamily(pool, "Typed")
        typed.insert(-7, dict((name, value) for name, _, value in TYPED))
        got = typed.get(-7)
        for name, t, value in TYPED:
            eq("%s round trip" % type(t).__name__, got.get(name), value)
        eq("LongType key", [k for k, _ in typed.get_range()], [-7])
        # pycassa packs with the validator it is given: 8 bytes for 4.
        wrong = ColumnFamily(pool, "Typed")
        wrong.column_validators["count"] = LongType()
        expect_error("value of the wrong length for Int32Type", InvalidRequestException,
                     lambda: wrong.insert(-8, {"count": 5}))

    @step("dynamic composite names")
    def _():
        tags = ColumnFamily(pool, "Tags")
        # Names are (alias, value) pairs; a component of another type sorts
        # by its type, and a name before every name it is a prefix of.
        tags.insert("t", {(("l", 2),): "two", (("a", "x"),): "ax", (("l", 1),): "one",
                          (("a", "x"), ("l", 5)): "ax5"})
        got = list(tags.get("t").items())
        eq("dynamic composite order", got, [((("a", "x"),), "ax"), ((("a", "x"), ("l", 5)), "ax5"),
                                            ((("l", 1),), "one"), ((("l", 2),), "two")])
        eq("dynamic composite slice", list(tags.get("t", column_start=(("l", 1),)).values()), ["one", "two"])

    @step("threads on one pool")
    def _():
        wide = ColumnFamily(pool, "Wide")
        errors = []

        def write(n):
            try:
                for i in range(50):
                    wide.insert("thread-%d" % n, {i: "t%d" % n})
            except Exception as e:
                errors.append(e)

        threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        eq("no errors in 4 threads", errors, [])
        eq("every thread's columns", dict(wide.multiget_count(["thread-%d" % n for n in range(4)])),
           dict(("thread-%d" % n, 50) for n in range(4)))

    @step("errors")
    def _():
        expect_error("ColumnFamily of a missing family", NotFoundException, lambda: ColumnFamily(pool, "Nope"))
        expect_error("empty column name", InvalidRequestException, lambda: users.insert("kim", {"": "x"}))
        scratch = ColumnFamily(pool, "Wide")
        # A LongType name of another length: pycassa packs what it is given.
        scratch.column_name_class = IntegerType()
        expect_error("name of the wrong length for LongType", InvalidRequestException,
                     lambda: scratch.insert("bad", {2 ** 70: "x"}))
        expect_error("row key too long", InvalidRequestException, lambda: users.insert("k" * 70000, {"name": "x"}))

    @step("truncate")
    def _():
        users.truncate()
        eq("truncate", list(users.get_range()), [])


if __name__ == "__main__":
    finish(main)

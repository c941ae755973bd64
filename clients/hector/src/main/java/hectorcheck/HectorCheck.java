package hectorcheck;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import me.prettyprint.cassandra.model.ConfigurableConsistencyLevel;
import me.prettyprint.cassandra.serializers.CompositeSerializer;
import me.prettyprint.cassandra.serializers.LongSerializer;
import me.prettyprint.cassandra.serializers.StringSerializer;
import me.prettyprint.cassandra.service.CassandraHostConfigurator;
import me.prettyprint.cassandra.service.ThriftKsDef;
import me.prettyprint.hector.api.Cluster;
import me.prettyprint.hector.api.HConsistencyLevel;
import me.prettyprint.hector.api.Keyspace;
import me.prettyprint.hector.api.beans.AbstractComposite.ComponentEquality;
import me.prettyprint.hector.api.beans.ColumnSlice;
import me.prettyprint.hector.api.beans.Composite;
import me.prettyprint.hector.api.beans.HColumn;
import me.prettyprint.hector.api.beans.HCounterColumn;
import me.prettyprint.hector.api.beans.HSuperColumn;
import me.prettyprint.hector.api.beans.OrderedRows;
import me.prettyprint.hector.api.beans.Row;
import me.prettyprint.hector.api.beans.Rows;
import me.prettyprint.hector.api.beans.SuperSlice;
import me.prettyprint.hector.api.ddl.ColumnFamilyDefinition;
import me.prettyprint.hector.api.ddl.ColumnType;
import me.prettyprint.hector.api.ddl.ComparatorType;
import me.prettyprint.hector.api.ddl.KeyspaceDefinition;
import me.prettyprint.hector.api.exceptions.HInvalidRequestException;
import me.prettyprint.hector.api.factory.HFactory;
import me.prettyprint.hector.api.mutation.Mutator;
import me.prettyprint.hector.api.query.CounterQuery;
import me.prettyprint.hector.api.query.MultigetSliceQuery;
import me.prettyprint.hector.api.query.RangeSlicesQuery;
import me.prettyprint.hector.api.query.SliceQuery;
import me.prettyprint.hector.api.query.SuperColumnQuery;
import me.prettyprint.hector.api.query.SuperSliceQuery;

/**
 * A Hector application of the Thrift era: it defines its keyspace through
 * HFactory, writes with a Mutator and reads back with Hector's query
 * objects, checking every answer. The same program runs against thriftd and
 * against a real Cassandra 3.11; run.sh builds and runs it.
 *
 * Usage: HectorCheck HOST:PORT
 */
public final class HectorCheck {
    static final StringSerializer SS = StringSerializer.get();
    static final LongSerializer LS = LongSerializer.get();
    static final CompositeSerializer CS = CompositeSerializer.get();

    static final String STANDARD = "Users";
    static final String SUPER = "Events";
    static final String COMPOSITE = "Timeline";
    static final String COUNTERS = "Hits";

    int passed, failed;
    Cluster cluster;
    Keyspace ko;
    String ksName;
    boolean dropped;

    /** A detail a check may leave for its "ok" line (e.g. the error the server sent). */
    String note;

    interface Body {
        void run() throws Exception;
    }

    void check(String name, Body body) {
        long t0 = System.nanoTime();
        note = null;
        try {
            body.run();
            passed++;
            System.out.printf("ok   %-44s %5d ms%s%n", name, (System.nanoTime() - t0) / 1_000_000,
                    note == null ? "" : "  (" + note + ")");
        } catch (Throwable e) {
            failed++;
            System.out.printf("FAIL %-44s %s%n", name, e);
            Throwable c = e.getCause();
            while (c != null) {
                System.out.println("       caused by " + c);
                c = c.getCause();
            }
        }
        System.out.flush();
    }

    static void expect(Object want, Object got, String what) {
        if (want == null ? got != null : !want.equals(got)) {
            throw new AssertionError(what + ": want " + want + ", got " + got);
        }
    }

    // expectTtl checks a TTL read back: the TTL written, or, against a
    // server that reports the seconds left (thriftd over a CQL cluster:
    // THRIFTBRIDGE_REMAINING_TTL set by clients/matrix.sh), at most ten
    // seconds less.
    static void expectTtl(int want, int got, String what) {
        boolean remaining = System.getenv("THRIFTBRIDGE_REMAINING_TTL") != null;
        if (got != want && !(remaining && got < want && got >= want - 10)) {
            throw new AssertionError(what + ": want " + want + (remaining ? " or up to 10 s less" : "") + ", got " + got);
        }
    }

    static void expectTrue(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    static List<String> names(ColumnSlice<String, String> s) {
        List<String> out = new ArrayList<>();
        for (HColumn<String, String> c : s.getColumns()) {
            out.add(c.getName());
        }
        return out;
    }

    SliceQuery<String, String, String> slice(String cf, String key) {
        SliceQuery<String, String, String> q = HFactory.createSliceQuery(ko, SS, SS, SS);
        return q.setColumnFamily(cf).setKey(key);
    }

    String get(String cf, String key, String col) {
        HColumn<String, String> c = HFactory.createColumnQuery(ko, SS, SS, SS)
                .setColumnFamily(cf).setKey(key).setName(col).execute().get();
        return c == null ? null : c.getValue();
    }

    static Composite comp(String event, long seq) {
        Composite c = new Composite();
        c.addComponent(event, SS);
        c.addComponent(seq, LS);
        return c;
    }

    void run(String hostPort) {
        ksName = "hector_" + Long.toHexString(new Random().nextLong() & 0xffffffffffL);
        System.out.println("hector-core against " + hostPort + ", keyspace " + ksName);

        CassandraHostConfigurator conf = new CassandraHostConfigurator(hostPort);
        conf.setMaxActive(4);
        conf.setCassandraThriftSocketTimeout(15_000);
        conf.setMaxWaitTimeWhenExhausted(15_000);
        conf.setAutoDiscoverHosts(false);
        conf.setRetryDownedHosts(false);
        cluster = HFactory.getOrCreateCluster("thriftbridge-check", conf);

        check("describe cluster/version", () -> {
            String name = cluster.describeClusterName();
            String version = cluster.describeThriftVersion();
            expectTrue(name != null && !name.isEmpty(), "cluster name is empty");
            // Cassandra 1.1-2.x speak API 19.x, 3.x says 20.1.0: the same calls.
            int major = Integer.parseInt(version.substring(0, version.indexOf('.')));
            expectTrue(major == 19 || major == 20, "thrift API version " + version + " is not 19.x/20.x");
            expectTrue(cluster.describePartitioner().endsWith("Partitioner"),
                    "partitioner " + cluster.describePartitioner());
        });

        check("create keyspace and CFs", () -> {
            ColumnFamilyDefinition users = HFactory.createColumnFamilyDefinition(ksName, STANDARD,
                    ComparatorType.UTF8TYPE);
            users.setKeyValidationClass(ComparatorType.UTF8TYPE.getClassName());
            users.setDefaultValidationClass(ComparatorType.UTF8TYPE.getClassName());

            ColumnFamilyDefinition events = HFactory.createColumnFamilyDefinition(ksName, SUPER,
                    ComparatorType.UTF8TYPE);
            events.setColumnType(ColumnType.SUPER);
            events.setSubComparatorType(ComparatorType.UTF8TYPE);
            events.setKeyValidationClass(ComparatorType.UTF8TYPE.getClassName());
            events.setDefaultValidationClass(ComparatorType.UTF8TYPE.getClassName());

            ColumnFamilyDefinition timeline = HFactory.createColumnFamilyDefinition(ksName, COMPOSITE,
                    ComparatorType.COMPOSITETYPE);
            timeline.setComparatorTypeAlias("(UTF8Type, LongType)");
            timeline.setKeyValidationClass(ComparatorType.UTF8TYPE.getClassName());
            timeline.setDefaultValidationClass(ComparatorType.UTF8TYPE.getClassName());

            ColumnFamilyDefinition hits = HFactory.createColumnFamilyDefinition(ksName, COUNTERS,
                    ComparatorType.UTF8TYPE);
            hits.setKeyValidationClass(ComparatorType.UTF8TYPE.getClassName());
            hits.setDefaultValidationClass(ComparatorType.COUNTERTYPE.getClassName());

            KeyspaceDefinition ks = HFactory.createKeyspaceDefinition(ksName, ThriftKsDef.DEF_STRATEGY_CLASS, 1,
                    Arrays.asList(users, events, timeline, hits));
            cluster.addKeyspace(ks, true);

            KeyspaceDefinition back = cluster.describeKeyspace(ksName);
            expectTrue(back != null, "describe_keyspace found nothing");
            Set<String> cfs = new TreeSet<>();
            for (ColumnFamilyDefinition cf : back.getCfDefs()) {
                cfs.add(cf.getName());
                if (cf.getName().equals(SUPER)) {
                    expect(ColumnType.SUPER, cf.getColumnType(), SUPER + " column type");
                }
                if (cf.getName().equals(COMPOSITE)) {
                    String cmp = cf.getComparatorType().getClassName();
                    expectTrue(cmp.contains("CompositeType") && cmp.contains("UTF8Type") && cmp.contains("LongType"),
                            COMPOSITE + " comparator " + cmp);
                }
            }
            expect(new TreeSet<>(Arrays.asList(STANDARD, SUPER, COMPOSITE, COUNTERS)), cfs, "column families");
        });

        ConfigurableConsistencyLevel cl = new ConfigurableConsistencyLevel();
        cl.setDefaultReadConsistencyLevel(HConsistencyLevel.ONE);
        cl.setDefaultWriteConsistencyLevel(HConsistencyLevel.ONE);
        ko = HFactory.createKeyspace(ksName, cluster, cl);

        check("mutator insert + column query", () -> {
            Mutator<String> m = HFactory.createMutator(ko, SS);
            for (String col : Arrays.asList("a", "b", "c", "d", "e", "f")) {
                m.addInsertion("alice", STANDARD, HFactory.createStringColumn(col, "v-" + col));
            }
            m.addInsertion("bob", STANDARD, HFactory.createStringColumn("email", "bob@example.com"));
            m.addInsertion("bob", STANDARD, HFactory.createStringColumn("name", "Bob"));
            m.execute();
            expect("v-c", get(STANDARD, "alice", "c"), "alice/c");
            expect("Bob", get(STANDARD, "bob", "name"), "bob/name");
            expect(null, get(STANDARD, "bob", "missing"), "bob/missing");
        });

        check("slice query range", () -> {
            ColumnSlice<String, String> s = slice(STANDARD, "alice").setRange("b", "d", false, 100).execute().get();
            expect(Arrays.asList("b", "c", "d"), names(s), "columns b..d");
            expect("v-b", s.getColumnByName("b").getValue(), "value of b");
        });

        check("slice query reversed + count", () -> {
            ColumnSlice<String, String> s = slice(STANDARD, "alice").setRange("", "", true, 3).execute().get();
            expect(Arrays.asList("f", "e", "d"), names(s), "last 3 columns reversed");
            s = slice(STANDARD, "alice").setRange("e", "b", true, 2).execute().get();
            expect(Arrays.asList("e", "d"), names(s), "reversed e..b count 2");
            int n = HFactory.createCountQuery(ko, SS, SS).setColumnFamily(STANDARD).setKey("alice")
                    .setRange(null, null, 100).execute().get();
            expect(6, n, "get_count(alice)");
        });

        check("slice query by column names", () -> {
            ColumnSlice<String, String> s = slice(STANDARD, "alice").setColumnNames("a", "zz", "e").execute().get();
            expect(Arrays.asList("a", "e"), names(s), "named columns");
        });

        check("mutator TTL column", () -> {
            Mutator<String> m = HFactory.createMutator(ko, SS);
            m.insert("carol", STANDARD, HFactory.createColumn("session", "token-1", 3600, SS, SS));
            HColumn<String, String> c = HFactory.createColumnQuery(ko, SS, SS, SS)
                    .setColumnFamily(STANDARD).setKey("carol").setName("session").execute().get();
            expectTrue(c != null, "TTL column not found");
            expect("token-1", c.getValue(), "TTL column value");
            expectTtl(3600, c.getTtl(), "TTL read back");
        });

        check("super column insert + super slice", () -> {
            Mutator<String> m = HFactory.createMutator(ko, SS);
            for (String day : Arrays.asList("2012-01-01", "2012-01-02", "2012-01-03")) {
                List<HColumn<String, String>> cols = Arrays.asList(
                        HFactory.createStringColumn("kind", "login"),
                        HFactory.createStringColumn("ip", "10.0.0." + day.substring(9)));
                m.addInsertion("alice", SUPER, HFactory.createSuperColumn(day, cols, SS, SS, SS));
            }
            m.execute();
            SuperSliceQuery<String, String, String, String> q = HFactory.createSuperSliceQuery(ko, SS, SS, SS, SS);
            q.setColumnFamily(SUPER).setKey("alice").setRange("2012-01-02", "", false, 10);
            SuperSlice<String, String, String> s = q.execute().get();
            List<String> scs = new ArrayList<>();
            for (HSuperColumn<String, String, String> sc : s.getSuperColumns()) {
                scs.add(sc.getName());
                expect(2, sc.getSize(), "subcolumns of " + sc.getName());
            }
            expect(Arrays.asList("2012-01-02", "2012-01-03"), scs, "super columns from 2012-01-02");
            q.setRange("", "", true, 1);
            expect("2012-01-03", q.execute().get().getSuperColumns().get(0).getName(), "last super column");
        });

        check("super column query", () -> {
            SuperColumnQuery<String, String, String, String> q = HFactory.createSuperColumnQuery(ko, SS, SS, SS, SS);
            q.setColumnFamily(SUPER).setKey("alice").setSuperName("2012-01-01");
            HSuperColumn<String, String, String> sc = q.execute().get();
            expectTrue(sc != null, "super column 2012-01-01 not found");
            expect("10.0.0.1", sc.getSubColumnByName("ip").getValue(), "subcolumn ip");
            expect("login", sc.getSubColumnByName("kind").getValue(), "subcolumn kind");
            q.setSuperName("1999-12-31");
            expect(null, q.execute().get(), "missing super column");
        });

        check("super subcolumn delete", () -> {
            Mutator<String> m = HFactory.createMutator(ko, SS);
            m.subDelete("alice", SUPER, "2012-01-01", "ip", SS, SS);
            HSuperColumn<String, String, String> sc = HFactory.createSuperColumnQuery(ko, SS, SS, SS, SS)
                    .setColumnFamily(SUPER).setKey("alice").setSuperName("2012-01-01").execute().get();
            expect(1, sc.getSize(), "subcolumns after delete");
            expect("kind", sc.getColumns().get(0).getName(), "remaining subcolumn");
        });

        check("composite columns, range on 1st", () -> {
            Mutator<String> m = HFactory.createMutator(ko, SS);
            String[] events = {"click", "login", "logout", "view"};
            for (String ev : events) {
                for (long seq = 1; seq <= 3; seq++) {
                    m.addInsertion("alice", COMPOSITE, HFactory.createColumn(comp(ev, seq), ev + "#" + seq, CS, SS));
                }
            }
            m.execute();

            // All columns whose first component is "login": (login, *).
            Composite start = new Composite();
            start.addComponent("login", SS, "UTF8Type", ComponentEquality.EQUAL);
            Composite end = new Composite();
            end.addComponent("login", SS, "UTF8Type", ComponentEquality.GREATER_THAN_EQUAL);
            SliceQuery<String, Composite, String> q = HFactory.createSliceQuery(ko, SS, CS, SS);
            q.setColumnFamily(COMPOSITE).setKey("alice").setRange(start, end, false, 100);
            List<String> got = new ArrayList<>();
            for (HColumn<Composite, String> c : q.execute().get().getColumns()) {
                got.add(c.getName().get(0, SS) + "/" + c.getName().get(1, LS) + "=" + c.getValue());
            }
            expect(Arrays.asList("login/1=login#1", "login/2=login#2", "login/3=login#3"), got, "(login, *)");

            // (login, 2) .. end of "login", reversed: from the top of login down to seq 2.
            Composite lo = new Composite();
            lo.addComponent("login", SS, "UTF8Type", ComponentEquality.EQUAL);
            lo.addComponent(2L, LS, "LongType", ComponentEquality.EQUAL);
            q.setRange(end, lo, true, 100);
            got.clear();
            for (HColumn<Composite, String> c : q.execute().get().getColumns()) {
                got.add(c.getName().get(0, SS) + "/" + c.getName().get(1, LS));
            }
            expect(Arrays.asList("login/3", "login/2"), got, "(login, >=2) reversed");

            // Everything after "login" (logout, view): start just past the login group.
            Composite after = new Composite();
            after.addComponent("login", SS, "UTF8Type", ComponentEquality.GREATER_THAN_EQUAL);
            q.setRange(after, null, false, 100);
            Set<String> firsts = new TreeSet<>();
            int n = 0;
            for (HColumn<Composite, String> c : q.execute().get().getColumns()) {
                firsts.add(c.getName().get(0, SS));
                n++;
            }
            expect(new TreeSet<>(Arrays.asList("logout", "view")), firsts, "groups after login");
            expect(6, n, "columns after login");
        });

        check("counters increment + query", () -> {
            Mutator<String> m = HFactory.createMutator(ko, SS);
            m.incrementCounter("page:/home", COUNTERS, "views", 5);
            m.incrementCounter("page:/home", COUNTERS, "views", 3);
            m.decrementCounter("page:/home", COUNTERS, "views", 2);
            m.addCounter("page:/home", COUNTERS, HFactory.createCounterColumn("likes", 7));
            m.addCounter("page:/about", COUNTERS, HFactory.createCounterColumn("views", 1));
            m.execute();
            CounterQuery<String, String> q = HFactory.createCounterColumnQuery(ko, SS, SS);
            q.setColumnFamily(COUNTERS).setKey("page:/home").setName("views");
            HCounterColumn<String> c = q.execute().get();
            expectTrue(c != null, "counter views not found");
            expect(6L, c.getValue(), "views");
            q.setName("likes");
            expect(7L, q.execute().get().getValue(), "likes");
            q.setName("shares");
            expect(null, q.execute().get(), "missing counter");
            List<String> cols = new ArrayList<>();
            for (HCounterColumn<String> cc : HFactory.createCounterSliceQuery(ko, SS, SS).setColumnFamily(COUNTERS)
                    .setKey("page:/home").setRange(null, null, false, 10).execute().get().getColumns()) {
                cols.add(cc.getName() + "=" + cc.getValue());
            }
            expect(Arrays.asList("likes=7", "views=6"), cols, "counter slice");
        });

        check("counter delete", () -> {
            Mutator<String> m = HFactory.createMutator(ko, SS);
            m.deleteCounter("page:/about", COUNTERS, "views", SS);
            CounterQuery<String, String> q = HFactory.createCounterColumnQuery(ko, SS, SS);
            expect(null, q.setColumnFamily(COUNTERS).setKey("page:/about").setName("views").execute().get(),
                    "deleted counter");
        });

        check("range slices paging by last key", () -> {
            Mutator<String> m = HFactory.createMutator(ko, SS);
            Set<String> want = new HashSet<>(Arrays.asList("alice", "bob", "carol"));
            for (int i = 0; i < 47; i++) {
                String key = "user" + i;
                want.add(key);
                m.addInsertion(key, STANDARD, HFactory.createStringColumn("name", "User " + i));
                m.addInsertion(key, STANDARD, HFactory.createStringColumn("n", Integer.toString(i)));
            }
            m.execute();

            Set<String> seen = new HashSet<>();
            String start = "";
            int pages = 0, pageSize = 10;
            while (true) {
                RangeSlicesQuery<String, String, String> q = HFactory.createRangeSlicesQuery(ko, SS, SS, SS);
                q.setColumnFamily(STANDARD).setKeys(start, "").setRowCount(pageSize).setRange(null, null, false, 100);
                OrderedRows<String, String, String> rows = q.execute().get();
                pages++;
                expectTrue(pages < 50, "paging does not end");
                for (Row<String, String, String> r : rows) {
                    if (!start.isEmpty() && r.getKey().equals(start)) {
                        continue; // the start key comes back as the first row of the next page
                    }
                    expectTrue(seen.add(r.getKey()), "row " + r.getKey() + " seen twice");
                    if (r.getKey().startsWith("user")) {
                        expect("User " + r.getKey().substring(4),
                                r.getColumnSlice().getColumnByName("name").getValue(), r.getKey() + "/name");
                    }
                }
                if (rows.getCount() < pageSize) {
                    break;
                }
                start = rows.peekLast().getKey();
            }
            expect(want, seen, "rows seen by paging");
            expectTrue(pages >= 5, "only " + pages + " pages of " + pageSize);
        });

        check("multiget slice", () -> {
            MultigetSliceQuery<String, String, String> q = HFactory.createMultigetSliceQuery(ko, SS, SS, SS);
            q.setColumnFamily(STANDARD).setKeys("alice", "bob", "nobody", "user7").setRange(null, null, false, 2);
            Rows<String, String, String> rows = q.execute().get();
            expect(Arrays.asList("a", "b"), names(rows.getByKey("alice").getColumnSlice()), "alice first 2");
            expect(Arrays.asList("email", "name"), names(rows.getByKey("bob").getColumnSlice()), "bob");
            expect(Arrays.asList("n", "name"), names(rows.getByKey("user7").getColumnSlice()), "user7");
            Row<String, String, String> nobody = rows.getByKey("nobody");
            expectTrue(nobody == null || nobody.getColumnSlice().getColumns().isEmpty(), "nobody has columns");
        });

        check("delete column", () -> {
            Mutator<String> m = HFactory.createMutator(ko, SS);
            m.delete("alice", STANDARD, "c", SS);
            expect(null, get(STANDARD, "alice", "c"), "alice/c after delete");
            expect(Arrays.asList("a", "b", "d", "e", "f"),
                    names(slice(STANDARD, "alice").setRange(null, null, false, 100).execute().get()), "alice");
        });

        check("delete row", () -> {
            Mutator<String> m = HFactory.createMutator(ko, SS);
            m.addDeletion("bob", STANDARD);
            m.addDeletion("alice", SUPER);
            m.execute();
            expect(0, slice(STANDARD, "bob").setRange(null, null, false, 100).execute().get().getColumns().size(),
                    "bob's columns after row delete");
            SuperSliceQuery<String, String, String, String> sq = HFactory.createSuperSliceQuery(ko, SS, SS, SS, SS);
            sq.setColumnFamily(SUPER).setKey("alice").setRange(null, null, false, 10);
            expect(0, sq.execute().get().getSuperColumns().size(), "alice's super columns after row delete");
            // A range scan may still return the deleted row as a "range ghost"
            // with no columns (Cassandra before 3.0 did); an application skips it.
            RangeSlicesQuery<String, String, String> q = HFactory.createRangeSlicesQuery(ko, SS, SS, SS);
            q.setColumnFamily(STANDARD).setKeys("", "").setRowCount(1000).setRange(null, null, false, 10);
            int live = 0;
            for (Row<String, String, String> r : q.execute().get()) {
                if (r.getKey().equals("bob")) {
                    expect(0, r.getColumnSlice().getColumns().size(), "range ghost of bob");
                } else {
                    live++;
                }
            }
            expect(49, live, "live rows after deleting bob");
        });

        check("missing CF -> HInvalidRequestException", () -> {
            try {
                slice("NoSuchCF", "alice").setRange(null, null, false, 10).execute();
                throw new AssertionError("query on a missing column family succeeded");
            } catch (HInvalidRequestException e) {
                note = e.getMessage();
            }
        });

        check("duplicate keyspace -> HInvalidRequestException", () -> {
            try {
                cluster.addKeyspace(HFactory.createKeyspaceDefinition(ksName, ThriftKsDef.DEF_STRATEGY_CLASS, 1,
                        new ArrayList<ColumnFamilyDefinition>()), true);
                throw new AssertionError("adding an existing keyspace succeeded");
            } catch (HInvalidRequestException e) {
                note = e.getMessage();
            }
        });

        check("TTL expiry (ttl=3, wait 4 s)", () -> {
            Mutator<String> m = HFactory.createMutator(ko, SS);
            m.addInsertion("dave", STANDARD, HFactory.createColumn("otp", "123456", 3, SS, SS));
            m.addInsertion("dave", STANDARD, HFactory.createColumn("name", "Dave", SS, SS));
            m.execute();
            expect("123456", get(STANDARD, "dave", "otp"), "otp before expiry");
            Thread.sleep(4000);
            expect(null, get(STANDARD, "dave", "otp"), "otp after expiry");
            expect(Arrays.asList("name"),
                    names(slice(STANDARD, "dave").setRange(null, null, false, 10).execute().get()),
                    "dave after expiry");
        });

        check("drop keyspace", () -> {
            cluster.dropKeyspace(ksName, true);
            dropped = true;
            for (KeyspaceDefinition k : cluster.describeKeyspaces()) {
                expectTrue(!k.getName().equals(ksName), "keyspace still listed after drop");
            }
        });
    }

    public static void main(String[] args) {
        if (args.length != 1 || !args[0].contains(":")) {
            System.err.println("usage: HectorCheck HOST:PORT");
            System.exit(2);
        }
        // The whole run is bounded: a hung server must not hang the matrix.
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(75_000);
            } catch (InterruptedException e) {
                return;
            }
            System.out.println("FAIL watchdog: run took over 75 s");
            System.out.println("0 passed, 1 failed");
            System.out.flush();
            Runtime.getRuntime().halt(1);
        });
        watchdog.setDaemon(true);
        watchdog.start();

        HectorCheck c = new HectorCheck();
        try {
            c.run(args[0]);
        } catch (Throwable e) {
            c.failed++;
            System.out.println("FAIL setup: " + e);
        } finally {
            if (c.cluster != null && c.failed > 0 && !c.dropped) {
                try { // leave no keyspace behind after a failure
                    c.cluster.dropKeyspace(c.ksName, true);
                } catch (Throwable e) {
                    // Another client of a shared server may have emptied it
                    // (dropped every keyspace) under this run.
                    System.out.println("NOTE keyspace " + c.ksName + " was gone at the end of the run: "
                            + "dropped by another client of this server? (" + e.getMessage() + ")");
                }
            }
        }
        System.out.println(c.passed + " passed, " + c.failed + " failed");
        System.out.flush();
        Runtime.getRuntime().halt(c.failed == 0 && c.passed > 0 ? 0 : 1);
    }
}

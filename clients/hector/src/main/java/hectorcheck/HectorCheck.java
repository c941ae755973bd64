package hectorcheck;

import clientcheck.Divergences;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import me.prettyprint.cassandra.model.BasicColumnDefinition;
import me.prettyprint.cassandra.model.ConfigurableConsistencyLevel;
import me.prettyprint.cassandra.model.IndexedSlicesQuery;
import me.prettyprint.cassandra.serializers.BytesArraySerializer;
import me.prettyprint.cassandra.serializers.CompositeSerializer;
import me.prettyprint.cassandra.serializers.LongSerializer;
import me.prettyprint.cassandra.serializers.StringSerializer;
import me.prettyprint.cassandra.service.CassandraHostConfigurator;
import me.prettyprint.cassandra.service.ThriftCfDef;
import me.prettyprint.cassandra.service.ThriftKsDef;
import me.prettyprint.cassandra.service.template.ColumnFamilyResult;
import me.prettyprint.cassandra.service.template.ColumnFamilyRowMapper;
import me.prettyprint.cassandra.service.template.ColumnFamilyTemplate;
import me.prettyprint.cassandra.service.template.ColumnFamilyUpdater;
import me.prettyprint.cassandra.service.template.SuperCfResult;
import me.prettyprint.cassandra.service.template.SuperCfTemplate;
import me.prettyprint.cassandra.service.template.SuperCfUpdater;
import me.prettyprint.cassandra.service.template.ThriftColumnFamilyTemplate;
import me.prettyprint.cassandra.service.template.ThriftSuperCfTemplate;
import me.prettyprint.hector.api.Cluster;
import me.prettyprint.hector.api.HConsistencyLevel;
import me.prettyprint.hector.api.Keyspace;
import me.prettyprint.hector.api.beans.AbstractComposite.ComponentEquality;
import me.prettyprint.hector.api.beans.ColumnSlice;
import me.prettyprint.hector.api.beans.Composite;
import me.prettyprint.hector.api.beans.CounterRow;
import me.prettyprint.hector.api.beans.CounterSlice;
import me.prettyprint.hector.api.beans.CounterSuperSlice;
import me.prettyprint.hector.api.beans.HColumn;
import me.prettyprint.hector.api.beans.HCounterColumn;
import me.prettyprint.hector.api.beans.HCounterSuperColumn;
import me.prettyprint.hector.api.beans.HSuperColumn;
import me.prettyprint.hector.api.beans.OrderedRows;
import me.prettyprint.hector.api.beans.Row;
import me.prettyprint.hector.api.beans.Rows;
import me.prettyprint.hector.api.beans.SuperRow;
import me.prettyprint.hector.api.beans.SuperRows;
import me.prettyprint.hector.api.beans.SuperSlice;
import me.prettyprint.hector.api.ddl.ColumnDefinition;
import me.prettyprint.hector.api.ddl.ColumnFamilyDefinition;
import me.prettyprint.hector.api.ddl.ColumnIndexType;
import me.prettyprint.hector.api.ddl.ColumnType;
import me.prettyprint.hector.api.ddl.ComparatorType;
import me.prettyprint.hector.api.ddl.KeyspaceDefinition;
import me.prettyprint.hector.api.exceptions.HInvalidRequestException;
import me.prettyprint.hector.api.exceptions.HTimedOutException;
import me.prettyprint.hector.api.factory.HFactory;
import me.prettyprint.hector.api.mutation.Mutator;
import me.prettyprint.hector.api.query.CounterQuery;
import me.prettyprint.hector.api.query.MultigetSliceCounterQuery;
import me.prettyprint.hector.api.query.MultigetSliceQuery;
import me.prettyprint.hector.api.query.MultigetSubSliceQuery;
import me.prettyprint.hector.api.query.MultigetSuperSliceQuery;
import me.prettyprint.hector.api.query.RangeSlicesQuery;
import me.prettyprint.hector.api.query.RangeSubSlicesQuery;
import me.prettyprint.hector.api.query.RangeSuperSlicesQuery;
import me.prettyprint.hector.api.query.SliceQuery;
import me.prettyprint.hector.api.query.SubColumnQuery;
import me.prettyprint.hector.api.query.SubCountQuery;
import me.prettyprint.hector.api.query.SubSliceCounterQuery;
import me.prettyprint.hector.api.query.SubSliceQuery;
import me.prettyprint.hector.api.query.SuperColumnQuery;
import me.prettyprint.hector.api.query.SuperSliceCounterQuery;
import me.prettyprint.hector.api.query.SuperSliceQuery;

/**
 * A Hector application of the Thrift era: it defines its keyspace through
 * HFactory, writes with a Mutator and reads back with Hector's query
 * objects, checking every answer. The same program runs against thriftd and
 * against a real Cassandra 3.11; run.sh builds and runs it.
 *
 * Where thriftd departs from Cassandra 3.11 on purpose (clientcheck.Divergences, named
 * as legacy/conformance/divergences.go names them), the check asks
 * diverges(name) and asserts the behaviour of the server it talks to. The
 * server is told by describe_version: 20.x is Cassandra 2.2-3.11, 19.x
 * thriftd (whose default, 19.39.0, is Cassandra 2.1's).
 *
 * Usage: HectorCheck HOST:PORT
 */
public final class HectorCheck {
    static final StringSerializer SS = StringSerializer.get();
    static final LongSerializer LS = LongSerializer.get();
    static final CompositeSerializer CS = CompositeSerializer.get();
    static final BytesArraySerializer BS = BytesArraySerializer.get();

    static final String STANDARD = "Users";
    static final String SUPER = "Events";
    static final String COMPOSITE = "Timeline";
    static final String COUNTERS = "Hits";
    static final String SESSIONS = "Sessions"; // Super, read by key ranges
    static final String STATS = "Stats"; // Super, counters
    static final String PROFILES = "Profiles"; // KEYS index on birthyear
    static final String NOTES = "Notes"; // added, updated and dropped
    static final String MEMOS = "Memos"; // added with no column_metadata, then given some

    // The row keys of PROFILES and SESSIONS in Murmur3Partitioner's token
    // order, the order of every range scan and indexed scan.
    static final List<String> PROFILE_KEYS = Arrays.asList("eve", "fay", "cat", "hal", "ben", "ann", "gus", "dan");
    static final List<String> SESSION_KEYS = Arrays.asList("s1", "s3", "s2", "s5", "s4");

    int passed, failed;
    Cluster cluster;
    Keyspace ko;
    String ksName;
    boolean dropped;
    /** Set from describe_version: true when the server is Cassandra 2.2-3.11. */
    Boolean onCassandra;

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

    /**
     * Reports whether the server is Cassandra 3.11, where the named
     * divergence means Cassandra's behaviour is the one to assert; on
     * thriftd, thriftd's. Says which it asserts.
     */
    boolean diverges(String name) {
        return Divergences.diverges(name, onCassandra);
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

    static List<String> counters(CounterSlice<String> s) {
        List<String> out = new ArrayList<>();
        for (HCounterColumn<String> c : s.getColumns()) {
            out.add(c.getName() + "=" + c.getValue());
        }
        return out;
    }

    static List<String> superNames(SuperSlice<String, String, String> s) {
        List<String> out = new ArrayList<>();
        for (HSuperColumn<String, String, String> sc : s.getSuperColumns()) {
            out.add(sc.getName());
        }
        return out;
    }

    static List<String> subNames(HSuperColumn<String, String, String> sc) {
        List<String> out = new ArrayList<>();
        for (HColumn<String, String> c : sc.getColumns()) {
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

    SubSliceQuery<String, String, String, String> subSlice(String key, String superName) {
        SubSliceQuery<String, String, String, String> q = HFactory.createSubSliceQuery(ko, SS, SS, SS, SS);
        return q.setColumnFamily(SESSIONS).setKey(key).setSuperColumn(superName);
    }

    int superCount(String key, String start, String end, int count) {
        return HFactory.createSuperCountQuery(ko, SS, SS).setColumnFamily(SESSIONS).setKey(key)
                .setRange(start, end, count).execute().get();
    }

    int subCount(String key, String superName, String start, String end, int count) {
        SubCountQuery<String, String, String> q = HFactory.createSubCountQuery(ko, SS, SS, SS);
        return q.setColumnFamily(SESSIONS).setKey(key).setSuperColumn(superName).setRange(start, end, count)
                .execute().get();
    }

    static List<String> superRowKeys(RangeSuperSlicesQuery<String, String, String, String> q) {
        List<String> out = new ArrayList<>();
        for (SuperRow<String, String, String, String> r : q.execute().get().getList()) {
            out.add(r.getKey());
        }
        return out;
    }

    IndexedSlicesQuery<String, String, Long> indexed() {
        IndexedSlicesQuery<String, String, Long> q = HFactory.createIndexedSlicesQuery(ko, SS, SS, LS);
        return q.setColumnFamily(PROFILES).setRowCount(100);
    }

    static List<String> indexedKeys(IndexedSlicesQuery<String, String, Long> q) {
        List<String> out = new ArrayList<>();
        for (Row<String, String, Long> r : q.execute().get()) {
            out.add(r.getKey());
        }
        return out;
    }

    List<String> profileKeys(String start, String end, int rows) {
        RangeSlicesQuery<String, String, Long> q = HFactory.createRangeSlicesQuery(ko, SS, SS, LS);
        q.setColumnFamily(PROFILES).setKeys(start, end).setRowCount(rows).setRange(null, null, false, 10);
        List<String> out = new ArrayList<>();
        for (Row<String, String, Long> r : q.execute().get()) {
            out.add(r.getKey());
        }
        return out;
    }

    /** The keyspace's definition of a column family, as describe_keyspace gives it; null if none. */
    ColumnFamilyDefinition cfDef(String name) {
        for (ColumnFamilyDefinition cf : cluster.describeKeyspace(ksName).getCfDefs()) {
            if (cf.getName().equals(name)) {
                return cf;
            }
        }
        return null;
    }

    static Composite comp(String event, long seq) {
        Composite c = new Composite();
        c.addComponent(event, SS);
        c.addComponent(seq, LS);
        return c;
    }

    /**
     * A family of the keyspace: UTF8Type keys, names by comparator (and
     * UTF8Type subcolumn names in a Super family), values of values.
     */
    ColumnFamilyDefinition family(String name, ComparatorType comparator, boolean isSuper, ComparatorType values) {
        ColumnFamilyDefinition cf = HFactory.createColumnFamilyDefinition(ksName, name, comparator);
        if (isSuper) {
            cf.setColumnType(ColumnType.SUPER);
            cf.setSubComparatorType(ComparatorType.UTF8TYPE);
        }
        cf.setKeyValidationClass(ComparatorType.UTF8TYPE.getClassName());
        cf.setDefaultValidationClass(values.getClassName());
        return cf;
    }

    /**
     * Declares column of family cf LongType through updateColumnFamily, with
     * the family's definition as the server describes it, as schema tools of
     * the era did.
     */
    void declareLongColumn(String cf, String column) {
        ThriftCfDef upd = new ThriftCfDef(cfDef(cf));
        BasicColumnDefinition def = new BasicColumnDefinition();
        def.setName(SS.toByteBuffer(column));
        def.setValidationClass(ComparatorType.LONGTYPE.getClassName());
        upd.addColumnDefinition(def);
        cluster.updateColumnFamily(upd, true);
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
            onCassandra = major >= 20;
            System.out.println("server: " + (onCassandra ? "Cassandra 3.11" : "thriftd") + " (describe_version "
                    + version + ")");
            expectTrue(cluster.describePartitioner().endsWith("Partitioner"),
                    "partitioner " + cluster.describePartitioner());
        });

        check("create keyspace and CFs", () -> {
            // UTF8Type names and keys throughout, as the application's model
            // had them; Timeline's comparator takes its components as an alias.
            ColumnFamilyDefinition users = family(STANDARD, ComparatorType.UTF8TYPE, false, ComparatorType.UTF8TYPE);
            ColumnFamilyDefinition events = family(SUPER, ComparatorType.UTF8TYPE, true, ComparatorType.UTF8TYPE);
            ColumnFamilyDefinition timeline = family(COMPOSITE, ComparatorType.COMPOSITETYPE, false,
                    ComparatorType.UTF8TYPE);
            timeline.setComparatorTypeAlias("(UTF8Type, LongType)");
            ColumnFamilyDefinition hits = family(COUNTERS, ComparatorType.UTF8TYPE, false, ComparatorType.COUNTERTYPE);
            ColumnFamilyDefinition sessions = family(SESSIONS, ComparatorType.UTF8TYPE, true,
                    ComparatorType.UTF8TYPE);
            ColumnFamilyDefinition stats = family(STATS, ComparatorType.UTF8TYPE, true, ComparatorType.COUNTERTYPE);

            KeyspaceDefinition ks = HFactory.createKeyspaceDefinition(ksName, ThriftKsDef.DEF_STRATEGY_CLASS, 1,
                    Arrays.asList(users, events, timeline, hits, sessions, stats));
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
            expect(new TreeSet<>(Arrays.asList(STANDARD, SUPER, COMPOSITE, COUNTERS, SESSIONS, STATS)), cfs,
                    "column families");
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

        check("ColumnFamilyTemplate update + queryColumns", () -> {
            // Hector 1.0's template: an updater collects a row's columns (or
            // several rows'), update() sends them in one batch; results are
            // read by column name.
            ColumnFamilyTemplate<String, String> t = new ThriftColumnFamilyTemplate<>(ko, STANDARD, SS, SS);
            ColumnFamilyUpdater<String, String> u = t.createUpdater("erin");
            u.setString("name", "Erin");
            u.setString("email", "erin@example.com");
            u.setString("city", "Oslo");
            u.addKey("fred");
            u.setString("name", "Fred");
            t.update(u);

            ColumnFamilyResult<String, String> r = t.queryColumns("erin");
            expectTrue(r.hasResults(), "erin has no columns");
            expect("erin", r.getKey(), "result key");
            expect(Arrays.asList("city", "email", "name"), new ArrayList<>(r.getColumnNames()), "erin's columns");
            expect("erin@example.com", r.getString("email"), "erin/email");
            expect(null, r.getString("zip"), "erin/zip");
            r = t.queryColumns("erin", Arrays.asList("name", "zip"));
            expect(Arrays.asList("name"), new ArrayList<>(r.getColumnNames()), "erin by names");
            expect("Fred", t.querySingleColumn("fred", "name", SS).getValue(), "fred/name");
            String card = t.queryColumns("erin", new ColumnFamilyRowMapper<String, String, String>() {
                @Override
                public String mapRow(ColumnFamilyResult<String, String> row) {
                    return row.getString("name") + " <" + row.getString("email") + ">";
                }
            });
            expect("Erin <erin@example.com>", card, "row mapper");
            expect(3, t.countColumns("erin"), "countColumns(erin)");
            expect(2, t.countColumns("erin", "d", "z", 100), "countColumns(erin, d..z)");
            expect(false, t.queryColumns("nobody").hasResults(), "nobody hasResults");
            expect(false, t.isColumnsExist("nobody"), "isColumnsExist(nobody)");
        });

        check("ColumnFamilyTemplate multiget + deletes", () -> {
            ColumnFamilyTemplate<String, String> t = new ThriftColumnFamilyTemplate<>(ko, STANDARD, SS, SS);
            // A multi-key result starts on its first row; next() moves on.
            ColumnFamilyResult<String, String> r = t.queryColumns(Arrays.asList("erin", "fred", "nobody"));
            Map<String, List<String>> rows = new TreeMap<>();
            while (true) {
                rows.put(r.getKey(), new ArrayList<>(r.getColumnNames()));
                if (!r.hasNext()) {
                    break;
                }
                r.next();
            }
            Map<String, List<String>> want = new TreeMap<>();
            want.put("erin", Arrays.asList("city", "email", "name"));
            want.put("fred", Arrays.asList("name"));
            want.put("nobody", new ArrayList<String>());
            expect(want, rows, "rows of erin, fred, nobody");

            t.deleteColumn("erin", "city");
            expect(Arrays.asList("email", "name"), new ArrayList<>(t.queryColumns("erin").getColumnNames()),
                    "erin after deleteColumn(city)");
            ColumnFamilyUpdater<String, String> u = t.createUpdater("erin");
            u.deleteColumn("email");
            u.setString("phone", "555-0100");
            t.update(u);
            expect(Arrays.asList("name", "phone"), new ArrayList<>(t.queryColumns("erin").getColumnNames()),
                    "erin after updater deleteColumn(email) + setString(phone)");
            t.deleteRow("fred");
            expect(false, t.isColumnsExist("fred"), "isColumnsExist(fred) after deleteRow");
            expect(true, t.isColumnsExist("erin"), "isColumnsExist(erin)");
        });

        check("SuperCfTemplate update + querySuperColumns", () -> {
            SuperCfTemplate<String, String, String> t = new ThriftSuperCfTemplate<>(ko, SUPER, SS, SS, SS);
            SuperCfUpdater<String, String, String> u = t.createUpdater("frank", "2013-05-01");
            u.setString("kind", "login");
            u.setString("ip", "10.1.0.1");
            u.addSuperColumn("2013-05-02");
            u.setString("kind", "purchase");
            u.setString("item", "book");
            t.update(u);

            SuperCfResult<String, String, String> r = t.querySuperColumns("frank");
            expect(Arrays.asList("2013-05-01", "2013-05-02"), new ArrayList<>(r.getSuperColumns()), "super columns");
            expect("login", r.getString("2013-05-01", "kind"), "2013-05-01/kind");
            expect("book", r.getString("2013-05-02", "item"), "2013-05-02/item");
            r.applySuperColumn("2013-05-02");
            expect(Arrays.asList("item", "kind"), new ArrayList<>(r.getColumnNames()), "subcolumns of 2013-05-02");
            r = t.querySuperColumns("frank", Arrays.asList("2013-05-02", "1999-01-01"));
            expect(Arrays.asList("2013-05-02"), new ArrayList<>(r.getSuperColumns()), "super columns by name");
            expect(2, t.countColumns("frank"), "countColumns(frank)");
            expect(2, t.countSubColumns("frank", "2013-05-01"), "countSubColumns(frank, 2013-05-01)");
            expect(true, t.isSubColumnsExist("frank", "2013-05-02"), "isSubColumnsExist(2013-05-02)");
            expect(false, t.isSubColumnsExist("frank", "1999-01-01"), "isSubColumnsExist(1999-01-01)");
            expect("purchase", t.querySingleSubColumn("frank", "2013-05-02", "kind", SS).getValue(),
                    "querySingleSubColumn");

            t.deleteColumn("frank", "2013-05-01");
            expect(Arrays.asList("2013-05-02"), new ArrayList<>(t.querySuperColumns("frank").getSuperColumns()),
                    "super columns after deleteColumn(2013-05-01)");
            t.deleteRow("frank");
            expect(false, t.isColumnsExist("frank"), "isColumnsExist(frank) after deleteRow");
        });

        check("sub slice + sub column query", () -> {
            // Sessions: rows s1..s5, super columns a, b, c (s2: a, b; s4: a),
            // each with host, ip, user (s1/b: ip only).
            Mutator<String> m = HFactory.createMutator(ko, SS);
            for (String key : SESSION_KEYS) {
                String supers = key.equals("s2") ? "ab" : key.equals("s4") ? "a" : "abc";
                for (char c : supers.toCharArray()) {
                    String sc = String.valueOf(c);
                    List<HColumn<String, String>> cols = new ArrayList<>();
                    for (String sub : key.equals("s1") && sc.equals("b") ? Arrays.asList("ip")
                            : Arrays.asList("host", "ip", "user")) {
                        cols.add(HFactory.createStringColumn(sub, key + "/" + sc + "/" + sub));
                    }
                    m.addInsertion(key, SESSIONS, HFactory.createSuperColumn(sc, cols, SS, SS, SS));
                }
            }
            m.execute();

            expect(Arrays.asList("host", "ip"), names(subSlice("s1", "a").setRange("host", "ip", false, 10)
                    .execute().get()), "s1/a host..ip");
            expect(Arrays.asList("user", "ip"), names(subSlice("s1", "a").setRange("", "", true, 2)
                    .execute().get()), "s1/a reversed, 2");
            ColumnSlice<String, String> s = subSlice("s3", "c").setColumnNames("user", "nope").execute().get();
            expect(Arrays.asList("user"), names(s), "s3/c by names");
            expect("s3/c/user", s.getColumnByName("user").getValue(), "s3/c/user");
            expect(Arrays.asList("ip"), names(subSlice("s1", "b").setRange(null, null, false, 10).execute().get()),
                    "s1/b");
            expect(0, subSlice("s4", "c").setRange(null, null, false, 10).execute().get().getColumns().size(),
                    "s4/c (no such super column)");

            SubColumnQuery<String, String, String, String> q = HFactory.createSubColumnQuery(ko, SS, SS, SS, SS);
            q.setColumnFamily(SESSIONS).setKey("s5").setSuperColumn("b").setColumn("ip");
            HColumn<String, String> c = q.execute().get();
            expectTrue(c != null, "s5/b/ip not found");
            expect("s5/b/ip", c.getValue(), "s5/b/ip");
            expect(null, q.setColumn("nope").execute().get(), "s5/b/nope");
            expect(null, q.setSuperColumn("z").setColumn("ip").execute().get(), "s5/z/ip");
        });

        check("count, super count, sub count", () -> {
            // alice holds a, b, d, e, f since "delete column".
            expect(3, HFactory.createCountQuery(ko, SS, SS).setColumnFamily(STANDARD).setKey("alice")
                    .setRange("b", "e", 100).execute().get(), "get_count(alice, b..e)");
            expect(2, HFactory.createCountQuery(ko, SS, SS).setColumnFamily(STANDARD).setKey("alice")
                    .setRange(null, null, 2).execute().get(), "get_count(alice, count 2)");
            expect(3, superCount("s1", null, null, 100), "super count s1");
            expect(2, superCount("s1", "b", null, 100), "super count s1 from b");
            expect(1, superCount("s4", null, null, 100), "super count s4");
            expect(0, superCount("nobody", null, null, 100), "super count nobody");
            expect(3, subCount("s1", "a", null, null, 100), "sub count s1/a");
            expect(2, subCount("s1", "a", "i", "v", 100), "sub count s1/a i..v");
            expect(1, subCount("s1", "b", null, null, 100), "sub count s1/b");
            expect(0, subCount("s1", "z", null, null, 100), "sub count s1/z");
            // A count below the number of subcolumns (3 in s5/a).
            if (diverges("super-count-timeout")) {
                try {
                    subCount("s5", "a", null, null, 2);
                    throw new AssertionError("sub count s5/a, count 2: no timeout");
                } catch (HTimedOutException e) {
                    note = "sub count 2 of 3: " + e.getClass().getSimpleName();
                }
            } else {
                expect(2, subCount("s5", "a", null, null, 2), "sub count s5/a, count 2");
            }
        });

        check("multiget super slice + multiget sub slice", () -> {
            MultigetSuperSliceQuery<String, String, String, String> q = HFactory.createMultigetSuperSliceQuery(ko,
                    SS, SS, SS, SS);
            q.setColumnFamily(SESSIONS).setKeys("s1", "s2", "s4", "nobody").setRange("b", "", false, 10);
            SuperRows<String, String, String, String> rows = q.execute().get();
            Map<String, List<String>> got = new TreeMap<>();
            for (SuperRow<String, String, String, String> r : rows) {
                got.put(r.getKey(), superNames(r.getSuperSlice()));
            }
            Map<String, List<String>> want = new TreeMap<>();
            want.put("s1", Arrays.asList("b", "c"));
            want.put("s2", Arrays.asList("b"));
            want.put("s4", new ArrayList<String>());
            want.put("nobody", new ArrayList<String>());
            expect(want, got, "super columns from b");
            expect(Arrays.asList("ip"), subNames(rows.getByKey("s1").getSuperSlice().getColumnByName("b")),
                    "subcolumns of s1/b");

            q = HFactory.createMultigetSuperSliceQuery(ko, SS, SS, SS, SS);
            q.setColumnFamily(SESSIONS).setKeys("s1", "s2", "s4").setColumnNames("a", "c");
            got.clear();
            for (SuperRow<String, String, String, String> r : q.execute().get()) {
                got.put(r.getKey(), superNames(r.getSuperSlice()));
            }
            want.clear();
            want.put("s1", Arrays.asList("a", "c"));
            want.put("s2", Arrays.asList("a"));
            want.put("s4", Arrays.asList("a"));
            expect(want, got, "super columns a, c");

            MultigetSubSliceQuery<String, String, String, String> sq = HFactory.createMultigetSubSliceQuery(ko, SS,
                    SS, SS, SS);
            sq.setColumnFamily(SESSIONS).setKeys("s1", "s2", "s4").setSuperColumn("b").setRange(null, null, false, 10);
            got.clear();
            for (Row<String, String, String> r : sq.execute().get()) {
                got.put(r.getKey(), names(r.getColumnSlice()));
            }
            want.clear();
            want.put("s1", Arrays.asList("ip"));
            want.put("s2", Arrays.asList("host", "ip", "user"));
            want.put("s4", new ArrayList<String>());
            expect(want, got, "subcolumns of b");
            expect("s2/b/host", sq.execute().get().getByKey("s2").getColumnSlice().getColumnByName("host").getValue(),
                    "s2/b/host");
        });

        check("range super slices + range sub slices", () -> {
            RangeSuperSlicesQuery<String, String, String, String> q = HFactory.createRangeSuperSlicesQuery(ko, SS,
                    SS, SS, SS);
            q.setColumnFamily(SESSIONS).setKeys("", "").setRowCount(100).setRange(null, null, false, 1);
            List<String> keys = new ArrayList<>();
            for (SuperRow<String, String, String, String> r : q.execute().get().getList()) {
                keys.add(r.getKey());
                expect(Arrays.asList("a"), superNames(r.getSuperSlice()), "first super column of " + r.getKey());
            }
            expect(SESSION_KEYS, keys, "all rows, token order");
            expect(Arrays.asList("s3", "s2", "s5"), superRowKeys(q.setKeys("s3", "s5")), "rows s3..s5");
            expect(Arrays.asList("s1", "s3"), superRowKeys(q.setKeys("", "").setRowCount(2)), "first 2 rows");

            RangeSubSlicesQuery<String, String, String, String> sq = HFactory.createRangeSubSlicesQuery(ko, SS, SS,
                    SS, SS);
            sq.setColumnFamily(SESSIONS).setSuperColumn("c").setKeys("", "").setRowCount(100)
                    .setRange(null, null, false, 10);
            List<String> got = new ArrayList<>();
            for (Row<String, String, String> r : sq.execute().get()) {
                got.add(r.getKey() + names(r.getColumnSlice()));
            }
            expect(Arrays.asList("s1[host, ip, user]", "s3[host, ip, user]", "s2[]", "s5[host, ip, user]", "s4[]"),
                    got, "subcolumns of c, every row");
            sq.setKeys("s3", "s5").setColumnNames("user");
            got.clear();
            for (Row<String, String, String> r : sq.execute().get()) {
                got.add(r.getKey() + names(r.getColumnSlice()));
            }
            expect(Arrays.asList("s3[user]", "s2[]", "s5[user]"), got, "c/user of s3..s5");
        });

        check("add CF with KEYS index (ThriftCfDef)", () -> {
            BasicColumnDefinition year = new BasicColumnDefinition();
            year.setName(SS.toByteBuffer("birthyear"));
            year.setValidationClass(ComparatorType.LONGTYPE.getClassName());
            year.setIndexType(ColumnIndexType.KEYS);
            year.setIndexName("profiles_birthyear");
            ThriftCfDef def = new ThriftCfDef(ksName, PROFILES, ComparatorType.UTF8TYPE,
                    new ArrayList<ColumnDefinition>(Arrays.asList(year)));
            def.setKeyValidationClass(ComparatorType.UTF8TYPE.getClassName());
            def.setDefaultValidationClass(ComparatorType.LONGTYPE.getClassName());
            cluster.addColumnFamily(def, true);

            ColumnFamilyDefinition back = cfDef(PROFILES);
            expectTrue(back != null, PROFILES + " not described");
            expect(1, back.getColumnMetadata().size(), "column_metadata entries");
            ColumnDefinition cd = back.getColumnMetadata().get(0);
            expect("birthyear", SS.fromByteBuffer(cd.getName()), "column name");
            expect(ComparatorType.LONGTYPE.getClassName(), cd.getValidationClass(), "validator");
            expect(ColumnIndexType.KEYS, cd.getIndexType(), "index type");
            expect("profiles_birthyear", cd.getIndexName(), "index name");

            long[][] born = {{1980, 19800704}, {1975, 19750214}, {1975, 19750601}, {1975, 19751130},
                {1970, 19700918}, {1975, 19750820}, {1970, 19700102}, {1975, 19750105}};
            Mutator<String> m = HFactory.createMutator(ko, SS);
            for (int i = 0; i < PROFILE_KEYS.size(); i++) {
                m.addInsertion(PROFILE_KEYS.get(i), PROFILES, HFactory.createColumn("birthyear", born[i][0], SS, LS));
                m.addInsertion(PROFILE_KEYS.get(i), PROFILES, HFactory.createColumn("birthdate", born[i][1], SS, LS));
            }
            m.execute();
        });

        check("indexed slices EQ on a KEYS index", () -> {
            OrderedRows<String, String, Long> rows = indexed().addEqualsExpression("birthyear", 1975L)
                    .setRange(null, null, false, 10).execute().get();
            List<String> got = new ArrayList<>();
            for (Row<String, String, Long> r : rows) {
                got.add(r.getKey() + "=" + r.getColumnSlice().getColumnByName("birthdate").getValue());
                expect(2, r.getColumnSlice().getColumns().size(), "columns of " + r.getKey());
            }
            expect(Arrays.asList("fay=19750214", "cat=19750601", "hal=19751130", "ann=19750820", "dan=19750105"), got,
                    "birthyear = 1975");
            expect(Arrays.asList("ben", "gus"), indexedKeys(indexed().addEqualsExpression("birthyear", 1970L)
                    .setColumnNames("birthyear", "birthdate")), "birthyear = 1970");
            expect(new ArrayList<String>(), indexedKeys(indexed().addEqualsExpression("birthyear", 1960L)
                    .setRange(null, null, false, 10)), "birthyear = 1960");
            // A predicate that leaves out the indexed column.
            List<String> onlyDate = indexedKeys(indexed().addEqualsExpression("birthyear", 1970L)
                    .setColumnNames("birthdate"));
            if (diverges("index-predicate")) {
                expect(new ArrayList<String>(), onlyDate, "birthyear = 1970, predicate [birthdate]");
            } else {
                expect(Arrays.asList("ben", "gus"), onlyDate, "birthyear = 1970, predicate [birthdate]");
            }
        });

        check("indexed slices GT/LT, start key, row count", () -> {
            expect(Arrays.asList("cat", "hal", "ann"), indexedKeys(indexed().addEqualsExpression("birthyear", 1975L)
                    .addGtExpression("birthdate", 19750501L).setRange(null, null, false, 10)),
                    "1975, birthdate > 19750501");
            expect(Arrays.asList("cat", "ann"), indexedKeys(indexed().addEqualsExpression("birthyear", 1975L)
                    .addGtExpression("birthdate", 19750501L).addLtExpression("birthdate", 19751001L)
                    .setRange(null, null, false, 10)), "1975, 19750501 < birthdate < 19751001");
            expect(Arrays.asList("fay", "cat", "hal", "ann"), indexedKeys(indexed()
                    .addEqualsExpression("birthyear", 1975L).addGteExpression("birthdate", 19750214L)
                    .addLteExpression("birthdate", 19751130L).setRange(null, null, false, 10)),
                    "1975, 19750214 <= birthdate <= 19751130");
            expect(Arrays.asList("hal", "ann", "dan"), indexedKeys(indexed().addEqualsExpression("birthyear", 1975L)
                    .setStartKey("hal").setRange(null, null, false, 10)), "1975 from hal");
            expect(Arrays.asList("fay", "cat"), indexedKeys(indexed().addEqualsExpression("birthyear", 1975L)
                    .setRowCount(2).setRange(null, null, false, 10)), "1975, 2 rows");
            expect(Arrays.asList("hal", "ann"), indexedKeys(indexed().addEqualsExpression("birthyear", 1975L)
                    .setStartKey("hal").setRowCount(2).setRange(null, null, false, 10)), "1975 from hal, 2 rows");
        });

        check("range slices by key range (token order)", () -> {
            expectTrue(cluster.describePartitioner().endsWith(".Murmur3Partitioner"),
                    "partitioner " + cluster.describePartitioner() + ": PROFILE_KEYS are in Murmur3 token order");
            expect(PROFILE_KEYS, profileKeys("", "", 100), "all rows");
            expect(Arrays.asList("cat", "hal", "ben", "ann"), profileKeys("cat", "ann", 100), "cat..ann");
            expect(Arrays.asList("cat", "hal"), profileKeys("cat", "ann", 2), "cat..ann, 2 rows");
            expect(Arrays.asList("eve", "fay", "cat", "hal"), profileKeys("", "hal", 100), "..hal");
            expect(Arrays.asList("gus", "dan"), profileKeys("gus", "", 100), "gus..");
            try {
                profileKeys("ann", "cat", 100);
                throw new AssertionError("range ann..cat (start token after end token) succeeded");
            } catch (HInvalidRequestException e) {
                expectTrue(e.getMessage().contains("start key's token sorts after end key's token"), e.getMessage());
                note = e.getMessage();
            }
        });

        check("super counters + multiget counters", () -> {
            Mutator<String> m = HFactory.createMutator(ko, SS);
            m.addCounter("site", STATS, HFactory.createCounterSuperColumn("2013-01-01",
                    Arrays.asList(HFactory.createCounterColumn("views", 10), HFactory.createCounterColumn("clicks", 2)),
                    SS, SS));
            m.addCounter("site", STATS, HFactory.createCounterSuperColumn("2013-01-02",
                    Arrays.asList(HFactory.createCounterColumn("views", 4)), SS, SS));
            m.addCounter("blog", STATS, HFactory.createCounterSuperColumn("2013-01-01",
                    Arrays.asList(HFactory.createCounterColumn("views", 1)), SS, SS));
            m.execute();
            m.insertCounter("site", STATS, HFactory.createCounterSuperColumn("2013-01-01",
                    Arrays.asList(HFactory.createCounterColumn("views", 5), HFactory.createCounterColumn("clicks", -1)),
                    SS, SS));

            SuperSliceCounterQuery<String, String, String> q = HFactory.createSuperSliceCounterQuery(ko, SS, SS, SS);
            q.setColumnFamily(STATS).setKey("site").setRange(null, null, false, 10);
            CounterSuperSlice<String, String> s = q.execute().get();
            List<String> got = new ArrayList<>();
            for (HCounterSuperColumn<String, String> sc : s.getSuperColumns()) {
                List<String> subs = new ArrayList<>();
                for (HCounterColumn<String> c : sc.getColumns()) {
                    subs.add(c.getName() + "=" + c.getValue());
                }
                got.add(sc.getName() + subs);
            }
            expect(Arrays.asList("2013-01-01[clicks=1, views=15]", "2013-01-02[views=4]"), got, "site");

            SubSliceCounterQuery<String, String, String> sub = HFactory.createSubSliceCounterQuery(ko, SS, SS, SS);
            sub.setColumnFamily(STATS).setKey("site").setSuperColumn("2013-01-01").setColumnNames("views", "shares");
            expect(Arrays.asList("views=15"), counters(sub.execute().get()), "site/2013-01-01 views, shares");

            // Mutator.subDeleteCounter of 1.1-4 never sets the subcolumn's
            // name (an NPE while it writes the request); a super column
            // naming the subcounters to delete does it.
            m.addCounterSubDeletion("site", STATS, HFactory.createCounterSuperColumn("2013-01-01",
                    Arrays.asList(HFactory.createCounterColumn("clicks", 0)), SS, SS));
            m.execute();
            sub = HFactory.createSubSliceCounterQuery(ko, SS, SS, SS);
            sub.setColumnFamily(STATS).setKey("site").setSuperColumn("2013-01-01").setRange(null, null, false, 10);
            expect(Arrays.asList("views=15"), counters(sub.execute().get()), "site/2013-01-01 after deleting clicks");
            expect(Arrays.asList("views=1"), counters(HFactory.createSubSliceCounterQuery(ko, SS, SS, SS)
                    .setColumnFamily(STATS).setKey("blog").setSuperColumn("2013-01-01")
                    .setRange(null, null, false, 10).execute().get()), "blog/2013-01-01");

            // The counters of several pages (Hits) in one call.
            MultigetSliceCounterQuery<String, String> mq = HFactory.createMultigetSliceCounterQuery(ko, SS, SS);
            mq.setColumnFamily(COUNTERS).setKeys("page:/home", "page:/about", "page:/none")
                    .setRange(null, null, false, 10);
            Map<String, List<String>> pages = new TreeMap<>();
            for (CounterRow<String, String> r : mq.execute().get()) {
                pages.put(r.getKey(), counters(r.getColumnSlice()));
            }
            Map<String, List<String>> want = new TreeMap<>();
            want.put("page:/home", Arrays.asList("likes=7", "views=6"));
            want.put("page:/about", new ArrayList<String>()); // its one counter was deleted
            want.put("page:/none", new ArrayList<String>());
            expect(want, pages, "counters of three pages");
            mq = HFactory.createMultigetSliceCounterQuery(ko, SS, SS);
            mq.setColumnFamily(COUNTERS).setKeys("page:/home").setColumnNames("views", "shares");
            expect(Arrays.asList("views=6"), counters(mq.execute().get().getByKey("page:/home").getColumnSlice()),
                    "home views, shares");
        });

        check("mutator: rows x families, super/sub/row deletes", () -> {
            Mutator<String> m = HFactory.createMutator(ko, SS);
            for (String day : Arrays.asList("d1", "d2", "d3")) {
                m.addInsertion("hank", SUPER, HFactory.createSuperColumn(day, Arrays.asList(
                        HFactory.createStringColumn("ip", "10.2.0.1"), HFactory.createStringColumn("kind", "login")),
                        SS, SS, SS));
            }
            m.addInsertion("ivan", STANDARD, HFactory.createStringColumn("name", "Ivan"));
            m.addInsertion("ivan", STANDARD, HFactory.createStringColumn("email", "ivan@example.com"));
            m.execute();

            // One batch_mutate: three rows of two families, insertions and
            // the three kinds of deletion.
            m.addInsertion("gina", STANDARD, HFactory.createStringColumn("name", "Gina"));
            m.addInsertion("gina", SUPER, HFactory.createSuperColumn("2013-02-01",
                    Arrays.asList(HFactory.createStringColumn("kind", "signup")), SS, SS, SS));
            m.addInsertion("hank", STANDARD, HFactory.createStringColumn("name", "Hank"));
            m.addSuperDelete("hank", SUPER, "d1", SS);
            m.addSubDelete("hank", SUPER, "d2", "ip", SS, SS);
            m.addDeletion("ivan", STANDARD);
            expect(3, m.getPendingMutationCount(), "pending mutations (one per row key)");
            m.execute();
            expect(0, m.getPendingMutationCount(), "pending mutations after execute");

            expect(Arrays.asList("name"),
                    names(slice(STANDARD, "gina").setRange(null, null, false, 10).execute().get()), "Users/gina");
            expect(Arrays.asList("name"),
                    names(slice(STANDARD, "hank").setRange(null, null, false, 10).execute().get()), "Users/hank");
            expect(0, slice(STANDARD, "ivan").setRange(null, null, false, 10).execute().get().getColumns().size(),
                    "Users/ivan after row delete");
            SuperSliceQuery<String, String, String, String> sq = HFactory.createSuperSliceQuery(ko, SS, SS, SS, SS);
            sq.setColumnFamily(SUPER).setKey("hank").setRange(null, null, false, 10);
            SuperSlice<String, String, String> hank = sq.execute().get();
            expect(Arrays.asList("d2", "d3"), superNames(hank), "Events/hank super columns");
            expect(Arrays.asList("kind"), subNames(hank.getColumnByName("d2")), "Events/hank/d2");
            expect(Arrays.asList("ip", "kind"), subNames(hank.getColumnByName("d3")), "Events/hank/d3");
            sq.setKey("gina");
            expect(Arrays.asList("2013-02-01"), superNames(sq.execute().get()), "Events/gina");

            // Several rows' deletion in one call.
            m.addDeletion(Arrays.asList("gina", "hank"), STANDARD);
            m.execute();
            Rows<String, String, String> rows = HFactory.createMultigetSliceQuery(ko, SS, SS, SS)
                    .setColumnFamily(STANDARD).setKeys("gina", "hank").setRange(null, null, false, 10).execute().get();
            expect(2, rows.getCount(), "rows of gina, hank");
            for (Row<String, String, String> r : rows) {
                expect(0, r.getColumnSlice().getColumns().size(), "Users/" + r.getKey() + " after deletion");
            }
        });

        check("explicit clocks: an older write loses", () -> {
            Mutator<String> m = HFactory.createMutator(ko, SS);
            m.insert("jack", STANDARD, HFactory.createColumn("status", "new", 1000L, SS, SS));
            m.insert("jack", STANDARD, HFactory.createColumn("status", "older", 999L, SS, SS));
            HColumn<String, String> c = HFactory.createColumnQuery(ko, SS, SS, SS).setColumnFamily(STANDARD)
                    .setKey("jack").setName("status").execute().get();
            expect("new", c.getValue(), "status after an older write");
            expect(1000L, c.getClock(), "clock read back");
            m.insert("jack", STANDARD, HFactory.createColumn("status", "newer", 1001L, SS, SS));
            expect("newer", get(STANDARD, "jack", "status"), "status after a newer write");
            m.delete("jack", STANDARD, "status", SS, 1000L);
            expect("newer", get(STANDARD, "jack", "status"), "status after an older delete");
            m.delete("jack", STANDARD, "status", SS, 2000L);
            expect(null, get(STANDARD, "jack", "status"), "status after a newer delete");
            m.insert("jack", STANDARD, HFactory.createColumn("status", "late", 1500L, SS, SS));
            expect(null, get(STANDARD, "jack", "status"), "status written before its deletion");
            m.insert("jack", STANDARD, HFactory.createColumn("status", "back", 2001L, SS, SS));
            expect("back", get(STANDARD, "jack", "status"), "status written after its deletion");
            // A row deletion at 1600 removes what is older, keeps what is newer.
            m.insert("jack", STANDARD, HFactory.createColumn("plan", "free", 1200L, SS, SS));
            m.addDeletion("jack", STANDARD, 1600L);
            m.execute();
            ColumnSlice<String, String> s = slice(STANDARD, "jack").setRange(null, null, false, 10).execute().get();
            expect(Arrays.asList("status"), names(s), "jack after a row delete at 1600");
            expect(2001L, s.getColumnByName("status").getClock(), "clock of status");
        });

        check("describeKeyspace", () -> {
            KeyspaceDefinition ks = cluster.describeKeyspace(ksName);
            expect(ksName, ks.getName(), "keyspace name");
            expectTrue(ks.getStrategyClass().endsWith("SimpleStrategy"), "strategy " + ks.getStrategyClass());
            expect(1, ks.getReplicationFactor(), "replication factor");
            ColumnFamilyDefinition stats = cfDef(STATS);
            expect(ColumnType.SUPER, stats.getColumnType(), STATS + " column type");
            expect(ComparatorType.COUNTERTYPE.getClassName(), stats.getDefaultValidationClass(),
                    STATS + " default validator");
            ColumnFamilyDefinition sessions = cfDef(SESSIONS);
            expect(ColumnType.SUPER, sessions.getColumnType(), SESSIONS + " column type");
            expect(ComparatorType.UTF8TYPE.getClassName(), sessions.getSubComparatorType().getClassName(),
                    SESSIONS + " subcomparator");
            List<String> md = new ArrayList<>();
            for (ColumnDefinition cd : sessions.getColumnMetadata()) {
                md.add("'" + SS.fromByteBuffer(cd.getName()) + "' " + cd.getValidationClass());
            }
            if (diverges("super-internal-columns")) {
                expect(Arrays.asList("'' org.apache.cassandra.db.marshal.MapType(org.apache.cassandra.db.marshal."
                        + "UTF8Type,org.apache.cassandra.db.marshal.UTF8Type)",
                        "'value' org.apache.cassandra.db.marshal.UTF8Type"), md, SESSIONS + " column_metadata");
            } else {
                expect(new ArrayList<String>(), md, SESSIONS + " column_metadata");
            }
            // An application that kept CfDef ids (to update a family by id).
            ColumnFamilyDefinition profiles = cfDef(PROFILES);
            if (diverges("cf-id")) {
                expect(0, profiles.getId(), PROFILES + " id");
            } else {
                expectTrue(profiles.getId() != 0, PROFILES + " has no id");
            }
        });

        check("updateColumnFamily + dropColumnFamily", () -> {
            // Notes: bytes values and one declared column, title; age gets a
            // validator later.
            BasicColumnDefinition title = new BasicColumnDefinition();
            title.setName(SS.toByteBuffer("title"));
            title.setValidationClass(ComparatorType.UTF8TYPE.getClassName());
            ColumnFamilyDefinition notes = HFactory.createColumnFamilyDefinition(ksName, NOTES,
                    ComparatorType.UTF8TYPE, new ArrayList<ColumnDefinition>(Arrays.asList(title)));
            notes.setKeyValidationClass(ComparatorType.UTF8TYPE.getClassName());
            cluster.addColumnFamily(notes, true);
            Mutator<String> m = HFactory.createMutator(ko, SS);
            m.insert("n1", NOTES, HFactory.createColumn("age", new byte[] {1, 2, 3}, SS, BS));

            declareLongColumn(NOTES, "age");
            List<String> md = new ArrayList<>();
            for (ColumnDefinition cd : cfDef(NOTES).getColumnMetadata()) {
                md.add(SS.fromByteBuffer(cd.getName()) + " " + cd.getValidationClass() + " " + cd.getIndexType());
            }
            expect(Arrays.asList("title org.apache.cassandra.db.marshal.UTF8Type null",
                    "age org.apache.cassandra.db.marshal.LongType null"), md, NOTES + " column_metadata");
            try {
                m.insert("n2", NOTES, HFactory.createColumn("age", new byte[] {1, 2, 3}, SS, BS));
                throw new AssertionError("3 bytes written to a LongType column");
            } catch (HInvalidRequestException e) {
                note = e.getMessage();
            }
            m.insert("n2", NOTES, HFactory.createColumn("age", 42L, SS, LS));
            expect(42L, HFactory.createColumnQuery(ko, SS, SS, LS).setColumnFamily(NOTES).setKey("n2").setName("age")
                    .execute().get().getValue(), "n2/age");
            expect(3, HFactory.createColumnQuery(ko, SS, SS, BS).setColumnFamily(NOTES).setKey("n1").setName("age")
                    .execute().get().getValue().length, "bytes of n1/age, written before the update");

            cluster.dropColumnFamily(ksName, NOTES, true);
            expect(null, cfDef(NOTES), NOTES + " after drop");
            try {
                slice(NOTES, "n2").setRange(null, null, false, 10).execute();
                throw new AssertionError("query on a dropped column family succeeded");
            } catch (HInvalidRequestException e) {
                // expected: unconfigured table
            }
        });

        check("updateColumnFamily: first declared column", () -> {
            // Memos: created with no column_metadata (a dense table on 3.x);
            // an update declares its first column, age, with a validator.
            ColumnFamilyDefinition memos = HFactory.createColumnFamilyDefinition(ksName, MEMOS,
                    ComparatorType.UTF8TYPE);
            memos.setKeyValidationClass(ComparatorType.UTF8TYPE.getClassName());
            cluster.addColumnFamily(memos, true);
            declareLongColumn(MEMOS, "age");
            List<ColumnDefinition> md = cfDef(MEMOS).getColumnMetadata();
            expect(1, md.size(), MEMOS + " column_metadata entries");
            expect(ComparatorType.LONGTYPE.getClassName(), md.get(0).getValidationClass(), "age validator");
            // 2.x and thriftd apply the new validator; 3.11 describes it and
            // accepts the write (it refuses it once the family had
            // column_metadata from its creation: Notes above).
            Mutator<String> m = HFactory.createMutator(ko, SS);
            if (diverges("added-column-metadata")) {
                m.insert("m1", MEMOS, HFactory.createColumn("age", new byte[] {1, 2, 3}, SS, BS));
                expect(3, HFactory.createColumnQuery(ko, SS, SS, BS).setColumnFamily(MEMOS).setKey("m1")
                        .setName("age").execute().get().getValue().length, "m1/age bytes read back");
                return;
            }
            try {
                m.insert("m1", MEMOS, HFactory.createColumn("age", new byte[] {1, 2, 3}, SS, BS));
                throw new AssertionError("3 bytes written to age, declared LongType by updateColumnFamily: accepted");
            } catch (HInvalidRequestException e) {
                note = e.getMessage();
            }
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

package astyanaxcheck;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import com.google.common.base.Function;
import com.google.common.collect.ImmutableMap;
import com.netflix.astyanax.AstyanaxContext;
import com.netflix.astyanax.Keyspace;
import com.netflix.astyanax.MutationBatch;
import com.netflix.astyanax.annotations.Component;
import com.netflix.astyanax.connectionpool.Host;
import com.netflix.astyanax.connectionpool.HostConnectionPool;
import com.netflix.astyanax.connectionpool.NodeDiscoveryType;
import com.netflix.astyanax.connectionpool.TokenRange;
import com.netflix.astyanax.connectionpool.exceptions.BadRequestException;
import com.netflix.astyanax.connectionpool.exceptions.NotFoundException;
import com.netflix.astyanax.connectionpool.impl.ConnectionPoolConfigurationImpl;
import com.netflix.astyanax.connectionpool.impl.ConnectionPoolType;
import com.netflix.astyanax.connectionpool.impl.CountingConnectionPoolMonitor;
import com.netflix.astyanax.ddl.ColumnFamilyDefinition;
import com.netflix.astyanax.ddl.KeyspaceDefinition;
import com.netflix.astyanax.impl.AstyanaxConfigurationImpl;
import com.netflix.astyanax.model.Column;
import com.netflix.astyanax.model.ColumnFamily;
import com.netflix.astyanax.model.ColumnList;
import com.netflix.astyanax.model.ConsistencyLevel;
import com.netflix.astyanax.model.Row;
import com.netflix.astyanax.model.Rows;
import com.netflix.astyanax.partitioner.Partitioner;
import com.netflix.astyanax.query.RowQuery;
import com.netflix.astyanax.recipes.reader.AllRowsReader;
import com.netflix.astyanax.serializers.AnnotatedCompositeSerializer;
import com.netflix.astyanax.serializers.StringSerializer;
import com.netflix.astyanax.thrift.ThriftFamilyFactory;
import com.netflix.astyanax.util.RangeBuilder;

/**
 * An Astyanax application of the Thrift era: a keyspace context that finds
 * its nodes by describe_ring, schema through the Keyspace API, writes in
 * MutationBatches and reads with row queries, composite ranges and the
 * AllRowsReader recipe, checking every answer. The same program runs against
 * thriftd and against a real Cassandra 3.11; run.sh builds and runs it.
 *
 * Usage: AstyanaxCheck HOST:PORT
 */
public final class AstyanaxCheck {
    /** A column name of the Timeline CF: CompositeType(UTF8Type, LongType). */
    public static class Event {
        @Component(ordinal = 0)
        public String kind;
        @Component(ordinal = 1)
        public long seq;

        public Event() {
        }

        Event(String kind, long seq) {
            this.kind = kind;
            this.seq = seq;
        }

        @Override
        public String toString() {
            return kind + "/" + seq;
        }
    }

    static final StringSerializer SS = StringSerializer.get();
    static final AnnotatedCompositeSerializer<Event> EVENT = new AnnotatedCompositeSerializer<>(Event.class);

    static final ColumnFamily<String, String> USERS = ColumnFamily.newColumnFamily("Users", SS, SS);
    static final ColumnFamily<String, String> WIDE = ColumnFamily.newColumnFamily("Wide", SS, SS);
    static final ColumnFamily<String, Event> TIMELINE = ColumnFamily.newColumnFamily("Timeline", SS, EVENT);
    static final ColumnFamily<String, String> HITS = ColumnFamily.newColumnFamily("Hits", SS, SS);
    static final ColumnFamily<String, String> MISSING = ColumnFamily.newColumnFamily("NoSuchCF", SS, SS);

    int passed, failed;
    String host;
    int port;
    String ksName;
    boolean dropped;
    AstyanaxContext<Keyspace> adminCtx, appCtx;
    Keyspace admin, ks;
    Partitioner partitioner;
    final Set<String> userKeys = new TreeSet<>();

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

    static <C> List<String> names(ColumnList<C> cols) {
        List<String> out = new ArrayList<>();
        for (Column<C> c : cols) {
            out.add(String.valueOf(c.getName()));
        }
        return out;
    }

    /** The application's context: nodes found by describe_ring from one seed. */
    AstyanaxContext<Keyspace> context(String name, ConnectionPoolType type) {
        AstyanaxContext<Keyspace> ctx = new AstyanaxContext.Builder()
                .forCluster("thriftbridge-check")
                .forKeyspace(ksName)
                .withAstyanaxConfiguration(new AstyanaxConfigurationImpl()
                        .setDiscoveryType(NodeDiscoveryType.RING_DESCRIBE)
                        .setConnectionPoolType(type)
                        .setDefaultReadConsistencyLevel(ConsistencyLevel.CL_ONE)
                        .setDefaultWriteConsistencyLevel(ConsistencyLevel.CL_ONE))
                .withConnectionPoolConfiguration(new ConnectionPoolConfigurationImpl(name)
                        .setPort(port)
                        .setSeeds(host + ":" + port)
                        .setMaxConnsPerHost(3)
                        .setInitConnsPerHost(1)
                        .setConnectTimeout(5_000)
                        .setSocketTimeout(15_000)
                        .setMaxTimeoutWhenExhausted(15_000)
                        .setPartitioner(partitioner))
                .withConnectionPoolMonitor(new CountingConnectionPoolMonitor())
                .buildKeyspace(ThriftFamilyFactory.getInstance());
        ctx.start();
        return ctx;
    }

    void run(String hostPort) throws Exception {
        int colon = hostPort.lastIndexOf(':');
        host = hostPort.substring(0, colon);
        port = Integer.parseInt(hostPort.substring(colon + 1));
        ksName = "astyanax_" + Long.toHexString(new Random().nextLong() & 0xffffffffffL);
        System.out.println("astyanax against " + hostPort + ", keyspace " + ksName);

        // The administrator's context: its keyspace does not exist yet, so
        // describe_ring fails and the pool keeps its seed.
        partitioner = com.netflix.astyanax.partitioner.Murmur3Partitioner.get();
        adminCtx = context("admin", ConnectionPoolType.ROUND_ROBIN);
        admin = adminCtx.getClient();

        check("describe partitioner", () -> {
            String p = admin.describePartitioner();
            expectTrue(p.endsWith("Partitioner"), "partitioner " + p);
            // The cluster's own partitioner, so that token-aware routing and
            // AllRowsReader's token arithmetic match the ring.
            partitioner = admin.getPartitioner();
        });

        check("create keyspace and CFs", () -> {
            admin.createKeyspace(ImmutableMap.<String, Object>builder()
                    .put("strategy_class", "SimpleStrategy")
                    .put("strategy_options", ImmutableMap.of("replication_factor", "1"))
                    .build());
            Map<String, Object> utf8 = ImmutableMap.<String, Object>of(
                    "comparator_type", "UTF8Type",
                    "key_validation_class", "UTF8Type",
                    "default_validation_class", "UTF8Type");
            admin.createColumnFamily(USERS, utf8);
            admin.createColumnFamily(WIDE, utf8);
            admin.createColumnFamily(TIMELINE, ImmutableMap.<String, Object>of(
                    "comparator_type", "CompositeType(UTF8Type, LongType)",
                    "key_validation_class", "UTF8Type",
                    "default_validation_class", "UTF8Type"));
            admin.createColumnFamily(HITS, ImmutableMap.<String, Object>of(
                    "comparator_type", "UTF8Type",
                    "key_validation_class", "UTF8Type",
                    "default_validation_class", "CounterColumnType"));
            KeyspaceDefinition def = admin.describeKeyspace();
            Set<String> cfs = new TreeSet<>();
            for (ColumnFamilyDefinition cf : def.getColumnFamilyList()) {
                cfs.add(cf.getName());
                if (cf.getName().equals("Hits")) {
                    expectTrue(cf.getDefaultValidationClass().contains("CounterColumnType"),
                            "Hits default validation " + cf.getDefaultValidationClass());
                }
                if (cf.getName().equals("Timeline")) {
                    expectTrue(cf.getComparatorType().contains("CompositeType"),
                            "Timeline comparator " + cf.getComparatorType());
                }
            }
            expect(new TreeSet<>(Arrays.asList("Hits", "Timeline", "Users", "Wide")), cfs, "column families");
            expect("org.apache.cassandra.locator.SimpleStrategy", def.getStrategyClass(), "strategy class");
        });

        // The application's context, started once its keyspace exists: a
        // token-aware pool whose hosts come from describe_ring.
        appCtx = context("app", ConnectionPoolType.TOKEN_AWARE);
        ks = appCtx.getClient();

        check("describe_ring leads back to the server", () -> {
            List<TokenRange> ring = ks.describeRing();
            expectTrue(!ring.isEmpty(), "empty ring");
            Set<String> endpoints = new TreeSet<>();
            for (TokenRange r : ring) {
                endpoints.addAll(r.getEndpoints());
                partitioner.getTokenMinusOne(r.getStartToken()); // tokens parse for this partitioner
            }
            expectTrue(appCtx.getNodeDiscovery().getRefreshCount() >= 1,
                    "no successful ring describe: " + appCtx.getNodeDiscovery().getLastException());
            List<String> hosts = new ArrayList<>();
            for (HostConnectionPool<?> p : appCtx.getConnectionPool().getPools()) {
                Host h = p.getHost();
                hosts.add(h.getIpAddress() + ":" + h.getPort());
            }
            expect(Collections.singletonList(host + ":" + port), hosts, "pool hosts after ring describe (ring " + endpoints + ")");
            expectTrue(appCtx.getConnectionPool().isHostUp(new Host(host + ":" + port, port)), "host is not up");
            // The token-aware topology holds the ring's tokens, one partition each.
            List<String> partitions = new ArrayList<>(appCtx.getConnectionPool().getTopology().getPartitionNames());
            List<String> ends = new ArrayList<>();
            for (TokenRange r : ring) {
                ends.add(r.getEndToken());
            }
            Collections.sort(partitions);
            Collections.sort(ends);
            expect(ends, partitions, "token-aware partitions");
            // The administrator's context, started before its keyspace
            // existed, could not describe the ring and kept its seed.
            expectTrue(adminCtx.getNodeDiscovery().getErrorCount() >= 1, "describe_ring of a missing keyspace succeeded");
            note = "missing keyspace: " + adminCtx.getNodeDiscovery().getLastException().getCause();
        });

        check("mutation batch + row query", () -> {
            MutationBatch m = ks.prepareMutationBatch();
            m.withRow(USERS, "alice").putColumn("email", "alice@example.com").putColumn("name", "Alice")
                    .putColumn("city", "Paris");
            m.withRow(USERS, "bob").putColumn("email", "bob@example.com").putColumn("name", "Bob");
            m.withRow(USERS, "carol").putColumn("name", "Carol").putColumn("session", "tok-9", 3600);
            for (int i = 0; i < 40; i++) {
                m.withRow(USERS, "user" + i).putColumn("name", "User " + i).putColumn("n", i);
            }
            m.execute();
            userKeys.addAll(Arrays.asList("alice", "bob", "carol"));
            for (int i = 0; i < 40; i++) {
                userKeys.add("user" + i);
            }
            ColumnList<String> alice = ks.prepareQuery(USERS).getKey("alice").execute().getResult();
            expect(Arrays.asList("city", "email", "name"), names(alice), "alice's columns");
            expect("Alice", alice.getStringValue("name", null), "alice/name");
            Column<String> session = ks.prepareQuery(USERS).getKey("carol").getColumn("session").execute().getResult();
            expect("tok-9", session.getStringValue(), "carol/session");
            expectTtl(3600, session.getTtl(), "carol/session TTL");
            expect(17, ks.prepareQuery(USERS).getKey("user17").getColumn("n").execute().getResult().getIntegerValue(),
                    "user17/n");
        });

        check("column range + reversed + count", () -> {
            ColumnList<String> cols = ks.prepareQuery(USERS).getKey("alice")
                    .withColumnRange("d", "z", false, 10).execute().getResult();
            expect(Arrays.asList("email", "name"), names(cols), "alice d..z");
            cols = ks.prepareQuery(USERS).getKey("alice").withColumnRange("", "", true, 2).execute().getResult();
            expect(Arrays.asList("name", "email"), names(cols), "alice reversed, 2");
            expect(3, ks.prepareQuery(USERS).getKey("alice").getCount().execute().getResult(), "get_count(alice)");
        });

        check("multiget (key slice)", () -> {
            Rows<String, String> rows = ks.prepareQuery(USERS).getKeySlice("alice", "bob", "nobody")
                    .withColumnSlice("name").execute().getResult();
            Map<String, String> got = new TreeMap<>();
            for (Row<String, String> r : rows) {
                if (!r.getColumns().isEmpty()) {
                    got.put(r.getKey(), r.getColumns().getStringValue("name", null));
                }
            }
            expect(ImmutableMap.of("alice", "Alice", "bob", "Bob"), got, "names by key");
        });

        check("row query autoPaginate, 250 cols / 100", () -> {
            MutationBatch m = ks.prepareMutationBatch();
            for (int i = 0; i < 250; i++) {
                m.withRow(WIDE, "wide").putColumn(String.format("c%03d", i), "v" + i);
            }
            m.execute();
            RowQuery<String, String> q = ks.prepareQuery(WIDE).getKey("wide").autoPaginate(true)
                    .withColumnRange(new RangeBuilder().setLimit(100).build());
            List<String> all = new ArrayList<>();
            List<Integer> pages = new ArrayList<>();
            ColumnList<String> page;
            while (!(page = q.execute().getResult()).isEmpty()) {
                pages.add(page.size());
                for (Column<String> c : page) {
                    all.add(c.getName());
                    expect("v" + Integer.parseInt(c.getName().substring(1)), c.getStringValue(), c.getName());
                }
                expectTrue(pages.size() < 10, "pagination does not end: pages " + pages);
            }
            expect(250, all.size(), "columns read (pages " + pages + ")");
            expect(250, new TreeSet<>(all).size(), "distinct columns (pages " + pages + ")");
            List<String> sorted = new ArrayList<>(all);
            Collections.sort(sorted);
            expect(sorted, all, "column order");
            expectTrue(pages.size() >= 3 && pages.get(0) == 100, "pages " + pages);
        });

        check("composite columns, range queries", () -> {
            MutationBatch m = ks.prepareMutationBatch();
            for (String kind : Arrays.asList("click", "login", "logout", "view")) {
                for (long seq = 1; seq <= 4; seq++) {
                    m.withRow(TIMELINE, "alice").putColumn(new Event(kind, seq), kind + "#" + seq);
                }
            }
            m.execute();

            // Every column of the "login" group: first component in [login, login].
            ColumnList<Event> cols = ks.prepareQuery(TIMELINE).getKey("alice")
                    .withColumnRange(EVENT.buildRange().greaterThanEquals("login").lessThanEquals("login").build())
                    .execute().getResult();
            expect(Arrays.asList("login/1", "login/2", "login/3", "login/4"), names(cols), "login group");
            expect("login#3", cols.getColumnByIndex(2).getStringValue(), "value of login/3");

            // Prefix "login", second component in [2, 3].
            cols = ks.prepareQuery(TIMELINE).getKey("alice")
                    .withColumnRange(EVENT.buildRange().withPrefix("login").greaterThanEquals(2L).lessThanEquals(3L)
                            .build())
                    .execute().getResult();
            expect(Arrays.asList("login/2", "login/3"), names(cols), "login, 2..3");

            // Prefix "login", second component > 2, reversed, limit 10.
            cols = ks.prepareQuery(TIMELINE).getKey("alice")
                    .withColumnRange(EVENT.buildRange().withPrefix("login").greaterThan(2L).lessThanEquals(10L)
                            .reverse().limit(10).build())
                    .execute().getResult();
            expect(Arrays.asList("login/4", "login/3"), names(cols), "login, >2, reversed");

            // First components from "login" (exclusive) on: logout and view.
            cols = ks.prepareQuery(TIMELINE).getKey("alice")
                    .withColumnRange(EVENT.buildRange().greaterThan("login").limit(100).build())
                    .execute().getResult();
            Set<String> kinds = new TreeSet<>();
            for (Column<Event> c : cols) {
                kinds.add(c.getName().kind);
            }
            expect(new TreeSet<>(Arrays.asList("logout", "view")), kinds, "kinds after login");
            expect(8, cols.size(), "columns after login");
        });

        check("counters increment + read", () -> {
            MutationBatch m = ks.prepareMutationBatch();
            m.withRow(HITS, "page:/home").incrementCounterColumn("views", 5).incrementCounterColumn("likes", 2);
            m.withRow(HITS, "page:/about").incrementCounterColumn("views", 1);
            m.execute();
            m = ks.prepareMutationBatch();
            m.withRow(HITS, "page:/home").incrementCounterColumn("views", 3).incrementCounterColumn("likes", -1);
            m.execute();
            ks.prepareColumnMutation(HITS, "page:/home", "views").incrementCounterColumn(10).execute();
            Column<String> views = ks.prepareQuery(HITS).getKey("page:/home").getColumn("views").execute().getResult();
            expect(18L, views.getLongValue(), "views");
            ColumnList<String> all = ks.prepareQuery(HITS).getKey("page:/home").execute().getResult();
            expect(Arrays.asList("likes", "views"), names(all), "counter columns");
            expect(1L, all.getColumnByName("likes").getLongValue(), "likes");
            expect(1L, ks.prepareQuery(HITS).getKey("page:/about").getColumn("views").execute().getResult()
                    .getLongValue(), "about/views");
        });

        check("client timestamps: older write loses", () -> {
            long now = System.currentTimeMillis() * 1000;
            MutationBatch m = ks.prepareMutationBatch();
            m.withRow(USERS, "erin").setTimestamp(now).putColumn("status", "active").putColumn("name", "Erin");
            m.execute();
            m = ks.prepareMutationBatch(); // a late write from a slow writer
            m.withRow(USERS, "erin").setTimestamp(now - 1_000_000).putColumn("status", "stale");
            m.execute();
            expect("active", ks.prepareQuery(USERS).getKey("erin").getColumn("status").execute().getResult()
                    .getStringValue(), "status after an older write");
            m = ks.prepareMutationBatch(); // an older delete does not remove a newer column
            m.withRow(USERS, "erin").setTimestamp(now - 500_000).deleteColumn("status");
            m.execute();
            Column<String> c = ks.prepareQuery(USERS).getKey("erin").getColumn("status").execute().getResult();
            expect("active", c.getStringValue(), "status after an older delete");
            expect(now, c.getTimestamp(), "status timestamp");
            m = ks.prepareMutationBatch();
            m.withRow(USERS, "erin").setTimestamp(now + 1).deleteColumn("status");
            m.execute();
            expect(Arrays.asList("name"), names(ks.prepareQuery(USERS).getKey("erin").execute().getResult()),
                    "erin after a newer delete");
            userKeys.add("erin");
        });

        check("AllRowsReader via describe_ring", () -> {
            Map<String, Integer> seen = new ConcurrentHashMap<>();
            boolean done = new AllRowsReader.Builder<>(ks, USERS)
                    .withPartitioner(partitioner)
                    .withPageSize(7)
                    .withColumnRange(null, null, false, 100)
                    .forEachRow(new Function<Row<String, String>, Boolean>() {
                        @Override
                        public Boolean apply(Row<String, String> row) {
                            seen.merge(row.getKey(), 1, Integer::sum);
                            return true;
                        }
                    })
                    .build().call();
            expectTrue(done, "AllRowsReader did not finish");
            expect(userKeys, new TreeSet<>(seen.keySet()), "rows read");
            for (Map.Entry<String, Integer> e : seen.entrySet()) {
                expect(1, e.getValue(), "times row " + e.getKey() + " was read");
            }
        });

        check("AllRowsReader, 3 token splits", () -> {
            Map<String, Integer> seen = new ConcurrentHashMap<>();
            boolean done = new AllRowsReader.Builder<>(ks, USERS)
                    .withPartitioner(partitioner)
                    .withConcurrencyLevel(3)
                    .withPageSize(5)
                    .withColumnSlice("name")
                    .forEachRow(row -> {
                        seen.merge(row.getKey(), 1, Integer::sum);
                        return true;
                    })
                    .build().call();
            expectTrue(done, "AllRowsReader did not finish");
            expect(userKeys, new TreeSet<>(seen.keySet()), "rows read");
            for (Map.Entry<String, Integer> e : seen.entrySet()) {
                expect(1, e.getValue(), "times row " + e.getKey() + " was read");
            }
        });

        check("delete column + row", () -> {
            MutationBatch m = ks.prepareMutationBatch();
            m.withRow(USERS, "alice").deleteColumn("city");
            m.withRow(USERS, "bob").delete();
            m.withRow(HITS, "page:/about").delete();
            m.execute();
            expect(Arrays.asList("email", "name"), names(ks.prepareQuery(USERS).getKey("alice").execute().getResult()),
                    "alice after deleting city");
            expectTrue(ks.prepareQuery(USERS).getKey("bob").execute().getResult().isEmpty(), "bob still has columns");
            expectTrue(ks.prepareQuery(HITS).getKey("page:/about").execute().getResult().isEmpty(),
                    "deleted counter row still has columns");
            try {
                ks.prepareQuery(USERS).getKey("alice").getColumn("city").execute();
                throw new AssertionError("reading a deleted column succeeded");
            } catch (NotFoundException e) {
                note = e.getMessage(); // expected: get() of a missing column
            }
            // The default AllRowsReader skips deleted rows (range ghosts).
            Set<String> seen = Collections.newSetFromMap(new ConcurrentHashMap<>());
            new AllRowsReader.Builder<>(ks, USERS).withPartitioner(partitioner).withPageSize(50)
                    .forEachRow(row -> seen.add(row.getKey())).build().call();
            Set<String> want = new TreeSet<>(userKeys);
            want.remove("bob");
            expect(want, new TreeSet<>(seen), "rows after deleting bob");
        });

        check("missing CF -> BadRequestException", () -> {
            try {
                ks.prepareQuery(MISSING).getKey("alice").execute();
                throw new AssertionError("query on a missing column family succeeded");
            } catch (BadRequestException e) {
                note = e.getMessage(); // expected: InvalidRequestException from the server
            }
        });

        check("counter write to a standard CF -> BadRequest", () -> {
            try {
                MutationBatch m = ks.prepareMutationBatch();
                m.withRow(USERS, "alice").incrementCounterColumn("visits", 1);
                m.execute();
                throw new AssertionError("a counter add to a non-counter CF succeeded");
            } catch (BadRequestException e) {
                note = e.getMessage();
            }
        });

        check("TTL expiry (ttl=3, wait 4 s)", () -> {
            MutationBatch m = ks.prepareMutationBatch();
            m.withRow(USERS, "dave").putColumn("otp", "123456", 3).putColumn("name", "Dave");
            m.execute();
            expect("123456", ks.prepareQuery(USERS).getKey("dave").getColumn("otp").execute().getResult()
                    .getStringValue(), "otp before expiry");
            Thread.sleep(4000);
            expect(Arrays.asList("name"), names(ks.prepareQuery(USERS).getKey("dave").execute().getResult()),
                    "dave after expiry");
            try {
                ks.prepareQuery(USERS).getKey("dave").getColumn("otp").execute();
                throw new AssertionError("expired column still readable");
            } catch (NotFoundException e) {
                note = e.getMessage();
            }
        });

        check("drop keyspace", () -> {
            ks.dropKeyspace();
            dropped = true;
            try {
                admin.describeKeyspace();
                throw new AssertionError("keyspace still described after drop");
            } catch (NotFoundException | BadRequestException e) {
                note = e.getMessage();
            }
        });
    }

    public static void main(String[] args) {
        if (args.length != 1 || !args[0].contains(":")) {
            System.err.println("usage: AstyanaxCheck HOST:PORT");
            System.exit(2);
        }
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

        AstyanaxCheck c = new AstyanaxCheck();
        try {
            c.run(args[0]);
        } catch (Throwable e) {
            c.failed++;
            System.out.println("FAIL setup: " + e);
        } finally {
            if (c.admin != null && c.failed > 0 && !c.dropped) {
                try { // leave no keyspace behind after a failure
                    c.admin.dropKeyspace();
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

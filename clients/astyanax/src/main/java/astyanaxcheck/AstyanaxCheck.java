package astyanaxcheck;

import clientcheck.Divergences;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import com.google.common.base.Function;
import com.google.common.collect.ImmutableMap;
import com.netflix.astyanax.AstyanaxContext;
import com.netflix.astyanax.Cluster;
import com.netflix.astyanax.Keyspace;
import com.netflix.astyanax.MutationBatch;
import com.netflix.astyanax.annotations.Component;
import com.netflix.astyanax.connectionpool.Host;
import com.netflix.astyanax.connectionpool.HostConnectionPool;
import com.netflix.astyanax.connectionpool.NodeDiscoveryType;
import com.netflix.astyanax.connectionpool.TokenRange;
import com.netflix.astyanax.connectionpool.exceptions.BadRequestException;
import com.netflix.astyanax.connectionpool.exceptions.NotFoundException;
import com.netflix.astyanax.connectionpool.exceptions.OperationTimeoutException;
import com.netflix.astyanax.connectionpool.impl.ConnectionPoolConfigurationImpl;
import com.netflix.astyanax.connectionpool.impl.ConnectionPoolType;
import com.netflix.astyanax.connectionpool.impl.CountingConnectionPoolMonitor;
import com.netflix.astyanax.ddl.ColumnDefinition;
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
import com.netflix.astyanax.query.IndexQuery;
import com.netflix.astyanax.query.RowQuery;
import com.netflix.astyanax.recipes.locks.BusyLockException;
import com.netflix.astyanax.recipes.locks.ColumnPrefixDistributedRowLock;
import com.netflix.astyanax.recipes.locks.StaleLockException;
import com.netflix.astyanax.recipes.reader.AllRowsReader;
import com.netflix.astyanax.recipes.storage.CassandraChunkedStorageProvider;
import com.netflix.astyanax.recipes.storage.ChunkedStorage;
import com.netflix.astyanax.recipes.storage.ObjectMetadata;
import com.netflix.astyanax.serializers.AnnotatedCompositeSerializer;
import com.netflix.astyanax.serializers.StringSerializer;
import com.netflix.astyanax.thrift.ThriftFamilyFactory;
import com.netflix.astyanax.util.RangeBuilder;

/**
 * An Astyanax application of the Thrift era: a keyspace context that finds
 * its nodes by describe_ring, schema through the Keyspace API, writes in
 * MutationBatches and reads with row queries, composite ranges, secondary
 * index searches, key ranges by token, and the AllRowsReader, ChunkedStorage
 * and ColumnPrefixDistributedRowLock recipes, checking every answer. The same
 * program runs against thriftd and against a real Cassandra 3.11; run.sh
 * builds and runs it. Where thriftd departs from 3.11 on purpose, a check
 * asks diverges(name) (the names of legacy/conformance/divergences.go) and
 * asserts the behaviour of the server it talks to, told by describe_version.
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
    /** Users with a KEYS index on "state" and a LongType "age": searched with index clauses. */
    static final ColumnFamily<String, String> PROFILES = ColumnFamily.newColumnFamily("Profiles", SS, SS);
    /** Thirty small rows, read back in token order with key ranges. */
    static final ColumnFamily<String, String> RANGES = ColumnFamily.newColumnFamily("Ranges", SS, SS);
    /** The ChunkedStorage recipe's column family: one row per chunk, one for the metadata. */
    static final ColumnFamily<String, String> BLOBS = ColumnFamily.newColumnFamily("Blobs", SS, SS);
    /** The ColumnPrefixDistributedRowLock recipe's column family: lock columns next to data. */
    static final ColumnFamily<String, String> LOCKS = ColumnFamily.newColumnFamily("Locks", SS, SS);
    /** Created bare, given an index by updateColumnFamily, then dropped. */
    static final ColumnFamily<String, String> TAGS = ColumnFamily.newColumnFamily("Tags", SS, SS);

    int passed, failed;
    String host;
    int port;
    String ksName;
    boolean dropped;
    AstyanaxContext<Keyspace> adminCtx, appCtx;
    Keyspace admin, ks;
    Partitioner partitioner;
    final Set<String> userKeys = new TreeSet<>();
    AstyanaxContext<Cluster> clusterCtx;
    Cluster cluster;
    /** Set from describe_version: true when the server is Cassandra (20.x), false on thriftd (19.x). */
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

    /**
     * Reports whether the server is Cassandra 3.11, where the named divergence
     * means Cassandra's behaviour is the one to assert; on thriftd, thriftd's.
     * Says which it asserts.
     */
    boolean diverges(String name) {
        return Divergences.diverges(name, onCassandra);
    }

    /** The keys of rows in the order the server returned them. */
    static <C> List<String> keys(Rows<String, C> rows) {
        List<String> out = new ArrayList<>();
        for (Row<String, C> r : rows) {
            out.add(r.getKey());
        }
        return out;
    }

    /** Keys in the ring's order: by the partitioner's token. */
    List<String> byToken(Collection<String> keys) {
        List<String> out = new ArrayList<>(keys);
        out.sort(Comparator.comparing(k -> new BigInteger(partitioner.getTokenForKey(SS.toByteBuffer(k)))));
        return out;
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

        // The operator's cluster context (schema tools, version probes): the
        // seed only, no ring discovery.
        clusterCtx = new AstyanaxContext.Builder()
                .forCluster("thriftbridge-check")
                .withAstyanaxConfiguration(new AstyanaxConfigurationImpl()
                        .setDiscoveryType(NodeDiscoveryType.NONE))
                .withConnectionPoolConfiguration(new ConnectionPoolConfigurationImpl("cluster")
                        .setPort(port)
                        .setSeeds(host + ":" + port)
                        .setMaxConnsPerHost(1)
                        .setConnectTimeout(5_000)
                        .setSocketTimeout(15_000))
                .buildCluster(ThriftFamilyFactory.getInstance());
        clusterCtx.start();
        cluster = clusterCtx.getClient();

        check("describe_version (cluster context)", () -> {
            String v = cluster.getVersion();
            int major = Integer.parseInt(v.split("\\.")[0]);
            expectTrue(major >= 19, "describe_version " + v + " below 19");
            // 20.x is Cassandra 2.2 to 3.11, 19.x thriftd (Cassandra 2.1's API).
            onCassandra = major >= 20;
            note = "server: " + (onCassandra ? "Cassandra 3.11" : "thriftd") + " (describe_version " + v + ")";
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

        check("CF with a KEYS index, describeKeyspace", () -> {
            Map<String, Object> utf8 = ImmutableMap.<String, Object>of(
                    "comparator_type", "UTF8Type",
                    "key_validation_class", "UTF8Type",
                    "default_validation_class", "UTF8Type");
            Map<String, Object> bytes = ImmutableMap.<String, Object>of(
                    "comparator_type", "UTF8Type",
                    "key_validation_class", "UTF8Type",
                    "default_validation_class", "BytesType");
            // column_metadata as the Map form of createColumnFamily takes it:
            // column name -> ColumnDef fields.
            admin.createColumnFamily(PROFILES, ImmutableMap.<String, Object>builder()
                    .putAll(utf8)
                    .put("column_metadata", ImmutableMap.<String, Object>of(
                            "state", ImmutableMap.<String, Object>of(
                                    "validation_class", "UTF8Type",
                                    "index_name", "profiles_state",
                                    "index_type", "KEYS"),
                            "age", ImmutableMap.<String, Object>of(
                                    "validation_class", "LongType")))
                    .build());
            admin.createColumnFamily(RANGES, utf8);
            admin.createColumnFamily(BLOBS, bytes);
            admin.createColumnFamily(LOCKS, bytes);
            admin.createColumnFamily(TAGS, utf8);

            ColumnFamilyDefinition cf = ks.describeKeyspace().getColumnFamily("Profiles");
            expectTrue(cf != null, "Profiles not described");
            Map<String, String> cols = new TreeMap<>();
            for (ColumnDefinition c : cf.getColumnDefinitionList()) {
                cols.put(c.getName(), c.getValidationClass()
                        + (c.hasIndex() ? " " + c.getIndexType() + " " + c.getIndexName() : ""));
            }
            expect(ImmutableMap.of(
                    "age", "org.apache.cassandra.db.marshal.LongType",
                    "state", "org.apache.cassandra.db.marshal.UTF8Type KEYS profiles_state"), cols,
                    "Profiles column_metadata");
            expect("org.apache.cassandra.db.marshal.UTF8Type", cf.getComparatorType(), "Profiles comparator");
            expect("org.apache.cassandra.db.marshal.BytesType",
                    ks.describeKeyspace().getColumnFamily("Blobs").getDefaultValidationClass(),
                    "Blobs default validation");
            // CfDef.id: the generated getter answers 0 when the server left it unset.
            int id = cf.getId();
            if (diverges("cf-id")) {
                expect(0, id, "CfDef.id");
            } else {
                expectTrue(id != 0, "CfDef.id unset");
            }
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

        check("searchWithIndex: equals + greaterThan", () -> {
            MutationBatch m = ks.prepareMutationBatch();
            m.withRow(PROFILES, "alice").putColumn("name", "Alice").putColumn("state", "UT").putColumn("age", 34L);
            m.withRow(PROFILES, "bob").putColumn("name", "Bob").putColumn("state", "UT").putColumn("age", 25L);
            m.withRow(PROFILES, "carol").putColumn("name", "Carol").putColumn("state", "UT").putColumn("age", 41L);
            m.withRow(PROFILES, "dan").putColumn("name", "Dan").putColumn("state", "CA").putColumn("age", 50L);
            m.withRow(PROFILES, "erin").putColumn("name", "Erin").putColumn("state", "OR").putColumn("age", 38L);
            m.execute();

            // Everyone in Utah: the index answers in token order.
            Rows<String, String> rows = ks.prepareQuery(PROFILES).searchWithIndex()
                    .addExpression().whereColumn("state").equals().value("UT")
                    .execute().getResult();
            expect(byToken(Arrays.asList("alice", "bob", "carol")), keys(rows), "state = UT");
            ColumnList<String> carol = rows.getRow("carol").getColumns();
            expect(Arrays.asList("age", "name", "state"), names(carol), "carol's columns");
            expect(41L, carol.getLongValue("age", null), "carol/age");

            // An indexed EQ narrowed by a filter on another column.
            rows = ks.prepareQuery(PROFILES).searchWithIndex()
                    .addExpression().whereColumn("state").equals().value("UT")
                    .addExpression().whereColumn("age").greaterThan().value(30L)
                    .execute().getResult();
            expect(byToken(Arrays.asList("alice", "carol")), keys(rows), "state = UT and age > 30");
            rows = ks.prepareQuery(PROFILES).searchWithIndex()
                    .addExpression().whereColumn("state").equals().value("UT")
                    .addExpression().whereColumn("age").lessThanEquals().value(34L)
                    .execute().getResult();
            expect(byToken(Arrays.asList("alice", "bob")), keys(rows), "state = UT and age <= 34");

            // setRowLimit: the first rows in token order.
            rows = ks.prepareQuery(PROFILES).searchWithIndex().setRowLimit(2)
                    .addExpression().whereColumn("state").equals().value("UT")
                    .execute().getResult();
            expect(byToken(Arrays.asList("alice", "bob", "carol")).subList(0, 2), keys(rows),
                    "state = UT, row limit 2");

            expectTrue(ks.prepareQuery(PROFILES).searchWithIndex()
                    .addExpression().whereColumn("state").equals().value("TX")
                    .execute().getResult().isEmpty(), "rows for state = TX");
        });

        check("searchWithIndex autoPaginateRows, 25 / 10", () -> {
            MutationBatch m = ks.prepareMutationBatch();
            Set<String> nevada = new TreeSet<>();
            for (int i = 0; i < 25; i++) {
                String k = String.format("nv%02d", i);
                m.withRow(PROFILES, k).putColumn("name", "Nevadan " + i).putColumn("state", "NV")
                        .putColumn("age", (long) i);
                nevada.add(k);
            }
            m.execute();
            IndexQuery<String, String> q = ks.prepareQuery(PROFILES).searchWithIndex()
                    .setRowLimit(10).autoPaginateRows(true)
                    .addExpression().whereColumn("state").equals().value("NV");
            List<String> all = new ArrayList<>();
            List<Integer> pages = new ArrayList<>();
            Rows<String, String> page;
            while (!(page = q.execute().getResult()).isEmpty()) {
                pages.add(page.size());
                for (Row<String, String> r : page) {
                    all.add(r.getKey());
                    expect("NV", r.getColumns().getStringValue("state", null), r.getKey() + "/state");
                }
                expectTrue(pages.size() < 10, "pagination does not end: pages " + pages);
            }
            expect(Arrays.asList(10, 10, 5), pages, "page sizes");
            expect(byToken(nevada), all, "rows in token order, each once");
        });

        check("searchWithIndex with a column slice", () -> {
            // The predicate names the indexed column: both servers filter and
            // return just those columns.
            Rows<String, String> rows = ks.prepareQuery(PROFILES).searchWithIndex()
                    .addExpression().whereColumn("state").equals().value("UT")
                    .withColumnSlice("name", "state")
                    .execute().getResult();
            expect(byToken(Arrays.asList("alice", "bob", "carol")), keys(rows), "state = UT, columns name + state");
            expect(Arrays.asList("name", "state"), names(rows.getRow("bob").getColumns()), "bob's columns");

            // A range of column names with both expression columns inside it.
            rows = ks.prepareQuery(PROFILES).searchWithIndex()
                    .addExpression().whereColumn("state").equals().value("UT")
                    .addExpression().whereColumn("age").greaterThan().value(30L)
                    .withColumnRange("a", "t", false, 10)
                    .execute().getResult();
            expect(byToken(Arrays.asList("alice", "carol")), keys(rows), "state = UT and age > 30, columns a..t");
            expect(Arrays.asList("age", "name", "state"), names(rows.getRow("alice").getColumns()),
                    "alice's columns a..t");

            // The predicate leaves the indexed column out (an application that
            // wants only the names of the people in Utah).
            rows = ks.prepareQuery(PROFILES).searchWithIndex()
                    .addExpression().whereColumn("state").equals().value("UT")
                    .withColumnSlice("name")
                    .execute().getResult();
            Map<String, List<String>> got = new LinkedHashMap<>();
            for (Row<String, String> r : rows) {
                got.put(r.getKey(), names(r.getColumns()));
            }
            if (diverges("index-predicate")) {
                expect(Collections.emptyMap(), got, "state = UT, columns [name]");
            } else {
                Map<String, List<String>> want = new LinkedHashMap<>();
                for (String k : byToken(Arrays.asList("alice", "bob", "carol"))) {
                    want.put(k, Collections.singletonList("name"));
                }
                expect(want, got, "state = UT, columns [name]");
            }
        });

        check("searchWithIndex: filter column outside slice", () -> {
            // The indexed column in the predicate, the filtered one (age) not:
            // the application wants the name and state of Utahns over 30.
            Rows<String, String> rows = ks.prepareQuery(PROFILES).searchWithIndex()
                    .addExpression().whereColumn("state").equals().value("UT")
                    .addExpression().whereColumn("age").greaterThan().value(30L)
                    .withColumnRange("n", "t", false, 10)
                    .execute().getResult();
            if (diverges("index-predicate")) {
                expect(Collections.emptyList(), keys(rows), "state = UT and age > 30, columns n..t");
                return;
            }
            expect(byToken(Arrays.asList("alice", "carol")), keys(rows), "state = UT and age > 30, columns n..t");
            expect(Arrays.asList("name", "state"), names(rows.getRow("alice").getColumns()), "alice's columns n..t");
        });

        check("getKeyRange by token: ring order, paging", () -> {
            MutationBatch m = ks.prepareMutationBatch();
            List<String> all = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                String k = String.format("k%02d", i);
                m.withRow(RANGES, k).putColumn("a", "a" + i).putColumn("b", "b" + i).putColumn("c", "c" + i);
                all.add(k);
            }
            m.execute();
            List<String> ring = byToken(all);
            // The whole ring, (min, max]: every row, in token order.
            Rows<String, String> rows = ks.prepareQuery(RANGES)
                    .getKeyRange(null, null, partitioner.getMinToken(), partitioner.getMaxToken(), 100)
                    .execute().getResult();
            expect(ring, keys(rows), "full ring");
            expect(Arrays.asList("a", "b", "c"), names(rows.getRow("k07").getColumns()), "k07's columns");
            // Pages of 8, each starting after the token of the previous page's
            // last key, as applications walked a column family.
            List<String> walked = new ArrayList<>();
            List<Integer> pages = new ArrayList<>();
            String start = partitioner.getMinToken();
            while (true) {
                rows = ks.prepareQuery(RANGES).getKeyRange(null, null, start, partitioner.getMaxToken(), 8)
                        .withColumnSlice("b")
                        .execute().getResult();
                pages.add(rows.size());
                for (Row<String, String> r : rows) {
                    walked.add(r.getKey());
                    expect(Arrays.asList("b"), names(r.getColumns()), r.getKey() + "'s columns");
                }
                if (rows.size() < 8) {
                    break;
                }
                start = partitioner.getTokenForKey(SS.toByteBuffer(walked.get(walked.size() - 1)));
                expectTrue(pages.size() < 10, "paging does not end: pages " + pages);
            }
            expect(ring, walked, "walked by token (pages " + pages + ")");
            expect(Arrays.asList(8, 8, 8, 6), pages, "page sizes");
            // A token range that ends at a row's token includes that row.
            String end = partitioner.getTokenForKey(SS.toByteBuffer(ring.get(4)));
            rows = ks.prepareQuery(RANGES).getKeyRange(null, null, partitioner.getMinToken(), end, 100)
                    .execute().getResult();
            expect(ring.subList(0, 5), keys(rows), "(min, token of the 5th row]");
        });

        check("getKeyRange by keys, column slice, counts", () -> {
            List<String> ring = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                ring.add(String.format("k%02d", i));
            }
            ring = byToken(ring);
            // start_key and end_key are both inclusive, in token order.
            Rows<String, String> rows = ks.prepareQuery(RANGES).getKeyRange(ring.get(5), ring.get(12), null, null, 100)
                    .withColumnSlice("c", "a", "zz")
                    .execute().getResult();
            expect(ring.subList(5, 13), keys(rows), "keys 5..12");
            ColumnList<String> cols = rows.getRow(ring.get(5)).getColumns();
            expect(Arrays.asList("a", "c"), names(cols), "columns of slice [c, a, zz]");
            expect("a" + Integer.parseInt(ring.get(5).substring(1)), cols.getStringValue("a", null), "value of a");
            // From a key to the end of the ring; the count cuts the range.
            rows = ks.prepareQuery(RANGES).getKeyRange(ring.get(5), null, null, partitioner.getMaxToken(), 3)
                    .withColumnRange("b", "", false, 100)
                    .execute().getResult();
            expect(ring.subList(5, 8), keys(rows), "3 keys from key 5");
            expect(Arrays.asList("b", "c"), names(rows.getRowByIndex(0).getColumns()), "columns from b");
            // A start key with no end at all is refused.
            try {
                ks.prepareQuery(RANGES).getKeyRange(ring.get(5), null, null, null, 3).execute();
                throw new AssertionError("a key range without an end succeeded");
            } catch (BadRequestException e) {
                expectTrue(e.getMessage().contains(
                        "exactly one each of {start key, start token} and {end key, end token} must be specified"),
                        "error " + e.getMessage());
            }
            // multiget_count: columns per row of a key slice.
            Map<String, Integer> counts = ks.prepareQuery(RANGES).getKeySlice("k01", "k02", "nope")
                    .withColumnRange("b", "c", false, 100)
                    .getColumnCounts().execute().getResult();
            Map<String, Integer> nonEmpty = new TreeMap<>();
            for (Map.Entry<String, Integer> e : counts.entrySet()) {
                if (e.getValue() != 0) {
                    nonEmpty.put(e.getKey(), e.getValue());
                }
            }
            expect(ImmutableMap.of("k01", 2, "k02", 2), nonEmpty, "column counts b..c");
        });

        check("getCount: row, column range, names", () -> {
            // The "wide" row: c000..c249.
            expect(250, ks.prepareQuery(WIDE).getKey("wide").getCount().execute().getResult(), "count(wide)");
            expect(100, ks.prepareQuery(WIDE).getKey("wide").withColumnRange("c100", "c199", false, 1000)
                    .getCount().execute().getResult(), "count(wide, c100..c199)");
            expect(10, ks.prepareQuery(WIDE).getKey("wide").withColumnRange("c100", "", false, 10)
                    .getCount().execute().getResult(), "count(wide, from c100, limit 10)");
            expect(50, ks.prepareQuery(WIDE).getKey("wide").withColumnRange("c049", "", true, 1000)
                    .getCount().execute().getResult(), "count(wide, c049 down)");
            expect(2, ks.prepareQuery(WIDE).getKey("wide").withColumnSlice("c001", "c002", "nope")
                    .getCount().execute().getResult(), "count(wide, [c001, c002, nope])");
            expect(0, ks.prepareQuery(WIDE).getKey("nobody").getCount().execute().getResult(), "count(nobody)");
            ColumnList<String> cols = ks.prepareQuery(WIDE).getKey("wide").withColumnSlice("c200", "c007", "nope")
                    .execute().getResult();
            expect(Arrays.asList("c007", "c200"), names(cols), "columns [c200, c007, nope]");
            expect("v200", cols.getStringValue("c200", null), "c200");
        });

        check("batch: two CFs, withTimestamp, empty column", () -> {
            long ts = System.currentTimeMillis() * 1000 + 7;
            MutationBatch m = ks.prepareMutationBatch().withTimestamp(ts);
            m.withRow(USERS, "frank").putColumn("name", "Frank").putEmptyColumn("verified");
            m.withRow(WIDE, "frank-log").putColumn("e1", "signup").putColumn("e2", "login");
            m.withRow(RANGES, "k03").deleteColumn("c");
            expect(3, m.getRowCount(), "rows in the batch");
            m.execute();
            userKeys.add("frank");
            ColumnList<String> frank = ks.prepareQuery(USERS).getKey("frank").execute().getResult();
            expect(Arrays.asList("name", "verified"), names(frank), "frank's columns");
            Column<String> verified = frank.getColumnByName("verified");
            expect(false, verified.hasValue(), "verified has a value");
            expect("", verified.getStringValue(), "verified's value");
            for (Column<String> c : frank) {
                expect(ts, c.getTimestamp(), "timestamp of frank/" + c.getName());
            }
            ColumnList<String> log = ks.prepareQuery(WIDE).getKey("frank-log").execute().getResult();
            expect(Arrays.asList("e1", "e2"), names(log), "frank-log");
            expect(ts, log.getColumnByName("e2").getTimestamp(), "timestamp of e2");
            expect(Arrays.asList("a", "b"), names(ks.prepareQuery(RANGES).getKey("k03").execute().getResult()),
                    "k03 after deleting c");

            // delete() then puts on the same row in one batch: Astyanax writes
            // the puts one microsecond after the row tombstone, so they stay.
            m = ks.prepareMutationBatch();
            m.withRow(WIDE, "frank-log").delete().putColumn("e9", "reset");
            m.execute();
            log = ks.prepareQuery(WIDE).getKey("frank-log").execute().getResult();
            expect(Arrays.asList("e9"), names(log), "frank-log after delete + put");
        });

        check("TTLs: setDefaultTtl, explicit ttl + timestamp", () -> {
            long ts = System.currentTimeMillis() * 1000;
            MutationBatch m = ks.prepareMutationBatch();
            m.withRow(USERS, "gina").setTimestamp(ts).setDefaultTtl(600)
                    .putColumn("session", "s-1")           // the row's default TTL
                    .putColumn("otp", "991", 60)            // its own TTL
                    .putColumn("name", "Gina", 0);          // 0: no TTL
            m.execute();
            userKeys.add("gina");
            ColumnList<String> gina = ks.prepareQuery(USERS).getKey("gina").execute().getResult();
            expect(Arrays.asList("name", "otp", "session"), names(gina), "gina's columns");
            expectTtl(600, gina.getColumnByName("session").getTtl(), "session TTL");
            expectTtl(60, gina.getColumnByName("otp").getTtl(), "otp TTL");
            expect(0, gina.getColumnByName("name").getTtl(), "name TTL");

            // An older write with a TTL loses to the live column...
            m = ks.prepareMutationBatch();
            m.withRow(USERS, "gina").setTimestamp(ts - 1000).putColumn("session", "s-0", 30);
            m.execute();
            Column<String> session = ks.prepareQuery(USERS).getKey("gina").getColumn("session").execute().getResult();
            expect("s-1", session.getStringValue(), "session after an older write");
            expectTtl(600, session.getTtl(), "session TTL after an older write");
            expect(ts, session.getTimestamp(), "session timestamp after an older write");
            // ... a newer one replaces value and TTL.
            ks.prepareColumnMutation(USERS, "gina", "session").withTimestamp(ts + 1000).putValue("s-2", 120).execute();
            session = ks.prepareQuery(USERS).getKey("gina").getColumn("session").execute().getResult();
            expect("s-2", session.getStringValue(), "session after a newer write");
            expectTtl(120, session.getTtl(), "session TTL after a newer write");
            expect(ts + 1000, session.getTimestamp(), "session timestamp after a newer write");
        });

        check("row delete at a timestamp", () -> {
            long ts = System.currentTimeMillis() * 1000;
            MutationBatch m = ks.prepareMutationBatch();
            m.withRow(USERS, "hank").setTimestamp(ts).putColumn("name", "Hank").putColumn("city", "Oslo");
            m.execute();
            m = ks.prepareMutationBatch();
            m.withRow(USERS, "hank").setTimestamp(ts + 10).delete();
            m.execute();
            // A write older than the row tombstone stays hidden, a newer one shows.
            m = ks.prepareMutationBatch();
            m.withRow(USERS, "hank").setTimestamp(ts + 5).putColumn("name", "Hank (late)");
            m.withRow(USERS, "hank").setTimestamp(ts + 20).putColumn("city", "Bergen");
            m.execute();
            ColumnList<String> hank = ks.prepareQuery(USERS).getKey("hank").execute().getResult();
            expect(Arrays.asList("city"), names(hank), "hank's columns");
            expect("Bergen", hank.getStringValue("city", null), "hank/city");
            userKeys.add("hank");
        });

        check("counters: negative deltas, delete a counter", () -> {
            MutationBatch m = ks.prepareMutationBatch();
            m.withRow(HITS, "page:/cart").incrementCounterColumn("adds", -3).incrementCounterColumn("adds", 1)
                    .incrementCounterColumn("views", 4);
            m.execute();
            m = ks.prepareMutationBatch();
            m.withRow(HITS, "page:/cart").incrementCounterColumn("adds", -5);
            m.execute();
            expect(-7L, ks.prepareQuery(HITS).getKey("page:/cart").getColumn("adds").execute().getResult()
                    .getLongValue(), "adds");
            ks.prepareColumnMutation(HITS, "page:/cart", "adds").incrementCounterColumn(-2).execute();
            ColumnList<String> cart = ks.prepareQuery(HITS).getKey("page:/cart").execute().getResult();
            expect(Arrays.asList("adds", "views"), names(cart), "cart counters");
            expect(-9L, cart.getLongValue("adds", null), "adds after -2");
            expect(4L, cart.getLongValue("views", null), "views");
            expect(2, ks.prepareQuery(HITS).getKey("page:/cart").getCount().execute().getResult(), "count(cart)");
            ks.prepareColumnMutation(HITS, "page:/cart", "adds").deleteCounterColumn().execute();
            try {
                ks.prepareQuery(HITS).getKey("page:/cart").getColumn("adds").execute();
                throw new AssertionError("a deleted counter is still readable");
            } catch (NotFoundException e) {
                note = e.getMessage();
            }
            expect(Arrays.asList("views"), names(ks.prepareQuery(HITS).getKey("page:/cart").execute().getResult()),
                    "cart after deleting adds");
        });

        check("composite: get, lessThan, count, delete", () -> {
            // Timeline/alice holds click, login, logout, view x 1..4.
            Column<Event> c = ks.prepareQuery(TIMELINE).getKey("alice").getColumn(new Event("view", 2)).execute()
                    .getResult();
            expect("view#2", c.getStringValue(), "view/2");
            expect("view", c.getName().kind, "view/2 kind");
            ColumnList<Event> cols = ks.prepareQuery(TIMELINE).getKey("alice")
                    .withColumnRange(EVENT.buildRange().withPrefix("click").lessThan(3L).build())
                    .execute().getResult();
            expect(Arrays.asList("click/1", "click/2"), names(cols), "click, < 3");
            cols = ks.prepareQuery(TIMELINE).getKey("alice")
                    .withColumnRange(EVENT.buildRange().withPrefix("logout").greaterThanEquals(2L)
                            .lessThanEquals(Long.MAX_VALUE).build())
                    .execute().getResult();
            expect(Arrays.asList("logout/2", "logout/3", "logout/4"), names(cols), "logout, >= 2");
            // Without the upper bound this Astyanax ends the slice at the bare
            // prefix ("logout" with end-of-component 0), before its start.
            try {
                ks.prepareQuery(TIMELINE).getKey("alice")
                        .withColumnRange(EVENT.buildRange().withPrefix("logout").greaterThanEquals(2L).build())
                        .execute();
                throw new AssertionError("an open-ended prefix range succeeded");
            } catch (BadRequestException e) {
                expectTrue(e.getMessage().contains("range finish must come after start in the order of traversal"),
                        "error " + e.getMessage());
            }
            expect(4, ks.prepareQuery(TIMELINE).getKey("alice")
                    .withColumnRange(EVENT.buildRange().greaterThanEquals("view").lessThanEquals("view").build())
                    .getCount().execute().getResult(), "count(view group)");
            MutationBatch m = ks.prepareMutationBatch();
            m.withRow(TIMELINE, "alice").deleteColumn(new Event("view", 1)).deleteColumn(new Event("view", 3));
            m.execute();
            cols = ks.prepareQuery(TIMELINE).getKey("alice")
                    .withColumnRange(EVENT.buildRange().greaterThanEquals("view").lessThanEquals("view").build())
                    .execute().getResult();
            expect(Arrays.asList("view/2", "view/4"), names(cols), "view group after deleting 1 and 3");
            expect(14, ks.prepareQuery(TIMELINE).getKey("alice").getCount().execute().getResult(), "count(alice)");
        });

        check("ChunkedStorage: 7 chunks, read, info, delete", () -> {
            byte[] data = new byte[6 * 1024 + 300];
            new Random(42).nextBytes(data);
            CassandraChunkedStorageProvider provider = new CassandraChunkedStorageProvider(ks, BLOBS);
            ObjectMetadata written = ChunkedStorage.newWriter(provider, "report.pdf", new ByteArrayInputStream(data))
                    .withChunkSize(1024).withConcurrencyLevel(3).withAttributes("{\"type\":\"pdf\"}")
                    .call();
            expect(7, written.getChunkCount(), "chunks written");
            expect((long) data.length, written.getObjectSize(), "bytes written");

            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ObjectMetadata read = ChunkedStorage.newReader(provider, "report.pdf", out).withConcurrencyLevel(3).call();
            expectTrue(Arrays.equals(data, out.toByteArray()), "object read back differs (" + out.size() + " bytes)");
            expect(7, read.getChunkCount(), "chunks read");

            ObjectMetadata info = ChunkedStorage.newInfoReader(provider, "report.pdf").call();
            expect(Arrays.asList(7, 1024, (long) data.length, "{\"type\":\"pdf\"}"),
                    Arrays.asList(info.getChunkCount(), info.getChunkSize(), info.getObjectSize(),
                            info.getAttributes()),
                    "metadata [chunks, chunk size, size, attributes]");
            // One row per chunk, "report.pdf$N", with the chunk's bytes.
            Rows<String, String> chunks = ks.prepareQuery(BLOBS)
                    .getKeySlice("report.pdf$0", "report.pdf$5", "report.pdf$6", "report.pdf$7")
                    .execute().getResult();
            Map<String, Integer> sizes = new TreeMap<>();
            for (Row<String, String> r : chunks) {
                if (!r.getColumns().isEmpty()) {
                    sizes.put(r.getKey(), r.getColumns().getByteBufferValue("DATA", null).remaining());
                }
            }
            expect(ImmutableMap.of("report.pdf$0", 1024, "report.pdf$5", 1024, "report.pdf$6", 300), sizes,
                    "chunk sizes");

            ChunkedStorage.newDeleter(provider, "report.pdf").call();
            try {
                ChunkedStorage.newInfoReader(provider, "report.pdf").call();
                throw new AssertionError("a deleted object still has metadata");
            } catch (NotFoundException e) {
                note = "after delete: " + e.getMessage();
            }
            for (int i = 0; i < 7; i++) {
                expectTrue(ks.prepareQuery(BLOBS).getKey("report.pdf$" + i).execute().getResult().isEmpty(),
                        "chunk " + i + " left after delete");
            }
        });

        check("ColumnPrefixDistributedRowLock", () -> {
            ks.prepareColumnMutation(LOCKS, "order:42", "status").putValue("new", null).execute();
            // The default consistency level, LOCAL_QUORUM; the lock column
            // expires after 30 s should the holder die.
            ColumnPrefixDistributedRowLock<String> first = new ColumnPrefixDistributedRowLock<>(ks, LOCKS, "order:42")
                    .expireLockAfter(10, TimeUnit.SECONDS).withTtl(30);
            first.acquire();
            Map<String, Long> held = first.readLockColumns();
            expect(Collections.singleton(first.getLockColumn()), held.keySet(), "lock columns while held");
            expectTrue(first.getLockColumn().startsWith("_LOCK_"), "lock column " + first.getLockColumn());
            long expires = held.get(first.getLockColumn());
            long nowMicros = System.currentTimeMillis() * 1000;
            expectTrue(expires > nowMicros + 5_000_000 && expires <= nowMicros + 10_000_000, "lock expiry " + expires);
            expectTtl(30, ks.prepareQuery(LOCKS).getKey("order:42").getColumn(first.getLockColumn()).execute()
                    .getResult().getTtl(), "lock column TTL");

            // A second client, at QUORUM, fails while the lock is held, and
            // takes back its own lock column.
            ColumnPrefixDistributedRowLock<String> second = new ColumnPrefixDistributedRowLock<>(ks, LOCKS, "order:42")
                    .withConsistencyLevel(ConsistencyLevel.CL_QUORUM).expireLockAfter(10, TimeUnit.SECONDS).withTtl(30);
            try {
                second.acquire();
                throw new AssertionError("acquired a lock held by another client");
            } catch (BusyLockException e) {
                note = e.getMessage();
            }
            expect(Collections.singleton(first.getLockColumn()), first.readLockColumns().keySet(),
                    "lock columns after the failed attempt");
            first.release();
            expect(Collections.emptySet(), first.readLockColumns().keySet(), "lock columns after release");

            // Read-modify-write under the lock: read the row with the lock,
            // write the data with the release.
            ColumnPrefixDistributedRowLock<String> third = new ColumnPrefixDistributedRowLock<>(ks, LOCKS, "order:42")
                    .expireLockAfter(10, TimeUnit.SECONDS).withTtl(30);
            expect("new", third.acquireLockAndReadRow().get("status").getStringValue(), "status read under the lock");
            MutationBatch m = ks.prepareMutationBatch();
            m.withRow(LOCKS, "order:42").putColumn("status", "paid");
            third.releaseWithMutation(m);
            ColumnList<String> row = ks.prepareQuery(LOCKS).getKey("order:42").execute().getResult();
            expect(Arrays.asList("status"), names(row), "row after the release");
            expect("paid", row.getStringValue("status", null), "status");

            // A crashed client's lock column whose expiry has passed: a strict
            // client fails on it, a default one acquires and cleans it up.
            ColumnPrefixDistributedRowLock<String> crashed = new ColumnPrefixDistributedRowLock<>(ks, LOCKS, "order:42")
                    .withLockId("crashed").expireLockAfter(1, TimeUnit.SECONDS);
            m = ks.prepareMutationBatch();
            crashed.fillLockMutation(m, System.currentTimeMillis() * 1000 - 60_000_000L, null);
            m.execute();
            ColumnPrefixDistributedRowLock<String> strict = new ColumnPrefixDistributedRowLock<>(ks, LOCKS, "order:42")
                    .failOnStaleLock(true);
            try {
                strict.acquire();
                throw new AssertionError("acquired over a stale lock with failOnStaleLock");
            } catch (StaleLockException e) {
                strict.release();
            }
            ColumnPrefixDistributedRowLock<String> fourth = new ColumnPrefixDistributedRowLock<>(ks, LOCKS, "order:42");
            fourth.acquire();
            expect(new TreeSet<>(Arrays.asList("_LOCK_crashed", fourth.getLockColumn())),
                    new TreeSet<>(fourth.readLockColumns().keySet()), "lock columns with the stale one");
            fourth.release();
            expect(Collections.emptySet(), fourth.readLockColumns().keySet(), "lock columns after cleaning up");
        });

        check("updateColumnFamily adds column metadata", () -> {
            MutationBatch m = ks.prepareMutationBatch();
            m.withRow(TAGS, "t1").putColumn("color", "red").putColumn("size", "L");
            m.withRow(TAGS, "t2").putColumn("color", "blue");
            m.execute();
            // The whole definition, as applications sent it: comparator and
            // validators as created, plus the new column_metadata.
            ks.updateColumnFamily(TAGS, ImmutableMap.<String, Object>builder()
                    .put("comparator_type", "UTF8Type")
                    .put("default_validation_class", "UTF8Type")
                    .put("column_metadata", ImmutableMap.<String, Object>of(
                            "color", ImmutableMap.<String, Object>of(
                                    "validation_class", "UTF8Type",
                                    "index_name", "tags_color",
                                    "index_type", "KEYS")))
                    .build());
            ColumnFamilyDefinition cf = ks.describeKeyspace().getColumnFamily("Tags");
            List<String> defs = new ArrayList<>();
            for (ColumnDefinition c : cf.getColumnDefinitionList()) {
                defs.add(c.getName() + " " + c.getIndexType() + " " + c.getIndexName());
            }
            expect(Arrays.asList("color KEYS tags_color"), defs, "Tags column_metadata after the update");
            expect("org.apache.cassandra.db.marshal.UTF8Type", cf.getComparatorType(), "Tags comparator");
            ColumnList<String> t1 = ks.prepareQuery(TAGS).getKey("t1").execute().getResult();
            expect(Arrays.asList("color", "size"), names(t1), "t1 after the update");
            expect("red", t1.getStringValue("color", null), "t1/color");
            expect("red", ks.prepareQuery(TAGS).getKey("t1").getColumn("color").execute().getResult().getStringValue(),
                    "get t1/color");
        });

        check("index added by update finds rows", () -> {
            // Tags had no column_metadata when created; the update above
            // declared "color" with a KEYS index.
            MutationBatch m = ks.prepareMutationBatch();
            m.withRow(TAGS, "t3").putColumn("color", "red");
            m.withRow(TAGS, "t4").putColumn("color", "green");
            m.execute();
            // The rows written before the index existed are found too, as 2.1
            // found them (on 3.11 see added-column-metadata). A
            // server may build the new index in the background and time out
            // queries until it is built (Cassandra does; thriftd builds it
            // before the update returns): retry for up to 20 s.
            long deadline = System.nanoTime() + 20_000_000_000L;
            int timeouts = 0;
            Rows<String, String> rows;
            while (true) {
                try {
                    rows = ks.prepareQuery(TAGS).searchWithIndex()
                            .addExpression().whereColumn("color").equals().value("red")
                            .execute().getResult();
                    break;
                } catch (OperationTimeoutException e) {
                    timeouts++;
                    if (System.nanoTime() > deadline) {
                        throw e;
                    }
                    Thread.sleep(200);
                }
            }
            if (diverges("added-column-metadata")) {
                // Tags was created with no column_metadata: no row, t3 written
                // after the update included.
                expect(Collections.emptyList(), keys(rows), "color = red");
            } else {
                expect(byToken(Arrays.asList("t1", "t3")), keys(rows), "color = red");
            }
            if (timeouts > 0) {
                note = timeouts + " timeouts while the index was built";
            }
        });

        check("dropColumnFamily", () -> {
            ks.dropColumnFamily(TAGS);
            Set<String> cfs = new TreeSet<>();
            for (ColumnFamilyDefinition cf : ks.describeKeyspace().getColumnFamilyList()) {
                cfs.add(cf.getName());
            }
            expect(new TreeSet<>(Arrays.asList("Blobs", "Hits", "Locks", "Profiles", "Ranges", "Timeline", "Users",
                    "Wide")), cfs, "column families after the drop");
            try {
                ks.prepareQuery(TAGS).getKey("t1").execute();
                throw new AssertionError("query on a dropped column family succeeded");
            } catch (BadRequestException e) {
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

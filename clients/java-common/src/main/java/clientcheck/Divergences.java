package clientcheck;

import java.util.HashMap;
import java.util.Map;

/**
 * thriftd's deliberate departures from Cassandra 3.11 that the Java check
 * programs meet, named as legacy/conformance/divergences.go names them.
 * Where a check meets one it asks {@link #diverges} and asserts the
 * behaviour of the server it talks to: Cassandra 3.11's on Cassandra,
 * thriftd's on thriftd. Shared by clients/hector and clients/astyanax
 * (their poms add this directory to their sources).
 */
public final class Divergences {
    /** name -> {what Cassandra 3.11 does, what thriftd does}. */
    static final Map<String, String[]> ALL = new HashMap<>();

    private static void add(String name, String cassandra, String thriftd) {
        ALL.put(name, new String[] {cassandra, thriftd});
    }

    static {
        add("index-predicate",
                "3.11's get_indexed_slices (and get_range_slices with a row_filter) loses rows when the slice "
                        + "predicate leaves out a column of the index clause: with another expression's column left "
                        + "out it returns no row; with the indexed column left out, only the declared columns "
                        + "(column_metadata) the predicate selects, and no row where it selects none",
                "filters on every column of the clause whatever the predicate selects, as 2.1 did, and returns "
                        + "each matching row with the columns the predicate selects");
        add("added-column-metadata",
                "3.11 describes the column_metadata that system_update_column_family adds, but in a family "
                        + "created with none it neither validates the column's values nor finds a row through its "
                        + "index; in a family created with column_metadata, the added column's index misses the rows "
                        + "written before the update (they stay readable)",
                "validates and indexes an added column as one declared at creation, the cells written before the "
                        + "update included, as 2.1 did");
        add("super-internal-columns",
                "3.11 describes a Super family with two internal column_metadata entries: an empty name typed "
                        + "MapType(subcomparator, default validator) and 'value'",
                "describes only the columns a client declared");
        add("cf-id",
                "3.11 leaves CfDef.id unset in describe_keyspace",
                "reports an id, as Cassandra 1.x and 2.x did, for clients that read it");
        add("super-count-timeout",
                "times out get_count inside a super column when count is below the number of subcolumns",
                "answers min(count, subcolumns)");
    }

    private Divergences() {}

    /**
     * Reports whether the server is Cassandra 3.11 (onCassandra, told by
     * describe_version: 20.x is Cassandra 2.2-3.11, 19.x thriftd), where the
     * named divergence means Cassandra's behaviour is the one to assert; on
     * thriftd, thriftd's. Says which it asserts.
     */
    public static boolean diverges(String name, Boolean onCassandra) {
        String[] d = ALL.get(name);
        if (d == null) {
            throw new IllegalArgumentException("unknown divergence " + name);
        }
        if (onCassandra == null) {
            throw new IllegalStateException("diverges(" + name + ") before describe_version");
        }
        System.out.println("divergence " + name + ": asserting "
                + (onCassandra ? "Cassandra 3.11's behaviour: " + d[0] : "thriftd's behaviour: " + d[1]));
        return onCassandra;
    }
}

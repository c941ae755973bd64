package conformance

import (
	"bytes"
	"fmt"
	"sort"
	"testing"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// The behaviours cassandra-dtest's thrift_test.py checks on a single node
// started with --cluster-name test and ByteOrderedPartitioner.

var dtestOptions = Options{Partitioner: "ByteOrderedPartitioner", ClusterName: "test"}

// zeroUUID is the TimeUUID 00000000-0000-1000-0000-000000000000 and
// zeroUUIDPlus1 the one after it.
var (
	zeroUUID      = []byte{0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	zeroUUIDPlus1 = []byte{0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 1}
)

// newDtestEnv defines the dtest schema: Keyspace1 and Keyspace2.
func newDtestEnv(t *testing.T, target Target) *apiEnv {
	a := newAPIEnv(t, target, dtestOptions)
	ks2 := ksDef("Keyspace2", standardCF("Standard1"), superCF("Super3", subcomparator("BytesType")),
		superCF("Super4", subcomparator("TimeUUIDType")))
	_, err := a.C.SystemAddKeyspace(Ctx(t), ks2)
	expectOK(t, "system_add_keyspace Keyspace2", err)
	a.createKeyspace("Keyspace1",
		standardCF("Standard1"), standardCF("Standard2"),
		standardCF("StandardLong1", comparator("LongType")),
		standardCF("StandardInteger1", comparator("IntegerType")),
		superCF("Super1", subcomparator("LongType")),
		superCF("Super3", comparator("LongType"), subcomparator("UTF8Type")),
		standardCF("Indexed1", indexedColumn(b("birthdate"), "LongType", "birthdate_index")),
		standardCF("Indexed3", comparator("TimeUUIDType"), indexedColumn(zeroUUID, "UTF8Type", "")),
		standardCF("Indexed4", indexedColumn(b("a"), "LongType", "a_index"), columnDef(b("z"), "UTF8Type")))
	return a
}

func runDtestTests(t *testing.T, target Target) {
	t.Run("Describe", func(t *testing.T) {
		a := newDtestEnv(t, target)
		name, err := a.C.DescribeClusterName(Ctx(t))
		expectOK(t, "describe_cluster_name", err)
		if name != "test" {
			t.Errorf("describe_cluster_name = %q, want test", name)
		}
		p, err := a.C.DescribePartitioner(Ctx(t))
		expectOK(t, "describe_partitioner", err)
		if p != "org.apache.cassandra.dht.ByteOrderedPartitioner" {
			t.Errorf("describe_partitioner = %q", p)
		}
		all, err := a.C.DescribeKeyspaces(Ctx(t))
		expectOK(t, "describe_keyspaces", err)
		sys, err := a.C.DescribeKeyspace(Ctx(t), "system")
		expectOK(t, "describe_keyspace system", err)
		if !hasKeyspace(all, sys.Name) || !hasKeyspace(all, "Keyspace1") || !hasKeyspace(all, "Keyspace2") {
			t.Errorf("describe_keyspaces = %v", keyspaceNames(all))
		}
		std := a.describeCF("Keyspace1", "Standard1")
		if std.ComparatorType != marshalPrefix+"BytesType" {
			t.Errorf("Standard1 comparator = %q", std.ComparatorType)
		}
		ring, err := a.C.DescribeRing(Ctx(t), "Keyspace1")
		expectOK(t, "describe_ring", err)
		equalStrings(t, "ring endpoints", ring[0].Endpoints, []string{"127.0.0.1"})
		_, err = a.C.DescribeRing(Ctx(t), "system")
		expectIRE(t, "describe_ring system", err, "")
		tm, err := a.C.DescribeTokenMap(Ctx(t))
		expectOK(t, "describe_token_map", err)
		if len(tm) != 1 {
			t.Errorf("describe_token_map = %v", tm)
		}
	})
	t.Run("Orders", func(t *testing.T) {
		a := newDtestEnv(t, target)
		var longs [][]byte
		for i := int64(0); i < 104294967296; i += 429496729 * 16 {
			longs = append(longs, i64(i))
			a.insert("key1", parent("StandardLong1"), col(i64(i), b("v"), 0))
		}
		equalBytes(t, "LongType order", columnNamesOf(a.slice("key1", parent("StandardLong1"), everything())), longs)
		var ints [][]byte
		for i := int64(104294967296); i >= 0; i -= 429496729 * 16 {
			ints = append(ints, i64(i))
			a.insert("key1", parent("StandardInteger1"), col(i64(i), b("v"), 0))
		}
		sort.Slice(ints, func(i, j int) bool { return bytes.Compare(ints[i], ints[j]) < 0 })
		equalBytes(t, "IntegerType order", columnNamesOf(a.slice("key1", parent("StandardInteger1"), everything())), ints)

		a.use("Keyspace2")
		var uuids [][]byte
		for i := 0; i < 100; i++ {
			u := timeUUID(blogTicks(i*13), byte(i))
			uuids = append(uuids, u)
			a.insert("key1", superParent("Super4", b("sc1")), col(u, b(fmt.Sprintf("value%d", i)), int64(i)))
		}
		got := a.slice("key1", superParent("Super4", b("sc1")), everything())
		equalBytes(t, "TimeUUIDType order", columnNamesOf(got), uuids)
		last := cells(t, a.slice("key1", superParent("Super4", b("sc1")), byRange(nil, nil, true, 1)))
		equalCells(t, "last uuid", last, []cell{{string(uuids[99]), "value99", 99, 0}})
		head := cells(t, a.slice("key1", superParent("Super4", b("sc1")), byRange(nil, uuids[2], false, 1000)))
		equalCells(t, "up to the third", head, []cell{{string(uuids[0]), "value0", 0, 0}, {string(uuids[1]), "value1", 1, 0}, {string(uuids[2]), "value2", 2, 0}})
		back := cells(t, a.slice("key1", superParent("Super4", b("sc1")), byRange(uuids[2], nil, true, 1000)))
		equalCells(t, "back from the third", back, []cell{{string(uuids[2]), "value2", 2, 0}, {string(uuids[1]), "value1", 1, 0}, {string(uuids[0]), "value0", 0, 0}})
	})
	t.Run("RemoveAndResurrect", func(t *testing.T) {
		a := newDtestEnv(t, target)
		for _, cf := range []string{"StandardLong1", "StandardInteger1"} {
			for i := int64(0); i < 10; i++ {
				a.insert("key1", parent(cf), col(i64(i), b("value1"), 10*i))
				a.remove("key1", &cassandra.ColumnPath{ColumnFamily: cf}, 10*i+1)
				if got := a.slice("key1", parent(cf), byRange(nil, nil, false, 1)); len(got) != 0 {
					t.Errorf("%s round %d: after row deletion %v", cf, i, names(got))
				}
				a.insert("key1", parent(cf), col(i64(i), b("value2"), 10*i+2))
				got := cells(t, a.slice("key1", parent(cf), byRange(nil, nil, false, 1)))
				equalCells(t, fmt.Sprintf("%s round %d", cf, i), got, []cell{{string(i64(i)), "value2", 10*i + 2, 0}})
			}
		}
		a.insert("vijay", superParent("Super1", b("sc1")), col(i64(4), b("value4"), 0))
		a.remove("vijay", superPath("Super1", b("sc1"), nil), 1)
		a.insert("vijay", superParent("Super1", b("sc1")), col(i64(4), b("value4"), 2))
		if got := a.mustGet("vijay", superPath("Super1", b("sc1"), nil)); len(got.SuperColumn.Columns) != 1 {
			t.Errorf("resurrected super column = %s", describeCosc(got))
		}
	})
	t.Run("KeyOrder", func(t *testing.T) {
		a := newDtestEnv(t, target)
		keys := []string{"-a", "-b", "a", "b"}
		for i := 0; i < 100; i++ {
			keys = append(keys, fmt.Sprint(i))
		}
		m := map[string][]*cassandra.Mutation{}
		for _, k := range keys {
			m[k] = []*cassandra.Mutation{insertMutation(col(b(k), b("v"), 0))}
		}
		a.batch(mutationMap("Standard1", m))
		sort.Strings(keys)
		pred := byNames(b("-a"), b("-a"))
		equalStrings(t, "collation", keysOf(a.rangeSlices(parent("Standard1"), pred, keysRange(nil, nil, 1000))), keys)
		equalStrings(t, "from a", keysOf(a.rangeSlices(parent("Standard1"), pred, keysRange(b("a"), nil, 1000))), []string{"a", "b"})
		equalStrings(t, "to 15", keysOf(a.rangeSlices(parent("Standard1"), pred, keysRange(nil, b("15"), 1000))),
			[]string{"-a", "-b", "0", "1", "10", "11", "12", "13", "14", "15"})
		equalStrings(t, "50 to 51", keysOf(a.rangeSlices(parent("Standard1"), pred, keysRange(b("50"), b("51"), 1000))), []string{"50", "51"})
		equalStrings(t, "ten from 1", keysOf(a.rangeSlices(parent("Standard1"), pred, keysRange(b("1"), nil, 10))),
			[]string{"1", "10", "11", "12", "13", "14", "15", "16", "17", "18"})
	})
	t.Run("RangeGhostsAndEmpty", func(t *testing.T) {
		a := newDtestEnv(t, target)
		if got := a.rangeSlices(parent("Standard1"), byNames(b("c1"), b("c1")), keysRange(nil, nil, 1000)); len(got) != 0 {
			t.Errorf("range over an empty family = %v", keysOf(got))
		}
		a.insert("key1", parent("Standard1"), col(b("c1"), b("value1"), 0))
		a.insert("key1", parent("Standard1"), col(b("c2"), b("value2"), 0))
		if got := a.rangeSlices(parent("Super1"), byNames(b("c1"), b("c1")), keysRange(nil, nil, 1000)); len(got) != 0 {
			t.Errorf("range over a Super family holding nothing = %v", keysOf(got))
		}
		a.remove("key1", colPath("Standard1", b("c1")), 1)
		a.remove("key1", colPath("Standard1", b("c2")), 1)
		// A row of tombstones is a range ghost: listed with no columns.
		ghost := func(what string, got []*cassandra.KeySlice, key string) {
			t.Helper()
			if a.OnBackend("range-ghosts") {
				if len(got) != 0 {
					t.Errorf("%s = %v, want no row", what, keysOf(got))
				}
				return
			}
			if len(got) != 1 || string(got[0].Key) != key || len(got[0].Columns) != 0 {
				t.Errorf("%s = %v, want %s with no columns", what, got, key)
			}
		}
		ghost("range after deleting every column", a.rangeSlices(parent("Standard1"), byNames(b("c1"), b("c2")), keysRange(nil, nil, 1000)), "key1")
		a.insert("key3", superParent("Super1", b("sc1")), col(i64(1), b("v1"), 0))
		a.remove("key3", superPath("Super1", b("sc1"), nil), 5)
		ghost("range after deleting the only super column", a.rangeSlices(parent("Super1"), everything(), keysRange(nil, nil, 1000)), "key3")
		// Super3 of Keyspace2: count 1 after a super column is deleted and
		// rewritten.
		a.use("Keyspace2")
		for i := 1; i <= 3; i++ {
			a.insert("key1", superParent("Super3", b(fmt.Sprintf("sc%d", i))), col(b("col1"), b("val1"), 0))
		}
		pred := byRange(b("sc1"), b("sc3"), false, 1)
		r := keysRange(b("key1"), b("key1"), 1)
		if got := a.rangeSlices(parent("Super3"), pred, r); len(got[0].Columns) != 1 {
			t.Errorf("count 1: %v", names(got[0].Columns))
		}
		a.remove("key1", superPath("Super3", b("sc1"), nil), 1)
		if got := a.rangeSlices(parent("Super3"), pred, r); len(got[0].Columns) != 1 || string(got[0].Columns[0].SuperColumn.Name) != "sc2" {
			t.Errorf("count 1 after deleting sc1: %v", names(got[0].Columns))
		}
		a.insert("key1", superParent("Super3", b("sc1")), col(b("col1"), b("val1"), 2))
		if got := a.rangeSlices(parent("Super3"), pred, r); len(got[0].Columns) != 1 || string(got[0].Columns[0].SuperColumn.Name) != "sc1" {
			t.Errorf("count 1 after rewriting sc1: %v", names(got[0].Columns))
		}
	})
	t.Run("CountPaging", func(t *testing.T) {
		a := newDtestEnv(t, target)
		const total = 3050
		var ms []*cassandra.Mutation
		for i := 0; i < total; i++ {
			ms = append(ms, insertMutation(col(b(fmt.Sprint(i)), []byte{}, 0)))
		}
		a.batch(mutationMap("Standard1", map[string][]*cassandra.Mutation{"key1": ms}))
		for _, c := range []struct{ count, want int32 }{{10, 10}, {1024, 1024}, {1025, 1025}, {4000, total}, {total, total}, {total + 1, total}} {
			if n := a.count("key1", parent("Standard1"), byRange(nil, nil, false, c.count)); n != c.want {
				t.Errorf("get_count with count %d = %d, want %d", c.count, n, c.want)
			}
		}
		if n := len(a.slice("key1", parent("Standard1"), byRange(nil, nil, false, 2000))); n != 2000 {
			t.Errorf("get_slice with count 2000 = %d columns", n)
		}
	})
	t.Run("IndexScans", func(t *testing.T) {
		a := newDtestEnv(t, target)
		a.insert("key1", parent("Indexed3"), col(zeroUUID, b("a"), 0))
		a.insert("key1", parent("Indexed3"), col(zeroUUIDPlus1, b("b"), 0))
		rows := a.filtered("Indexed3", "", 100, everything(), eq(zeroUUID, b("a")), eq(zeroUUIDPlus1, b("b")))
		equalStrings(t, "TimeUUID names with UTF8 values", keysOf(rows), []string{"key1"})
		bad := keysRange(nil, nil, 100)
		bad.RowFilter = []*cassandra.IndexExpression{eq(b("foo"), b("a"))}
		_, err := a.C.GetRangeSlices(Ctx(t), parent("Indexed3"), everything(), bad, one)
		expectIRE(t, "an expression name that is not a TimeUUID", err, "")

		a.insert("key1", parent("Indexed4"), col(b("a"), i64(1), 0))
		a.insert("key1", parent("Indexed4"), col(b("z"), b("zzz"), 0))
		for _, pred := range []*cassandra.SlicePredicate{byRange(b("z"), b("z"), false, 100), byNames(b("z"))} {
			rows := a.filtered("Indexed4", "", 100, pred, eq(b("a"), i64(1)))
			if len(rows) != 1 || len(rows[0].Columns) != 1 || string(rows[0].Columns[0].Column.Name) != "z" {
				t.Errorf("indexed column outside the predicate: %v", rows)
			}
		}
	})
	t.Run("SchemaCalls", func(t *testing.T) {
		a := newDtestEnv(t, target)
		ks := ksDef("CreateKeyspace", standardCF("CreateKsCf"))
		ks.StrategyOptions["replication_factor"] = "10"
		_, err := a.C.SystemAddKeyspace(Ctx(t), ks)
		expectOK(t, "system_add_keyspace", err)
		mod := ksDef("CreateKeyspace")
		mod.StrategyClass = "org.apache.cassandra.locator.OldNetworkTopologyStrategy"
		_, err = a.C.SystemUpdateKeyspace(Ctx(t), mod)
		expectOK(t, "system_update_keyspace to OldNetworkTopologyStrategy", err)
		got, err := a.C.DescribeKeyspace(Ctx(t), "CreateKeyspace")
		expectOK(t, "describe_keyspace", err)
		if got.StrategyClass != mod.StrategyClass || got.StrategyOptions["replication_factor"] != "1" {
			t.Errorf("after update: %s %v", got.StrategyClass, got.StrategyOptions)
		}
		// Indexes added and dropped by system_update_column_family.
		a.addCF(standardCF("BlankCF"))
		blank := a.describeCF("Keyspace1", "BlankCF")
		blank.ColumnMetadata = []*cassandra.ColumnDef{{Name: b("birthdate"), ValidationClass: "BytesType", IndexType: ptrTo(cassandra.IndexType_KEYS)}}
		_, err = a.C.SystemUpdateColumnFamily(Ctx(t), blank)
		expectOK(t, "adding an index to BlankCF", err)
		a.addCF(standardCF("BlankCF2", indexedColumn(b("birthdate"), "BytesType", ""), indexedColumn(b("age"), "BytesType", "age_index")))
		two := a.describeCF("Keyspace1", "BlankCF2")
		two.ColumnMetadata = append(two.ColumnMetadata, &cassandra.ColumnDef{Name: b("name"), ValidationClass: "BytesType",
			IndexType: ptrTo(cassandra.IndexType_KEYS), IndexName: ptrTo("name_index")})
		_, err = a.C.SystemUpdateColumnFamily(Ctx(t), two)
		expectOK(t, "adding a third index", err)
		if n := len(a.describeCF("Keyspace1", "BlankCF2").ColumnMetadata); n != 3 {
			t.Errorf("BlankCF2 has %d column definitions, want 3", n)
		}
		two = a.describeCF("Keyspace1", "BlankCF2")
		for _, cd := range two.ColumnMetadata {
			cd.IndexType, cd.IndexName = nil, nil
		}
		_, err = a.C.SystemUpdateColumnFamily(Ctx(t), two)
		expectOK(t, "dropping the indexes", err)
		for _, cd := range a.describeCF("Keyspace1", "BlankCF2").ColumnMetadata {
			if cd.IndexType != nil {
				t.Errorf("column %q still indexed", cd.Name)
			}
		}
		for _, cf := range []string{"BlankCF", "BlankCF2"} {
			_, err = a.C.SystemDropColumnFamily(Ctx(t), cf)
			expectOK(t, "system_drop_column_family "+cf, err)
		}
		// A new LongType family gets a column definition by update.
		a.addCF(standardCF("NewLongColumnFamily", comparator("LongType")))
		long := a.describeCF("Keyspace1", "NewLongColumnFamily")
		long.ColumnMetadata = []*cassandra.ColumnDef{{Name: i64(3), ValidationClass: "LongType"}}
		_, err = a.C.SystemUpdateColumnFamily(Ctx(t), long)
		expectOK(t, "adding a column definition", err)
		if cm := a.describeCF("Keyspace1", "NewLongColumnFamily").ColumnMetadata; len(cm) != 1 || !bytes.Equal(cm[0].Name, i64(3)) {
			t.Errorf("column_metadata = %+v", cm)
		}
		// A compact family read with multiget_slice.
		a.addCF(standardCF("CompactColumnFamily", defaultValidation("AsciiType"), columnDef(b("v"), "AsciiType")))
		var keys [][]byte
		for i := 0; i < 5; i++ {
			k := fmt.Sprintf("key%d", i)
			keys = append(keys, b(k))
			a.insert(k, parent("CompactColumnFamily"), col(b("v"), b(fmt.Sprintf("value%d", i)), 0))
		}
		rows, err := a.C.MultigetSlice(Ctx(t), keys, parent("CompactColumnFamily"), byNames(b("v")), one)
		expectOK(t, "multiget_slice", err)
		for i, k := range keys {
			if r := rows[string(k)]; len(r) != 1 || string(r[0].Column.Value) != fmt.Sprintf("value%d", i) {
				t.Errorf("%s = %v", k, r)
			}
		}
	})
	t.Run("BadCalls", func(t *testing.T) {
		a := newDtestEnv(t, target)
		_, err := a.C.GetRangeSlices(Ctx(t), parent("S"), byNames(b(""), b("")), keysRange(nil, nil, 5), one)
		expectIRE(t, "range over an unknown family", err, "")
		_, err = a.C.GetRangeSlices(Ctx(t), parent("Standard1"), byNames(b("")), keysRange(b("z"), b("a"), 1), one)
		expectIRE(t, "keys z..a", err, "")
		err = a.C.BatchMutate(Ctx(t), mutationMap("Super3", map[string][]*cassandra.Mutation{"key": {deletion(ts(1), b("x"), nil)}}), cassandra.ConsistencyLevel_QUORUM)
		expectIRE(t, "a super column name that is not a long", err, "")
		err = a.C.Insert(Ctx(t), b("key1"), parent("Indexed1"), col(b("birthdate"), b("bar"), 0), one)
		expectIRE(t, "a value that is not a long for a LongType column", err, "")
	})
}

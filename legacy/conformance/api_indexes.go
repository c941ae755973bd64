package conformance

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

func eq(name []byte, value []byte) *cassandra.IndexExpression {
	return &cassandra.IndexExpression{ColumnName: name, Op: cassandra.IndexOperator_EQ, Value: value}
}

func expr(name []byte, op cassandra.IndexOperator, value []byte) *cassandra.IndexExpression {
	return &cassandra.IndexExpression{ColumnName: name, Op: op, Value: value}
}

// indexed runs get_indexed_slices.
func (a *apiEnv) indexed(cf string, start string, count int32, pred *cassandra.SlicePredicate, exprs ...*cassandra.IndexExpression) []*cassandra.KeySlice {
	a.t.Helper()
	clause := &cassandra.IndexClause{Expressions: exprs, StartKey: b(start), Count: count}
	// Cassandra builds an index added to a family with data in the
	// background and times out queries until it is built; thriftd builds it
	// before system_update_column_family returns.
	deadline := time.Now().Add(indexBuildWait)
	for {
		rows, err := a.C.GetIndexedSlices(Ctx(a.t), parent(cf), clause, pred, one)
		var timedOut *cassandra.TimedOutException
		if errors.As(err, &timedOut) && a.Target.Cassandra && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if err != nil {
			a.t.Fatalf("get_indexed_slices: %v", err)
		}
		return rows
	}
}

// indexBuildWait bounds the wait for Cassandra's background index build.
const indexBuildWait = 30 * time.Second

// filtered runs get_range_slices with a row filter over every row.
func (a *apiEnv) filtered(cf string, start string, count int32, pred *cassandra.SlicePredicate, exprs ...*cassandra.IndexExpression) []*cassandra.KeySlice {
	a.t.Helper()
	r := keysRange(b(start), nil, count)
	r.RowFilter = exprs
	return a.rangeSlices(parent(cf), pred, r)
}

func sortedKeys(rows []*cassandra.KeySlice) []string {
	k := keysOf(rows)
	sort.Strings(k)
	return k
}

func runIndexTests(t *testing.T, target Target) {
	t.Run("Declared", func(t *testing.T) {
		a := newKeyspaceEnv(t, target, Options{Partitioner: "ByteOrderedPartitioner"}, "Keyspace1",
			standardCF("Indexed1", indexedColumn(b("birthdate"), "LongType", "birthdate_index"), defaultValidation("LongType")))
		a.insert("key1", parent("Indexed1"), col(b("birthdate"), i64(1), 0))
		a.insert("key2", parent("Indexed1"), col(b("birthdate"), i64(2), 0))
		a.insert("key2", parent("Indexed1"), col(b("b"), i64(2), 0))
		a.insert("key3", parent("Indexed1"), col(b("birthdate"), i64(3), 0))
		a.insert("key3", parent("Indexed1"), col(b("b"), i64(3), 0))
		a.insert("key4", parent("Indexed1"), col(b("birthdate"), i64(3), 0))
		a.insert("key4", parent("Indexed1"), col(b("b"), i64(4), 0))
		a.insert("key5", parent("Indexed1"), col(b("birthdate"), i64(3), 0))

		rows := a.filtered("Indexed1", "", 100, everything(), eq(b("birthdate"), i64(1)))
		equalStrings(t, "EQ on the index", keysOf(rows), []string{"key1"})
		if len(rows) == 1 && len(rows[0].Columns) != 1 {
			t.Errorf("matching row columns: %v", names(rows[0].Columns))
		}
		rows = a.filtered("Indexed1", "", 100, everything(), eq(b("b"), i64(1)))
		equalStrings(t, "EQ on an unindexed column", keysOf(rows), []string{})
		rows = a.filtered("Indexed1", "", 100, everything(), eq(b("b"), i64(3)), eq(b("birthdate"), i64(3)))
		equalStrings(t, "unindexed EQ plus indexed EQ", keysOf(rows), []string{"key3"})
		if len(rows) == 1 && len(rows[0].Columns) != 2 {
			t.Errorf("matching row columns: %v", names(rows[0].Columns))
		}
		rows = a.filtered("Indexed1", "", 100, everything(), eq(b("birthdate"), i64(3)), expr(b("b"), cassandra.IndexOperator_GT, i64(3)))
		equalStrings(t, "indexed EQ plus GT", keysOf(rows), []string{"key4"})
		rows = a.filtered("Indexed1", "", 100, everything(), eq(b("birthdate"), i64(3)), expr(b("b"), cassandra.IndexOperator_LTE, i64(4)))
		equalStrings(t, "indexed EQ plus LTE", keysOf(rows), []string{"key3", "key4"})
		rows = a.filtered("Indexed1", "", 100, everything(), expr(b("birthdate"), cassandra.IndexOperator_GTE, i64(2)))
		equalStrings(t, "GTE alone", keysOf(rows), []string{"key2", "key3", "key4", "key5"})
		rows = a.filtered("Indexed1", "", 100, everything(), expr(b("birthdate"), cassandra.IndexOperator_LT, i64(2)))
		equalStrings(t, "LT alone", keysOf(rows), []string{"key1"})

		for _, via := range []string{"get_indexed_slices", "get_range_slices"} {
			run := a.indexed
			if via == "get_range_slices" {
				run = a.filtered
			}
			rows = run("Indexed1", "", 100, everything(), eq(b("birthdate"), i64(3)))
			equalStrings(t, via+" EQ 3", keysOf(rows), []string{"key3", "key4", "key5"})
			rows = run("Indexed1", "", 2, everything(), eq(b("birthdate"), i64(3)))
			equalStrings(t, via+" count 2", keysOf(rows), []string{"key3", "key4"})
			rows = run("Indexed1", "key4", 100, everything(), eq(b("birthdate"), i64(3)))
			equalStrings(t, via+" from start key key4", keysOf(rows), []string{"key4", "key5"})
			rows = run("Indexed1", "", 100, byNames(b("b")), eq(b("birthdate"), i64(3)))
			for _, r := range rows {
				if string(r.Key) != "key5" {
					equalStrings(t, via+" predicate without the indexed column", names(r.Columns), []string{"b"})
				}
			}
		}
		clause := &cassandra.IndexClause{Expressions: []*cassandra.IndexExpression{eq(b("b"), i64(3))}, StartKey: []byte{}, Count: 10}
		_, err := a.C.GetIndexedSlices(Ctx(t), parent("Indexed1"), clause, everything(), one)
		expectIRE(t, "get_indexed_slices without an indexed EQ", err, "No indexed columns present in index clause with operator EQ")
		clause.Expressions = nil
		_, err = a.C.GetIndexedSlices(Ctx(t), parent("Indexed1"), clause, everything(), one)
		expectIRE(t, "get_indexed_slices without expressions", err, "")
		_, err = a.C.GetRangeSlices(Ctx(t), parent("Indexed1"), everything(),
			&cassandra.KeyRange{StartKey: []byte{}, EndKey: []byte{}, Count: 10, RowFilter: []*cassandra.IndexExpression{eq(b("birthdate"), b("not a long"))}}, one)
		expectIRE(t, "an expression value failing the validator", err, "")
	})
	t.Run("AddedLater", func(t *testing.T) {
		a := newKeyspaceEnv(t, target, Options{}, "Keyspace1",
			standardCF("ToBeIndexed", columnDef(b("birthdate"), "LongType"), defaultValidation("LongType")))
		for i := 1; i <= 3; i++ {
			a.insert(fmt.Sprintf("key%d", i), parent("ToBeIndexed"), col(b("birthdate"), i64(int64(i)), 0))
		}
		a.insert("key4", parent("ToBeIndexed"), col(b("birthdate"), i64(1), 0))
		rows := a.filtered("ToBeIndexed", "", 100, everything(), eq(b("birthdate"), i64(1)))
		equalStrings(t, "without an index", sortedKeys(rows), []string{"key1", "key4"})
		clause := &cassandra.IndexClause{Expressions: []*cassandra.IndexExpression{eq(b("birthdate"), i64(1))}, StartKey: []byte{}, Count: 10}
		_, err := a.C.GetIndexedSlices(Ctx(t), parent("ToBeIndexed"), clause, everything(), one)
		expectIRE(t, "get_indexed_slices before the index exists", err, "")

		def := a.describeCF("Keyspace1", "ToBeIndexed")
		it := cassandra.IndexType_KEYS
		def.ColumnMetadata = []*cassandra.ColumnDef{{Name: b("birthdate"), ValidationClass: "LongType", IndexType: &it, IndexName: ptrTo("bd_index")}}
		_, err = a.C.SystemUpdateColumnFamily(Ctx(t), def)
		expectOK(t, "system_update_column_family adding an index", err)
		got := a.describeCF("Keyspace1", "ToBeIndexed")
		if len(got.ColumnMetadata) != 1 || got.ColumnMetadata[0].IndexType == nil || deref(got.ColumnMetadata[0].IndexName) != "bd_index" {
			t.Errorf("column_metadata after adding the index: %+v", got.ColumnMetadata)
		}
		// The index is built for the rows already there.
		rows = a.indexed("ToBeIndexed", "", 100, everything(), eq(b("birthdate"), i64(1)))
		equalStrings(t, "existing rows through the new index", sortedKeys(rows), []string{"key1", "key4"})
		a.insert("key5", parent("ToBeIndexed"), col(b("birthdate"), i64(1), 0))
		rows = a.indexed("ToBeIndexed", "", 100, everything(), eq(b("birthdate"), i64(1)))
		equalStrings(t, "with a new row", sortedKeys(rows), []string{"key1", "key4", "key5"})

		// Dropping the column definition drops the index.
		def = a.describeCF("Keyspace1", "ToBeIndexed")
		def.ColumnMetadata = []*cassandra.ColumnDef{}
		_, err = a.C.SystemUpdateColumnFamily(Ctx(t), def)
		expectOK(t, "system_update_column_family dropping the column", err)
		if got := a.describeCF("Keyspace1", "ToBeIndexed"); len(got.ColumnMetadata) != 0 {
			t.Errorf("column_metadata after dropping: %+v", got.ColumnMetadata)
		}
		_, err = a.C.GetIndexedSlices(Ctx(t), parent("ToBeIndexed"), clause, everything(), one)
		expectIRE(t, "get_indexed_slices after the index is dropped", err, "No indexed columns present in index clause with operator EQ")
		rows = a.filtered("ToBeIndexed", "", 100, everything(), eq(b("birthdate"), i64(1)))
		if a.Diverges("drop-column-metadata") {
			equalStrings(t, "a row after its column definition is dropped", names(a.slice("key1", parent("ToBeIndexed"), everything())), nil)
			equalStrings(t, "filtering after the index is dropped", sortedKeys(rows), nil)
		} else {
			equalStrings(t, "a row after its column definition is dropped", names(a.slice("key1", parent("ToBeIndexed"), everything())), []string{"birthdate"})
			equalStrings(t, "filtering after the index is dropped", sortedKeys(rows), []string{"key1", "key4", "key5"})
		}
		// The index name is free again.
		def.ColumnMetadata = []*cassandra.ColumnDef{{Name: b("other"), ValidationClass: "BytesType", IndexType: &it, IndexName: ptrTo("bd_index")}}
		_, err = a.C.SystemUpdateColumnFamily(Ctx(t), def)
		if a.OnBackend("value-column-type") {
			// The family's values are bigint on the cluster; BytesType
			// values would not fit.
			expectIRE(t, "a BytesType column in a family of LongType values", err, "cannot become blob")
			def.ColumnMetadata[0].ValidationClass = "LongType"
			_, err = a.C.SystemUpdateColumnFamily(Ctx(t), def)
		}
		expectOK(t, "reusing a dropped index name", err)
	})
	t.Run("ClauseColumnsOutsideThePredicate", func(t *testing.T) {
		t.Parallel()
		a := newKeyspaceEnv(t, target, Options{}, "Keyspace1",
			standardCF("Profiles", comparator("UTF8Type"), defaultValidation("UTF8Type"),
				indexedColumn(b("state"), "UTF8Type", "profiles_state"), columnDef(b("age"), "LongType")))
		p := parent("Profiles")
		for _, u := range []struct {
			key, name, state string
			age              int64
		}{{"alice", "Alice", "UT", 34}, {"bob", "Bob", "UT", 25}, {"carol", "Carol", "UT", 41}, {"dave", "Dave", "CA", 50}} {
			a.insert(u.key, p, col(b("name"), b(u.name), 1))
			a.insert(u.key, p, col(b("state"), b(u.state), 1))
			a.insert(u.key, p, col(b("age"), i64(u.age), 1))
		}
		over30 := []*cassandra.IndexExpression{eq(b("state"), b("UT")), expr(b("age"), cassandra.IndexOperator_GT, i64(30))}
		columnsOf := func(rows []*cassandra.KeySlice) map[string][]string {
			m := map[string][]string{}
			for _, r := range rows {
				m[string(r.Key)] = names(r.Columns)
			}
			return m
		}
		for _, via := range []string{"get_indexed_slices", "get_range_slices"} {
			run := a.indexed
			if via == "get_range_slices" {
				run = a.filtered
			}
			// Every column of the clause in the predicate: both agree.
			rows := run("Profiles", "", 100, byNames(b("age"), b("name"), b("state")), over30...)
			equalStrings(t, via+": state = UT and age > 30", sortedKeys(rows), []string{"alice", "carol"})

			// The indexed column selected, the other expression's left out:
			// an application asking for the names of Utahns over 30.
			byName := run("Profiles", "", 100, byNames(b("name"), b("state")), over30...)
			inRange := run("Profiles", "", 100, byRange(b("n"), b("t"), false, 10), over30...)
			// The indexed column left out, a declared and an undeclared
			// column selected, and a slice that selects nothing.
			ageName := run("Profiles", "", 100, byNames(b("age"), b("name")), eq(b("state"), b("UT")))
			nothing := run("Profiles", "", 100, byRange(b("u"), b("z"), false, 10), eq(b("state"), b("UT")))
			if a.Diverges("index-predicate") {
				equalStrings(t, via+": age left out, by names", sortedKeys(byName), nil)
				equalStrings(t, via+": age left out, by range", sortedKeys(inRange), nil)
				if got, want := columnsOf(ageName), map[string][]string{"alice": {"age"}, "bob": {"age"}, "carol": {"age"}}; !reflect.DeepEqual(got, want) {
					t.Errorf("%s: state left out, age and name selected: %v, want %v", via, got, want)
				}
				equalStrings(t, via+": a slice of no column", sortedKeys(nothing), nil)
				continue
			}
			ns := []string{"name", "state"}
			for what, rows := range map[string][]*cassandra.KeySlice{"by names": byName, "by range": inRange} {
				if got, want := columnsOf(rows), map[string][]string{"alice": ns, "carol": ns}; !reflect.DeepEqual(got, want) {
					t.Errorf("%s: age left out, %s: %v, want %v", via, what, got, want)
				}
			}
			an := []string{"age", "name"}
			if got, want := columnsOf(ageName), map[string][]string{"alice": an, "bob": an, "carol": an}; !reflect.DeepEqual(got, want) {
				t.Errorf("%s: state left out, age and name selected: %v, want %v", via, got, want)
			}
			equalStrings(t, via+": a slice of no column", sortedKeys(nothing), []string{"alice", "bob", "carol"})
			for _, r := range nothing {
				if len(r.Columns) != 0 {
					t.Errorf("%s: a slice of no column: %s has %v", via, r.Key, names(r.Columns))
				}
			}
		}
	})
	t.Run("AddedColumnMetadata", func(t *testing.T) {
		for _, declared := range []bool{false, true} {
			name := "NoneAtCreation"
			if declared {
				name = "AnotherAtCreation"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				runAddedColumnMetadata(t, target, declared)
			})
		}
	})
	t.Run("LiveMatchesOnly", func(t *testing.T) {
		t.Parallel()
		a := newKeyspaceEnv(t, target, Options{}, "Keyspace1",
			standardCF("Users", indexedColumn(b("state"), "UTF8Type", ""), comparator("UTF8Type")))
		p := parent("Users")
		for i := 0; i < 12; i++ {
			a.insert(fmt.Sprintf("u%02d", i), p, col(b("state"), b("TX"), 10))
			a.insert(fmt.Sprintf("u%02d", i), p, col(b("name"), b(fmt.Sprintf("user %d", i)), 10))
		}
		a.insert("u00", p, col(b("state"), b("CA"), 20))                  // updated away
		a.insert("u01", p, col(b("state"), b("CA"), 20))                  // updated away...
		a.insert("u01", p, col(b("state"), b("TX"), 30))                  // ...and back
		a.insert("u02", p, col(b("state"), b("CA"), 5))                   // an older update loses
		a.remove("u03", colPath("Users", b("state")), 20)                 // column deleted
		a.remove("u04", &cassandra.ColumnPath{ColumnFamily: "Users"}, 20) // row deleted
		a.insert("u05", p, colTTL(b("state"), b("TX"), 20, shortTTL))     // expires
		a.insert("u06", p, colTTL(b("state"), b("CA"), 20, shortTTL))     // expires, the TX value stays shadowed
		a.insert("u07", p, colTTL(b("state"), b("TX"), 20, 3600))         // lives
		a.remove("u08", colPath("Users", b("state")), 9)                  // an older deletion loses
		a.batch(mutationMap("Users", map[string][]*cassandra.Mutation{"u09": {deletion(ts(20), nil, byNames(b("state")))}}))
		a.insert("u10", p, col(b("state"), b("TX"), 20)) // rewritten with the same value
		want := []string{"u01", "u02", "u07", "u08", "u10", "u11"}
		rows := a.indexed("Users", "", 100, everything(), eq(b("state"), b("TX")))
		withTTL := []string{"u01", "u02", "u05", "u07", "u08", "u10", "u11"}
		equalStrings(t, "before expiry", sortedKeys(rows), withTTL)
		// u05 and u06 were written a moment apart, so each may expire in
		// a different second: wait for both.
		if !eventually(func() bool {
			return len(a.indexed("Users", "", 100, everything(), eq(b("state"), b("TX")))) == len(want) &&
				len(a.indexed("Users", "", 100, everything(), eq(b("state"), b("CA")))) == 1
		}) {
			t.Errorf("TTL'd index entries still match after %v", expiryWait)
		}
		rows = a.indexed("Users", "", 100, everything(), eq(b("state"), b("TX")))
		equalStrings(t, "get_indexed_slices", sortedKeys(rows), want)
		rows = a.filtered("Users", "", 100, everything(), eq(b("state"), b("TX")))
		equalStrings(t, "get_range_slices with row_filter", sortedKeys(rows), want)
		rows = a.indexed("Users", "", 100, everything(), eq(b("state"), b("CA")))
		equalStrings(t, "the other value", sortedKeys(rows), []string{"u00"})
	})
}

// runAddedColumnMetadata adds an indexed column and a validated one to a
// family created with no column_metadata, or with another column
// declared, after rows were written.
func runAddedColumnMetadata(t *testing.T, target Target, declared bool) {
	// BytesType values (the default), which a cluster's value column holds
	// whatever validators are added (the value-column-type backend
	// divergence).
	opts := []cfOption{comparator("UTF8Type")}
	what := "no column declared at creation"
	if declared {
		opts = append(opts, columnDef(b("size"), "UTF8Type"))
		what = "another column declared at creation"
	}
	a := newKeyspaceEnv(t, target, Options{}, "Keyspace1", standardCF("Tags", opts...))
	p := parent("Tags")
	a.insert("t1", p, col(b("color"), b("red"), 1))
	a.insert("t1", p, col(b("size"), b("L"), 1))
	a.insert("t2", p, col(b("color"), b("blue"), 1))
	def := a.describeCF("Keyspace1", "Tags")
	it := cassandra.IndexType_KEYS
	def.ColumnMetadata = append(def.ColumnMetadata,
		&cassandra.ColumnDef{Name: b("color"), ValidationClass: "UTF8Type", IndexType: &it, IndexName: ptrTo("tags_color")},
		&cassandra.ColumnDef{Name: b("weight"), ValidationClass: "LongType"})
	_, err := a.C.SystemUpdateColumnFamily(Ctx(t), def)
	expectOK(t, what+": system_update_column_family adding an index and a validator", err)
	a.insert("t3", p, col(b("color"), b("red"), 1))
	if v := a.mustGet("t1", colPath("Tags", b("color"))).Column.Value; string(v) != "red" {
		t.Errorf("%s: t1's color after the update = %q", what, v)
	}
	rows := a.indexed("Tags", "", 100, everything(), eq(b("color"), b("red")))
	bad := a.C.Insert(Ctx(t), b("t4"), p, col(b("weight"), []byte{1, 2, 3}, 1), one)
	if a.Diverges("added-column-metadata") {
		if declared {
			equalStrings(t, what+": color = red", sortedKeys(rows), []string{"t3"})
			expectIRE(t, what+": a 3-byte LongType value", bad, "Expected 8 or 0 byte long")
			return
		}
		equalStrings(t, what+": color = red", sortedKeys(rows), []string{})
		expectOK(t, what+": a 3-byte LongType value", bad)
		return
	}
	equalStrings(t, what+": color = red", sortedKeys(rows), []string{"t1", "t3"})
	expectIRE(t, what+": a 3-byte LongType value", bad, "Expected 8 or 0 byte long")
}

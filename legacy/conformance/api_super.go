package conformance

import (
	"fmt"
	"testing"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// superFixture is the classic layout: sc1 {4}, sc2 {5, 6} with LongType
// subcolumn names, values "valueN", timestamp 0.
func superFixture(a *apiEnv, key string) {
	a.t.Helper()
	a.insert(key, superParent("Super1", b("sc1")), col(i64(4), b("value4"), 0))
	a.insert(key, superParent("Super1", b("sc2")), col(i64(5), b("value5"), 0))
	a.insert(key, superParent("Super1", b("sc2")), col(i64(6), b("value6"), 0))
}

// superFixtureWant is superFixture as a super-level slice returns it.
func superFixtureWant() []superCell {
	return []superCell{
		{"sc1", []cell{{string(i64(4)), "value4", 0, 0}}},
		{"sc2", []cell{{string(i64(5)), "value5", 0, 0}, {string(i64(6)), "value6", 0, 0}}},
	}
}

func equalSupers(t *testing.T, what string, got, want []superCell) {
	t.Helper()
	if fmtSupers(got) != fmtSupers(want) {
		t.Errorf("%s:\n got  %s\n want %s", what, fmtSupers(got), fmtSupers(want))
	}
}

func fmtSupers(s []superCell) string {
	out := "["
	for i, sc := range s {
		if i > 0 {
			out += " "
		}
		out += sc.Name + ":"
		for _, c := range sc.Cells {
			out += c.String() + ","
		}
	}
	return out + "]"
}

func newSuperEnv(t *testing.T, target Target) *apiEnv {
	return newKeyspaceEnv(t, target, Options{}, "Keyspace1", standardCF("Standard1"),
		superCF("Super1", subcomparator("LongType")))
}

func runSuperTests(t *testing.T, target Target) {
	t.Run("Described", func(t *testing.T) {
		a := newKeyspaceEnv(t, target, Options{}, "Keyspace1", superCF("Super1", comparator("LongType"), subcomparator("UTF8Type")))
		got := a.describeCF("Keyspace1", "Super1")
		if got.ColumnType != "Super" || got.ComparatorType != marshalPrefix+"LongType" || deref(got.SubcomparatorType) != marshalPrefix+"UTF8Type" {
			t.Errorf("described as %s, %s / %s", got.ColumnType, got.ComparatorType, deref(got.SubcomparatorType))
		}
		var meta []string
		for _, cd := range got.ColumnMetadata {
			meta = append(meta, fmt.Sprintf("%q %s", cd.Name, cd.ValidationClass))
		}
		if a.Diverges("super-internal-columns") {
			equalStrings(t, "column_metadata", meta, []string{
				`"" org.apache.cassandra.db.marshal.MapType(org.apache.cassandra.db.marshal.UTF8Type,org.apache.cassandra.db.marshal.BytesType)`,
				`"value" org.apache.cassandra.db.marshal.BytesType`,
			})
		} else {
			equalStrings(t, "column_metadata", meta, nil)
		}
	})
	t.Run("SuperLevelReads", func(t *testing.T) {
		a := newSuperEnv(t, target)
		superFixture(a, "key1")
		a.insert("key1", superParent("Super1", b("sc3")), col(i64(7), b("value7"), 0))
		all := supers(t, a.slice("key1", parent("Super1"), everything()))
		equalSupers(t, "super level", all[:2], superFixtureWant())
		if len(all) != 3 {
			t.Errorf("super level has %d super columns, want 3", len(all))
		}
		got := a.mustGet("key1", superPath("Super1", b("sc2"), nil))
		equalSupers(t, "get of a super column", supers(t, []*cassandra.ColumnOrSuperColumn{got}), superFixtureWant()[1:])
		equalStrings(t, "range sc2..sc3 count 2", names(a.slice("key1", parent("Super1"), byRange(b("sc2"), b("sc3"), false, 2))), []string{"sc2", "sc3"})
		equalStrings(t, "range sc3..sc2 reversed", names(a.slice("key1", parent("Super1"), byRange(b("sc3"), b("sc2"), true, 2))), []string{"sc3", "sc2"})
		equalStrings(t, "count 1", names(a.slice("key1", parent("Super1"), byRange(nil, nil, false, 1))), []string{"sc1"})
		equalStrings(t, "names", names(a.slice("key1", parent("Super1"), byNames(b("sc3"), b("missing"), b("sc1")))), []string{"sc1", "sc3"})
		if n := a.count("key1", parent("Super1"), everything()); n != 3 {
			t.Errorf("get_count at super level = %d, want 3 super columns", n)
		}
		if n := a.count("key1", superParent("Super1", b("sc2")), everything()); n != 2 {
			t.Errorf("get_count inside sc2 = %d, want 2", n)
		}
		// Inside a super column.
		sub := cells(t, a.slice("key1", superParent("Super1", b("sc2")), byRange(nil, nil, false, 1)))
		equalCells(t, "first subcolumn of sc2", sub, []cell{{string(i64(5)), "value5", 0, 0}})
		sub = cells(t, a.slice("key1", superParent("Super1", b("sc2")), byRange(nil, nil, true, 1)))
		equalCells(t, "last subcolumn of sc2", sub, []cell{{string(i64(6)), "value6", 0, 0}})
		sub = cells(t, a.slice("key1", superParent("Super1", b("sc1")), byNames(i64(4))))
		equalCells(t, "subcolumn by name", sub, []cell{{string(i64(4)), "value4", 0, 0}})
		if got := a.slice("key1", superParent("Super1", b("nosuch")), everything()); len(got) != 0 {
			t.Errorf("slice inside a missing super column = %v", names(got))
		}
		a.expectMissing("key1", superPath("Super1", b("sc1"), i64(1)))
		a.expectMissing("key1", superPath("Super1", b("nosuch"), nil))
	})
	t.Run("LongSuperColumnNames", func(t *testing.T) {
		// Super column names of 65000 bytes (a super column's name and its
		// subcolumn's share one clustering value of at most 65535 bytes
		// in Cassandra 3.11's tables), read alone, by name, by range and
		// by path.
		a := newSuperEnv(t, target)
		long := func(last byte) []byte {
			n := make([]byte, 65000)
			for i := range n {
				n[i] = 's'
			}
			n[len(n)-1] = last
			return n
		}
		short := func(ns []string) []string {
			for i, n := range ns {
				if len(n) > 64 {
					ns[i] = fmt.Sprintf("<%d bytes ending %c>", len(n), n[len(n)-1])
				}
			}
			return ns
		}
		a.insert("key1", superParent("Super1", long('1')), col(i64(1), b("value1"), 0))
		a.insert("key1", superParent("Super1", long('2')), col(i64(2), b("value2"), 0))
		a.insert("key1", superParent("Super1", long('2')), col(i64(3), b("value3"), 0))
		a.insert("key1", superParent("Super1", b("sc1")), col(i64(4), b("value4"), 0))
		one, two := short([]string{string(long('1'))})[0], short([]string{string(long('2'))})[0]
		equalStrings(t, "super level", short(names(a.slice("key1", parent("Super1"), everything()))), []string{"sc1", one, two})
		equalStrings(t, "by names", short(names(a.slice("key1", parent("Super1"), byNames(long('2'), b("sc1"), long('3'))))), []string{"sc1", two})
		equalStrings(t, "by range", short(names(a.slice("key1", parent("Super1"), byRange(long('1'), long('2'), false, 10)))), []string{one, two})
		equalStrings(t, "by range, reversed", short(names(a.slice("key1", parent("Super1"), byRange(long('2'), nil, true, 10)))), []string{two, one, "sc1"})
		sub := cells(t, a.slice("key1", superParent("Super1", long('2')), everything()))
		equalCells(t, "inside the super column", sub, []cell{{string(i64(2)), "value2", 0, 0}, {string(i64(3)), "value3", 0, 0}})
		sub = cells(t, a.slice("key1", superParent("Super1", long('2')), byRange(nil, nil, true, 1)))
		equalCells(t, "inside, reversed", sub, []cell{{string(i64(3)), "value3", 0, 0}})
		if n := a.count("key1", superParent("Super1", long('2')), everything()); n != 2 {
			t.Errorf("get_count inside the super column = %d, want 2", n)
		}
		got := a.mustGet("key1", superPath("Super1", long('1'), i64(1)))
		equalCells(t, "get of a subcolumn", cells(t, []*cassandra.ColumnOrSuperColumn{{Column: got.Column}}), []cell{{string(i64(1)), "value1", 0, 0}})
		got = a.mustGet("key1", superPath("Super1", long('2'), nil))
		if got.SuperColumn == nil || len(got.SuperColumn.Columns) != 2 {
			t.Errorf("get of the super column: %s", describeCosc(got))
		}
		a.expectMissing("key1", superPath("Super1", long('3'), nil))
	})
	t.Run("ReversedReversesSubcolumns", func(t *testing.T) {
		// Observed on 3.11.9 (super_slices.json): a reversed slice at super
		// level returns the subcolumns of each super column reversed too.
		a := newSuperEnv(t, target)
		superFixture(a, "key1")
		got := supers(t, a.slice("key1", parent("Super1"), byRange(nil, nil, true, 10)))
		want := []superCell{
			{"sc2", []cell{{string(i64(6)), "value6", 0, 0}, {string(i64(5)), "value5", 0, 0}}},
			{"sc1", []cell{{string(i64(4)), "value4", 0, 0}}},
		}
		equalSupers(t, "reversed super level", got, want)
	})
	t.Run("RemoveSubcolumn", func(t *testing.T) {
		a := newSuperEnv(t, target)
		a.insert("key1", parent("Standard1"), col(b("c1"), b("value1"), 0))
		superFixture(a, "key1")
		a.remove("key1", superPath("Super1", b("sc2"), i64(5)), 5)
		a.expectMissing("key1", superPath("Super1", b("sc2"), i64(5)))
		want := []superCell{{"sc1", []cell{{string(i64(4)), "value4", 0, 0}}}, {"sc2", []cell{{string(i64(6)), "value6", 0, 0}}}}
		equalSupers(t, "after removing sc2/5", supers(t, a.slice("key1", parent("Super1"), everything())), want)
		a.insert("key1", superParent("Super1", b("sc2")), col(i64(5), b("value5"), 0))
		equalSupers(t, "older re-insert", supers(t, a.slice("key1", parent("Super1"), everything())), want)
		a.insert("key1", superParent("Super1", b("sc2")), col(i64(5), b("value5"), 6))
		want[1].Cells = []cell{{string(i64(5)), "value5", 6, 0}, {string(i64(6)), "value6", 0, 0}}
		equalSupers(t, "newer re-insert", supers(t, a.slice("key1", parent("Super1"), everything())), want)
		// The Standard family of the same key is untouched.
		equalCells(t, "Standard1", cells(t, a.slice("key1", parent("Standard1"), everything())), []cell{{"c1", "value1", 0, 0}})
		// A super column whose subcolumns are all deleted disappears.
		a.remove("key1", superPath("Super1", b("sc1"), i64(4)), 1)
		equalStrings(t, "after deleting sc1's only subcolumn", names(a.slice("key1", parent("Super1"), everything())), []string{"sc2"})
		a.expectMissing("key1", superPath("Super1", b("sc1"), nil))
		if n := a.count("key1", parent("Super1"), everything()); n != 1 {
			t.Errorf("get_count after emptying sc1 = %d, want 1", n)
		}
	})
	t.Run("RemoveSuperColumn", func(t *testing.T) {
		a := newSuperEnv(t, target)
		superFixture(a, "key1")
		a.remove("key1", superPath("Super1", b("sc2"), nil), 5)
		a.expectMissing("key1", superPath("Super1", b("sc2"), i64(5)))
		a.expectMissing("key1", superPath("Super1", b("sc2"), nil))
		if got := a.slice("key1", superParent("Super1", b("sc2")), everything()); len(got) != 0 {
			t.Errorf("inside a deleted super column: %v", names(got))
		}
		equalSupers(t, "after removing sc2", supers(t, a.slice("key1", parent("Super1"), everything())), superFixtureWant()[:1])
		a.insert("key1", superParent("Super1", b("sc2")), col(i64(5), b("value5"), 1))
		equalSupers(t, "older re-insert", supers(t, a.slice("key1", parent("Super1"), everything())), superFixtureWant()[:1])
		a.insert("key1", superParent("Super1", b("sc2")), col(i64(5), b("value5"), 6))
		equalSupers(t, "newer re-insert", supers(t, a.slice("key1", parent("Super1"), everything())),
			[]superCell{superFixtureWant()[0], {"sc2", []cell{{string(i64(5)), "value5", 6, 0}}}})
		equalCells(t, "inside sc2", cells(t, a.slice("key1", superParent("Super1", b("sc2")), everything())),
			[]cell{{string(i64(5)), "value5", 6, 0}})
	})
	t.Run("RemoveRow", func(t *testing.T) {
		a := newSuperEnv(t, target)
		a.insert("key1", parent("Standard1"), col(b("c1"), b("value1"), 0))
		superFixture(a, "key1")
		a.remove("key1", &cassandra.ColumnPath{ColumnFamily: "Super1"}, 3)
		if got := a.slice("key1", parent("Super1"), everything()); len(got) != 0 {
			t.Errorf("after a row deletion: %v", names(got))
		}
		if got := a.slice("key1", superParent("Super1", b("sc1")), everything()); len(got) != 0 {
			t.Errorf("inside sc1 after a row deletion: %v", names(got))
		}
		equalStrings(t, "Standard1 after deleting the Super1 row", names(a.slice("key1", parent("Standard1"), everything())), []string{"c1"})
		// Re-inserting after a row deletion (as a delete-then-reinsert loop does).
		for x := int64(0); x < 3; x++ {
			a.insert("key2", superParent("Super1", b("sc2")), col(i64(x), b("value"), 1))
		}
		a.remove("key2", &cassandra.ColumnPath{ColumnFamily: "Super1"}, 2)
		for x := int64(0); x < 3; x++ {
			a.insert("key2", superParent("Super1", b("sc2")), col(i64(x+3), b("value"), 3))
		}
		for n := int32(1); n <= 3; n++ {
			got := a.slice("key2", superParent("Super1", b("sc2")), byRange(nil, nil, false, n))
			if len(got) != int(n) {
				t.Errorf("count %d after re-insert: %d columns", n, len(got))
			}
		}
	})
}

package conformance

import (
	"fmt"
	"testing"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

func newBatchEnv(t *testing.T, target Target) *apiEnv {
	return newKeyspaceEnv(t, target, Options{}, "Keyspace1",
		standardCF("Standard1"), standardCF("Standard2"),
		superCF("Super1", subcomparator("LongType")), superCF("Super2", subcomparator("LongType")),
		standardCF("Counter1", counterCF()),
		standardCF("Indexed1", indexedColumn(b("birthdate"), "LongType", "birthdate_index")))
}

func runBatchTests(t *testing.T, target Target) {
	t.Run("Columns", func(t *testing.T) {
		a := newBatchEnv(t, target)
		m := map[string]map[string][]*cassandra.Mutation{}
		for i := 27; i < 32; i++ {
			m[fmt.Sprintf("key_%d", i)] = map[string][]*cassandra.Mutation{
				"Standard1": {insertMutation(col(b("c1"), b("value1"), 0)), insertMutation(col(b("c2"), b("value2"), 0))},
				"Standard2": {insertMutation(col(b("c1"), b("value1"), 0)), insertMutation(col(b("c2"), b("value2"), 0))},
			}
		}
		a.batch(m)
		for k := range m {
			for _, cf := range []string{"Standard1", "Standard2"} {
				equalCells(t, k+" "+cf, cells(t, a.slice(k, parent(cf), everything())),
					[]cell{{"c1", "value1", 0, 0}, {"c2", "value2", 0, 0}})
			}
		}
	})
	t.Run("SuperColumns", func(t *testing.T) {
		a := newBatchEnv(t, target)
		mut := func() []*cassandra.Mutation {
			return []*cassandra.Mutation{
				superMutation(b("sc1"), col(i64(4), b("value4"), 0)),
				superMutation(b("sc2"), col(i64(5), b("value5"), 0), col(i64(6), b("value6"), 0)),
			}
		}
		a.batch(map[string]map[string][]*cassandra.Mutation{"key1": {"Super1": mut(), "Super2": mut()}})
		for _, cf := range []string{"Super1", "Super2"} {
			equalSupers(t, cf, supers(t, a.slice("key1", parent(cf), everything())), superFixtureWant())
		}
	})
	t.Run("DeleteStandard", func(t *testing.T) {
		a := newBatchEnv(t, target)
		keys := []string{"key_11", "key_12", "key_13"}
		for _, k := range keys {
			for _, cf := range []string{"Standard1", "Standard2"} {
				a.insert(k, parent(cf), col(b("c1"), b("value1"), 0))
				a.insert(k, parent(cf), col(b("c2"), b("value2"), 0))
				a.insert(k, parent(cf), col(b("c3"), b("value3"), 0))
			}
		}
		m := map[string]map[string][]*cassandra.Mutation{}
		for _, k := range keys {
			m[k] = map[string][]*cassandra.Mutation{
				"Standard1": {deletion(ts(20), nil, byNames(b("c1"), b("c2")))},
				"Standard2": {deletion(ts(20), nil, nil)},
			}
		}
		a.batch(m)
		for _, k := range keys {
			equalStrings(t, k+" Standard1 after names deletion", names(a.slice(k, parent("Standard1"), everything())), []string{"c3"})
			if got := a.slice(k, parent("Standard2"), everything()); len(got) != 0 {
				t.Errorf("%s Standard2 after row deletion: %v", k, names(got))
			}
		}
	})
	t.Run("DeleteSuper", func(t *testing.T) {
		a := newBatchEnv(t, target)
		keys := []string{"key_17", "key_18"}
		for _, k := range keys {
			superFixture(a, k)
		}
		superFixture(a, "key_19")
		superFixture(a, "key_20")
		a.batch(map[string]map[string][]*cassandra.Mutation{
			// Subcolumns by name inside a super column.
			"key_17": {"Super1": {deletion(ts(20), b("sc2"), byNames(i64(5))), deletion(ts(20), b("sc1"), byNames(i64(4)))}},
			// Whole super columns.
			"key_18": {"Super1": {deletion(ts(20), b("sc1"), nil)}},
			// Super columns by name at super level.
			"key_19": {"Super1": {deletion(ts(20), nil, byNames(b("sc2")))}},
			// The row.
			"key_20": {"Super1": {deletion(ts(20), nil, nil)}},
		})
		equalSupers(t, "key_17", supers(t, a.slice("key_17", parent("Super1"), everything())),
			[]superCell{{"sc2", []cell{{string(i64(6)), "value6", 0, 0}}}})
		equalSupers(t, "key_18", supers(t, a.slice("key_18", parent("Super1"), everything())), superFixtureWant()[1:])
		equalSupers(t, "key_19", supers(t, a.slice("key_19", parent("Super1"), everything())), superFixtureWant()[:1])
		if got := a.slice("key_20", parent("Super1"), everything()); len(got) != 0 {
			t.Errorf("key_20 after row deletion: %v", names(got))
		}
	})
	t.Run("InsertionsAndDeletions", func(t *testing.T) {
		a := newBatchEnv(t, target)
		keys := []string{"key_30", "key_31"}
		for _, k := range keys {
			a.batch(map[string]map[string][]*cassandra.Mutation{k: {
				"Super1": {superMutation(b("sc1"), col(i64(22), b("value22"), 0), col(i64(23), b("value23"), 0))},
				"Super2": {superMutation(b("sc2"), col(i64(22), b("value22"), 0), col(i64(23), b("value23"), 0))},
			}})
		}
		m := map[string]map[string][]*cassandra.Mutation{}
		for _, k := range keys {
			m[k] = map[string][]*cassandra.Mutation{
				"Super1": {superMutation(b("sc1"), col(i64(20), b("value20"), 3), col(i64(21), b("value21"), 3)),
					deletion(ts(3), b("sc1"), byNames(i64(22), i64(23)))},
				"Super2": {deletion(ts(2), b("sc2"), byNames(i64(22), i64(23))),
					superMutation(b("sc1"), col(i64(20), b("value20"), 3), col(i64(21), b("value21"), 3))},
			}
		}
		a.batch(m)
		for _, k := range keys {
			for _, c := range []int64{22, 23} {
				a.expectMissing(k, superPath("Super1", b("sc1"), i64(c)))
				a.expectMissing(k, superPath("Super2", b("sc2"), i64(c)))
			}
			for _, c := range []int64{20, 21} {
				a.mustGet(k, superPath("Super1", b("sc1"), i64(c)))
				a.mustGet(k, superPath("Super2", b("sc1"), i64(c)))
			}
		}
	})
	t.Run("RejectedWritesNothing", func(t *testing.T) {
		a := newBatchEnv(t, target)
		good := insertMutation(col(b("c1"), b("v"), 1))
		cases := map[string]map[string]map[string][]*cassandra.Mutation{
			"a bad validator value in another row": {
				"a": {"Standard1": {good}},
				"z": {"Indexed1": {insertMutation(col(b("birthdate"), b("bar"), 0))}},
			},
			"an unknown family": {
				"a": {"Standard1": {good}},
				"b": {"Undefined": {good}},
			},
			"a mutation with both a column and a deletion": {
				"a": {"Standard1": {good, {ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{Column: col(b("foo"), b("bar"), 0)},
					Deletion: &cassandra.Deletion{Timestamp: ts(2), Predicate: byNames(b("baz"))}}}},
			},
			"an empty mutation": {
				"a": {"Standard1": {good, {}}},
			},
			"a super column deletion on a Standard family": {
				"a": {"Standard1": {good, deletion(ts(1), b("supercolumn"), nil)}},
			},
			"a counter in a Standard family": {
				"a": {"Standard1": {good, counterMutation(b("c"), 1)}},
			},
			"a column in a counter family": {
				"a": {"Standard1": {good}, "Counter1": {insertMutation(col(b("c"), b("v"), 1))}},
			},
			"a plain column in a Super family": {
				"a": {"Standard1": {good}, "Super1": {insertMutation(col(b("c"), b("v"), 1))}},
			},
			"an empty key": {
				"a": {"Standard1": {good}},
				"":  {"Standard1": {good}},
			},
			"a deletion without timestamp": {
				"a": {"Standard1": {good, deletion(nil, nil, byNames(b("c1")))}},
			},
		}
		for what, m := range cases {
			expectIRE(t, "batch_mutate with "+what, a.C.BatchMutate(Ctx(t), m, one), "")
			expectIRE(t, "atomic_batch_mutate with "+what, a.C.AtomicBatchMutate(Ctx(t), m, one), "")
			for key := range m {
				if key == "" {
					continue
				}
				for _, cf := range []string{"Standard1", "Indexed1"} {
					if got := a.slice(key, parent(cf), everything()); len(got) != 0 {
						t.Errorf("after the refused batch with %s, %s/%s holds %v", what, key, cf, names(got))
					}
				}
			}
		}
	})
	t.Run("Atomic", func(t *testing.T) {
		a := newBatchEnv(t, target)
		m := map[string]map[string][]*cassandra.Mutation{
			"k1": {"Standard1": {insertMutation(col(b("c1"), b("v1"), 1))}, "Super1": {superMutation(b("sc"), col(i64(1), b("s"), 1))}},
			"k2": {"Standard2": {insertMutation(col(b("c2"), b("v2"), 1))}},
		}
		expectOK(t, "atomic_batch_mutate", a.C.AtomicBatchMutate(Ctx(t), m, one))
		a.mustGet("k1", colPath("Standard1", b("c1")))
		a.mustGet("k1", superPath("Super1", b("sc"), i64(1)))
		a.mustGet("k2", colPath("Standard2", b("c2")))
		del := map[string]map[string][]*cassandra.Mutation{
			"k1": {"Standard1": {deletion(ts(2), nil, nil)}},
			"k2": {"Standard2": {deletion(ts(2), nil, byNames(b("c2")))}},
		}
		expectOK(t, "atomic_batch_mutate deletions", a.C.AtomicBatchMutate(Ctx(t), del, one))
		a.expectMissing("k1", colPath("Standard1", b("c1")))
		a.expectMissing("k2", colPath("Standard2", b("c2")))
		a.mustGet("k1", superPath("Super1", b("sc"), i64(1)))
		err := a.C.AtomicBatchMutate(Ctx(t), map[string]map[string][]*cassandra.Mutation{
			"k3": {"Standard1": {insertMutation(col(b("c"), b("v"), 1))}, "Counter1": {counterMutation(b("c"), 1)}},
		}, one)
		expectIRE(t, "counters in atomic_batch_mutate", err, "Counter mutations are not allowed in atomic batches")
		a.expectMissing("k3", colPath("Standard1", b("c")))
	})
	t.Run("EmptyBatch", func(t *testing.T) {
		a := newBatchEnv(t, target)
		expectOK(t, "empty batch_mutate", a.C.BatchMutate(Ctx(t), map[string]map[string][]*cassandra.Mutation{}, one))
		expectOK(t, "batch_mutate of a row with no mutations", a.C.BatchMutate(Ctx(t),
			map[string]map[string][]*cassandra.Mutation{"k": {"Standard1": {}}}, one))
	})
}

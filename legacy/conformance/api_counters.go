package conformance

import (
	"sync"
	"testing"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

func newCounterEnv(t *testing.T, target Target) *apiEnv {
	return newKeyspaceEnv(t, target, Options{}, "Keyspace1",
		standardCF("Standard1"), superCF("Super1"),
		standardCF("Counter1", counterCF()), superCF("SuperCounter1", counterCF()))
}

// counterFamily is where a counter test adds: a row of Counter1 or super
// column sc1 of SuperCounter1.
func counterFamilies() []family {
	return []family{{super: false, cf: "Counter1"}, {super: true, cf: "SuperCounter1"}}
}

func (a *apiEnv) add(key string, p *cassandra.ColumnParent, name string, delta int64) {
	a.t.Helper()
	if err := a.C.Add(Ctx(a.t), b(key), p, &cassandra.CounterColumn{Name: b(name), Value: delta}, one); err != nil {
		a.t.Fatalf("add %q %s/%s: %v", key, p.ColumnFamily, name, err)
	}
}

// counterValue reads one counter; found is false when it does not exist.
func (a *apiEnv) counterValue(key string, p *cassandra.ColumnPath) (int64, bool) {
	a.t.Helper()
	c, found := a.get(key, p)
	if !found {
		return 0, false
	}
	if c.CounterColumn == nil {
		a.t.Fatalf("get of a counter = %s, want a counter column", describeCosc(c))
	}
	return c.CounterColumn.Value, true
}

func runCounterTests(t *testing.T, target Target) {
	t.Run("AddAndRead", func(t *testing.T) {
		a := newCounterEnv(t, target)
		for _, f := range counterFamilies() {
			t.Run(f.name(), func(t *testing.T) {
				for i, d := range []int64{12, -21, 35} {
					a.add("key", f.parent(), "c1", d)
					want := []int64{12, -9, 26}[i]
					if v, ok := a.counterValue("key", f.path(b("c1"))); !ok || v != want {
						t.Errorf("after adding %d: %d (found %v), want %d", d, v, ok, want)
					}
				}
				a.add("key", f.parent(), "c2", 1)
				a.add("key", f.parent(), "c3", 3)
				got := a.slice("key", f.parent(), byRange(b("c1"), b("c2"), false, 100))
				equalStrings(t, "counter range", names(got), []string{"c1", "c2"})
				got = a.slice("key", f.parent(), byRange(b("c3"), b("c2"), true, 100))
				equalStrings(t, "reversed counter range", names(got), []string{"c3", "c2"})
				got = a.slice("key", f.parent(), byNames(b("c3"), b("c1")))
				if len(got) != 2 || got[0].CounterColumn == nil || got[0].CounterColumn.Value != 26 || got[1].CounterColumn.Value != 3 {
					t.Errorf("counters by name = %v", got)
				}
				if n := a.count("key", f.parent(), everything()); n != 3 {
					t.Errorf("get_count of counters = %d, want 3", n)
				}
				rows, err := a.C.MultigetSlice(Ctx(t), [][]byte{b("key"), b("none")}, f.parent(), byNames(b("c1")), one)
				expectOK(t, "multiget_slice of counters", err)
				if len(rows["key"]) != 1 || rows["key"][0].CounterColumn.Value != 26 || len(rows["none"]) != 0 {
					t.Errorf("multiget_slice of counters = %v", rows)
				}
			})
		}
	})
	t.Run("SuperLevel", func(t *testing.T) {
		a := newCounterEnv(t, target)
		a.add("key", superParent("SuperCounter1", b("sc1")), "c1", -234)
		a.add("key", superParent("SuperCounter1", b("sc1")), "c2", 52345)
		a.add("key", superParent("SuperCounter1", b("sc2")), "c1", 7)
		got := a.mustGet("key", superPath("SuperCounter1", b("sc1"), nil))
		if got.CounterSuperColumn == nil || len(got.CounterSuperColumn.Columns) != 2 ||
			got.CounterSuperColumn.Columns[0].Value != -234 || got.CounterSuperColumn.Columns[1].Value != 52345 {
			t.Errorf("get of a counter super column = %s", describeCosc(got))
		}
		all := a.slice("key", parent("SuperCounter1"), everything())
		equalStrings(t, "counter super columns", names(all), []string{"sc1", "sc2"})
		for _, c := range all {
			if c.CounterSuperColumn == nil {
				t.Errorf("super-level slice of a counter family returned %s", describeCosc(c))
			}
		}
		rev := a.slice("key", parent("SuperCounter1"), byRange(b("sc2"), b("sc1"), true, 2))
		equalStrings(t, "reversed counter super columns", names(rev), []string{"sc2", "sc1"})
	})
	t.Run("Remove", func(t *testing.T) {
		a := newCounterEnv(t, target)
		for _, f := range counterFamilies() {
			t.Run(f.name(), func(t *testing.T) {
				a.add("key1", f.parent(), "c1", 124)
				a.add("key1", f.parent(), "c2", 1)
				expectOK(t, "remove_counter", a.C.RemoveCounter(Ctx(t), b("key1"), f.path(b("c1")), one))
				if _, ok := a.counterValue("key1", f.path(b("c1"))); ok {
					t.Error("a removed counter is still there")
				}
				if v, ok := a.counterValue("key1", f.path(b("c2"))); !ok || v != 1 {
					t.Errorf("remove_counter of c1 touched c2: %d %v", v, ok)
				}
				a.add("key2", f.parent(), "c1", 124)
				whole := f.rowPath()
				if f.super {
					whole = superPath(f.cf, b("sc1"), nil)
				}
				expectOK(t, "remove_counter of a row or super column", a.C.RemoveCounter(Ctx(t), b("key2"), whole, one))
				if _, ok := a.counterValue("key2", f.path(b("c1"))); ok {
					t.Error("a counter is still there after removing its row or super column")
				}
			})
		}
	})
	t.Run("BatchMutate", func(t *testing.T) {
		a := newCounterEnv(t, target)
		a.batch(map[string]map[string][]*cassandra.Mutation{"key1": {
			"Counter1": {counterMutation(b("c1"), 12), counterMutation(b("c1"), -21)},
			"SuperCounter1": {{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{CounterSuperColumn: &cassandra.CounterSuperColumn{
				Name: b("sc1"), Columns: []*cassandra.CounterColumn{{Name: b("c1"), Value: 5}, {Name: b("c2"), Value: 6}},
			}}}},
		}})
		if v, ok := a.counterValue("key1", colPath("Counter1", b("c1"))); !ok || v != -9 {
			t.Errorf("counter after two batched adds = %d (found %v), want -9", v, ok)
		}
		if v, ok := a.counterValue("key1", superPath("SuperCounter1", b("sc1"), b("c2"))); !ok || v != 6 {
			t.Errorf("super counter after a batched add = %d (found %v), want 6", v, ok)
		}
		// Deletions in a counter batch carry no timestamp.
		a.batch(mutationMap("Counter1", map[string][]*cassandra.Mutation{"key1": {deletion(nil, nil, byNames(b("c1")))}}))
		if _, ok := a.counterValue("key1", colPath("Counter1", b("c1"))); ok {
			t.Error("a counter deleted by batch_mutate is still there")
		}
		a.batch(mutationMap("Counter1", map[string][]*cassandra.Mutation{"key2": {counterMutation(b("c1"), 1)}}))
		a.batch(mutationMap("Counter1", map[string][]*cassandra.Mutation{"key2": {deletion(nil, nil, nil)}}))
		if _, ok := a.counterValue("key2", colPath("Counter1", b("c1"))); ok {
			t.Error("a counter row deleted by batch_mutate is still there")
		}
	})
	t.Run("Refusals", func(t *testing.T) {
		a := newCounterEnv(t, target)
		ctx := Ctx(t)
		err := a.C.Add(ctx, b("k"), parent("Standard1"), &cassandra.CounterColumn{Name: b("c"), Value: 1}, one)
		expectIRE(t, "add to a Standard family", err, "invalid operation for non commutative table Standard1")
		err = a.C.Add(ctx, b("k"), superParent("Super1", b("sc")), &cassandra.CounterColumn{Name: b("c"), Value: 1}, one)
		expectIRE(t, "add to a Super family", err, "invalid operation for non commutative table Super1")
		err = a.C.Insert(ctx, b("k"), parent("Counter1"), col(b("c"), b("v"), 1), one)
		expectIRE(t, "insert into a counter family", err, "invalid operation for commutative table Counter1")
		err = a.C.Remove(ctx, b("k"), colPath("Counter1", b("c")), 1, one)
		expectIRE(t, "remove from a counter family", err, "invalid operation for commutative table Counter1")
		err = a.C.RemoveCounter(ctx, b("k"), colPath("Standard1", b("c")), one)
		expectIRE(t, "remove_counter from a Standard family", err, "invalid operation for non commutative table Standard1")
		err = a.C.Add(ctx, b("k"), parent("Counter1"), &cassandra.CounterColumn{Name: b("c"), Value: 1}, cassandra.ConsistencyLevel_ANY)
		expectIRE(t, "counter add at ANY", err, "")
		err = a.C.Add(ctx, b("k"), parent("SuperCounter1"), &cassandra.CounterColumn{Name: b("c"), Value: 1}, one)
		expectIRE(t, "counter add to a Super family without super column", err, "")
		err = a.C.BatchMutate(ctx, mutationMap("Counter1", map[string][]*cassandra.Mutation{"k": {insertMutation(col(b("c"), b("v"), 1))}}), one)
		expectIRE(t, "a column in a counter batch", err, "")
		err = a.C.BatchMutate(ctx, mutationMap("Standard1", map[string][]*cassandra.Mutation{"k": {counterMutation(b("c"), 1)}}), one)
		expectIRE(t, "a counter in a Standard batch", err, "")
		err = a.C.AtomicBatchMutate(ctx, mutationMap("Counter1", map[string][]*cassandra.Mutation{"k": {counterMutation(b("c"), 1)}}), one)
		expectIRE(t, "counters in atomic_batch_mutate", err, "Counter mutations are not allowed in atomic batches")
		if _, ok := a.counterValue("k", colPath("Counter1", b("c"))); ok {
			t.Error("a refused counter write was applied")
		}
		_, err = a.C.Cas(ctx, b("k"), "Counter1", nil, []*cassandra.Column{col(b("c"), b("v"), 1)}, cassandra.ConsistencyLevel_SERIAL, one)
		expectIRE(t, "cas on a counter family", err, "")
	})
	t.Run("Concurrent", func(t *testing.T) {
		a := newCounterEnv(t, target)
		const conns, adds = 32, 20
		clients := make([]*Client, conns)
		for i := range clients {
			clients[i] = a.Dial()
			expectOK(t, "set_keyspace", clients[i].SetKeyspace(Ctx(t), "Keyspace1"))
		}
		var wg sync.WaitGroup
		errs := make(chan error, conns)
		for i, c := range clients {
			wg.Add(1)
			go func(i int, c *Client) {
				defer wg.Done()
				for j := 0; j < adds; j++ {
					ctx := Ctx(t)
					if err := c.Add(ctx, b("hot"), parent("Counter1"), &cassandra.CounterColumn{Name: b("n"), Value: int64(i + 1)}, one); err != nil {
						errs <- err
						return
					}
					if err := c.Add(ctx, b("hot"), superParent("SuperCounter1", b("sc")), &cassandra.CounterColumn{Name: b("n"), Value: 1}, one); err != nil {
						errs <- err
						return
					}
				}
			}(i, c)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("concurrent add: %v", err)
		}
		want := int64(adds * conns * (conns + 1) / 2)
		if v, _ := a.counterValue("hot", colPath("Counter1", b("n"))); v != want {
			t.Errorf("sum of %d×%d concurrent adds = %d, want %d", conns, adds, v, want)
		}
		if v, _ := a.counterValue("hot", superPath("SuperCounter1", b("sc"), b("n"))); v != conns*adds {
			t.Errorf("super counter after %d concurrent adds = %d", conns*adds, v)
		}
	})
}

package main

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

func TestValuesRepeatIsOneValue(t *testing.T) {
	p := newParams(&loadConfig{ValueSize: 64, Values: valuesRepeat, Seed: 1})
	rng := rand.New(rand.NewPCG(1, 2))
	first := p.value(rng)
	if len(first) != 64 || bytes.Equal(first, make([]byte, 64)) {
		t.Fatalf("value %x: want 64 random bytes", first)
	}
	for range 100 {
		if v := p.value(rng); !bytes.Equal(v, first) {
			t.Fatalf("repeat gave %x after %x", v, first)
		}
	}
}

func TestValuesDistinctDiffer(t *testing.T) {
	p := newParams(&loadConfig{ValueSize: 64, Values: valuesDistinct, Seed: 1})
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	for range 1000 {
		v := p.value(rng)
		if len(v) != 64 || cap(v) != 64 {
			t.Fatalf("value of len %d cap %d, want 64 and 64 (an append must not reach the pool)", len(v), cap(v))
		}
		seen[string(v)] = true
	}
	// 1000 offsets drawn from a pool of a mebibyte: a few may repeat.
	if len(seen) < 990 {
		t.Fatalf("%d different values of 1000", len(seen))
	}
	// The same seed draws the same values on every server.
	again := newParams(&loadConfig{ValueSize: 64, Values: valuesDistinct, Seed: 1})
	if !bytes.Equal(p.values, again.values) {
		t.Fatal("the pool differs for one seed")
	}
}

func TestValuesOfSizeZero(t *testing.T) {
	for _, kind := range []string{valuesRepeat, valuesDistinct} {
		p := newParams(&loadConfig{ValueSize: 0, Values: kind, Seed: 1})
		if v := p.value(rand.New(rand.NewPCG(1, 2))); len(v) != 0 {
			t.Fatalf("%s: value of %d bytes, want none", kind, len(v))
		}
	}
}

// TestBatchMutationsTakeNewValuesEachCall: the batch modes build their
// mutations once, and every call gives each column a value of its own and
// the call's timestamp.
func TestBatchMutationsTakeNewValuesEachCall(t *testing.T) {
	p := newParams(&loadConfig{ValueSize: 64, Values: valuesDistinct, Seed: 1, Columns: 5, SuperColumns: 3, Subcolumns: 4})
	w := &worker{p: p, rng: rand.New(rand.NewPCG(1, 2))}
	for name, b := range map[string]*batchMutations{"batch": standardBatch(p), "batch-super": superBatch(p)} {
		var before [][]byte
		for call := range 3 {
			b.fill(w)
			b.ts += int64(call) // distinct even within one microsecond
			if want := map[string]int{"batch": 5, "batch-super": 12}[name]; len(b.cols) != want {
				t.Fatalf("%s: %d columns, want %d", name, len(b.cols), want)
			}
			for i, c := range b.cols {
				if *c.Timestamp != b.ts {
					t.Fatalf("%s call %d column %d: timestamp %d, want the call's %d", name, call, i, *c.Timestamp, b.ts)
				}
				if call > 0 && bytes.Equal(c.Value, before[i]) {
					t.Fatalf("%s call %d column %d kept its value %x", name, call, i, c.Value)
				}
			}
			before = before[:0]
			for _, c := range b.cols {
				before = append(before, c.Value)
			}
		}
		if name == "batch-super" {
			for i, m := range b.muts {
				if sc := m.ColumnOrSupercolumn.SuperColumn; !bytes.Equal(sc.Name, p.supers[i]) || len(sc.Columns) != 4 {
					t.Fatalf("super column %d: %q with %d subcolumns", i, sc.Name, len(sc.Columns))
				}
			}
		}
	}
}

// TestPreloadRowsHoldEveryCell: a preloaded row is the mutations of its
// family's batch mode, set once with values and the preload's timestamp:
// a row of Preloaded holds every --columns column, a row of
// PreloadedSupers every super column with every subcolumn.
func TestPreloadRowsHoldEveryCell(t *testing.T) {
	p := newParams(&loadConfig{ValueSize: 16, Values: valuesDistinct, Seed: 1, Columns: 5, SuperColumns: 3, Subcolumns: 4})
	rng := rand.New(rand.NewPCG(1, 2))
	const ts = 1234
	check := func(what string, c *cassandra.Column, name []byte) {
		t.Helper()
		if !bytes.Equal(c.Name, name) || len(c.Value) != 16 || c.Timestamp == nil || *c.Timestamp != ts {
			t.Errorf("%s: column %q of %d bytes at %v, want %q of 16 bytes at %d", what, c.Name, len(c.Value), c.Timestamp, name, ts)
		}
	}

	row := standardBatch(p)
	row.set(p, rng, ts)
	if len(row.muts) != 5 {
		t.Fatalf("a standard row of %d mutations, want 5", len(row.muts))
	}
	for i, m := range row.muts {
		check("standard row", m.ColumnOrSupercolumn.Column, columnName(i))
	}

	row = superBatch(p)
	row.set(p, rng, ts)
	if len(row.muts) != 3 || len(row.cols) != 12 {
		t.Fatalf("a super row of %d super columns and %d subcolumns, want 3 and 12", len(row.muts), len(row.cols))
	}
	for i, m := range row.muts {
		sc := m.ColumnOrSupercolumn.SuperColumn
		if sc == nil || !bytes.Equal(sc.Name, superName(i)) || len(sc.Columns) != 4 {
			t.Fatalf("super column %d: %+v", i, sc)
		}
		for j, c := range sc.Columns {
			check(string(sc.Name), c, columnName(j))
		}
	}
}

package thriftsource

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/store/partition"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

const (
	wideColumns  = 2500
	wideSupers   = 30
	wideSubs     = 40
	wideKeyspace = "Wide"
)

// loadWide creates a Standard family with one wide row and a few narrow
// ones, and a Super family with one wide row of wide super columns.
func loadWide(t *testing.T) string {
	t.Helper()
	ctx := testContext(t)
	clock := &testClock{}
	addr := startServer(t, t.TempDir(), partition.Murmur3Partitioner{}, clock)
	c, err := dial(ctx, addr, ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	client := c.client
	standard := cassandra.NewCfDef()
	standard.Keyspace, standard.Name, standard.ComparatorType = wideKeyspace, "Series", "LongType"
	super := cassandra.NewCfDef()
	super.Keyspace, super.Name, super.ColumnType, super.ComparatorType = wideKeyspace, "Buckets", "Super", "LongType"
	sub := "LongType"
	super.SubcomparatorType = &sub
	ks := &cassandra.KsDef{
		Name: wideKeyspace, StrategyClass: "SimpleStrategy",
		StrategyOptions: map[string]string{"replication_factor": "1"},
		CfDefs:          []*cassandra.CfDef{standard, super},
	}
	if _, err := client.SystemAddKeyspace(ctx, ks); err != nil {
		t.Fatal(describeError(err))
	}
	if err := client.SetKeyspace(ctx, wideKeyspace); err != nil {
		t.Fatal(err)
	}
	ts := int64(1)
	col := func(n int) *cassandra.Column {
		return &cassandra.Column{Name: long(n), Value: []byte(fmt.Sprint(n)), Timestamp: &ts}
	}
	var muts []*cassandra.Mutation
	for i := range wideColumns {
		muts = append(muts, &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{Column: col(i)}})
	}
	rows := map[string]map[string][]*cassandra.Mutation{"wide": {"Series": muts}}
	for i := range 5 {
		rows[fmt.Sprintf("narrow-%d", i)] = map[string][]*cassandra.Mutation{"Series": muts[:i+1]}
	}
	var superMuts []*cassandra.Mutation
	for s := range wideSupers {
		sc := &cassandra.SuperColumn{Name: long(s)}
		for i := range wideSubs {
			sc.Columns = append(sc.Columns, col(i))
		}
		superMuts = append(superMuts, &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{SuperColumn: sc}})
	}
	rows["wide"]["Buckets"] = superMuts
	if err := client.BatchMutate(ctx, rows, cassandra.ConsistencyLevel_ONE); err != nil {
		t.Fatal(describeError(err))
	}
	return addr
}

func long(n int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

func TestWideRows(t *testing.T) {
	addr := loadWide(t)
	ctx := testContext(t)
	for _, opts := range []Options{{RowPageSize: 1, ColumnPageSize: 1}, {RowPageSize: 2, ColumnPageSize: 7}, {}} {
		src, err := Open(ctx, addr, wideKeyspace, opts)
		if err != nil {
			t.Fatal(err)
		}
		chunks, cells := map[string]int{}, map[string][]migrate.Cell{}
		err = src.Scan(ctx, "Series", migrate.Position{}, func(c migrate.RowChunk) error {
			if len(c.Cells) > max(opts.ColumnPageSize, 1) && opts.ColumnPageSize > 0 {
				return fmt.Errorf("chunk of %d cells with pages of %d", len(c.Cells), opts.ColumnPageSize)
			}
			chunks[string(c.Key)]++
			for _, cell := range c.Cells {
				cell.Name = append([]byte(nil), cell.Name...)
				cells[string(c.Key)] = append(cells[string(c.Key)], cell)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%+v: %v", opts, err)
		}
		if len(cells) != 6 {
			t.Errorf("%+v: %d rows, want 6", opts, len(cells))
		}
		wide := cells["wide"]
		if len(wide) != wideColumns {
			t.Fatalf("%+v: wide row has %d cells, want %d", opts, len(wide), wideColumns)
		}
		for i, c := range wide {
			if got := int(binary.BigEndian.Uint64(c.Name)); got != i {
				t.Fatalf("%+v: cell %d is column %d", opts, i, got)
			}
		}
		if opts.ColumnPageSize > 0 && chunks["wide"] < wideColumns/opts.ColumnPageSize {
			t.Errorf("%+v: wide row came in %d chunks", opts, chunks["wide"])
		}

		var supers []migrate.Cell
		err = src.Scan(ctx, "Buckets", migrate.Position{}, func(c migrate.RowChunk) error {
			for _, cell := range c.Cells {
				cell.Super = append([]byte(nil), cell.Super...)
				cell.Name = append([]byte(nil), cell.Name...)
				supers = append(supers, cell)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(supers) != wideSupers*wideSubs {
			t.Fatalf("%+v: super row has %d cells, want %d", opts, len(supers), wideSupers*wideSubs)
		}
		for i, c := range supers {
			s, n := int(binary.BigEndian.Uint64(c.Super)), int(binary.BigEndian.Uint64(c.Name))
			if s != i/wideSubs || n != i%wideSubs {
				t.Fatalf("%+v: cell %d is %d/%d", opts, i, s, n)
			}
		}
		src.Close()
	}
}

func TestScanStopsOnVisitError(t *testing.T) {
	addr := loadWide(t)
	ctx := testContext(t)
	src, err := Open(ctx, addr, wideKeyspace, Options{ColumnPageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	stop := fmt.Errorf("enough")
	calls := 0
	err = src.Scan(ctx, "Series", migrate.Position{}, func(migrate.RowChunk) error {
		calls++
		return stop
	})
	if err != stop || calls != 1 {
		t.Fatalf("Scan = %v after %d calls, want the visit error after 1", err, calls)
	}
	if err := src.Scan(ctx, "NoSuchFamily", migrate.Position{}, func(migrate.RowChunk) error { return nil }); err == nil {
		t.Fatal("scan of an unknown family succeeded")
	}
}

package enginesource

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/daemon"
	"github.com/thriftbridge/thriftbridge/fixtures"
	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/migrate/thriftsource"
	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/badgerstore"
	"github.com/thriftbridge/thriftbridge/store/partition"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// loadThroughServer runs thriftd in-process over a Badger store in dir,
// with its clock at the model's LoadTime, loads the model over Thrift and
// stops the server.
func loadThroughServer(t *testing.T, m *fixtures.Model, dir string) {
	t.Helper()
	ctx := testContext(t)
	load := m.LoadTime()
	cfg := daemon.DefaultConfig()
	cfg.Listen, cfg.DataDir = "127.0.0.1:0", dir
	d, err := daemon.Start(ctx, cfg, quietLogger, daemon.WithClock(func() time.Time { return load }), daemon.WithGCInterval(-1))
	if err != nil {
		t.Fatal(err)
	}
	loadErr := thriftsource.Call(ctx, d.Addr().String(), thriftsource.ConnOptions{}, func(ctx context.Context, c *cassandra.CassandraClient) error {
		return m.WriteThrift(ctx, c, "")
	})
	if err := d.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if loadErr != nil {
		t.Fatal(loadErr)
	}
}

// openStore opens the Badger store in dir with its clock at now.
func openStore(t *testing.T, dir string, now time.Time) *badgerstore.Engine {
	t.Helper()
	engine, err := badgerstore.Open(context.Background(), badgerstore.Options{
		Dir: dir, Partitioner: partition.Murmur3Partitioner{}, Logger: quietLogger,
		Now: func() time.Time { return now }, GCInterval: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := engine.Close(); err != nil {
			t.Error(err)
		}
	})
	return engine
}

func TestFixturesRoundTrip(t *testing.T) {
	for _, name := range fixtures.Names() {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			m, err := fixtures.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			loadThroughServer(t, m, dir)
			engine := openStore(t, dir, m.Now)
			// The store computed expiry from its clock at load time.
			loadTime := m.LoadTime().Unix()
			check := fixtures.ExpiresAtFrom(func(want migrate.Cell) int64 {
				if want.TTL == 0 {
					return 0
				}
				return loadTime + int64(want.TTL)
			})
			for _, pages := range [][2]int{{0, 0}, {1, 1}, {2, 2}} {
				src, err := New(engine, m.Keyspace.Name)
				if err != nil {
					t.Fatal(err)
				}
				if pages[0] > 0 {
					src.RowPageSize, src.ColumnPageSize = pages[0], pages[1]
				}
				ks, err := src.Keyspace(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(ks.Families) != len(m.Keyspace.Families) {
					t.Fatalf("%d families, want %d", len(ks.Families), len(m.Keyspace.Families))
				}
				for _, family := range m.FamilyNames() {
					want, err := fixtures.Collect(ctx, m.Source(), family, migrate.Position{})
					if err != nil {
						t.Fatal(err)
					}
					got, err := fixtures.Collect(ctx, src, family, migrate.Position{})
					if err != nil {
						t.Fatalf("pages %v: %s: %v", pages, family, err)
					}
					for _, d := range fixtures.Differences(want, got, check) {
						t.Errorf("pages %v: %s: %s", pages, family, d)
					}
				}
			}
		})
	}
}

func TestDeclaredColumnsByName(t *testing.T) {
	ctx := testContext(t)
	m, err := fixtures.Load("userprofile")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	loadThroughServer(t, m, dir)
	src, err := New(openStore(t, dir, m.Now), m.Keyspace.Name)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := src.Keyspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, want := ks.Families[0].Columns, m.Keyspace.Families[0].Columns
	if len(got) != len(want) {
		t.Fatalf("%d columns, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].IndexName != want[i].IndexName {
			t.Errorf("column %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// wideStore writes, straight through the engine, a Standard family with a
// wide row and a few narrow ones and a Super family with wide super
// columns.
func wideStore(t *testing.T) *badgerstore.Engine {
	t.Helper()
	ctx := testContext(t)
	engine := openStore(t, t.TempDir(), time.Unix(1700000000, 0))
	ksDef := store.KeyspaceDef{Name: "Wide", StrategyClass: "org.apache.cassandra.locator.SimpleStrategy", DurableWrites: true}
	tables := []store.TableDef{
		{Keyspace: "Wide", Name: "Series", Comparator: "LongType", DefaultValidator: "BytesType", KeyValidator: "BytesType"},
		{Keyspace: "Wide", Name: "Buckets", Super: true, Comparator: "LongType", SubComparator: "LongType", DefaultValidator: "BytesType", KeyValidator: "BytesType"},
	}
	if err := engine.CreateKeyspace(ctx, ksDef, tables); err != nil {
		t.Fatal(err)
	}
	series, _ := engine.Catalog().Table("Wide", "Series")
	buckets, _ := engine.Catalog().Table("Wide", "Buckets")
	put := func(super []byte, n int) store.Op {
		return store.Op{Kind: store.OpPut, Super: super, Name: long(n), Value: []byte(fmt.Sprint(n)), Timestamp: 1, HasTimestamp: true}
	}
	wide := store.RowMutation{Table: series, Key: []byte("wide")}
	for i := range 2500 {
		wide.Ops = append(wide.Ops, put(nil, i))
	}
	batch := &store.Batch{Rows: []store.RowMutation{wide}}
	for i := range 5 {
		batch.Rows = append(batch.Rows, store.RowMutation{Table: series, Key: fmt.Appendf(nil, "narrow-%d", i), Ops: wide.Ops[:i+1]})
	}
	superRow := store.RowMutation{Table: buckets, Key: []byte("wide")}
	for s := range 30 {
		for i := range 40 {
			superRow.Ops = append(superRow.Ops, put(long(s), i))
		}
	}
	batch.Rows = append(batch.Rows, superRow)
	if err := engine.Apply(ctx, batch); err != nil {
		t.Fatal(err)
	}
	return engine
}

func long(n int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

func TestWideRowsAndResume(t *testing.T) {
	ctx := testContext(t)
	engine := wideStore(t)
	for _, pages := range [][2]int{{1, 1}, {2, 7}, {1000, 1000}} {
		src, err := New(engine, "Wide")
		if err != nil {
			t.Fatal(err)
		}
		src.RowPageSize, src.ColumnPageSize = pages[0], pages[1]
		chunks := 0
		err = src.Scan(ctx, "Series", migrate.Position{}, func(c migrate.RowChunk) error {
			if len(c.Cells) > pages[1] {
				return fmt.Errorf("chunk of %d cells with pages of %d", len(c.Cells), pages[1])
			}
			chunks++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := fixtures.Collect(ctx, src, "Series", migrate.Position{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 6 {
			t.Fatalf("pages %v: %d rows, want 6", pages, len(rows))
		}
		if chunks < 2500/pages[1] {
			t.Errorf("pages %v: %d chunks", pages, chunks)
		}
		for _, r := range rows {
			if string(r.Key) == "wide" && len(r.Cells) != 2500 {
				t.Errorf("pages %v: wide row has %d cells", pages, len(r.Cells))
			}
		}
		for i, r := range rows {
			rest, err := fixtures.Collect(ctx, src, "Series", migrate.Position{AfterKey: r.Key, Started: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(rest) != len(rows)-i-1 || (len(rest) > 0 && !bytes.Equal(rest[0].Key, rows[i+1].Key)) {
				t.Fatalf("pages %v: resuming after row %d gave %d rows", pages, i, len(rest))
			}
		}
		supers, err := fixtures.Collect(ctx, src, "Buckets", migrate.Position{})
		if err != nil {
			t.Fatal(err)
		}
		if len(supers) != 1 || len(supers[0].Cells) != 30*40 {
			t.Fatalf("pages %v: super rows %d", pages, len(supers))
		}
		for i, c := range supers[0].Cells {
			s, n := int(binary.BigEndian.Uint64(c.Super)), int(binary.BigEndian.Uint64(c.Name))
			if s != i/40 || n != i%40 {
				t.Fatalf("pages %v: cell %d is %d/%d", pages, i, s, n)
			}
		}
	}
}

func TestUnknownNames(t *testing.T) {
	engine := wideStore(t)
	if _, err := New(engine, "Nope"); !errors.Is(err, store.ErrNoKeyspace) {
		t.Errorf("New(Nope) = %v", err)
	}
	src, err := New(engine, "Wide")
	if err != nil {
		t.Fatal(err)
	}
	err = src.Scan(testContext(t), "Nope", migrate.Position{}, func(migrate.RowChunk) error { return nil })
	if !errors.Is(err, store.ErrNoTable) {
		t.Errorf("Scan(Nope) = %v", err)
	}
}

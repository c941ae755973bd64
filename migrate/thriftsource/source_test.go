package thriftsource

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/fixtures"
	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/store/marshal"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// loadModel starts a server, loads the model at its LoadTime and sets the
// server clock to the model's Now.
func loadModel(t *testing.T, name string, part partition.Partitioner) (*fixtures.Model, string) {
	t.Helper()
	m, err := fixtures.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	clock := &testClock{now: m.LoadTime()}
	addr := startServer(t, t.TempDir(), part, clock)
	if err := writeModel(testContext(t), addr, m, ""); err != nil {
		t.Fatal(err)
	}
	clock.Set(m.Now)
	return m, addr
}

func TestFixturesRoundTrip(t *testing.T) {
	for _, name := range fixtures.Names() {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			m, addr := loadModel(t, name, partition.Murmur3Partitioner{})
			for _, opts := range []Options{{}, {RowPageSize: 1, ColumnPageSize: 1}, {RowPageSize: 2, ColumnPageSize: 2}} {
				src, err := Open(ctx, addr, m.Keyspace.Name, opts)
				if err != nil {
					t.Fatal(err)
				}
				for _, family := range m.FamilyNames() {
					want, err := fixtures.Collect(ctx, m.Source(), family, migrate.Position{})
					if err != nil {
						t.Fatal(err)
					}
					got, err := fixtures.Collect(ctx, src, family, migrate.Position{})
					if err != nil {
						t.Fatalf("pages %+v: %s: %v", opts, family, err)
					}
					// Thrift's ExpiresAt is Timestamp/1e6 + TTL, the fixtures' definition.
					for _, d := range fixtures.Differences(want, got, fixtures.ExactCells) {
						t.Errorf("pages %+v: %s: %s", opts, family, d)
					}
				}
				if err := src.Close(); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func TestKeyspaceDescribesTheSchema(t *testing.T) {
	ctx := testContext(t)
	for _, name := range []string{"blog", "userprofile", "counters", "passbook"} {
		m, addr := loadModel(t, name, partition.Murmur3Partitioner{})
		src, err := Open(ctx, addr, m.Keyspace.Name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		got, err := src.Keyspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != m.Keyspace.Name || len(got.Families) != len(m.Keyspace.Families) {
			t.Fatalf("%s: keyspace %s with %d families, want %s with %d", name, got.Name, len(got.Families), m.Keyspace.Name, len(m.Keyspace.Families))
		}
		for _, want := range m.Keyspace.Families {
			var found bool
			for _, g := range got.Families {
				if g.Name != want.Name {
					continue
				}
				found = true
				if g.Super != want.Super {
					t.Errorf("%s: super %v, want %v", want.Name, g.Super, want.Super)
				}
				sameType(t, want.Name+" comparator", g.Comparator, want.Comparator)
				sameType(t, want.Name+" key validator", g.KeyValidator, want.KeyValidator)
				sameType(t, want.Name+" default validator", g.DefaultValidator, want.DefaultValidator)
				if want.Super {
					sameType(t, want.Name+" subcomparator", g.SubComparator, want.SubComparator)
				}
				if len(g.Columns) != len(want.Columns) {
					t.Errorf("%s: %d declared columns, want %d", want.Name, len(g.Columns), len(want.Columns))
					continue
				}
				for i, c := range want.Columns {
					if g.Columns[i].Name != c.Name || g.Columns[i].IndexName != c.IndexName {
						t.Errorf("%s: column %d = %+v, want %+v", want.Name, i, g.Columns[i], c)
					}
					sameType(t, want.Name+" column "+c.Name, g.Columns[i].Validator, c.Validator)
				}
			}
			if !found {
				t.Errorf("family %s missing", want.Name)
			}
		}
	}
}

func sameType(t *testing.T, what, got, want string) {
	t.Helper()
	g, err := marshal.Parse(got)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	w, err := marshal.Parse(want)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	if g.Name() != w.Name() {
		t.Errorf("%s: %s, want %s", what, g.Name(), w.Name())
	}
}

func TestResume(t *testing.T) {
	for _, part := range []partition.Partitioner{partition.Murmur3Partitioner{}, partition.ByteOrderedPartitioner{}} {
		t.Run(part.Name(), func(t *testing.T) {
			ctx := testContext(t)
			m, addr := loadModel(t, "eventlog", part)
			src, err := Open(ctx, addr, m.Keyspace.Name, Options{RowPageSize: 1, ColumnPageSize: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			all, err := fixtures.Collect(ctx, src, "ServerEvents", migrate.Position{})
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != len(m.Rows["ServerEvents"]) {
				t.Fatalf("%d rows, want %d", len(all), len(m.Rows["ServerEvents"]))
			}
			for i, r := range all {
				rest, err := fixtures.Collect(ctx, src, "ServerEvents", migrate.Position{AfterKey: r.Key, Started: true})
				if err != nil {
					t.Fatal(err)
				}
				if len(rest) != len(all)-i-1 {
					t.Fatalf("after row %d (%q): %d rows, want %d", i, r.Key, len(rest), len(all)-i-1)
				}
				for j := range rest {
					if !bytes.Equal(rest[j].Key, all[i+1+j].Key) {
						t.Errorf("after row %d: row %d is %q, want %q", i, j, rest[j].Key, all[i+1+j].Key)
					}
				}
			}
		})
	}
}

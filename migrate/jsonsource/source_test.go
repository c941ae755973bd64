package jsonsource

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/fixtures"
	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/supercol"
)

func TestFixturesRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, name := range fixtures.Names() {
		t.Run(name, func(t *testing.T) {
			m, err := fixtures.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := m.WriteSSTableJSON(dir); err != nil {
				t.Fatal(err)
			}
			for _, chunk := range []int{1, 2, DefaultChunkSize} {
				src, err := Open(m.Keyspace, dir, WithClock(func() time.Time { return m.Now }), WithChunkSize(chunk))
				if err != nil {
					t.Fatal(err)
				}
				ks, err := src.Keyspace(ctx)
				if err != nil || len(ks.Families) != len(m.Keyspace.Families) {
					t.Fatalf("Keyspace = %d families, %v", len(ks.Families), err)
				}
				for _, family := range m.FamilyNames() {
					want, err := fixtures.Collect(ctx, m.Source(), family, migrate.Position{})
					if err != nil {
						t.Fatal(err)
					}
					chunks := 0
					countingSrc := chunkCounter{Source: src, chunks: &chunks, limit: chunk}
					got, err := fixtures.Collect(ctx, countingSrc, family, migrate.Position{})
					if err != nil {
						t.Fatalf("chunks of %d: %s: %v", chunk, family, err)
					}
					// The dumps carry the fixtures' local expiration times.
					for _, d := range fixtures.Differences(want, got, fixtures.ExactCells) {
						t.Errorf("chunks of %d: %s: %s", chunk, family, d)
					}
				}
			}
		})
	}
}

// chunkCounter checks that no chunk exceeds the chunk size.
type chunkCounter struct {
	*Source
	chunks *int
	limit  int
}

func (c chunkCounter) Scan(ctx context.Context, family string, from migrate.Position, visit func(migrate.RowChunk) error) error {
	return c.Source.Scan(ctx, family, from, func(rc migrate.RowChunk) error {
		*c.chunks++
		if len(rc.Cells) > c.limit {
			return errTooBig
		}
		return visit(rc)
	})
}

var errTooBig = os.ErrInvalid

func TestExpiryFollowsTheClock(t *testing.T) {
	m, err := fixtures.Load("eventlog")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := m.WriteSSTableJSON(dir); err != nil {
		t.Fatal(err)
	}
	count := func(now time.Time) int {
		src, err := Open(m.Keyspace, filepath.Join(dir, "ServerEvents.json"), WithClock(func() time.Time { return now }))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := fixtures.Collect(context.Background(), src, "ServerEvents", migrate.Position{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range rows {
			n += len(r.Cells)
		}
		return n
	}
	early, atNow, late := count(m.LoadTime()), count(m.Now), count(m.Now.Add(30*24*time.Hour))
	if !(early > atNow && atNow > late) {
		t.Fatalf("live cells at load time %d, at now %d, a month later %d: want fewer as time passes", early, atNow, late)
	}
}

func TestResume(t *testing.T) {
	ctx := context.Background()
	m, err := fixtures.Load("blog")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := m.WriteSSTableJSON(dir); err != nil {
		t.Fatal(err)
	}
	src, err := Open(m.Keyspace, dir, WithClock(func() time.Time { return m.Now }))
	if err != nil {
		t.Fatal(err)
	}
	all, err := fixtures.Collect(ctx, src, "Authors", migrate.Position{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range all {
		rest, err := fixtures.Collect(ctx, src, "Authors", migrate.Position{AfterKey: r.Key, Started: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(rest) != len(all)-i-1 || (len(rest) > 0 && !bytes.Equal(rest[0].Key, all[i+1].Key)) {
			t.Fatalf("after row %d: %d rows", i, len(rest))
		}
	}
	err = src.Scan(ctx, "Authors", migrate.Position{AfterKey: []byte("nobody")}, func(migrate.RowChunk) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("resume after a missing key: %v", err)
	}
}

var testSchema = supercol.KeyspaceDef{
	Name: "KS",
	Families: []supercol.FamilyDef{
		{Name: "Std", KeyValidator: "UTF8Type", Comparator: "UTF8Type", DefaultValidator: "UTF8Type"},
		{Name: "Sup", Super: true, Comparator: "UTF8Type", SubComparator: "UTF8Type", DefaultValidator: "UTF8Type"},
		{Name: "Cnt", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"},
	},
}

func writeDump(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func scanAll(t *testing.T, path, family string) ([]fixtures.RowCells, error) {
	t.Helper()
	src, err := Open(testSchema, path, WithClock(func() time.Time { return time.Unix(1000, 0) }))
	if err != nil {
		return nil, err
	}
	return fixtures.Collect(context.Background(), src, family, migrate.Position{})
}

// TestFlatSuperColumns reads a Super family dumped with composite names
// "super:column" and range tombstones, as Cassandra 2.0 lays super
// columns out.
func TestFlatSuperColumns(t *testing.T) {
	dump := `[
{"key": "6b31","metadata": {"deletionInfo": {"markedForDeleteAt":5,"localDeletionTime":900}},"columns": [
  ["old:x","gone",4],
  ["s1:a","one",10],
  ["s1:b","two",10,"e",100,2000],
  ["s1:c","dead",10,"e",100,999],
  ["s2","s2:!",20,"t",900],
  ["s2:a","shadowed",15],
  ["s2:b","newer",21],
  ["s3:a","0:kept",25],
  ["s3:b","7a",25,"d"]]}
]`
	rows, err := scanAll(t, writeDump(t, "KS-Sup-jb-1-Data.json", dump), "Sup")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	var got []string
	for _, c := range rows[0].Cells {
		got = append(got, string(c.Super)+"/"+string(c.Name)+"="+string(c.Value))
	}
	want := "s1/a=one s1/b=two s2/b=newer s3/a=0:kept"
	if strings.Join(got, " ") != want {
		t.Fatalf("cells %v, want %s", got, want)
	}
	if c := rows[0].Cells[1]; c.TTL != 100 || c.ExpiresAt != 2000 {
		t.Errorf("expiring cell: ttl %d, expires at %d", c.TTL, c.ExpiresAt)
	}
}

func TestNestedSuperColumnsAndCounters(t *testing.T) {
	dump := `[
{"key": "6b31","columns": {"s1": {"metadata": {"deletionInfo": {"markedForDeleteAt":10,"localDeletionTime":900}},"subColumns": [["a","old",9], ["b","new",11]]}, "s2": {"deletedAt": -9223372036854775808, "subColumns": [["a","x",1]]}}}
]`
	rows, err := scanAll(t, writeDump(t, "Sup.json", dump), "Sup")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || len(rows[0].Cells) != 2 || string(rows[0].Cells[0].Value) != "new" || string(rows[0].Cells[1].Super) != "s2" {
		t.Fatalf("rows %+v", rows)
	}
	counters := `[
{"key": "6b31","columns": [["web","0001000034c7b54c12dd11ee8b9b6b5d3e1e31ef000000000000000100000000000000070000000000000000000000000000000000000000000000020000000000000005",1,"c",-9223372036854775808]]}
]`
	rows, err = scanAll(t, writeDump(t, "Cnt.json", counters), "Cnt")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || len(rows[0].Cells) != 1 || !rows[0].Cells[0].Counter || rows[0].Cells[0].CounterValue != 12 {
		t.Fatalf("counter rows %+v", rows)
	}
}

func TestBadInputNamesFileAndRow(t *testing.T) {
	cases := map[string]string{
		"not a list":      `{"key": "6b"}`,
		"bad key":         `[{"key": "zz","columns": []}]`,
		"bad value":       `[{"key": "6b31","columns": [["a","x",1],["b","y","later"]]}]`,
		"unknown flag":    `[{"key": "6b31","columns": [["a","x",1,"q"]]}]`,
		"truncated":       `[{"key": "6b31","columns": [["a","x",1]`,
		"columns first":   `[{"columns": [], "key": "6b31"}]`,
		"short expiring":  `[{"key": "6b31","columns": [["a","x",1,"e",5]]}]`,
		"super in std":    `[{"key": "6b31","columns": {"s": {"subColumns": []}}}]`,
		"bad counter ctx": `[{"key": "6b31","columns": [["a","00",1,"c",0]]}]`,
	}
	for what, dump := range cases {
		path := writeDump(t, "Std.json", dump)
		_, err := scanAll(t, path, "Std")
		if what == "bad counter ctx" {
			_, err = scanAll(t, writeDump(t, "Cnt.json", dump), "Cnt")
			path = "Cnt.json"
		}
		if err == nil {
			t.Errorf("%s: no error", what)
			continue
		}
		if !strings.Contains(err.Error(), filepath.Base(path)) {
			t.Errorf("%s: error %q does not name the file", what, err)
		}
		if strings.Contains(dump, `"key": "6b31"`) && !strings.Contains(dump, `"columns": [], "key"`) && !strings.Contains(err.Error(), "6b31") {
			t.Errorf("%s: error %q does not name the row key", what, err)
		}
	}
}

func TestOpenRefusesTwoDumpsOfOneFamily(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"KS-Std-ic-1-Data.json", "KS-Std-ic-2-Data.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("[]"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Open(testSchema, dir); err == nil || !strings.Contains(err.Error(), "two dumps") {
		t.Fatalf("Open = %v", err)
	}
}

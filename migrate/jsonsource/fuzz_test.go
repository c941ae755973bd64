package jsonsource

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/fixtures"
	"github.com/thriftbridge/thriftbridge/migrate"
)

// FuzzDecoder feeds arbitrary dumps of a Standard, a Super and a counter
// family to the decoder: it must return an error or chunks that keep the
// Source contract, never panic.
func FuzzDecoder(f *testing.F) {
	for _, name := range []string{"blog", "addressbook", "counters"} {
		m, err := fixtures.Load(name)
		if err != nil {
			f.Fatal(err)
		}
		dir := f.TempDir()
		if err := m.WriteSSTableJSON(dir); err != nil {
			f.Fatal(err)
		}
		for _, family := range m.FamilyNames() {
			b, err := os.ReadFile(filepath.Join(dir, family+".json"))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte(`[{"key": "6b31","columns": [["s2","s2:!",20,"t",900],["s3:a","x",25]]}]`))
	f.Fuzz(func(t *testing.T, dump []byte) {
		dir := t.TempDir()
		for _, family := range []string{"Std", "Sup", "Cnt"} {
			if err := os.WriteFile(filepath.Join(dir, family+".json"), dump, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		src, err := Open(testSchema, dir, WithClock(func() time.Time { return time.Unix(1000, 0) }), WithChunkSize(2))
		if err != nil {
			t.Fatal(err)
		}
		for _, family := range []string{"Std", "Sup", "Cnt"} {
			_ = src.Scan(context.Background(), family, migrate.Position{}, func(c migrate.RowChunk) error {
				if len(c.Key) == 0 || len(c.Cells) > 2 {
					t.Fatalf("chunk with key %x and %d cells", c.Key, len(c.Cells))
				}
				return nil
			})
		}
	})
}

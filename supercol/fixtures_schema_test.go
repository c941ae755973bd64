package supercol

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/thriftbridge/thriftbridge/internal/golden"
)

// TestPlanFixtureSchemas plans every family of the fixture models (without
// a sample, as `convert schema` may) and keeps the result as a golden file.
func TestPlanFixtureSchemas(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "fixtures", "*", "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no fixture schemas under ../fixtures")
	}
	var sb strings.Builder
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var ks KeyspaceDef
		if err := json.Unmarshal(raw, &ks); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, def := range ks.Families {
			f, err := NewFamily(ks.Name, def)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			m, err := Plan(f, Options{})
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			checkTableInvariants(t, m.Table)
			sb.WriteString("-- " + filepath.Base(filepath.Dir(path)) + ": " + ks.Name + "." + def.Name + "\n")
			sb.WriteString(describe(m) + "\n")
		}
	}
	golden.Check(t, "supercol/testdata/fixtures.cql", []byte(sb.String()))
}

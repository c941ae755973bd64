package supercol

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func mustFamily(t testing.TB, keyspace string, def FamilyDef) *Family {
	t.Helper()
	f, err := NewFamily(keyspace, def)
	if err != nil {
		t.Fatalf("NewFamily: %v", err)
	}
	return f
}

// sampleCell is one cell of a test sample, names in their text forms
// (super empty in Standard families).
type sampleCell struct{ super, name string }

func sampleOf(t testing.TB, f *Family, cells ...sampleCell) *Sample {
	t.Helper()
	s := NewSample(f)
	for _, c := range cells {
		var super []byte
		if f.Def.Super {
			super = mustBytes(t, f.Comparator.FromString, c.super)
		}
		s.Add(super, mustBytes(t, nameTypeOf(f).FromString, c.name))
	}
	return s
}

func mustBytes(t testing.TB, parse func(string) ([]byte, error), s string) []byte {
	t.Helper()
	b, err := parse(s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return b
}

// describe renders what Plan decided, as the golden files hold it.
func describe(m *Mapping) string {
	var sb strings.Builder
	t := m.Table
	sb.WriteString("-- shape: " + string(t.Shape))
	if m.Mixed() {
		sb.WriteString(" (mixed)")
	}
	sb.WriteString("\n-- reason: " + t.Reason + "\n")
	for _, w := range t.Warnings {
		sb.WriteString("-- warning: " + w + "\n")
	}
	sb.WriteString(t.CreateTableCQL() + ";\n")
	for _, s := range t.CreateIndexCQL() {
		sb.WriteString(s + ";\n")
	}
	return sb.String()
}

// checkGolden compares got with testdata/<name>, rewriting it under -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test ./supercol -update to create it): %v", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file\n--- got\n%s--- want\n%s", name, got, want)
	}
}

package supercol

import (
	"strings"
	"testing"
)

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

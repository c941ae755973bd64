package migrate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/supercol"
)

// verifyFile converts src's twin to a script, lets edit change it, and
// verifies src against the edited script at now.
func verifyFile(t *testing.T, edit func(script string) string, now time.Time, policy TTLPolicy) *VerifyReport {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "blog.cql")
	if _, err := convertToFile(t, blogSource(3), path, Options{Now: fixedClock, TTL: policy}); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(edit(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	src := blogSource(3)
	o := Options{Now: func() time.Time { return now }, TTL: policy}
	_, plans, err := planFamilies(ctx, src, &o, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tables []*supercol.Table
	for _, p := range plans {
		tables = append(tables, p.mapping.Table)
	}
	target, err := OpenFileTarget(path, tables)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	rep, err := Verify(ctx, src, target, VerifyOptions{Options: o})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestVerifyCleanScript(t *testing.T) {
	for _, policy := range []string{"remaining", "none", "original", "3600"} {
		p, _ := ParseTTLPolicy(policy)
		// Verified 90 s after the conversion: TTLs are counted from the
		// script's header time, so they still match.
		rep := verifyFile(t, nil, testNow.Add(90*time.Second), p)
		if !rep.OK() || rep.Matched != 14 {
			t.Errorf("--ttl %s: clean script: %+v", policy, rep)
			for _, f := range rep.Families {
				t.Logf("%+v", f)
			}
		}
	}
}

func TestVerifyFindsDifferences(t *testing.T) {
	type counts struct{ missing, extra, different int64 }
	tests := []struct {
		name   string
		edit   func(string) string
		want   counts
		field  string
		substr string
	}{
		{"missing cell", func(s string) string { return dropLine(s, "'bob@example.com'") }, counts{missing: 1}, "", "bob"},
		{"missing counter", func(s string) string { return dropLine(s, "+ -7 WHERE") }, counts{missing: 1}, "", "2024-02"},
		{"extra partition", func(s string) string {
			return s + strings.ReplaceAll(lineWith(s, "'bob@example.com'"), "'bob", "'zed") + "\n"
		}, counts{extra: 1}, "", "zed"},
		{"extra cell", func(s string) string {
			return s + strings.ReplaceAll(lineWith(s, "'bob@example.com'"), "'email'", "'phone'") + "\n"
		}, counts{extra: 1}, "", "bob"},
		{"value", func(s string) string { return strings.Replace(s, "'first!'", "'second!'", 1) }, counts{different: 1}, "value", "first!"},
		{"counter value", func(s string) string { return strings.Replace(s, "+ 42 WHERE", "+ 43 WHERE", 1) }, counts{different: 1}, "value", "42"},
		{"writetime", func(s string) string {
			return strings.Replace(s, "TIMESTAMP 1600000000000014;", "TIMESTAMP 1600000000000099;", 1)
		}, counts{different: 1}, "writetime", "1600000000000014"},
		{"ttl", func(s string) string { return strings.Replace(s, "USING TTL 1800 AND", "USING TTL 1790 AND", 1) }, counts{different: 1}, "ttl", "1800"},
		{"ttl within tolerance", func(s string) string { return strings.Replace(s, "USING TTL 1800 AND", "USING TTL 1799 AND", 1) }, counts{}, "", ""},
		{"ttl lost", func(s string) string {
			return strings.Replace(s, "USING TTL 2600 AND TIMESTAMP", "USING TIMESTAMP", 1)
		}, counts{different: 1}, "ttl", "2600"},
	}
	for _, tt := range tests {
		rep := verifyFile(t, tt.edit, testNow, TTLPolicy{})
		got := counts{rep.Missing, rep.Extra, rep.Different}
		if got != tt.want {
			t.Errorf("%s: missing/extra/different = %+v, want %+v", tt.name, got, tt.want)
		}
		if tt.want == (counts{}) {
			if !rep.OK() {
				t.Errorf("%s: not OK", tt.name)
			}
			continue
		}
		if rep.OK() {
			t.Errorf("%s: reported OK", tt.name)
		}
		var ex []Difference
		for _, f := range rep.Families {
			ex = append(ex, f.Examples...)
		}
		if len(ex) != 1 {
			t.Errorf("%s: %d examples, want 1", tt.name, len(ex))
			continue
		}
		if ex[0].Field != tt.field || !strings.Contains(ex[0].Key+ex[0].Column+ex[0].Source+ex[0].Target, tt.substr) {
			t.Errorf("%s: example %+v does not show %s %q", tt.name, ex[0], tt.field, tt.substr)
		}
	}
}

// TestVerifySkipsCellsExpiredSince verifies long after the conversion:
// cells that expired in between are neither missing nor extra.
func TestVerifySkipsCellsExpiredSince(t *testing.T) {
	rep := verifyFile(t, nil, testNow.Add(2*time.Hour), TTLPolicy{})
	if !rep.OK() || rep.Matched != 12 {
		t.Errorf("verified 2 h later: %+v", rep)
	}
}

func lineWith(s, frag string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, frag) {
			return l
		}
	}
	return ""
}

func dropLine(s, frag string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.Contains(l, frag) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
